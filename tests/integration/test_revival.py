"""A worker that dies while the store is away is started again, and serves once the store is back."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest

from benchmarks.procs import descendants
from store.redisserver import RedisServer, free_port
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
        assert wait_until(lambda: len(_serving_workers(sp)) == 2, timeout=10, interval=0.02)
        assert time.monotonic() - back < 2.0
        workers = _serving_workers(sp)
        assert victim not in workers and workers <= set(descendants(sp.process.pid))
        # the replacement serves the simulation the other worker put back into the empty store
        assert {sp.proxy("http://h/up")[2] for _ in range(40)} == {b"served"}
    finally:
        redis.stop()
