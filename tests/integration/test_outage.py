"""When Redis goes away the proxy keeps serving, admin calls say 503, and all recovers by itself."""

from __future__ import annotations

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
