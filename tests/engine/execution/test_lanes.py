"""ThreadLanes: plain functions run off the loop, their results handed back in batches."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest

from simproxy.engine.execution.lanes import ThreadLanes


def _blocking(release: threading.Event) -> Callable[[object], str]:
    """A call that blocks its lane until ``release`` is set (at most 5 s), then answers ``slow``."""

    def slow(_: object) -> str:
        release.wait(5)
        return "slow"

    return slow


def test_calls_run_off_the_loop_and_return_their_results() -> None:
    async def main() -> tuple[list[int], set[str]]:
        lanes = ThreadLanes(size=2)
        names: set[str] = set()

        def square(n: int) -> int:
            names.add(threading.current_thread().name)
            return n * n

        try:
            return list(await asyncio.gather(*(lanes.call(square, n) for n in range(50)))), names
        finally:
            await lanes.aclose()

    results, names = asyncio.run(main())
    assert results == [n * n for n in range(50)]
    assert names and threading.main_thread().name not in names
    assert all(name.startswith("simproxy-lane-") for name in names)


def test_an_error_reaches_its_own_caller_only() -> None:
    def maybe(n: int) -> int:
        if n == 3:
            raise ValueError("three")
        return n

    async def main() -> list[object]:
        lanes = ThreadLanes()
        try:
            return list(await asyncio.gather(*(lanes.call(maybe, n) for n in range(6)), return_exceptions=True))
        finally:
            await lanes.aclose()

    results = asyncio.run(main())
    assert [r for i, r in enumerate(results) if i != 3] == [0, 1, 2, 4, 5]
    assert isinstance(results[3], ValueError) and str(results[3]) == "three"


def test_system_exit_in_a_call_fails_that_call_and_the_lane_goes_on() -> None:
    def leave(_: object) -> None:
        raise SystemExit(3)

    async def main() -> tuple[BaseException | None, int]:
        lanes = ThreadLanes(size=1)
        try:
            try:
                await lanes.call(leave, None)
            except RuntimeError as exc:
                error: BaseException | None = exc
            else:
                error = None
            return error, await lanes.call(len, "four")
        finally:
            await lanes.aclose()

    error, after = asyncio.run(main())
    assert isinstance(error, RuntimeError) and "SystemExit" in str(error)
    assert after == 4


def test_a_blocking_call_holds_one_lane_while_quick_ones_finish() -> None:
    release = threading.Event()
    slow = _blocking(release)

    async def main() -> tuple[list[str], float]:
        lanes = ThreadLanes(size=4)
        try:
            held = asyncio.ensure_future(lanes.call(slow, None))
            await asyncio.sleep(0.05)
            started = time.monotonic()
            quick = await asyncio.gather(*(lanes.call(str.upper, s) for s in ("a", "b", "c")))
            took = time.monotonic() - started
            assert not held.done()
            release.set()
            return [*quick, await held], took
        finally:
            release.set()
            await lanes.aclose()

    results, took = asyncio.run(main())
    assert results == ["A", "B", "C", "slow"]
    assert took < 2.0  # not behind the blocked call


def test_a_burst_starts_few_lanes_and_aclose_stops_them_all() -> None:
    async def main() -> tuple[int, list[threading.Thread]]:
        lanes = ThreadLanes(size=8, name="burst-lane")
        await asyncio.gather(*(lanes.call(abs, -n) for n in range(200)))
        started = [t for t in threading.enumerate() if t.name.startswith("burst-lane-")]
        await lanes.aclose()
        return len(started), started

    count, threads = asyncio.run(main())
    assert 1 <= count < 8  # quick calls gathered in one turn of the loop wake one lane, not one each
    assert not any(t.is_alive() for t in threads)


@pytest.mark.parametrize("size", [1, 3])
def test_calls_left_queued_at_close_are_cancelled_not_left_waiting(size: int) -> None:
    release = threading.Event()

    async def main() -> bool:
        lanes = ThreadLanes(size=size)
        blocked = [asyncio.ensure_future(lanes.call(release.wait, 5)) for _ in range(size)]
        await asyncio.sleep(0.05)
        waiting = asyncio.ensure_future(lanes.call(str, 1))
        closing = asyncio.ensure_future(lanes.aclose())
        await asyncio.sleep(0.05)
        release.set()
        await closing
        await asyncio.gather(*blocked)
        done = await asyncio.wait_for(asyncio.gather(waiting, return_exceptions=True), 2)
        return isinstance(done[0], asyncio.CancelledError) or done[0] == "1"

    assert asyncio.run(main())


@pytest.mark.parametrize(
    ("size", "slow_first"),
    [
        (1, False),  # one lane: a result finished before the blocking call is not held by it
        (4, True),  # quick calls behind a blocking one in the same turn: another lane takes them
    ],
)
def test_quick_calls_handed_over_in_one_turn_with_a_blocking_one_do_not_wait_for_it(
    size: int, slow_first: bool
) -> None:
    release = threading.Event()
    slow = _blocking(release)

    async def main() -> float:
        lanes = ThreadLanes(size=size)
        try:
            held = asyncio.ensure_future(lanes.call(slow, None)) if slow_first else None
            quick = [asyncio.ensure_future(lanes.call(str.upper, s)) for s in ("a", "b")]
            if held is None:
                held = asyncio.ensure_future(lanes.call(slow, None))
            started = time.monotonic()
            assert await asyncio.wait_for(asyncio.gather(*quick), 2) == ["A", "B"]
            took = time.monotonic() - started
            release.set()
            assert await held == "slow"
            return took
        finally:
            release.set()
            await lanes.aclose()

    assert asyncio.run(main()) < 1.0
