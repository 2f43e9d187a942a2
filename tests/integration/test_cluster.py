"""A fleet on a Redis Cluster of three primaries: two instances of two workers share the simulation,
the state (stepped exactly once, in order), the journal and the counters, with the fleet's keys on
every primary: the documents and the state's eras in the fleet's slot, the journal and the logs in
slots of their own, and the state in groups, each in a slot of its own (store/redis/keys.py)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from redis.crc import key_slot

from simproxy.engine.matching.stategroups import StateGroup, StateLayout, group_id
from simproxy.engine.modes.stateturns import Decision, StateTurns
from simproxy.store import RedisStore
from tests.integration.conftest import Simproxy, pair, sequence_pairs, simulation
from tests.integration.rediscluster import LocalCluster

pytestmark = pytest.mark.slow

PREFIX = "spread:"
"""A prefix whose fleet, journal and logs tags hash to slots of three different primaries."""


def _flip(path: str = "/flip", key: str = "side") -> list[dict[str, Any]]:
    return [
        {"request": {"path": [{"matcher": "exact", "value": path}], "requiresState": {key: side}},
         "response": {"status": 200, "body": side, "transitionsState": {key: other}}}
        for side, other in (("a", "b"), ("b", "a"))
    ]  # fmt: skip


def test_a_fleet_on_a_three_primary_cluster_shares_state_and_journal(simproxy_factory: Any, tmp_path: Path) -> None:
    with LocalCluster(tmp_path) as cluster:
        homes = {
            cluster.node_of(key_slot(f"{PREFIX}{{spread{part}}}:x".encode())) for part in ("", ":journal", ":logs")
        }
        assert homes == {0, 1, 2}  # the prefix spreads the fleet's parts over every primary

        flags = ("-workers", "2", "-redis-url", cluster.url, "-redis-prefix", PREFIX, "-journal-size", "5000")
        a: Simproxy = simproxy_factory(*flags)
        b: Simproxy = simproxy_factory(*flags)
        steps = 40
        doc = simulation(pair("/hello", "hi"), *_flip(), *sequence_pairs(steps))
        assert a.admin_json("PUT", "/api/v2/simulation", doc)[0] == 200
        assert b.admin_json("GET", "/api/v2/state")[1] == {"state": {"sequence:1": "1"}}  # the import started it
        put = b.admin_json("PUT", "/api/v2/state", {"state": {"side": "a", "sequence:1": "1"}})
        assert put[0] == 200, put

        flips = [(a, b)[i % 2].proxy("http://svc.test/flip")[2] for i in range(20)]
        assert flips == [b"a", b"b"] * 10  # one state, whichever instance steps it

        with ThreadPoolExecutor(max_workers=16) as pool:
            walked = Counter(pool.map(lambda i: (a, b)[i % 2].proxy("http://svc.test/next")[2], range(steps)))
            hellos = Counter(pool.map(lambda i: (a, b)[i % 2].proxy("http://svc.test/hello")[2], range(200)))
        assert walked == Counter({f"step {i}".encode(): 1 for i in range(1, steps + 1)})  # each step once
        assert hellos == Counter({b"hi": 200})
        assert a.admin_json("GET", "/api/v2/state")[1] == {"state": {"side": "a", "sequence:1": str(steps)}}

        served = 20 + steps + 200
        for sp in (a, b):
            journal = sp.admin_json("GET", "/api/v2/journal?limit=1")[1]
            assert journal["total"] == served
            assert sp.admin_json("GET", "/api/v2/service/usage")[1]["usage"]["counters"]["simulate"] == served

        # where the keys are: the state's eras on the fleet's primary, the journal's pages on another
        owners = _owners(cluster)
        state_home = owners[f"{PREFIX}{{spread}}:state:eras"]  # the state's eras, in the fleet's slot
        journal_home = owners[f"{PREFIX}{{spread:journal}}:pages"]
        assert state_home != journal_home
        assert len(set(owners.values())) >= 2


def _group_state(key_names: list[str]) -> str:
    """The Redis key of the state group of ``key_names`` (store/redis/keys.py)."""
    return f"{PREFIX}{{spread:s:{group_id(key_names)}}}:state"


def _owners(cluster: LocalCluster) -> dict[str, int]:
    """Each of the fleet's keys, and the primary (by index) that holds it."""
    owners = {}
    for i in range(3):
        client = cluster.client(i)
        try:
            for key in client.keys(f"{PREFIX}*"):
                owners[key.decode()] = i
        finally:
            client.close()
    return owners


def test_state_machines_in_groups_on_different_primaries_step_once_through_a_fleet(
    simproxy_factory: Any, tmp_path: Path
) -> None:
    with LocalCluster(tmp_path) as cluster:
        fleet = cluster.node_of(key_slot(f"{PREFIX}{{spread}}:x".encode()))
        # two keys whose groups live on two primaries other than the fleet's
        home = {
            name: cluster.node_of(key_slot(_group_state([name]).encode())) for name in map("door-{}".format, range(40))
        }
        one = next(name for name, node in home.items() if node != fleet)
        two = next(name for name, node in home.items() if node not in (fleet, home[one]))

        flags = ("-workers", "2", "-redis-url", cluster.url, "-redis-prefix", PREFIX)
        a: Simproxy = simproxy_factory(*flags)
        b: Simproxy = simproxy_factory(*flags)
        doc = simulation(*_flip("/one", one), *_flip("/two", two))
        assert a.admin_json("PUT", "/api/v2/simulation", doc)[0] == 200
        assert b.admin_json("PUT", "/api/v2/state", {"state": {one: "a", two: "b"}})[0] == 200

        ones = [(a, b)[i % 2].proxy("http://svc.test/one")[2] for i in range(10)]
        twos = [(b, a)[i % 2].proxy("http://svc.test/two")[2] for i in range(10)]
        assert (ones, twos) == ([b"a", b"b"] * 5, [b"b", b"a"] * 5)  # each machine steps on its own
        with ThreadPoolExecutor(max_workers=16) as pool:
            paths = [("/one", "/two")[i % 4 // 2] for i in range(80)]
            flips = Counter(
                pool.map(lambda i: (paths[i], (a, b)[i % 2].proxy(f"http://svc.test{paths[i]}")[2]), range(80))
            )
        assert flips == Counter({("/one", b"a"): 20, ("/one", b"b"): 20, ("/two", b"a"): 20, ("/two", b"b"): 20})
        assert a.admin_json("GET", "/api/v2/state")[1] == {"state": {one: "a", two: "b"}}  # 50 flips each: back

        owners = _owners(cluster)
        groups = (_group_state([one]), _group_state([two]))
        assert [owners[group] for group in groups] == [home[one], home[two]]  # where the cluster puts them
        assert len({fleet, home[one], home[two]}) == 3
        assert a.proxy("http://svc.test/one")[2] == b"a" and b.proxy("http://svc.test/two")[2] == b"b"

        # an import that joins the two machines in one group: every value is carried into it
        both = {"request": {"path": [{"matcher": "exact", "value": "/both"}], "requiresState": {one: "b", two: "a"}},
                "response": {"status": 200, "body": "both", "transitionsState": {one: "a", two: "b"}}}  # fmt: skip
        assert b.admin_json("PUT", "/api/v2/simulation", simulation(both, *sequence_pairs(3)))[0] == 200
        assert a.admin_json("GET", "/api/v2/state")[1] == {"state": {one: "b", two: "a", "sequence:1": "1"}}
        assert [(a, b)[i % 2].proxy("http://svc.test/both")[0] for i in range(2)] == [200, 502]  # stepped once
        assert [b.proxy("http://svc.test/next")[2] for _ in range(3)] == [b"step 1", b"step 2", b"step 3"]
        assert b.admin_json("GET", "/api/v2/state")[1] == {"state": {one: "a", two: "b", "sequence:1": "3"}}
        owners = _owners(cluster)
        joined = _group_state([one, two])
        assert joined in owners and not any(group in owners for group in groups)  # the old groups are gone


def test_a_step_sent_again_while_its_primary_paused_is_taken_once(tmp_path: Path) -> None:
    """redis-py's cluster client sends a command again when its node does not answer in time: the
    first copy is applied when the node goes on, and the copy sent again answers as applied."""

    async def scenario(cluster: LocalCluster) -> tuple[list[int], str, dict[str, str]]:
        store = RedisStore.from_cluster_url(cluster.url, prefix="paused:")
        try:
            state_key, _ = store.link.keys.group_keys(group.id)
            await store.state_replace({"seq": "1"})
            turns: StateTurns[str] = StateTurns(store)
            decided: list[int] = []

            async def decide(state: Mapping[str, str]) -> Decision[str]:
                n = int(state["seq"])
                decided.append(n)
                return Decision({"seq": str(n + 1)}, (), lambda: f"step {n}", group=group.id)

            assert await turns.take(decide, 1, True, layout) == "step 1"
            node = cluster.node_of(key_slot(state_key.encode()))
            cluster.pause(node)
            try:
                stepping = asyncio.ensure_future(turns.take(decide, 1, True, layout))
                await asyncio.sleep(1.5)  # longer than a command waits: the client sends it again
            finally:
                cluster.resume(node)
            return decided, await stepping, await store.state_get()
        finally:
            await store.aclose()

    group = StateGroup(group_id(["seq"]), frozenset({"seq"}))
    layout = StateLayout((group,), (group,), False, MappingProxyType({"seq": group}))
    with LocalCluster(tmp_path) as cluster:
        decided, answer, state = asyncio.run(scenario(cluster))
    assert (decided, answer, state) == ([1, 2], "step 2", {"seq": "3"})
