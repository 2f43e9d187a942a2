"""The ``BatchWriter`` contract on every store: a batch's writes land as the direct writes do, seen
through any handle. That a batch sent again is applied once is Redis's own (test_exactly_once.py):
the in-process store loses no reply, and is its own batch writer."""

from __future__ import annotations

from simproxy.store import BatchId, MemoryStore


def test_every_kind_of_batched_write_is_read_back_through_another_handle(backend, run) -> None:
    writer, reader = backend.open(), backend.open()

    async def body() -> None:
        batch = writer.batch(BatchId("w", 1))
        await batch.add_counters({"simulate": 2})
        await batch.cache_put({"k": b"entry"}, 10)
        await batch.journal_append([("e1", b"entry")], {"Request.Method": {"GET": "e1"}}, 10)
        await batch.logs_append([b"record"], 10)
        assert await batch.metrics_add("pod", {"requests|simulate|hit": 2}, (60, {"simulate|hit": 2}))
        assert await reader.read_counters() == {"simulate": 2}
        assert await reader.cache_entries() == {"k": b"entry"}
        assert await reader.journal_entries() == [b"entry"]
        assert await reader.journal_lookup("Request.Method", ["GET"]) == [b"entry"]
        assert await reader.logs_records() == [b"record"]
        assert await reader.metrics_read("pod") == {"requests|simulate|hit": 2}
        assert await reader.traffic_read(60, 60) == {60: {"simulate|hit": 2}}

    run(body())


def test_the_in_process_store_is_its_own_batch_writer(run) -> None:
    store = MemoryStore()
    assert store.batch(BatchId("w", 1)) is store
    assert run(store.metrics_add("pod", {"requests|simulate|hit": 1}, resumed=True))
