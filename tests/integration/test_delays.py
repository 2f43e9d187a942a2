"""Delays through the proxy: applied with Hoverfly's precedence, and never blocking the worker."""

from __future__ import annotations

import contextlib
import http.client
import time
from concurrent.futures import ThreadPoolExecutor

from tests.integration.conftest import Simproxy, pair, simulation


def _timed(sp: Simproxy, url: str) -> tuple[int, float]:
    sp.admin("DELETE", "/api/v2/cache")
    started = time.monotonic()
    status = sp.proxy(url)[0]
    return status, time.monotonic() - started


def test_global_and_response_delays(simproxy: Simproxy) -> None:
    slow = pair("/slow", "s")
    slow["response"]["fixedDelay"] = 400
    doc = simulation(pair("/fast", "f"), slow, pair("/global", "g"))
    doc["data"]["globalActions"] = {
        "delays": [{"urlPattern": "delayed\\.test/global", "httpMethod": "GET", "delay": 400}]
    }
    assert simproxy.admin_json("PUT", "/api/v2/simulation", doc)[0] == 200
    status, took = _timed(simproxy, "http://delayed.test/slow")
    assert status == 200 and took >= 0.4
    status, took = _timed(simproxy, "http://delayed.test/global")
    assert status == 200 and took >= 0.4
    status, took = _timed(simproxy, "http://elsewhere.test/global")
    assert status == 200 and took < 0.3
    status, took = _timed(simproxy, "http://delayed.test/missing")  # a miss is never delayed
    assert status == 502 and took < 0.3


def test_two_hundred_delayed_requests_wait_together_not_in_turn(simproxy: Simproxy) -> None:
    slow = pair("/wait", "w")
    slow["response"]["fixedDelay"] = 500
    simproxy.admin_json("PUT", "/api/v2/simulation", simulation(slow))

    def one(_: int) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", simproxy.proxy_port, timeout=60)
        with contextlib.closing(conn):
            conn.request("GET", "http://h/wait")
            return conn.getresponse().status

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=200) as pool:
        statuses = list(pool.map(one, range(200)))
    took = time.monotonic() - started
    assert statuses == [200] * 200
    assert took < 10  # 200 x 0.5 s in turn would be 100 s; together it is about 0.5 s plus connection set-up
