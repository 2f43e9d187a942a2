"""A reply that is lost makes nothing happen twice, and an admin write answered 503 was not applied.

A command whose reply does not come may still have run, or may run later: Redis reads what it was
sent once it answers again. Batched writes carry ids Redis records in the step that applies them;
a document write is only applied within its lease and its outcome is read back (store/redis/once.py).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from redis.exceptions import TimeoutError as RedisTimeoutError

from simproxy.admin.process.redisserver import RedisServer, free_port
from simproxy.engine.fleet.runtime import Runtime
from simproxy.engine.journal.recorder import Recorder
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.store import (
    BatchId,
    RedisStore,
    Store,
    StoreUnavailable,
    WriteUnconfirmed,
    key_prefix,
)
from simproxy.store.redis import once
from tests.processes import starts_processes

WRITES: dict[str, Callable[[Any], Awaitable[object]]] = {
    "counters": lambda w: w.add_counters({"simulate": 2}),
    "cache": lambda w: w.cache_put({f"{w.id.writer}-{w.id.seq}": b"entry"}, 10),
    "journal": lambda w: w.journal_append([(f"{w.id.writer}-{w.id.seq}", b"entry")], {}, 100),
    "logs": lambda w: w.logs_append([b"record"], 100),
    "metrics": lambda w: w.metrics_add("pod", {"requests|simulate|hit": 2}, (60, {"simulate|hit": 2})),
}


async def _seen(store: Store, client: Any, prefix: str) -> dict[str, object]:
    """What each kind of batched write left in the store (the cache's recency counter counts puts)."""
    return {
        "counters": await store.read_counters(),
        "cache": (len(await store.cache_entries()), await client.get(f"{key_prefix(prefix)}cache:seq")),
        "journal": len(await store.journal_entries()),
        "logs": len(await store.logs_records()),
        "metrics": (await store.metrics_read("pod"), await store.traffic_read(60, 60)),
    }


@pytest.mark.parametrize("kind", list(WRITES))
def test_a_batch_sent_again_is_applied_once_and_a_late_older_copy_not_at_all(
    redis_backend, redis_client, prefix, run, kind: str
) -> None:
    first, second = redis_backend.open(), redis_backend.open()  # two connections, as a retry has

    async def body() -> None:
        write = WRITES[kind]
        await write(first.batch(BatchId("w", 1)))
        once = await _seen(first, redis_client, prefix)
        await write(second.batch(BatchId("w", 1)))  # the same batch, sent again after a lost reply
        assert await _seen(first, redis_client, prefix) == once
        await write(first.batch(BatchId("w", 3)))
        after_next = await _seen(first, redis_client, prefix)
        assert after_next != once
        await write(second.batch(BatchId("w", 2)))  # a copy of an older batch coming late
        assert await _seen(first, redis_client, prefix) == after_next
        await write(first.batch(BatchId("other writer", 1)))  # numbers are per writer
        assert await _seen(first, redis_client, prefix) != after_next

    run(body())


def test_each_kind_keeps_its_own_numbers(redis_store, run) -> None:
    async def body() -> None:
        await redis_store.batch(BatchId("w", 5)).add_counters({"simulate": 1})
        await redis_store.batch(BatchId("w", 2)).logs_append([b"a record"], 10)  # a lower number, another kind
        assert await redis_store.logs_records() == [b"a record"]
        assert await redis_store.read_counters() == {"simulate": 1}

    run(body())


def test_the_batch_numbers_live_in_one_slot_key_per_writer_that_expires(redis_store, redis_client, prefix, run) -> None:
    async def body() -> None:
        await redis_store.batch(BatchId("w", 7)).add_counters({"simulate": 1})
        await redis_store.batch(BatchId("w", 8)).journal_append([("e", b"entry")], {}, 10)
        key = f"{key_prefix(prefix)}batch:w"
        assert await redis_client.hgetall(key) == {b"counters": b"7"}
        assert await redis_client.ttl(key) > 3600
        # the journal's number lives with the journal it guards, in the journal's own slot
        journal_key = f"{key_prefix(prefix, 'journal')}batch:w"
        assert await redis_client.hgetall(journal_key) == {b"journal": b"8"}
        assert await redis_client.ttl(journal_key) > 3600
        await redis_store.batch(BatchId("w", 9)).metrics_add("pod", {"requests|simulate|hit": 1})
        # the metrics' number is kept with the totals it guards, and read as no metric
        assert await redis_client.hget(f"{key_prefix(prefix)}metrics:pod", "batch|w") == b"9"
        assert await redis_store.metrics_read("pod") == {"requests|simulate|hit": 1.0}

    run(body())


def test_metrics_whose_totals_the_store_lost_are_refused_until_sent_whole(
    redis_store, redis_client, prefix, run
) -> None:
    async def body() -> None:
        assert await redis_store.batch(BatchId("w", 1)).metrics_add("pod", {"requests|simulate|hit": 3})
        assert await redis_store.batch(BatchId("w", 2)).metrics_add("pod", {"requests|simulate|hit": 1}, resumed=True)
        await redis_client.delete(f"{key_prefix(prefix)}metrics:pod")  # a Redis that restarted empty
        lost = redis_store.batch(BatchId("w", 3))
        assert not await lost.metrics_add("pod", {"requests|simulate|hit": 2}, resumed=True)
        assert await redis_store.metrics_read("pod") == {}
        assert await lost.metrics_add("pod", {"requests|simulate|hit": 6})  # the writer's whole totals
        assert await redis_store.metrics_read("pod") == {"requests|simulate|hit": 6.0}

    run(body())


# -- a reply really lost: a paused redis-server ---------------------------------------------------


@pytest.fixture
@starts_processes
def paused_server() -> Iterator[RedisServer]:
    """A redis-server of the test's own, to pause (SIGSTOP) and let go on (SIGCONT)."""
    server = RedisServer(port=free_port()).start()
    try:
        yield server
    finally:
        if server.pid is not None:
            os.kill(server.pid, signal.SIGCONT)
        server.stop()


def _pause(server: RedisServer) -> None:
    assert server.pid is not None
    os.kill(server.pid, signal.SIGSTOP)


def _go_on(server: RedisServer) -> None:
    assert server.pid is not None
    os.kill(server.pid, signal.SIGCONT)


async def _until(check: Callable[[], Awaitable[bool]]) -> None:
    for _ in range(1000):
        if await check():
            return
        await asyncio.sleep(0.01)
    pytest.fail("it never happened")


def test_a_batch_whose_reply_was_lost_and_that_ran_late_is_not_applied_again(paused_server, run) -> None:
    async def body() -> None:
        store = RedisStore.from_url(paused_server.url)
        observer = RedisStore.from_url(paused_server.url)
        try:
            await store.batch(BatchId("w", 1)).add_counters({"warm": 1})  # Redis has the script now
            batch = store.batch(BatchId("w", 2))
            _pause(paused_server)
            try:
                with pytest.raises(StoreUnavailable):
                    await batch.add_counters({"simulate": 5})  # sent; no reply within the timeout
            finally:
                _go_on(paused_server)

            async def first_copy_ran() -> bool:
                return (await observer.read_counters()).get("simulate") == 5

            await _until(first_copy_ran)  # Redis read the copy the client gave up on
            await batch.add_counters({"simulate": 5})  # the worker sends the batch again
            assert await observer.read_counters() == {"warm": 1, "simulate": 5}
            assert store.errors == 1
        finally:
            await store.aclose()
            await observer.aclose()

    run(body())


def test_a_worker_sends_a_batch_again_as_it_was_and_what_came_since_after_it(redis_store, run) -> None:
    """The runtime's flush: a failed batch keeps its id and items; newer counts go in the next batch."""

    async def body() -> None:
        runtime = Runtime(redis_store, MatcherRegistry(), records=Recorder(journal_size=100, logs_size=10))
        real = redis_store.telemetry._counters_script
        calls = 0

        async def applied_then_lost(**kwargs: Any) -> object:
            nonlocal calls
            calls += 1
            result = await real(**kwargs)
            if calls == 1:
                raise RedisTimeoutError("the reply was lost")
            return result

        redis_store.telemetry._counters_script = applied_then_lost
        runtime.count("simulate")
        runtime.count("simulate")
        with pytest.raises(StoreUnavailable):
            await runtime.flush()
        runtime.count("simulate")  # served meanwhile
        await runtime.flush()
        assert await redis_store.read_counters() == {"simulate": 3}
        assert calls == 3  # the lost batch again (dropped as applied), then the new one

    run(body())


# -- document writes ----------------------------------------------------------------------------


@pytest.fixture
def short_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lease just above the socket timeout (1 s), so that the tests wait it out quickly."""
    monkeypatch.setattr(once, "WRITE_LEASE", 1.2)


def _lose_reply(store: RedisStore, *, run_it: bool, before: Callable[[], None] = lambda: None) -> list[Any]:
    """Make the store's next document write lose its reply, after running (``run_it``) or before
    the script reached Redis; returns where the script's arguments are kept, to send a late copy."""
    real = store.documents._write_script
    sent: list[Any] = []

    async def lost(**kwargs: Any) -> object:
        sent.append(kwargs)
        store.documents._write_script = real
        before()
        if run_it:
            await real(**kwargs)
        raise RedisTimeoutError("Timeout reading from the server")

    store.documents._write_script = lost
    return sent


def test_a_write_applied_whose_reply_was_lost_answers_its_generation(redis_store, run, short_lease) -> None:
    async def body() -> None:
        before = await redis_store.write_document("simulation", b"one")
        assert before is not None
        _lose_reply(redis_store, run_it=True)
        written = await redis_store.write_document("simulation", b"two", expected_version=before)
        assert written is not None and written > before
        assert await redis_store.read_document("simulation") == (written, b"two")

    run(body())


def test_a_compare_and_set_that_failed_and_whose_reply_was_lost_answers_none(redis_store, run, short_lease) -> None:
    async def body() -> None:
        current = await redis_store.write_document("config", b"one")
        _lose_reply(redis_store, run_it=True)
        assert await redis_store.write_document("config", b"stale", expected_version=0) is None
        assert await redis_store.read_document("config") == (current, b"one")

    run(body())


def test_a_write_lost_on_its_way_is_unavailable_and_a_late_copy_changes_nothing(redis_store, run, short_lease) -> None:
    async def body() -> None:
        current = await redis_store.write_document("simulation", b"one")
        sent = _lose_reply(redis_store, run_it=False)
        with pytest.raises(StoreUnavailable, match="not applied") as raised:
            await redis_store.write_document("simulation", b"two")
        assert not isinstance(raised.value, WriteUnconfirmed)
        assert await redis_store.documents._write_script(**sent[0]) == -1  # the copy Redis reads late is refused
        assert await redis_store.read_document("simulation") == (current, b"one")

    run(body())


def test_a_write_sent_to_a_paused_redis_that_runs_late_was_not_applied(paused_server, run, short_lease) -> None:
    """The real thing: the write reaches a paused Redis, its reply times out, and Redis goes on after
    the lease ran out, reading the write then: the write answered "not applied" was not."""

    async def body() -> None:
        store = RedisStore.from_url(paused_server.url)
        try:
            current = await store.write_document("simulation", b"one")

            def pause_until_the_lease_is_over() -> None:
                _pause(paused_server)
                threading.Timer(2.0, _go_on, (paused_server,)).start()  # the lease is 1.2 s

            _lose_reply(store, run_it=True, before=pause_until_the_lease_is_over)
            with pytest.raises(StoreUnavailable, match="not applied"):
                await store.write_document("simulation", b"two")
            assert await store.read_document("simulation") == (current, b"one")
            assert await store.write_document("simulation", b"three") is not None  # and it goes on
        finally:
            await store.aclose()

    run(body())


def test_a_write_whose_outcome_cannot_be_read_is_unconfirmed(
    paused_server, run, short_lease, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(once, "WRITE_LOOKUP", 2.0)

    async def body() -> None:
        store = RedisStore.from_url(paused_server.url)
        try:
            _lose_reply(store, run_it=True, before=lambda: _pause(paused_server))
            with pytest.raises(WriteUnconfirmed, match="may have been applied"):
                await store.write_document("simulation", b"two")
            _go_on(paused_server)
            assert store.errors >= 2  # the lost reply, and the lookups that went unanswered
            # Redis now reads the write it was sent: after the lease, so that changes nothing
            assert await store.read_document("simulation") is None
            written = await store.write_document("simulation", b"three")
            assert written is not None and await store.read_document("simulation") == (written, b"three")
        finally:
            await store.aclose()

    run(body())
