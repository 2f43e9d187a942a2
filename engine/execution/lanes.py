"""``ThreadLanes``: plain functions run off the event loop on a few threads of their own, their
results handed back to the loop in batches.

``asyncio.to_thread`` pays, per call, a context copy, an executor work item, a future chained to an
asyncio future, a wake-up of a thread and one of the loop (a write to its self-pipe). For a function
that runs for microseconds (an in-process middleware hook) those costs are most of the call, and on
a busy core each wake-up is a context switch that waits its turn.

Here the calls made during one turn of the loop are gathered and handed over with one wake-up, at
the end of that turn; a lane runs every call waiting (taking them one by one from a shared deque, so
an idle lane can help while another is held by a slow call). Each result is handed back as soon as
it is ready, but the loop is woken only when no collection is already on its way: results finished
while the loop is busy ride on the one wake-up, and a slow call never holds a quick one's result.
Lanes are started as work finds none idle, up to ``size``: a function that blocks (a sleep, a
socket) holds one lane and the others go on. Calls handed over with a blocking one, behind it in
the same turn, are taken by another lane once none has been taken for ``STALL_AFTER``.
"""

from __future__ import annotations

import asyncio
import collections
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeAlias

LANES = 8
"""Threads a ``ThreadLanes`` starts at most: calls that block hold one each."""
STALL_AFTER = 0.005
"""Seconds calls may wait in the deque with none taken before another lane is woken for them."""

_Call: TypeAlias = tuple[Callable[[Any], Any], Any, "asyncio.Future[Any]"]
_Settled: TypeAlias = tuple["asyncio.Future[Any]", bool, Any]


class ThreadLanes:
    """Runs ``func(arg)`` on threads of its own for one event loop; ``call`` awaits the result."""

    def __init__(self, size: int = LANES, name: str = "simproxy-lane") -> None:
        self.size = size
        self.name = name
        self._calls: collections.deque[_Call] = collections.deque()
        self._done: collections.deque[_Settled] = collections.deque()
        self._signalled = False
        """A collection is scheduled on the loop and has not started: a finished call need not ask again."""
        self._wake: queue.SimpleQueue[bool] = queue.SimpleQueue()
        """One ``True`` per handover wakes an idle lane; ``False`` stops one."""
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._idle = 0
        self._handover = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = 0
        """Calls the lanes have taken from the deque (read by the stall watch)."""
        self._watch: asyncio.TimerHandle | None = None
        """The stall watch, armed while calls wait in the deque."""

    async def call(self, func: Callable[[Any], Any], arg: Any) -> Any:
        """``func(arg)`` run on a lane: its result, or the exception it raised."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._calls.append((func, arg, future))
        if not self._handover:
            self._handover = True
            loop.call_soon(self._hand_over)
        return await future

    def _hand_over(self) -> None:
        """At the end of the loop's turn: wake one lane for everything queued during it, and watch
        that the calls keep being taken."""
        self._handover = False
        if not self._calls:
            return
        self._wake_one()
        if self._watch is None and self._loop is not None:
            self._watch = self._loop.call_later(STALL_AFTER, self._unstall, self._started)

    def _wake_one(self) -> None:
        """Wake an idle lane, starting one when none is idle and there is room for it."""
        with self._lock:
            start = self._idle == 0 and len(self._threads) < self.size
            if start:
                self._idle += 1  # counted idle until it runs, as a waiting lane is
        if start:
            thread = threading.Thread(target=self._run, name=f"{self.name}-{len(self._threads)}", daemon=True)
            self._threads.append(thread)
            thread.start()
        self._wake.put(True)

    def _unstall(self, started: int) -> None:
        """Calls still wait and none was taken since the last look: the lane that took them is held
        by a call that blocks, so another one takes the rest. Looks again while calls wait."""
        self._watch = None
        if not self._calls or self._loop is None:
            return
        if self._started == started:
            self._wake_one()
        self._watch = self._loop.call_later(STALL_AFTER, self._unstall, self._started)

    def _run(self) -> None:
        calls, done, wake, lock = self._calls, self._done, self._wake, self._lock
        while wake.get():
            with lock:
                self._idle -= 1
            while calls:
                try:
                    func, arg, future = calls.popleft()
                except IndexError:  # another lane took the last one
                    break
                self._started += 1  # read by the stall watch only: a count lost between lanes at worst wakes one more
                try:
                    done.append((future, True, func(arg)))
                except Exception as exc:  # the function's own error goes to its caller
                    done.append((future, False, exc))
                except BaseException as exc:  # SystemExit and the like: the caller's error, not the lane's end
                    done.append((future, False, RuntimeError(f"the function raised {type(exc).__name__}")))
                if not self._signalled:  # else the loop has yet to collect, and takes this one too
                    self._signalled = True
                    self._signal()
            with lock:
                self._idle += 1
        with lock:
            self._idle -= 1

    def _signal(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._collect)

    def _collect(self) -> None:
        """On the loop: settle every result the lanes have finished (the flag is cleared first, so
        a result finished while this runs signals again rather than waiting)."""
        self._signalled = False
        done = self._done
        while done:
            future, ok, value = done.popleft()
            if future.cancelled():
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    async def aclose(self) -> None:
        """Stop the lanes once the calls queued before this have run; wait for them briefly (a
        daemon thread stuck in a call that never returns does not hold the process)."""
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        threads, self._threads = self._threads, []
        for _ in threads:
            self._wake.put(False)
        for thread in threads:
            await asyncio.to_thread(thread.join, 1.0)
        while self._calls:  # left by lanes that stopped: their callers are cancelled, not left waiting
            self._calls.popleft()[2].cancel()
