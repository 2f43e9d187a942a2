"""The fleet's CA in the store: one per pair of names, a document of one CA read as before."""

from __future__ import annotations

import asyncio
from pathlib import Path

from simproxy.engine.server.certs import CA_DOCUMENT, CertificateAuthority, fleet_ca, generate_ca
from simproxy.store import MemoryStore

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
        # every one that tried to store its own keeps the fleet's for its next run
        assert {(tmp_path / str(i) / "ca.pem").read_bytes() for i in range(4)} == {found[0].cert_pem}

    asyncio.run(body())


def test_the_document_still_holds_one_ca_where_an_older_simproxy_reads_it(tmp_path: Path) -> None:
    """A rolling update or a rollback: a simproxy that knows one CA per store reads ``cert``/``key``."""

    async def body() -> None:
        store = MemoryStore()
        hoverflys = await fleet_ca(store, None, tmp_path / "a", HOVERFLYS)
        doc = await store.read_document(CA_DOCUMENT)
        assert doc is not None and CertificateAuthority.from_json(doc[1]) == hoverflys  # the only one yet
        ours = await fleet_ca(store, None, tmp_path / "b")
        doc = await store.read_document(CA_DOCUMENT)
        assert doc is not None and CertificateAuthority.from_json(doc[1]) == ours  # simproxy's names first
        assert await fleet_ca(store, None, tmp_path / "c", HOVERFLYS) == hoverflys

    asyncio.run(body())
