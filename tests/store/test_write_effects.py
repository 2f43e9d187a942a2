"""Contract, on both stores: an import's effects go with its document in one step, and a state step
decided on a simulation that was replaced meanwhile changes nothing."""

from __future__ import annotations

import pytest

from simproxy.store import SimulationChanged, WriteEffects


def test_a_write_clears_the_cache_and_sets_state_with_its_document(store, run) -> None:
    async def body() -> None:
        await store.cache_put({"k": b"entry"}, 10)
        await store.state_replace({"sequence:1": "3", "other": "kept"})
        version, _ = await store.state_read()
        effects = WriteEffects(clear_cache=True, state=(("sequence:1", "1"), ("sequence:2", "1")))
        written = await store.write_document("simulation", b"new", None, effects)
        assert written is not None and await store.read_document("simulation") == (written, b"new")
        assert await store.cache_entries() == {}
        after, state = await store.state_read()
        assert state == {"sequence:1": "1", "sequence:2": "1", "other": "kept"} and after > version

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
        version, _ = await store.state_read()
        assert await store.write_document("config", b"{}") is not None
        assert await store.cache_entries() == {"k": b"entry"}
        assert await store.state_read() == (version, {"a": "1"})

    run(body())


def test_a_state_step_decided_on_a_replaced_simulation_changes_nothing(store, run) -> None:
    async def body() -> None:
        old = await store.write_document("simulation", b"old")
        await store.state_replace({"sequence:1": "1"})
        version, _ = await store.state_read()
        new = await store.write_document("simulation", b"new")
        assert old is not None and new is not None
        with pytest.raises(SimulationChanged):
            await store.state_step(version, {"sequence:1": "2"}, (), simulation=old)
        with pytest.raises(SimulationChanged):
            await store.state_transition({}, {"sequence:1": "2"}, (), simulation=old)
        assert await store.state_read() == (version, {"sequence:1": "1"})
        assert (await store.state_step(version, {"sequence:1": "2"}, (), simulation=new))[0] is True
        assert await store.state_transition({"sequence:1": "2"}, {"sequence:1": "3"}, (), simulation=new)
        assert await store.state_get() == {"sequence:1": "3"}

    run(body())
