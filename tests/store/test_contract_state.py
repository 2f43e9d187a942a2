"""The ``SharedState`` contract on every store (the ``backend`` fixture's params): the state map,
its version, steps decided on a version, one winner among concurrent transitions, and no step
decided on a simulation that was replaced meanwhile."""

from __future__ import annotations

import asyncio

import pytest

from simproxy.store import SimulationChanged


def test_state_replace_update_and_get(store, run) -> None:
    async def body() -> None:
        assert await store.state_get() == {}
        await store.state_replace({"a": "1", "b": "2"})
        assert await store.state_get() == {"a": "1", "b": "2"}
        await store.state_update({"b": "3", "c": "\u00e9"})
        assert await store.state_get() == {"a": "1", "b": "3", "c": "\u00e9"}
        await store.state_replace({"z": ""})
        assert await store.state_get() == {"z": ""}
        await store.state_replace({})
        assert await store.state_get() == {}

    run(body())


def test_a_state_transition_applies_only_when_every_required_value_holds(store, run) -> None:
    async def body() -> None:
        await store.state_replace({"step": "1", "gone": "x", "keep": "k"})
        assert not await store.state_transition({"step": "2"}, {"step": "3"}, ["keep"])
        assert not await store.state_transition({"step": "1", "missing": "v"}, {"step": "3"}, [])
        assert await store.state_get() == {"step": "1", "gone": "x", "keep": "k"}
        assert await store.state_transition({"step": "1"}, {"step": "2", "new": "n"}, ["gone", "never-there"])
        assert await store.state_get() == {"step": "2", "new": "n", "keep": "k"}
        assert await store.state_transition({}, {}, [])  # nothing required, nothing changed

    run(body())


def test_every_change_of_the_state_moves_its_version(store, run) -> None:
    async def body() -> None:
        v0, state = await store.state_read()
        assert state == {}
        await store.state_update({"a": "1"})
        v1, state = await store.state_read()
        assert v1 > v0 and state == {"a": "1"}
        assert await store.state_transition({"a": "1"}, {"a": "2"}, ())
        await store.state_replace({"b": "x"})
        v2, state = await store.state_read()
        assert v2 > v1 + 1 and state == {"b": "x"}

    run(body())


def test_concurrent_transitions_from_one_state_let_exactly_one_win(backend, run) -> None:
    async def body() -> None:
        handles = [backend.open() for _ in range(4)]
        await handles[0].state_replace({"sequence:1": "1"})
        results = await asyncio.gather(
            *(h.state_transition({"sequence:1": "1"}, {"sequence:1": "2"}, []) for h in handles for _ in range(5))
        )
        assert sorted(results) == [False] * 19 + [True]
        assert await handles[3].state_get() == {"sequence:1": "2"}

    run(body())


def test_a_transition_decided_on_a_replaced_simulation_changes_nothing(store, run) -> None:
    async def body() -> None:
        old = await store.write_document("simulation", b"old")
        await store.state_replace({"sequence:1": "1"})
        version, _ = await store.state_read()
        new = await store.write_document("simulation", b"new")
        assert old is not None and new is not None
        with pytest.raises(SimulationChanged):
            await store.state_transition({}, {"sequence:1": "2"}, (), simulation=old)
        assert await store.state_read() == (version, {"sequence:1": "1"})
        assert await store.state_transition({"sequence:1": "1"}, {"sequence:1": "3"}, (), simulation=new)
        assert await store.state_get() == {"sequence:1": "3"}

    run(body())


def test_an_advance_on_a_held_copy_sends_back_only_a_version_unless_the_copy_is_old(backend, run) -> None:
    async def body() -> None:
        mine, other = backend.open(), backend.open()
        assert await mine.state_advance(0, {}, ()) == (0, None)  # never written: version 0, a copy of {} holds
        await mine.state_replace({"side": "a", "gone": "x"})
        version, _ = await mine.state_read()
        after, state = await mine.state_advance(version, {"side": "b", "new": "n"}, ["gone", "never-there"])
        assert state is None and after > version  # applied: the caller's copy with the step is the state
        assert await other.state_read() == (after, {"side": "b", "new": "n"})
        assert await mine.state_advance(after, {}, ()) == (after, None)  # a check: nothing changes
        assert await mine.state_advance(version, {"side": "z"}, ()) == (after, {"side": "b", "new": "n"})  # old copy
        await other.state_update({"side": "c"})
        current, state = await mine.state_advance(after, {"side": "d"}, ())
        assert state == {"side": "c", "new": "n"} and current > after  # refused, told the state
        assert (await mine.state_advance(current, {}, ["side", "new"]))[1] is None
        assert await other.state_get() == {}

    run(body())


def test_an_advance_decided_on_a_replaced_simulation_changes_nothing(store, run) -> None:
    async def body() -> None:
        old = await store.write_document("simulation", b"old")
        await store.state_replace({"sequence:1": "1"})
        version, _ = await store.state_read()
        new = await store.write_document("simulation", b"new")
        with pytest.raises(SimulationChanged):
            await store.state_advance(version, {"sequence:1": "2"}, (), simulation=old)
        assert await store.state_read() == (version, {"sequence:1": "1"})
        assert (await store.state_advance(version, {"sequence:1": "2"}, (), simulation=new))[1] is None
        assert await store.state_get() == {"sequence:1": "2"}

    run(body())
