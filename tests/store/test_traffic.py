"""The fleet's per-second traffic and its live workers, as every implementation keeps them."""

from __future__ import annotations

from simproxy.store import TRAFFIC_KEEP_S, MemoryStore


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


def test_worker_heartbeats_list_the_live_workers_with_their_last_heartbeat(backend, run) -> None:
    worker_a, worker_b, observer = backend.open(), backend.open(), backend.open()

    async def body() -> None:
        await worker_a.heartbeat("pod-a/11", 3, 1_000)
        await worker_b.heartbeat("pod-b/12", 3, 2_000)
        assert await observer.worker_heartbeats(0) == {"pod-a/11": 1_000, "pod-b/12": 2_000}
        assert await observer.worker_heartbeats(1_500) == {"pod-b/12": 2_000}
        await worker_b.unregister("pod-b/12")
        assert await observer.worker_heartbeats(0) == {"pod-a/11": 1_000}

    run(body())
