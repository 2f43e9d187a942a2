"""The ``SharedState`` contract on every store (the ``backend`` fixture's params): the state map,
its eras and groups, steps decided on a group's version, one winner among concurrent steps, no step
decided in an era that ended (a new simulation, a write of the state), and a new simulation's
layout brought in with every value kept."""

from __future__ import annotations

import asyncio

import pytest

from simproxy.store import EraChanged, WriteEffects


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


FLIP = {"flip": frozenset({"side"})}
SEQUENCES = {"one": frozenset({"sequence:1"}), "two": frozenset({"sequence:2"})}


async def _fitted(store, layout, body: bytes = b"sim"):  # type: ignore[no-untyped-def]
    """Write a simulation and bring its layout, as the first worker to step on it does."""
    simulation = await store.write_document("simulation", body)
    await store.state_fit(layout, simulation)
    copy = await store.state_copy()
    assert copy.fit and copy.simulation == simulation and dict(copy.layout) == layout
    return copy


def test_a_write_of_the_state_ends_its_era_and_a_step_moves_its_group(store, run) -> None:
    async def body() -> None:
        first = await _fitted(store, SEQUENCES)
        await store.state_update({"sequence:1": "1"})
        copy = await store.state_copy()
        assert copy.era > first.era and dict(copy.values) == {"sequence:1": "1"}
        assert copy.fit and dict(copy.layout) == SEQUENCES  # a write of the state keeps the layout
        after, refused = await store.state_advance(copy.era, "one", copy.versions["one"], {"sequence:1": "2"}, ())
        assert refused is None and after > copy.versions["one"]
        again = await store.state_copy()
        assert again.era == copy.era and again.versions["one"] == after and dict(again.values) == {"sequence:1": "2"}
        await store.state_replace({"b": "x"})
        assert (await store.state_copy()).era > copy.era
        assert await store.state_get() == {"b": "x"}

    run(body())


def test_concurrent_steps_from_one_copy_let_exactly_one_win(backend, run) -> None:
    async def body() -> None:
        handles = [backend.open() for _ in range(4)]
        await _fitted(handles[0], SEQUENCES)
        await handles[0].state_replace({"sequence:1": "1"})
        copy = await handles[1].state_copy()
        version = copy.versions["one"]
        results = await asyncio.gather(
            *(h.state_advance(copy.era, "one", version, {"sequence:1": "2"}, ()) for h in handles for _ in range(5))
        )
        assert sorted(refused is None for _, refused in results) == [False] * 19 + [True]
        assert await handles[3].state_get() == {"sequence:1": "2"}

    run(body())


def test_an_advance_on_a_held_copy_sends_back_only_a_version_unless_the_copy_is_old(backend, run) -> None:
    async def body() -> None:
        mine, other = backend.open(), backend.open()
        await _fitted(mine, {"flip": frozenset({"side", "gone", "new"})})
        await mine.state_replace({"side": "a", "gone": "x"})
        copy = await mine.state_copy()
        era, version = copy.era, copy.versions["flip"]
        after, state = await mine.state_advance(era, "flip", version, {"side": "b", "new": "n"}, ["gone", "never"])
        assert state is None and after > version  # applied: the caller's copy with the step is the state
        assert dict((await other.state_copy()).values) == {"side": "b", "new": "n"}
        assert await mine.state_advance(era, "flip", after, {}, ()) == (after, None)  # a check: nothing changes
        old = await mine.state_advance(era, "flip", version, {"side": "z"}, ())
        assert old == (after, {"side": "b", "new": "n"})  # an old copy: refused, told the group
        assert (await mine.state_advance(era, "flip", after, {}, ["side", "new"]))[1] is None
        assert await other.state_get() == {}

    run(body())


def test_a_step_decided_in_an_era_that_ended_changes_nothing(store, run) -> None:
    async def body() -> None:
        await _fitted(store, SEQUENCES, b"old")
        await store.state_replace({"sequence:1": "1"})
        copy = await store.state_copy()
        new = await store.write_document("simulation", b"new")  # an import: a new era
        with pytest.raises(EraChanged):
            await store.state_advance(copy.era, "one", copy.versions["one"], {"sequence:1": "2"}, ())
        assert await store.state_get() == {"sequence:1": "1"}
        now = await store.state_copy()
        assert (now.simulation, now.fit) == (new, False)  # of the new simulation, not in its layout yet
        await store.state_update({"sequence:1": "5"})  # so does a write of the state
        with pytest.raises(EraChanged):
            await store.state_advance(now.era, "one", now.versions.get("one", 0), {"sequence:1": "2"}, ())
        assert await store.state_get() == {"sequence:1": "5"}

    run(body())


def test_a_new_simulation_s_layout_keeps_every_value(store, run) -> None:
    async def body() -> None:
        first = await _fitted(store, {"both": frozenset({"side", "sequence:1"})}, b"old")
        await store.state_replace({"side": "a", "sequence:1": "1", "loose": "x"})
        copy = await store.state_copy()
        await store.state_advance(copy.era, "both", copy.versions["both"], {"side": "b", "sequence:1": "3"}, ())
        simulation = await store.write_document("simulation", b"new", None, WriteEffects(state=(("sequence:2", "1"),)))
        layout = {"flip": frozenset({"side"}), "one": frozenset({"sequence:1"}), "two": frozenset({"sequence:2"})}
        await store.state_fit(layout, simulation)
        copy = await store.state_copy()
        assert (copy.simulation, copy.fit, dict(copy.layout)) == (simulation, True, layout)
        assert dict(copy.values) == {"side": "b", "sequence:1": "3", "sequence:2": "1", "loose": "x"}
        await store.state_fit(layout, simulation)  # brought already: nothing happens
        await store.state_fit(first.layout, first.simulation)  # an older simulation's: nothing happens
        assert (await store.state_copy()).era == copy.era
        after, _ = await store.state_advance(copy.era, "two", copy.versions["two"], {"sequence:2": "2"}, ())
        assert await store.state_get() == {"side": "b", "sequence:1": "3", "sequence:2": "2", "loose": "x"}
        assert after > copy.versions["two"]

    run(body())


def test_a_copy_checks_out_only_while_no_group_moved(backend, run) -> None:
    async def body() -> None:
        mine, other = backend.open(), backend.open()
        await _fitted(mine, SEQUENCES)
        await mine.state_replace({"sequence:1": "1", "sequence:2": "1"})
        copy = await mine.state_copy()
        assert await other.state_moved(copy) == set()
        moved = await other.state_copy()
        await other.state_advance(moved.era, "two", moved.versions["two"], {"sequence:2": "2"}, ())
        assert await mine.state_moved(copy) == {"two"}  # a miss decided on it would not hold
        assert await mine.state_moved(copy, skip="two") == set()
        assert await mine.state_moved(await mine.state_copy()) == set()
        await other.state_update({"x": "y"})
        assert await mine.state_moved(copy) is None  # another era

    run(body())
