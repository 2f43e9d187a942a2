"""The dashboard's traffic per second: each request counted in the second it was served in, though
a worker flushes its counts only every few tens of milliseconds."""

from __future__ import annotations

import asyncio
import itertools

from simproxy.engine.fleet.runtime import LONE_FLUSH_INTERVAL, Runtime, traffic_second, until_tick
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.store import MemoryStore

S = 1_800_000_000
"""An epoch second the tests' clock starts in."""


def test_flushes_fall_just_after_the_clocks_marks_and_one_just_after_each_second_starts() -> None:
    for interval in (0.02, LONE_FLUSH_INTERVAL):
        now = S * 1000 + 937
        marks = []
        for _ in range(30):
            now += round(until_tick(now, interval) * 1000)
            marks.append(now)
        step = round(interval * 1000)
        assert all(0 < mark % step <= 2 for mark in marks)  # on the marks, a hair late
        assert all(b - a == step for a, b in itertools.pairwise(marks))
        assert S * 1000 + 1000 < next(m for m in marks if m > S * 1000 + 1000) <= S * 1000 + 1002


def test_a_fleets_workers_flush_each_at_its_own_phase() -> None:
    """So that a fleet's flushes do not all reach Redis in the same millisecond."""
    now = S * 1000 + 937
    for phase in (0, 7, 19):
        first = now + round(until_tick(now, 0.02, phase) * 1000)
        assert (first - phase) % 20 == 2 and first - now <= 22


def test_a_batch_goes_to_the_second_that_holds_most_of_its_time() -> None:
    start = S * 1000
    assert traffic_second(start + 900, start + 1002) == S  # the flush just after S+1 began
    assert traffic_second(start + 999, start + 1100) == S + 1  # a flush that fired a hair early
    assert traffic_second(start + 100, start + 200) == S
    assert traffic_second(0, start + 500) == S  # nothing known: the second it is taken in
    assert traffic_second(start - 5000, start + 1) == S  # idle for long: the last second


def test_requests_are_shown_in_the_second_they_were_served_in_not_the_one_they_were_flushed_in() -> None:
    clock = [S * 1000 + 800]
    runtime = Runtime(MemoryStore(), MatcherRegistry(), worker_id="w1", clock_ms=lambda: clock[0])

    def serve(count: int) -> None:
        for _ in range(count):
            runtime.metrics.request("simulate", "hit", 0.001, "")

    async def main() -> dict[int, dict[str, float]]:
        serve(1)
        await runtime.flush()  # at S.800
        clock[0] = S * 1000 + 900
        serve(3)
        clock[0] = S * 1000 + 1002  # the flush of S+1's first mark
        await runtime.flush()
        serve(2)
        clock[0] = S * 1000 + 1102
        await runtime.flush()
        return (await runtime.traffic(3))[1]

    assert asyncio.run(main()) == {S: {"simulate|hit": 4}, S + 1: {"simulate|hit": 2}}
