"""Capture mode: every request goes to the real service, and the pair it makes is stored first
(the store's side of it, and the pair made from an exchange, are engine/modes/capture.py's). When
the simulation holds an OpenAPI document's contracts, an answer that breaks them is reported in
the diff store (engine/modes/contract.py)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, ClassVar

from simproxy.engine.errors import CaptureConflict
from simproxy.engine.fleet.config import Mode
from simproxy.engine.modes.capture import SAVE_CONTEXT, captured_pair
from simproxy.engine.modes.contract import ContractCheck
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire
from simproxy.store import StoreError

if TYPE_CHECKING:
    from simproxy.engine.fleet.runtime import Snapshot
    from simproxy.engine.modes.base import Kit

log = logging.getLogger(__name__)


class CaptureMode:
    """Every request goes to the real service (through request middleware, when set); the pair it
    makes with the response is stored before the response is sent (Hoverfly, §7.1)."""

    name: ClassVar[Mode] = Mode.CAPTURE
    runs_actions: ClassVar[bool] = False

    def __init__(self, kit: Kit) -> None:
        self.forwarder = kit.forwarder
        self.captures = kit.captures
        self.diffs = kit.runtime.store.diffs
        self.contracts = ContractCheck()  # real answers against an imported OpenAPI document

    async def handle(self, snap: Snapshot, req: RequestDetails) -> Wire:
        args = snap.config.args(Mode.CAPTURE)
        sent = await self.forwarder.through(snap, req, Mode.CAPTURE)
        if isinstance(sent, Wire):
            return sent
        req, resp = sent
        await self.contracts.record_answer(snap, req, resp, self.diffs)
        try:
            await self.captures.add(captured_pair(req, resp, args), args)
        except (StoreError, CaptureConflict) as exc:
            log.error(SAVE_CONTEXT, extra={"fields": {"error": str(exc), "mode": "capture"}})
            return self.forwarder.failure(SAVE_CONTEXT, str(exc))
        log.info(
            "request and response captured",
            extra={"fields": {"mode": "capture", "destination": req.destination, "path": req.path}},
        )
        return self.forwarder.wire(resp)
