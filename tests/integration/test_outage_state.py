"""A stateful simulation while Redis is away: what needs no state is still answered."""

from __future__ import annotations

from typing import Any

import pytest

from simproxy.admin.process.redisserver import RedisServer, free_port
from tests.integration.conftest import Simproxy, pair, simulation

pytestmark = pytest.mark.slow


def test_pairs_needing_no_state_are_answered_during_an_outage_and_the_others_get_502(simproxy_factory: Any) -> None:
    login = pair("/login", "logged in")
    login["response"]["transitionsState"] = {"stage": "in"}
    orders = pair("/orders", "your orders")
    orders["request"]["requiresState"] = {"stage": "in"}
    templated = pair("/echo", "echo {{ Request.Path.[0] }}")
    templated["response"]["templated"] = True
    plain = pair("/health", "fine")
    redis = RedisServer(port=free_port()).start()
    try:
        sp: Simproxy = simproxy_factory("-redis-url", redis.url)
        assert sp.admin_json("PUT", "/api/v2/simulation", simulation(login, orders, templated, plain))[0] == 200
        assert sp.proxy("http://h/login")[::2] == (200, b"logged in")
        assert sp.proxy("http://h/orders")[::2] == (200, b"your orders")

        redis.stop()
        for _ in range(3):
            assert sp.proxy("http://h/health")[::2] == (200, b"fine")
            assert sp.proxy("http://h/echo")[::2] == (200, b"echo echo")
            for needs_state in ("/orders", "/login"):
                status, _, body = sp.proxy(f"http://h{needs_state}")
                assert status == 502 and b"the shared state is unavailable" in body
    finally:
        redis.stop()
