"""The ``Workers`` contract on every store: heartbeats and acks within a window, unregistering, and
when the registry began."""

from __future__ import annotations


def test_worker_acks_only_lists_workers_seen_within_the_window(backend, run) -> None:
    worker_a, worker_b, observer = backend.open(), backend.open(), backend.open()

    async def body() -> None:
        await worker_a.heartbeat("a", 3, 1_000)
        await worker_b.heartbeat("b", 5, 2_000)
        assert await observer.worker_acks(0) == {"a": 3, "b": 5}
        assert await observer.worker_acks(1_000) == {"a": 3, "b": 5}  # a heartbeat at the bound counts
        assert await observer.worker_acks(1_001) == {"b": 5}
        assert await observer.worker_acks(2_000) == {"b": 5}
        assert await observer.worker_acks(2_001) == {}

        await worker_a.heartbeat("a", 7, 2_500)  # a later heartbeat replaces both the time and the ack
        assert await observer.worker_acks(2_001) == {"a": 7}
        assert await observer.worker_acks(0) == {"a": 7, "b": 5}

    run(body())


def test_unregister_removes_only_that_worker(backend, run) -> None:
    worker_a, worker_b = backend.open(), backend.open()

    async def body() -> None:
        await worker_a.heartbeat("a", 1, 5_000)
        await worker_b.heartbeat("b", 1, 5_000)
        await worker_a.unregister("a")
        assert await worker_b.worker_acks(0) == {"b": 1}
        await worker_a.unregister("never-registered")
        assert await worker_b.worker_acks(0) == {"b": 1}

        await worker_a.heartbeat("a", 4, 6_000)  # a worker that comes back is listed again, with its new ack
        assert await worker_b.worker_acks(0) == {"a": 4, "b": 1}

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


def test_the_registry_began_with_the_first_heartbeat_any_handle_sent(backend, run) -> None:
    """A young registry (a Redis that restarted empty) may miss workers: the runtime asks when it began."""
    worker_a, worker_b, observer = backend.open(), backend.open(), backend.open()

    async def body() -> None:
        assert await observer.registry_since() is None
        await worker_a.heartbeat("a", 1, 5_000)
        await worker_b.heartbeat("b", 1, 7_000)
        await worker_a.unregister("a")
        assert await observer.registry_since() == 5_000  # not moved by later heartbeats, nor by leaving

    run(body())
