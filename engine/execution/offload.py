"""CPU-heavy work off the event loop: large simulations parsed, validated, compiled and viewed in a
thread, while the loop goes on serving the proxy port.

A thread alone is not enough in CPython: the loop waits for the GIL (``sys.setswitchinterval``,
lowered by the worker), and a full garbage collection, which the many objects such work makes
will trigger, holds it for as long as it takes to scan every object: 150-300 ms at 50,000 pairs.
So while such work runs, full collections are held back (the young generations are still
collected), and when the last piece of it ends, every object alive is frozen
(``gc.freeze``): the new simulation, long-lived until replaced, is not scanned again, and the
next collections are short. Objects frozen are still freed by reference counting when let go.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

HELD_BACK = 10**9
"""The oldest generation's threshold while heavy work runs: never reached."""


class Offloader:
    """Runs functions in a thread with full collections held back; used from one event loop."""

    def __init__(self) -> None:
        self._running = 0
        self._thresholds: tuple[int, int, int] = _unheld(gc.get_threshold())

    async def run(self, func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        if self._running == 0:
            # another Offloader of this process (tests make several) may hold them back already
            self._thresholds = _unheld(gc.get_threshold(), self._thresholds)
            gc.set_threshold(self._thresholds[0], self._thresholds[1], HELD_BACK)
        self._running += 1
        try:
            return await asyncio.to_thread(func, *args, **kwargs)
        finally:
            self._running -= 1
            if self._running == 0:
                gc.freeze()
                gc.set_threshold(*self._thresholds)


def _unheld(thresholds: tuple[int, int, int], known: tuple[int, int, int] = (700, 10, 10)) -> tuple[int, int, int]:
    """``thresholds``, unless they are held back: then ``known`` (by default CPython's own)."""
    return known if thresholds[2] == HELD_BACK else thresholds
