"""The fleet's CA in the store: one per pair of names, a document of one CA read as before."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine.server.certs import CA_DOCUMENT, fleet_ca, generate_ca
from store import MemoryStore

HOVERFLYS = ("hoverfly.proxy", "Hoverfly Authority")


def test_a_document_of_one_ca_is_used_for_its_names_and_kept_beside_a_new_one(tmp_path: Path) -> None:
    async def body() -> None:
        store = MemoryStore()
        old = generate_ca()  # simproxy's names, stored as a single CA
        assert await store.write_document(CA_DOCUMENT, old.to_json(), expected_version=0) is not None
        assert await fleet_ca(store, None, tmp_path / "a") == old
        hoverflys = await fleet_ca(store, None, tmp_path / "b", HOVERFLYS)
        assert hoverflys != old
        assert await fleet_ca(store, None, tmp_path / "c") == old  # still there beside it
        assert await fleet_ca(store, None, tmp_path / "d", HOVERFLYS) == hoverflys

    asyncio.run(body())


def test_workers_racing_for_the_first_ca_all_use_the_one_stored(tmp_path: Path) -> None:
    async def body() -> None:
        store = MemoryStore()
        found = await asyncio.gather(*(fleet_ca(store, None, tmp_path / str(i)) for i in range(4)))
        assert len(set(found)) == 1

    asyncio.run(body())
