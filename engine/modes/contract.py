"""Request validation for simulations imported from an OpenAPI document (engine/openapi/validate.py).

``ContractCheck`` reads the contracts of the simulation being served once, when it changes, and
answers a request that breaks its operation's contract with a 422 listing every violation, in
place of the pair's answer; the journal records that answer like any other. A simulation without
contracts costs a request one identity comparison.
"""

from __future__ import annotations

import orjson

from simproxy.engine.fleet.runtime import Snapshot
from simproxy.engine.matching.scoring import CompiledSimulation
from simproxy.engine.openapi.validate import Contracts
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire, plain_error

_NONE = Contracts()


class ContractCheck:
    """One per mode instance: the contracts of the last simulation seen."""

    __slots__ = ("_contracts", "_seen")

    def __init__(self) -> None:
        self._seen: CompiledSimulation | None = None
        self._contracts = _NONE

    def rejected(self, snap: Snapshot, req: RequestDetails) -> Wire | None:
        """The 422 for a request that breaks its operation's contract; None to answer it as usual."""
        if snap.simulation is not self._seen:
            self._seen = snap.simulation
            self._contracts = Contracts.build(p.labels for p in snap.simulation.simulation.pairs)
        if not self._contracts:
            return None
        found = self._contracts.check(req.method, req.path, req.query, req.headers_lower, req.body)
        if not found:
            return None
        body = {
            "error": "the request does not follow the API description",
            "violations": [violation.view() for violation in found],
        }
        return plain_error(422, orjson.dumps(body).decode(), content_type="application/json", outcome="hit")
