"""A worker that dies while the store is away is started again, and serves once the store is back."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest

from benchmarks.procs import descendants
from simproxy.admin.process.redisserver import RedisServer, free_port
from tests.integration.conftest import Simproxy, pair, simulation, wait_until

pytestmark = pytest.mark.slow


def _serving_workers(sp: Simproxy) -> set[int]:
    """Pids of the instance's workers that the store knows as live (each heartbeats once it serves)."""
    status, body = sp.admin_json("GET", "/api/v2/service/workers")
    if status != 200:
        return set()
    return {w["pid"] for instance in body["instances"] for w in instance["workers"]}


def test_a_worker_killed_during_an_outage_is_back_within_2_s_of_redis_returning(simproxy_factory: Any) -> None:
    port = free_port()
    redis = RedisServer(port=port).start()
    try:
        sp: Simproxy = simproxy_factory("-workers", "2", "-redis-url", redis.url)
        assert sp.process is not None
        assert sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/up", "served")))[0] == 200
        assert wait_until(lambda: len(_serving_workers(sp)) == 2)
        victim = sp.proxy_listeners()[0]

        redis.stop()
        os.kill(victim, signal.SIGKILL)
        time.sleep(3)  # the outage goes on: starts of the replacement fail (no store) and are tried again
        assert victim not in descendants(sp.process.pid)
        assert {sp.proxy("http://h/up")[2] for _ in range(20)} == {b"served"}  # the other worker serves on

        redis = RedisServer(port=port).start()  # back, and empty
        back = time.monotonic()

        def served_by_both() -> bool:
            """Both workers live in the store, and new connections (spread over both) get the
            simulation the other worker put back into the empty store."""
            return len(_serving_workers(sp)) == 2 and {sp.proxy("http://h/up")[2] for _ in range(20)} == {b"served"}

        assert wait_until(served_by_both, timeout=10, interval=0.02)
        assert time.monotonic() - back < 2.0
        workers = _serving_workers(sp)
        assert victim not in workers and workers <= set(descendants(sp.process.pid))
        assert {sp.proxy("http://h/up")[2] for _ in range(40)} == {b"served"}
    finally:
        redis.stop()


def test_a_sequence_starts_again_at_its_first_step_when_redis_comes_back_empty(simproxy_factory: Any) -> None:
    steps = [pair("/next", f"step {i}") for i in (1, 2, 3)]
    for i, step in enumerate(steps, 1):
        step["request"]["requiresState"] = {"sequence:1": str(i)}
        if i < 3:
            step["response"]["transitionsState"] = {"sequence:1": str(i + 1)}
    port = free_port()
    redis = RedisServer(port=port).start()
    try:
        sp: Simproxy = simproxy_factory("-redis-url", redis.url)
        assert sp.admin_json("PUT", "/api/v2/simulation", simulation(*steps))[0] == 200
        assert [sp.proxy("http://h/next")[2] for _ in range(2)] == [b"step 1", b"step 2"]

        redis.stop()
        redis = RedisServer(port=port).start()  # back, and empty: the simulation and the state are gone
        assert wait_until(lambda: sp.admin_json("GET", "/api/v2/state")[1] == {"state": {"sequence:1": "1"}})
        assert [sp.proxy("http://h/next")[2] for _ in range(3)] == [b"step 1", b"step 2", b"step 3"]
    finally:
        redis.stop()
