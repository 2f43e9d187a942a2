"""``-metrics``: the fleet's request counts by mode logged every five seconds, as Hoverfly logs its
own (``hoverfly metrics`` with a ``counters`` field); one worker of an instance does it."""

from __future__ import annotations

import asyncio
import logging

from simproxy.engine.fleet.config import MODES
from simproxy.engine.fleet.runtime import Runtime
from simproxy.store import StoreError

log = logging.getLogger(__name__)
INTERVAL = 5.0


async def log_usage(runtime: Runtime, interval: float = INTERVAL) -> None:
    """Until cancelled: every ``interval`` seconds, the usage counters (this worker's counts flushed first)."""
    while True:
        await asyncio.sleep(interval)
        try:
            await runtime.flush()
            counters = await runtime.store.read_counters()
        except StoreError as exc:
            log.warning("The usage counters are unavailable", extra={"fields": {"error": str(exc)}})
            continue
        log.info("hoverfly metrics", extra={"fields": {"counters": {mode: counters.get(mode, 0) for mode in MODES}}})
