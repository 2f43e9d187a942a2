"""The contract of a store as a whole, on every implementation: a fresh store holds nothing, and
stores on different prefixes share nothing, whichever role is asked."""

from __future__ import annotations

from simproxy.store import DOCUMENTS
from tests.store.test_contract_documents import NEVER, _at, _origin


def test_a_fresh_store_is_at_generation_0_with_no_documents(store, run) -> None:
    async def body() -> None:
        await store.ping()
        assert await store.read_versions() == NEVER
        for name in DOCUMENTS:
            assert await store.read_document(name) is None
        assert await store.read_counters() == {}
        assert await store.worker_acks(0) == {}

    run(body())


def test_different_prefixes_share_nothing(backend, run) -> None:
    mine = backend.open()
    # a prefix that starts with this one, and one that is unrelated
    others = [backend.open(f"{backend.prefix}nested:"), backend.open(f"other-{backend.prefix}")]

    async def body() -> None:
        g = await _origin(mine.write_document("simulation", b"mine"))
        assert await mine.write_document("config", b"mine") == g + 2
        await mine.add_counters({"simulate": 7})
        await mine.heartbeat("worker-a", g + 2, 1_000)
        for other in others:
            assert await other.read_versions() == NEVER
            assert await other.read_document("simulation") is None
            assert await other.read_counters() == {}
            assert await other.worker_acks(0) == {}
            h = await _origin(other.bump_generation())  # its own counter, starting from scratch
            assert await other.write_document("simulation", b"other", expected_version=0) == h + 2
            assert await mine.read_versions() == _at(g + 2, simulation=g + 1, config=g + 2)
        assert await mine.read_document("simulation") == (g + 1, b"mine")

    run(body())
