"""Diff mode: the real service answers; where its response differs from what the simulation would
have answered, a report is stored for ``GET /api/v2/diff`` (Hoverfly's ``core/modes/diff_mode.go``).
The reports themselves are ``engine.modes.diff_report``, loaded by the first request compared."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import ClassVar

from simproxy.engine.errors import UpstreamError
from simproxy.engine.fleet.config import Mode
from simproxy.engine.fleet.runtime import Snapshot
from simproxy.engine.modes.base import Kit
from simproxy.engine.outbound.upstream import outgoing_path
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire
from simproxy.store import DiffStore, StoreError

log = logging.getLogger(__name__)


class DiffMode:
    name: ClassVar[Mode] = Mode.DIFF
    runs_actions: ClassVar[bool] = False

    def __init__(self, kit: Kit) -> None:
        self.simulator = kit.simulator
        self.forwarder = kit.forwarder
        self.store: DiffStore = kit.runtime.store.diffs

    async def handle(self, snap: Snapshot, req: RequestDetails) -> Wire:
        """The simulation's answer (state steps included, its delay not) against the real one."""
        from simproxy.engine.modes.diff_report import (
            DiffReport,
            DiffRequest,
            compare_responses,
            encode_report,
            encode_request,
            report_timestamp,
        )

        expected = self.simulator.simulate(snap, req, delay=False)
        if not isinstance(expected, Wire):
            expected = await expected
        moment = datetime.now().astimezone()
        try:
            resp = await self.forwarder.send(req)
        except UpstreamError as exc:
            return self.forwarder.forward_failed(req, exc, Mode.DIFF)
        if expected.outcome == "miss":
            log.info("There was no simulation for the request", extra={"fields": {"path": req.path}})
        else:
            entries = compare_responses(
                expected.status,
                expected.headers,
                expected.raw_body,
                resp.status,
                resp.headers,
                resp.body,
                snap.config.args(Mode.DIFF).headers_whitelist,
            )
            if entries:
                key = DiffRequest(req.method, req.destination, outgoing_path(req.path), req.raw_query)
                report = DiffReport(report_timestamp(moment), tuple(entries))
                try:
                    await self.store.diff_add(encode_request(key), encode_report(report))
                except StoreError as exc:
                    log.error("the diff report could not be stored", extra={"fields": {"error": str(exc)}})
        return await self.forwarder.delayed(snap, req, self.forwarder.wire(resp))
