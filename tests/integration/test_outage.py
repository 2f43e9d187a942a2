"""When Redis goes away the proxy keeps serving, admin calls say 503, and all recovers by itself."""

from __future__ import annotations

import os
import re
import signal
import time
from typing import Any

import pytest

from store.redisserver import RedisServer, free_port
from tests.integration.conftest import Simproxy, pair, simulation, wait_until

pytestmark = pytest.mark.slow


def test_redis_outage_and_recovery(simproxy_factory: Any) -> None:
    port = free_port()
    redis = RedisServer(port=port).start()
    try:
        sp: Simproxy = simproxy_factory("-workers", "2", "-redis-url", redis.url)
        assert sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/up", "before")))[0] == 200
        redis.stop()

        for _ in range(50):  # fresh connections reach both workers
            assert sp.proxy("http://h/up")[:3:2] == (200, b"before")
        status, body = sp.admin_json("GET", "/api/v2/simulation")
        assert status == 503 and "error" in body
        status, body = sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/up", "during")))
        assert status == 503
        assert sp.proxy("http://h/up")[2] == b"before"

        redis = RedisServer(port=port).start()  # back, and empty
        assert wait_until(lambda: sp.admin_json("GET", "/api/v2/service/mode")[0] == 200)
        put = sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/up", "after")))
        assert put[0] == 200, put
        assert {sp.proxy("http://h/up")[2] for _ in range(50)} == {b"after"}
        assert len(sp.proxy_listeners()) == 2  # no worker crashed
    finally:
        redis.stop()


def test_records_made_while_redis_is_away_are_written_after_or_counted_as_dropped(simproxy_factory: Any) -> None:
    port = free_port()
    redis = RedisServer(port=port).start()
    try:
        sp: Simproxy = simproxy_factory("-workers", "2", "-redis-url", redis.url, "-journal-size", "5")
        assert sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/during", "served")))[0] == 200
        redis.stop()
        for _ in range(30):
            assert sp.proxy("http://h/during")[2] == b"served"
        time.sleep(1.0)  # several flushes fail meanwhile
        redis = RedisServer(port=port).start()  # back, and empty
        assert wait_until(lambda: sp.admin_json("GET", "/api/v2/journal")[0] == 200)
        assert wait_until(lambda: sp.admin_json("GET", "/api/v2/journal")[1]["total"] == 5)  # the newest, written
        metrics = sp.admin("GET", "/metrics")[2].decode()
        served = re.search(r'simproxy_requests_total\{mode="simulate",outcome="hit"\} (\d+)', metrics)
        dropped = re.search(r'simproxy_records_dropped_total\{kind="journal"\} (\d+)', metrics)
        assert served and int(float(served[1])) == 30  # counted while Redis was away, written after
        assert dropped and int(float(dropped[1])) >= 30 - 2 * 2 * 5  # each worker buffers at most 2x the size
    finally:
        redis.stop()


def test_a_redis_that_hangs_makes_admin_calls_fail_fast_and_the_proxy_serve_on(simproxy_factory: Any) -> None:
    port = free_port()
    redis = RedisServer(port=port).start()
    try:
        sp: Simproxy = simproxy_factory("-workers", "2", "-redis-url", redis.url)
        assert sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/up", "before")))[0] == 200
        assert redis.pid is not None
        os.kill(redis.pid, signal.SIGSTOP)  # alive, accepting connections, answering nothing
        try:
            started = time.monotonic()
            status, body = sp.admin_json("GET", "/api/v2/simulation")
            waited = time.monotonic() - started
            assert status == 503 and "error" in body
            assert waited < 2.5, waited  # bounded by the store's timeout, not hanging with the store
            for _ in range(20):
                assert sp.proxy("http://h/up")[2] == b"before"
        finally:
            os.kill(redis.pid, signal.SIGCONT)
        assert wait_until(lambda: sp.admin_json("GET", "/api/v2/simulation")[0] == 200)
    finally:
        redis.stop()
