"""The Redis store's state in groups and eras (store/redis/eras.py): a layout change keeps every
value, a step decided in an ended era changes nothing, a drainer that died leaves nothing stuck,
and every group lives under a hash tag of its own."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.crc import key_slot

from simproxy.store import EraChanged, RedisStore, StoreUnavailable
from simproxy.store.redis import erascripts
from simproxy.store.redis.eras import TOMBSTONE_MS, _each, _Era, layout_json
from tests.store.conftest import Backend, Run

FLIP = {"flip": frozenset({"side"})}
SEQUENCES = {"one": frozenset({"sequence:1"}), "two": frozenset({"sequence:2"})}


def test_no_era_reads_as_an_empty_state(redis_store: RedisStore, run: Run) -> None:
    async def body() -> None:
        copy = await redis_store.eras.copy()
        assert (copy.era, dict(copy.values), dict(copy.versions)) == (0, {}, {})
        assert await redis_store.eras.view() == {}

    run(body())


def test_an_era_keeps_its_groups_in_slots_of_their_own_and_the_rest_in_its_base(
    redis_store: RedisStore, redis_client: aioredis.Redis, run: Run
) -> None:
    async def body() -> None:
        era = await redis_store.eras.begin(SEQUENCES, {"sequence:1": "1", "sequence:2": "4", "loose": "x"}, False)
        copy = await redis_store.eras.copy()
        assert copy.era == era and copy.layout == SEQUENCES
        assert dict(copy.values) == {"sequence:1": "1", "sequence:2": "4", "loose": "x"}
        keys = redis_store.link.keys
        one, two = keys.group_keys("one")[0], keys.group_keys("two")[0]
        assert await redis_client.hgetall(one) == {b"sequence:1": b"1"}
        assert await redis_client.hgetall(two) == {b"sequence:2": b"4"}
        assert len({key_slot(one.encode()), key_slot(two.encode()), key_slot(keys.eras.encode())}) == 3
        assert key_slot(keys.group_keys("one")[1].encode()) == key_slot(one.encode())

    run(body())


def test_a_step_holds_only_on_its_group_s_version(redis_store: RedisStore, run: Run) -> None:
    async def body() -> None:
        eras = redis_store.eras
        era = await eras.begin(SEQUENCES, {"sequence:1": "1", "sequence:2": "1"}, False)
        copy = await eras.copy()
        v1, v2 = copy.versions["one"], copy.versions["two"]
        now, refused = await eras.advance(era, "one", v1, {"sequence:1": "2"}, ())
        assert refused is None and now > v1
        assert not await eras.check(copy)  # group one moved on
        assert await eras.advance(era, "one", v1, {"sequence:1": "9"}, ()) == (now, {"sequence:1": "2"})
        assert (await eras.advance(era, "two", v2, {}, ["sequence:2"]))[1] is None  # another group, its own version
        assert await eras.view() == {"sequence:1": "2"}
        assert await eras.check(await eras.copy())

    run(body())


def test_an_import_that_changes_the_layout_carries_every_value(
    redis_store: RedisStore, redis_client: aioredis.Redis, run: Run
) -> None:
    async def body() -> None:
        eras = redis_store.eras
        first = await eras.begin({"both": {"side", "sequence:1"}}, {"side": "a", "sequence:1": "1"}, False)
        copy = await eras.copy()
        await eras.advance(first, "both", copy.versions["both"], {"side": "b", "sequence:1": "3"}, ())
        layout = {"flip": frozenset({"side"}), "one": frozenset({"sequence:1"}), "new": frozenset({"sequence:2"})}
        second = await eras.begin(layout, {"sequence:2": "1"}, True, simulation=7)
        assert second > first
        copy = await eras.copy()
        assert (copy.era, copy.simulation, copy.layout) == (second, 7, layout)
        assert dict(copy.values) == {"side": "b", "sequence:1": "3", "sequence:2": "1"}
        with pytest.raises(EraChanged):  # decided in the first era: its group is sealed
            await eras.advance(first, "both", 1, {"side": "a"}, ())
        state, meta = redis_store.link.keys.group_keys("both")
        assert not await redis_client.exists(state)  # gone with its era
        assert 0 < await redis_client.pttl(meta) <= TOMBSTONE_MS  # its meta hash a tombstone, for a while
        assert await eras.view() == {"side": "b", "sequence:1": "3", "sequence:2": "1"}

    run(body())


def test_a_write_of_the_whole_state_replaces_it_in_the_same_layout(redis_store: RedisStore, run: Run) -> None:
    async def body() -> None:
        eras = redis_store.eras
        await eras.begin(SEQUENCES, {"sequence:1": "5", "sequence:2": "5"}, False, simulation=3)
        await eras.begin(None, {"sequence:2": "1", "other": "o"}, False)  # PUT
        copy = await eras.copy()
        assert (copy.simulation, copy.layout, dict(copy.values)) == (3, SEQUENCES, {"sequence:2": "1", "other": "o"})
        await eras.begin(None, {"sequence:1": "2"}, True)  # PATCH
        assert await eras.view() == {"sequence:1": "2", "sequence:2": "1", "other": "o"}
        await eras.begin(None, {}, False)  # DELETE
        assert await eras.view() == {}

    run(body())


def test_an_era_whose_starter_died_is_drained_by_whoever_reads_next(redis_backend: Backend, run: Run) -> None:
    async def body() -> None:
        a, b = (redis_backend.open() for _ in range(2))
        assert isinstance(a, RedisStore) and isinstance(b, RedisStore)
        await a.eras.begin(FLIP, {"side": "a"}, False)
        start = a.link.client.register_script(erascripts.ERA_START)
        # an importer that started an era and died before draining it
        started, era = await start(
            keys=[a.link.keys.eras], args=['{"flip": ["side"], "x": ["seq"]}', '{"seq": "1"}', "1", "", "", ""]
        )
        assert started == 1
        copies = await asyncio.gather(*(h.eras.copy() for h in (a, b) for _ in range(3)))
        assert {c.era for c in copies} == {int(era)}
        assert all(dict(c.values) == {"side": "a", "seq": "1"} for c in copies)
        assert await b.eras.begin(None, {"side": "b"}, True) > int(era)  # a new era starts after it
        assert await a.eras.view() == {"side": "b", "seq": "1"}

    run(body())


def test_a_late_drainer_leaves_the_steps_taken_since_the_era_was_ready(redis_store: RedisStore, run: Run) -> None:
    async def body() -> None:
        eras = redis_store.eras
        await eras.begin(FLIP, {"side": "a"}, False)
        keys = [redis_store.link.keys.eras]
        start = redis_store.link.client.register_script(erascripts.ERA_START)
        read = redis_store.link.client.register_script(erascripts.ERA_READ)
        _, era = await start(keys=keys, args=[layout_json(SEQUENCES), '{"sequence:1": "1"}', "1", "", "", ""])
        late = _Era(await read(keys=keys, args=[era]))  # a drainer reads the era, then stalls
        copy = await eras.copy()  # another one drains it
        await eras.advance(copy.era, "one", copy.versions["one"], {"sequence:1": "2"}, ())
        await eras._finish(late)
        assert await eras.view() == {"side": "a", "sequence:1": "2"}

    run(body())


def test_concurrent_steps_of_one_group_let_exactly_one_win(redis_backend: Backend, run: Run) -> None:
    async def body() -> None:
        handles = [redis_backend.open() for _ in range(4)]
        stores = [h for h in handles if isinstance(h, RedisStore)]
        era = await stores[0].eras.begin(SEQUENCES, {"sequence:1": "1", "sequence:2": "1"}, False)
        version = (await stores[0].eras.copy()).versions["one"]
        results = await asyncio.gather(
            *(s.eras.advance(era, "one", version, {"sequence:1": "2"}, ()) for s in stores for _ in range(5))
        )
        assert sorted(r[1] is None for r in results) == [False] * 19 + [True]
        assert await stores[3].eras.view() == {"sequence:1": "2", "sequence:2": "1"}

    run(body())


def test_era_numbers_keep_growing_when_redis_lost_them(
    redis_store: RedisStore, redis_client: aioredis.Redis, run: Run
) -> None:
    async def body() -> None:
        first = await redis_store.eras.begin(FLIP, {"side": "a"}, False)
        await redis_client.delete(redis_store.link.keys.eras)  # as after a restart with nothing kept
        assert (await redis_store.eras.copy()).era == 0
        assert await redis_store.eras.begin(FLIP, {"side": "b"}, False) > first

    run(body())


def test_a_group_redis_lost_is_seeded_again_with_what_is_left(
    redis_store: RedisStore, redis_client: aioredis.Redis, run: Run
) -> None:
    async def body() -> None:
        era = await redis_store.eras.begin(SEQUENCES, {"sequence:1": "4", "sequence:2": "7"}, False)
        await redis_client.delete(*redis_store.link.keys.group_keys("two"))  # evicted, or deleted by hand
        copy = await redis_store.eras.copy()
        assert copy.era > era and dict(copy.values) == {"sequence:1": "4"}
        _, held = await redis_store.eras.advance(copy.era, "two", copy.versions["two"], {"sequence:2": "1"}, ())
        assert held is None and await redis_store.eras.view() == {"sequence:1": "4", "sequence:2": "1"}

    run(body())


def test_a_read_of_the_whole_state_ends_while_one_group_is_stepped_without_pause(
    redis_backend: Backend, run: Run
) -> None:
    async def body() -> None:
        reader, *steppers = [redis_backend.open() for _ in range(5)]
        assert isinstance(reader, RedisStore)
        await reader.eras.begin(SEQUENCES, {"sequence:1": "0", "sequence:2": "7"}, False)
        stop = asyncio.Event()

        async def step(store: RedisStore) -> None:
            copy = await store.eras.copy()
            version, value = copy.versions["one"], int(copy.values["sequence:1"])
            while not stop.is_set():
                now, current = await store.eras.advance(copy.era, "one", version, {"sequence:1": str(value + 1)}, ())
                version, value = (now, value + 1) if current is None else (now, int(current["sequence:1"]))

        running = [asyncio.ensure_future(step(s)) for s in steppers if isinstance(s, RedisStore)]
        try:
            seen = [await reader.eras.view() for _ in range(30)]
        finally:
            stop.set()
            await asyncio.gather(*running)
        assert all(state["sequence:2"] == "7" for state in seen)
        counts = [int(state["sequence:1"]) for state in seen]
        assert counts == sorted(counts) and counts[-1] > counts[0]  # read while it moved, in order

    run(body())


def test_a_value_redis_cannot_hold_changes_nothing_and_leaves_the_state_working(
    redis_store: RedisStore, run: Run
) -> None:
    async def body() -> None:
        eras = redis_store.eras
        era = await eras.begin(FLIP, {"side": "a"}, False, simulation=1)
        with pytest.raises(UnicodeEncodeError):  # a lone surrogate, as a JSON "\ud800" decodes
            await eras.begin(None, {"side": "x\ud800"}, False)
        copy = await eras.copy()
        assert (copy.era, dict(copy.values)) == (era, {"side": "a"})  # no era started
        await eras.begin(None, {"side": "b"}, True)
        assert await eras.view() == {"side": "b"}
        # an era that already holds such a value (started by an older version) drains all the same
        start = redis_store.link.client.register_script(erascripts.ERA_START)
        await start(keys=[redis_store.link.keys.eras], args=["", '{"side": "y\\ud800"}', "1", "", "", ""])
        assert await eras.view() == {"side": "y\ufffd"}

    run(body())


def test_a_long_chain_of_eras_nobody_drained_is_drained_oldest_first(redis_store: RedisStore, run: Run) -> None:
    async def body() -> None:
        eras = redis_store.eras
        await eras.begin(SEQUENCES, {"sequence:1": "0"}, False)
        start = redis_store.link.client.register_script(erascripts.ERA_START)
        for i in range(1, 1201):  # importers that each started an era and died before draining it
            await start(
                keys=[redis_store.link.keys.eras], args=["", json.dumps({f"k{i % 7}": str(i)}), "1", "", "", ""]
            )
        assert await eras.view() == {"sequence:1": "0"} | {f"k{i}": str(1200 - (1200 - i) % 7) for i in range(7)}
        await eras.begin(None, {"sequence:2": "5"}, True)
        assert (await eras.view())["sequence:2"] == "5"

    run(body())


def test_the_eras_hash_stays_small_however_many_eras_were_started(
    redis_store: RedisStore, redis_client: aioredis.Redis, run: Run
) -> None:
    async def body() -> None:
        eras = redis_store.eras
        await eras.begin(FLIP, {"side": "a"}, False, simulation=1)
        for i in range(300):  # writes of the state, and a worker bringing a layout now and then
            await eras.begin(None, {"side": str(i), "loose": "x" * 100}, i % 2 == 0)
            if i % 50 == 0:
                await eras.begin(FLIP if i % 100 else SEQUENCES, {}, True, i + 2, fitting=True)
        assert await eras.view() == {"side": "299", "loose": "x" * 100}
        assert await redis_client.hlen(redis_store.link.keys.eras) <= 9  # one era's fields, and current

    run(body())


def test_a_group_call_that_fails_leaves_none_of_the_others_running(run: Run) -> None:
    async def body() -> None:
        finished: list[str] = []

        async def call(gid: str) -> str:
            try:
                if gid == "bad":
                    raise ConnectionError("lost")
                await asyncio.sleep(0.2)
                return gid
            finally:
                finished.append(gid)

        with pytest.raises(ConnectionError):
            await _each(call, ["slow", "bad", "other"])
        assert sorted(finished) == ["bad", "other", "slow"]  # cancelled and awaited, not left behind

    run(body())


def test_a_step_sent_again_answers_as_applied_and_is_taken_once(redis_store: RedisStore, run: Run) -> None:
    async def body() -> None:
        eras = redis_store.eras
        era = await eras.begin(SEQUENCES, {"sequence:1": "1"}, False)
        version = (await eras.copy()).versions["one"]
        advance = redis_store.link.client.register_script(erascripts.GROUP_ADVANCE)
        keys = redis_store.link.keys.group_keys("one")
        args = [str(era), str(version), "step-1", "1", "sequence:1", "2"]
        first, again = await advance(keys=keys, args=args), await advance(keys=keys, args=args)
        assert first == again == [1, version + 1]  # the second copy, as a client's retry sends it
        assert await eras.view() == {"sequence:1": "2"}
        other = [str(era), str(version), "step-2", "1", "sequence:1", "9"]  # another step on the old version
        assert (await advance(keys=keys, args=other))[:2] == [0, version + 1]

    run(body())


def _calls(stats: dict[str, Any]) -> Counter[str]:
    return Counter({name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()})


def test_a_read_of_the_whole_state_on_one_redis_is_one_transaction_once_its_era_is_known(
    redis_store: RedisStore, redis_client: aioredis.Redis, run: Run
) -> None:
    async def body() -> None:
        eras = redis_store.eras
        await eras.begin(SEQUENCES, {"sequence:1": "1", "sequence:2": "2", "loose": "x"}, False)
        assert await eras.view() == {"sequence:1": "1", "sequence:2": "2", "loose": "x"}  # learns the era
        before = _calls(await redis_client.info("commandstats"))
        for _ in range(10):
            assert await eras.view() == {"sequence:1": "1", "sequence:2": "2", "loose": "x"}
        spent = _calls(await redis_client.info("commandstats")) - before
        spent.pop("info", None)
        # per read: MULTI, the era's number, each group's state and meta, EXEC; no script, no retry
        assert spent == Counter({"multi": 10, "exec": 10, "hget": 10, "hgetall": 20, "hmget": 20})
        await eras.begin(None, {"sequence:1": "7"}, True)  # another era: read it, then as before
        assert await eras.view() == {"sequence:1": "7", "sequence:2": "2", "loose": "x"}

    run(body())


@pytest.mark.parametrize("cluster", [False, True], ids=["one-redis", "cluster-protocol"])
def test_a_read_of_the_whole_state_ends_while_two_groups_are_stepped_without_pause(
    redis_backend: Backend, run: Run, cluster: bool
) -> None:
    async def body() -> None:
        reader, *steppers = [redis_backend.open() for _ in range(3)]
        assert isinstance(reader, RedisStore)
        reader.eras._single = not cluster  # the read a Cluster client makes, against one Redis
        await reader.eras.begin(SEQUENCES, {"sequence:1": "0", "sequence:2": "0"}, False)
        stop = asyncio.Event()

        async def step(store: RedisStore, gid: str, key: str) -> None:
            copy = await store.eras.copy()
            version, value = copy.versions[gid], 0
            while not stop.is_set():
                version, _ = await store.eras.advance(copy.era, gid, version, {key: str(value + 1)}, ())
                value += 1

        stores = [s for s in steppers if isinstance(s, RedisStore)]
        async with asyncio.TaskGroup() as group:
            for store, (gid, key) in zip(stores, [("one", "sequence:1"), ("two", "sequence:2")], strict=True):
                group.create_task(step(store, gid, key))
            try:
                await asyncio.sleep(0.05)
                seen = [await reader.eras.view() for _ in range(20)]
            finally:
                stop.set()
        assert all(set(one) == {"sequence:1", "sequence:2"} for one in seen)
        assert int(seen[-1]["sequence:1"]) > int(seen[0]["sequence:1"])  # the steps went on meanwhile

    run(body())


def test_an_import_whose_drain_failed_once_still_seals_the_old_simulation_s_groups(
    redis_store: RedisStore, run: Run
) -> None:
    async def body() -> None:
        eras = redis_store.eras
        await redis_store.write_document("simulation", b"old")
        await eras.begin(FLIP, {"side": "a"}, False)  # the state in the old simulation's layout
        old = await eras.copy()
        drain, failures = eras.drain_current, [StoreUnavailable("a node did not answer in time")]

        async def flaky() -> None:
            if failures:
                raise failures.pop()
            await drain()

        eras.drain_current = flaky  # type: ignore[method-assign]
        assert await redis_store.write_document("simulation", b"new") is not None
        with pytest.raises(EraChanged):  # a step decided on the old simulation, after the import answered
            await eras.advance(old.era, "flip", old.versions["flip"], {"side": "b"}, ())
        assert await eras.view() == {"side": "a"}

    run(body())


def test_a_group_a_later_era_dropped_during_a_read_starts_no_era_of_its_own(redis_backend: Backend, run: Run) -> None:
    async def body() -> None:
        reader, writer = redis_backend.open(), redis_backend.open()
        assert isinstance(reader, RedisStore) and isinstance(writer, RedisStore)
        first = await reader.eras.begin(SEQUENCES, {"sequence:1": "1", "sequence:2": "2"}, False)
        read, raced = reader.eras._read, []

        async def racing(**kwargs: Any) -> Any:
            reply = await read(**kwargs)
            if not raced:  # between the era's read and its groups': an import drops group "two"
                raced.append(await writer.eras.begin({"one": frozenset({"sequence:1"})}, {}, True))
            return reply

        reader.eras._read = racing  # type: ignore[method-assign]
        copy = await reader.eras.copy()
        assert raced[0] > first and copy.era == raced[0]  # that era, not one more started over it
        assert dict(copy.values) == {"sequence:1": "1", "sequence:2": "2"}

    run(body())


def test_a_worker_grouping_the_same_simulation_otherwise_brings_its_own_layout(
    redis_store: RedisStore, run: Run
) -> None:
    async def body() -> None:
        eras = redis_store.eras
        both = {"both": frozenset({"sequence:1", "sequence:2"})}  # as an older version grouped them
        await eras.begin(both, {"sequence:1": "1", "sequence:2": "2"}, False, simulation=5, fitting=True)
        assert await eras.begin(both, {}, True, 5, fitting=True) == 0  # its own layout: nothing to do
        assert await eras.begin(SEQUENCES, {}, True, 5, fitting=True) > 0  # a newer version's grouping
        copy = await eras.copy()
        assert (copy.layout, copy.fit, dict(copy.values)) == (SEQUENCES, True, {"sequence:1": "1", "sequence:2": "2"})
        held = await eras.advance(copy.era, "one", copy.versions["one"], {"sequence:1": "3"}, ())
        assert held[1] is None and await eras.view() == {"sequence:1": "3", "sequence:2": "2"}

    run(body())


def test_groups_sealed_for_an_era_the_eras_hash_lost_are_carried_into_a_new_one(
    redis_store: RedisStore, redis_client: aioredis.Redis, run: Run
) -> None:
    async def body() -> None:
        eras = redis_store.eras
        era = await eras.begin(SEQUENCES, {"sequence:1": "4", "sequence:2": "7"}, False)
        keys = redis_store.link.keys
        snapshot = await redis_client.hgetall(keys.eras)
        lost = await eras.begin(None, {"sequence:1": "5"}, True)  # then the eras hash loses this era
        await redis_client.delete(keys.eras)
        await redis_client.hset(keys.eras, mapping=snapshot)
        copy = await eras.copy()
        assert copy.era > lost > era and dict(copy.values) == {"sequence:1": "5", "sequence:2": "7"}
        held = await eras.advance(copy.era, "two", copy.versions["two"], {"sequence:2": "8"}, ())
        assert held[1] is None and await eras.view() == {"sequence:1": "5", "sequence:2": "8"}

    run(body())


def test_an_import_whose_drain_cannot_reach_one_group_still_seals_the_others(redis_store: RedisStore, run: Run) -> None:
    async def body() -> None:
        eras = redis_store.eras
        await eras.begin(SEQUENCES, {"sequence:1": "1", "sequence:2": "1"}, False)
        old = await eras.copy()
        seal = eras._seal
        unreachable = redis_store.link.keys.group_keys("one")

        async def sealing(*, keys: Any, args: Any) -> Any:
            if keys == unreachable:  # its primary is down
                raise StoreUnavailable("the store cannot be reached")
            await asyncio.sleep(0.01)  # a connection to another primary opening
            return await seal(keys=keys, args=args)

        eras._seal = sealing  # type: ignore[assignment]
        assert await redis_store.write_document("simulation", b"new") is not None  # applied all the same
        with pytest.raises(EraChanged):  # a step decided on the old simulation, on a group it could reach
            await eras.advance(old.era, "two", old.versions["two"], {"sequence:2": "2"}, ())

    run(body())


def test_a_write_of_the_state_holds_when_a_group_it_leaves_behind_cannot_be_dropped(
    redis_store: RedisStore, redis_client: aioredis.Redis, run: Run
) -> None:
    async def body() -> None:
        eras = redis_store.eras
        three = {**SEQUENCES, "three": frozenset({"sequence:3"})}
        await eras.begin(three, {"sequence:1": "1", "sequence:2": "2", "sequence:3": "3"}, False)
        drop, keys = eras._drop, redis_store.link.keys

        async def dropping(*, keys: Any, args: Any) -> Any:
            if keys == redis_store.link.keys.group_keys("three"):
                raise ConnectionError("its primary is down")
            await asyncio.sleep(0.01)
            return await drop(keys=keys, args=args)

        eras._drop = dropping  # type: ignore[assignment]
        assert await eras.begin({"one": frozenset({"sequence:1"})}, {}, True) > 0  # answered: it took effect
        assert await eras.view() == {"sequence:1": "1", "sequence:2": "2", "sequence:3": "3"}
        assert not await redis_client.exists(keys.group_keys("two")[0])  # dropped all the same

    run(body())


def test_a_late_drainer_does_not_seed_again_a_group_a_later_era_dropped(
    redis_store: RedisStore, redis_client: aioredis.Redis, run: Run
) -> None:
    async def body() -> None:
        eras = redis_store.eras
        await eras.begin(FLIP, {"side": "a"}, False)
        keys = [redis_store.link.keys.eras]
        start = redis_store.link.client.register_script(erascripts.ERA_START)
        read = redis_store.link.client.register_script(erascripts.ERA_READ)
        _, era = await start(keys=keys, args=[layout_json(SEQUENCES), '{"sequence:2": "1"}', "1", "", "", ""])
        late = _Era(await read(keys=keys, args=[era]))  # a drainer reads the era, then stalls
        await eras.copy()  # another one drains it
        await eras.begin({"one": frozenset({"sequence:1"})}, {}, True)  # a later era has no group "two"
        await eras._finish(late)
        assert not await redis_client.exists(redis_store.link.keys.group_keys("two")[0])  # nothing left over
        assert await eras.view() == {"side": "a", "sequence:2": "1"}

    run(body())
