"""What only the in-process store has: it keeps the caller's bytes, not a reference to them."""

from __future__ import annotations

from simproxy.store import MemoryStore
from tests.store.test_contract_documents import _at


def test_the_stored_body_is_a_copy_of_what_was_written(run) -> None:
    store = MemoryStore()
    buffer = bytearray(b"original")

    async def body() -> None:
        assert await store.write_document("simulation", buffer) == 1
        buffer[:] = b"mutated!"
        doc = await store.read_document("simulation")
        assert doc == (1, b"original")
        assert doc is not None
        assert type(doc[1]) is bytes
        assert await store.read_versions() == _at(1, simulation=1)

    run(body())


def test_journal_entries_that_are_not_bytes_are_kept_as_given(run) -> None:
    store = MemoryStore()
    entry = ("prefix", 7, b"GET / HTTP/1.1\r\n\r\n")

    async def body() -> None:
        await store.journal_append([("a", entry), ("b", b"bytes")], {"Request.Method": {"GET": "a"}}, 10)
        stored = await store.journal_entries()
        assert stored == [entry, b"bytes"] and stored[0] is entry
        assert await store.journal_lookup("Request.Method", ["GET"]) == [entry]

    run(body())
