"""The ``Telemetry`` contract on every store: usage counters, log records, metrics and the fleet's
per-second traffic, and the journal's and cache's sizes, whichever handle wrote them."""

from __future__ import annotations

import asyncio

from simproxy.store import TRAFFIC_KEEP_S, MemoryStore


def test_counters_add_up_across_calls(store, run) -> None:
    async def body() -> None:
        await store.add_counters({"simulate": 2, "capture": 1})
        await store.add_counters({"simulate": 3})
        await store.add_counters({"modify": 1, "capture": 4})
        assert await store.read_counters() == {"simulate": 5, "capture": 5, "modify": 1}
        await store.add_counters({})
        assert await store.read_counters() == {"simulate": 5, "capture": 5, "modify": 1}

    run(body())


def test_counters_add_up_across_handles_on_one_prefix(backend, run) -> None:
    first, second = backend.open(), backend.open()

    async def body() -> None:
        await asyncio.gather(
            *(first.add_counters({"simulate": 1, "spy": 2}) for _ in range(25)),
            *(second.add_counters({"simulate": 10}) for _ in range(25)),
        )
        expected = {"simulate": 25 + 250, "spy": 50}
        assert await first.read_counters() == expected
        assert await second.read_counters() == expected

    run(body())


def test_logs_are_kept_in_order_up_to_the_limit(backend, run) -> None:
    async def body() -> None:
        a, b = backend.open(), backend.open()
        await a.logs_append([b"r1", b"r2"], 3)
        await b.logs_append([b"r3", b"r4"], 3)
        assert await a.logs_records() == [b"r2", b"r3", b"r4"]

    run(body())


def test_traffic_from_every_handle_adds_up_per_second_and_reads_back_by_range(backend, run) -> None:
    worker_a, worker_b, observer = backend.open(), backend.open(), backend.open()
    t = 1_800_000_000 - 30  # 30 seconds before a minute boundary: the range spans two minutes

    async def body() -> None:
        await worker_a.metrics_add("pod-a", {"requests|simulate|hit": 3}, (t, {"simulate|hit": 3}))
        await worker_b.metrics_add("pod-b", {}, (t, {"simulate|hit": 2, "simulate|miss": 1}))
        await worker_b.metrics_add("pod-b", {}, (t + 45, {"spy|forwarded": 4}))
        assert await observer.traffic_read(t, t + 59) == {
            t: {"simulate|hit": 5, "simulate|miss": 1},
            t + 45: {"spy|forwarded": 4},
        }
        assert await observer.traffic_read(t + 1, t + 59) == {t + 45: {"spy|forwarded": 4}}
        assert await observer.traffic_read(t, t + 44) == {t: {"simulate|hit": 5, "simulate|miss": 1}}
        assert await observer.metrics_read("pod-a") == {"requests|simulate|hit": 3}  # the totals as before
        assert await observer.metrics_read("pod-b") == {}

    run(body())


def test_traffic_of_other_prefixes_is_not_seen(backend, run) -> None:
    mine, theirs = backend.open(), backend.open(prefix=backend.prefix + "other:")
    t = 1_800_000_000

    async def body() -> None:
        await theirs.metrics_add("pod", {}, (t, {"simulate|hit": 1}))
        assert await mine.traffic_read(t - 10, t + 10) == {}

    run(body())


def test_memory_keeps_traffic_for_the_keep_window_only(run) -> None:
    store = MemoryStore()
    t = 1_800_000_000

    async def body() -> None:
        await store.metrics_add("pod", {}, (t, {"simulate|hit": 1}))
        await store.metrics_add("pod", {}, (t + TRAFFIC_KEEP_S, {"simulate|hit": 1}))
        assert await store.traffic_read(0, t + TRAFFIC_KEEP_S) == {t + TRAFFIC_KEEP_S: {"simulate|hit": 1}}

    run(body())


def test_sizes_count_the_journals_entries_and_the_caches_whichever_handle_wrote_them(backend, run) -> None:
    """What ``GET /metrics`` shows of the journal and the cache: the entries kept fleet-wide, not those sent."""
    a, b = backend.open(), backend.open()

    async def body() -> None:
        assert await b.sizes() == (0, 0)
        await a.journal_append([("e1", b"one"), ("e2", b"two"), ("e3", b"three")], {}, 2)  # the oldest goes
        await a.cache_put({"k1": b"x", "k2": b"y"}, 10)
        await b.cache_put({"k2": b"z", "k3": b"w"}, 10)  # k2 again: one entry
        assert await b.sizes() == (2, 3)
        await a.journal_clear([])
        await b.cache_clear()
        assert await a.sizes() == (0, 0)

    run(body())
