"""The ``Documents`` contract, run against every implementation (the ``backend`` fixture's params):
generations, document versions and bodies, compare-and-set, a write's effects, and events.

Only what a caller (``engine.fleet.runtime``) can observe is asserted. ``backend.open()`` gives a second
handle on the same store: for Redis a client of its own, i.e. what another worker sees. Each role of
store/base.py has a contract file of its own (test_contract_<role>.py, as store/memory/<role>.py and
store/redis/<role>.py); what spans them is in test_contract_store.py.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable

import pytest

from simproxy.store import DOCUMENTS, Documents, StoreUnavailable, Versions, WriteEffects


def _at(generation: int, **documents: int) -> Versions:
    """The versions at ``generation``, every document not named at 0 (never written)."""
    return Versions(generation, {name: documents.get(name, 0) for name in DOCUMENTS})


NEVER = _at(0)


async def _origin(first_bump: Awaitable[int | None]) -> int:
    """The generation before a fresh store's first bump (0 in memory; the clock on Redis, see below)."""
    generation = await first_bump
    assert generation is not None and generation > 0
    return generation - 1


def test_the_documents_are_the_simulation_config_data_sources_ca_auth_secret_and_last_start_up() -> None:
    assert DOCUMENTS == ("simulation", "config", "csv", "ca", "auth", "startup")


def test_each_write_bumps_the_generation_and_versions_the_document_with_it(store, run) -> None:
    async def body() -> None:
        g = await _origin(store.write_document("simulation", b"sim-1"))
        assert await store.read_document("simulation") == (g + 1, b"sim-1")
        assert await store.read_document("config") is None
        assert await store.read_versions() == _at(g + 1, simulation=g + 1)

        assert await store.write_document("config", b"cfg-1") == g + 2
        assert await store.read_versions() == _at(g + 2, simulation=g + 1, config=g + 2)

        assert await store.write_document("simulation", b"sim-2") == g + 3
        assert await store.read_document("simulation") == (g + 3, b"sim-2")
        assert await store.read_document("config") == (g + 2, b"cfg-1")
        assert await store.read_versions() == _at(g + 3, simulation=g + 3, config=g + 2)

    run(body())


@pytest.mark.parametrize(
    "payload",
    [b"", bytes(range(256)) * 4, '{"x": "\u00e9\u2603"}'.encode()],
    ids=["empty", "every-byte", "utf8-json"],
)
def test_a_document_body_round_trips_byte_for_byte(store, run, payload: bytes) -> None:
    async def body() -> None:
        version = await store.write_document("config", payload)
        doc = await store.read_document("config")
        assert doc == (version, payload)
        assert doc is not None
        assert type(doc[1]) is bytes

    run(body())


def test_bump_generation_increments_without_touching_documents(store, run) -> None:
    async def body() -> None:
        g = await _origin(store.bump_generation())
        assert await store.bump_generation() == g + 2
        assert await store.read_versions() == _at(g + 2)
        assert await store.read_document("simulation") is None

        assert await store.write_document("simulation", b"s") == g + 3
        assert await store.bump_generation() == g + 4
        assert await store.read_versions() == _at(g + 4, simulation=g + 3)
        assert await store.read_document("simulation") == (g + 3, b"s")

    run(body())


def test_compare_and_set_with_a_stale_version_changes_nothing(store, run) -> None:
    async def body() -> None:
        g = await _origin(store.write_document("simulation", b"first"))
        assert await store.write_document("simulation", b"second", expected_version=g + 1) == g + 2

        for stale in (0, g + 1, g + 3, g + 99):
            assert await store.write_document("simulation", b"lost", expected_version=stale) is None
        assert await store.read_document("simulation") == (g + 2, b"second")
        assert await store.read_versions() == _at(g + 2, simulation=g + 2)
        # nothing was consumed by the failed attempts: the next write gets the very next generation
        assert await store.write_document("simulation", b"third", expected_version=g + 2) == g + 3

    run(body())


def test_compare_and_set_with_version_0_succeeds_only_if_never_written(store, run) -> None:
    async def body() -> None:
        g = await _origin(store.write_document("config", b"created", expected_version=0))
        assert await store.write_document("config", b"again", expected_version=0) is None
        assert await store.read_document("config") == (g + 1, b"created")
        assert await store.read_versions() == _at(g + 1, config=g + 1)

    run(body())


def test_compare_and_set_checks_the_documents_own_version_not_the_generation(store, run) -> None:
    async def body() -> None:
        g = await _origin(store.write_document("simulation", b"s1"))
        assert await store.bump_generation() == g + 2
        # simulation's write is not config's, and the generation is not the simulation's version
        assert await store.write_document("config", b"c1", expected_version=0) == g + 3
        assert await store.write_document("simulation", b"s2", expected_version=g + 3) is None
        assert await store.write_document("simulation", b"s2", expected_version=g + 1) == g + 4
        assert await store.read_versions() == _at(g + 4, simulation=g + 4, config=g + 3)

    run(body())


def test_an_unconditional_write_ignores_the_current_version(store, run) -> None:
    async def body() -> None:
        g = await _origin(store.write_document("simulation", b"a", expected_version=0))
        assert await store.write_document("simulation", b"b") == g + 2
        assert await store.write_document("simulation", b"c", expected_version=None) == g + 3
        assert await store.read_document("simulation") == (g + 3, b"c")

    run(body())


def test_a_write_through_one_handle_is_read_through_another(backend, run) -> None:
    writer, reader = backend.open(), backend.open()

    async def body() -> None:
        g = await _origin(writer.write_document("simulation", b"shared"))
        assert await reader.read_document("simulation") == (g + 1, b"shared")
        assert await reader.bump_generation() == g + 2
        assert await writer.read_versions() == _at(g + 2, simulation=g + 1)
        # compare-and-set is judged against the shared document, whichever handle wrote it
        assert await reader.write_document("simulation", b"from-reader", expected_version=g + 1) == g + 3
        assert await writer.write_document("simulation", b"from-writer", expected_version=g + 1) is None
        assert await writer.read_document("simulation") == (g + 3, b"from-reader")

    run(body())


def test_concurrent_compare_and_set_on_one_version_lets_exactly_one_write_win(backend, run) -> None:
    handles = [backend.open(), backend.open()]

    async def body() -> None:
        attempts = [
            handles[i % 2].write_document("simulation", f"writer-{i}".encode(), expected_version=0) for i in range(10)
        ]
        results = await asyncio.gather(*attempts)
        winners = [i for i, generation in enumerate(results) if generation is not None]
        assert len(winners) == 1, results
        won = results[winners[0]]
        assert won is not None and won > 0
        assert await handles[0].read_document("simulation") == (won, f"writer-{winners[0]}".encode())
        assert await handles[1].read_versions() == _at(won, simulation=won)

    run(body())


def test_concurrent_writes_and_bumps_get_distinct_consecutive_generations(backend, run) -> None:
    handles = [backend.open(), backend.open()]

    async def body() -> None:
        calls = []
        for i in range(30):
            handle = handles[i % 2]
            if i % 3 == 0:
                calls.append(handle.bump_generation())
            else:
                calls.append(handle.write_document(DOCUMENTS[i % 2], f"{i}".encode()))
        generations = await asyncio.gather(*calls)
        g = min(generations) - 1
        assert sorted(generations) == list(range(g + 1, g + 31))
        versions = await handles[0].read_versions()
        assert versions.generation == g + 30
        for name in DOCUMENTS[:2]:  # the documents this test wrote
            written = [generations[i] for i in range(30) if i % 3 and DOCUMENTS[i % 2] == name]
            doc = await handles[1].read_document(name)
            assert doc is not None
            assert doc[0] == versions.documents[name] == max(written)
            assert generations[int(doc[1])] == doc[0]  # the body is the one whose write got that generation

    run(body())


# -- a write's effects: the match cache cleared and state set in the same step ---------------------


def test_a_write_clears_the_cache_and_sets_state_with_its_document(store, run) -> None:
    async def body() -> None:
        await store.cache_put({"k": b"entry"}, 10)
        await store.state_replace({"sequence:1": "3", "other": "kept"})
        before = await store.state_copy()
        effects = WriteEffects(clear_cache=True, state=(("sequence:1", "1"), ("sequence:2", "1")))
        written = await store.write_document("simulation", b"new", None, effects)
        assert written is not None and await store.read_document("simulation") == (written, b"new")
        assert await store.cache_entries() == {}
        after = await store.state_copy()
        assert dict(after.values) == {"sequence:1": "1", "sequence:2": "1", "other": "kept"}
        assert after.era > before.era and after.simulation == written  # a new era, of the new simulation

    run(body())


def test_a_write_refused_by_its_compare_and_set_has_no_effects(store, run) -> None:
    async def body() -> None:
        first = await store.write_document("simulation", b"one")
        await store.cache_put({"k": b"entry"}, 10)
        await store.state_replace({"sequence:1": "3"})
        assert first is not None
        effects = WriteEffects(clear_cache=True, state=(("sequence:1", "1"),))
        assert await store.write_document("simulation", b"two", first + 1000, effects) is None
        assert await store.cache_entries() == {"k": b"entry"}
        assert await store.state_get() == {"sequence:1": "3"}

    run(body())


def test_a_write_without_effects_leaves_cache_and_state_alone(store, run) -> None:
    async def body() -> None:
        await store.cache_put({"k": b"entry"}, 10)
        await store.state_replace({"a": "1"})
        copy = await store.state_copy()
        assert await store.write_document("config", b"{}") is not None
        assert await store.cache_entries() == {"k": b"entry"}
        assert await store.state_moved(copy) == set() and dict(copy.values) == {"a": "1"}  # the same era, unchanged

    run(body())


# -- events: published generations -------------------------------------------------------------


async def _drain_into(store: Documents, received: asyncio.Queue[int]) -> None:
    async with contextlib.aclosing(store.subscribe()) as events:
        async for generation in events:
            await received.put(generation)


@pytest.mark.parametrize("backend", ["redis"], indirect=True)
def test_published_generations_reach_subscribers_on_other_clients(backend, run) -> None:
    publisher = backend.open()
    subscribers = [backend.open(), backend.open()]

    async def body() -> None:
        queues: list[asyncio.Queue[int]] = [asyncio.Queue() for _ in subscribers]
        tasks = [asyncio.create_task(_drain_into(s, q)) for s, q in zip(subscribers, queues, strict=True)]
        try:
            async with asyncio.timeout(5):
                # subscribing happens in the background: announce 1 until both subscribers hear it
                while any(q.empty() for q in queues):
                    await publisher.publish(1)
                    await asyncio.sleep(0.01)
                for generation in (7, 8, 9):
                    await publisher.publish(generation)
                for queue in queues:
                    heard = [await queue.get()]
                    while heard[-1] == 1:
                        heard.append(await queue.get())
                    heard += [await queue.get(), await queue.get()]
                    assert heard[-3:] == [7, 8, 9]
            assert all(q.empty() for q in queues)
            assert not any(t.done() for t in tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    run(body())


@pytest.mark.parametrize("backend", ["memory"], indirect=True)
def test_memory_subscriber_never_yields_and_ends_when_the_store_is_closed(backend, run) -> None:
    store = backend.open()

    async def body() -> None:
        received: asyncio.Queue[int] = asyncio.Queue()
        task = asyncio.create_task(_drain_into(store, received))
        await store.publish(1)
        await store.write_document("simulation", b"s")
        await asyncio.sleep(0.05)
        assert not task.done()
        assert received.empty()

        await store.aclose()
        await asyncio.wait_for(task, timeout=1)  # ends, and without an error
        assert received.empty()
        # a subscription opened after closing ends at once
        await asyncio.wait_for(_drain_into(store, received), timeout=1)
        assert received.empty()

    run(body())


@pytest.mark.parametrize("backend", ["redis"], indirect=True)
def test_redis_subscriber_raises_store_unavailable_when_its_store_is_closed(backend, run) -> None:
    store = backend.open()

    async def body() -> None:
        received: asyncio.Queue[int] = asyncio.Queue()
        task = asyncio.create_task(_drain_into(store, received))
        await asyncio.sleep(0.1)
        assert not task.done()
        await store.aclose()
        with pytest.raises(StoreUnavailable):
            await asyncio.wait_for(task, timeout=2)
        assert received.empty()

    run(body())
