"""Request validation for simulations imported from an OpenAPI document (engine/openapi/validate.py).

``ContractCheck`` reads the contracts compiled with the simulation being served (when it was
compiled, off the request path: engine/matching/scoring.py) and answers a request that breaks its
operation's contract with a 422 listing every violation, in place of the pair's answer; the
journal records that answer like any other. A simulation without contracts costs a request two
attribute reads and one identity comparison.

In spy (the answers it forwards) and capture, ``record_answer`` checks the real service's answer
against the document instead (Hoverfly's requested "validate mode"): each violation is stored as
a diff report, so ``GET /api/v2/diff`` lists them beside diff mode's.
"""

from __future__ import annotations

import logging
from datetime import datetime

import orjson

from simproxy.engine.fleet.runtime import Snapshot
from simproxy.engine.outbound.upstream import UpstreamResponse, outgoing_path
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire, plain_error
from simproxy.store import DiffStore, StoreError

log = logging.getLogger(__name__)


class ContractCheck:
    """Answers a request, or checks a real answer, against the contracts its simulation was
    compiled with (``CompiledSimulation.contracts``, built off the request path)."""

    __slots__ = ()

    def rejected(self, snap: Snapshot, req: RequestDetails) -> Wire | None:
        """The 422 for a request that breaks its operation's contract; None to answer it as usual."""
        contracts = snap.simulation.contracts
        if contracts is None:
            return None
        found = contracts.check(req.method, req.path, req.query, req.headers_lower, req.body)
        if not found:
            return None
        body = {
            "error": "the request does not follow the API description",
            "violations": [violation.view() for violation in found],
        }
        return plain_error(422, orjson.dumps(body).decode(), content_type="application/json", outcome="hit")

    async def record_answer(
        self, snap: Snapshot, req: RequestDetails, resp: UpstreamResponse, store: DiffStore
    ) -> None:
        """Store a diff report when the real answer to ``req`` breaks the document (nothing otherwise)."""
        contracts = snap.simulation.contracts
        if contracts is None:
            return
        content_type = next((values[0] for name, values in resp.headers if name.lower() == "content-type"), "")
        found = contracts.check_answer(req.method, req.path, resp.status, content_type, resp.body)
        if not found:
            return
        from simproxy.engine.modes.diff_report import (
            DiffEntry,
            DiffReport,
            DiffRequest,
            encode_report,
            encode_request,
            report_timestamp,
        )

        entries = tuple(
            DiffEntry(f"openapi/{v.where}{v.path.removeprefix('$')}", "as the API description says", v.message)
            for v in found
        )
        key = DiffRequest(req.method, req.destination, outgoing_path(req.path), req.raw_query)
        report = DiffReport(report_timestamp(datetime.now().astimezone()), entries)
        try:
            await store.diff_add(encode_request(key), encode_report(report))
        except StoreError as exc:
            log.error("the contract violation could not be stored", extra={"fields": {"error": str(exc)}})
