"""Simulate and spy: answers from the simulation; spy sends what it cannot answer to the real service
(hoverfly-admin.md §7.1, §7.4). Middleware, when set, rewrites a hit's response before its delay."""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any, ClassVar

from simproxy.engine.errors import CaptureConflict, UpstreamError
from simproxy.engine.fleet.config import Mode
from simproxy.engine.fleet.runtime import Snapshot
from simproxy.engine.journal.logs import log_fields
from simproxy.engine.modes.base import Kit, Outcome
from simproxy.engine.modes.capture import SAVE_CONTEXT, captured_pair
from simproxy.engine.modes.contract import ContractCheck
from simproxy.engine.modes.failures import MATCHING_CONTEXT, matching_error, request_fields
from simproxy.engine.modes.forwarding import with_values
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire
from simproxy.store import StoreError

log = logging.getLogger(__name__)
_FORWARDED = (("Hoverfly", ("Forwarded",)),)


class SimulateMode:
    name: ClassVar[Mode] = Mode.SIMULATE
    runs_actions: ClassVar[bool] = True

    def __init__(self, kit: Kit) -> None:
        self.simulator = kit.simulator
        self.forwarder = kit.forwarder
        self.contracts = ContractCheck()

    def handle(self, snap: Snapshot, req: RequestDetails) -> Outcome:
        if snap.simulation.contracts is not None:  # an imported OpenAPI document's validation
            rejected = self.contracts.rejected(snap, req)
            if rejected is not None:
                return rejected
        if not snap.config.middleware.enabled:
            outcome = self.simulator.simulate(snap, req)
            if isinstance(outcome, Wire):
                if outcome.outcome == "miss":
                    _log_miss(req, outcome)
                return outcome
            return self._logged(req, outcome)
        return self._rewritten(snap, req, self.simulator.simulate(snap, req, delay=False))

    async def _logged(self, req: RequestDetails, outcome: Coroutine[Any, Any, Wire]) -> Wire:
        wire = await outcome
        if wire.outcome == "miss":
            _log_miss(req, wire)
        return wire

    async def _rewritten(self, snap: Snapshot, req: RequestDetails, served: Outcome) -> Wire:
        wire = served if isinstance(served, Wire) else await served
        if wire.outcome == "miss":
            _log_miss(req, wire)
        return await self.forwarder.apply(snap, req, wire)


def _log_miss(req: RequestDetails, wire: Wire) -> None:
    """Simulate mode's error on a miss, after the simulator's warning (Hoverfly's ReturnErrorAndLog)."""
    log_fields(
        log, logging.ERROR, MATCHING_CONTEXT,
        {"error": matching_error(wire.body), "mode": Mode.SIMULATE.value, "request": request_fields(req),
         "response": {"error": "nil response"}},
    )  # fmt: skip


class SpyMode(SimulateMode):
    """Simulate; a miss goes to the real service, marked ``Hoverfly: Forwarded``, and is captured
    when spy was switched on with ``captureOnMiss``. Hoverfly's spy runs no post-serve action."""

    name: ClassVar[Mode] = Mode.SPY
    runs_actions: ClassVar[bool] = False

    def __init__(self, kit: Kit) -> None:
        super().__init__(kit)
        self.runtime = kit.runtime
        self.captures = kit.captures

    def handle(self, snap: Snapshot, req: RequestDetails) -> Outcome:
        rewrite = snap.config.middleware.enabled
        capture = snap.config.args(Mode.SPY).capture_on_miss
        outcome = self.simulator.simulate(snap, req, cache_misses=not capture, delay=not rewrite)
        if isinstance(outcome, Wire):
            if outcome.outcome == "miss":
                return self._forward(snap, req)
            return self._rewritten(snap, req, outcome) if rewrite else outcome
        return self._after(snap, req, outcome, rewrite)

    async def _after(
        self, snap: Snapshot, req: RequestDetails, simulated: Coroutine[Any, Any, Wire], rewrite: bool
    ) -> Wire:
        wire = await simulated
        if wire.outcome == "miss":
            return await self._forward(snap, req)
        return await self._rewritten(snap, req, wire) if rewrite else wire

    async def _forward(self, snap: Snapshot, req: RequestDetails) -> Wire:
        forwarder = self.forwarder
        try:
            resp = with_values(await forwarder.send(req), _FORWARDED)  # in what is answered and captured
        except UpstreamError as exc:
            return forwarder.forward_failed(req, exc, Mode.SPY)
        await self.contracts.record_answer(snap, req, resp, self.runtime.store.diffs)
        args = snap.config.args(Mode.SPY)
        if args.capture_on_miss:
            try:
                if await self.captures.add(captured_pair(req, resp, args), args):
                    await self.runtime.sync()  # this worker serves the new pair from its next request
            except (StoreError, CaptureConflict) as exc:
                log.error(SAVE_CONTEXT, extra={"fields": {"error": str(exc), "mode": Mode.SPY.value}})
        return await forwarder.delayed(snap, req, forwarder.wire(resp))
