"""A fleet on a Redis Cluster of three primaries: two instances of two workers share the simulation,
the state (stepped exactly once, in order), the journal and the counters, with the fleet's keys on
every primary: the state and the documents in the fleet's slot, the journal and the logs in slots
of their own (store/redis/keys.py)."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from redis.crc import key_slot

from tests.integration.conftest import Simproxy, pair, sequence_pairs, simulation
from tests.integration.rediscluster import LocalCluster

pytestmark = pytest.mark.slow

PREFIX = "spread:"
"""A prefix whose fleet, journal and logs tags hash to slots of three different primaries."""


def _flip() -> list[dict[str, Any]]:
    return [
        {"request": {"path": [{"matcher": "exact", "value": "/flip"}], "requiresState": {"side": side}},
         "response": {"status": 200, "body": side, "transitionsState": {"side": other}}}
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

        # where the keys are: the state on the fleet's primary, the journal's pages on another
        owners = {}
        for i in range(3):
            client = cluster.client(i)
            try:
                for key in client.keys(f"{PREFIX}*"):
                    owners[key.decode()] = i
            finally:
                client.close()
        state_home = owners[f"{PREFIX}{{spread}}:state"]
        journal_home = owners[f"{PREFIX}{{spread:journal}}:pages"]
        assert state_home != journal_home
        assert len(set(owners.values())) >= 2
