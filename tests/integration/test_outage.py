"""When Redis goes away the proxy keeps serving, admin calls say 503, and all recovers by itself."""

from __future__ import annotations

import http.client
import os
import re
import signal
import time
from typing import Any

import pytest

from simproxy.admin.process.redisserver import RedisServer, free_port
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


def test_a_busy_worker_with_a_small_journal_counts_nothing_dropped_while_redis_is_up(
    simproxy_factory: Any, redis_server: Any
) -> None:
    """Between two flushes a busy worker gives up the entries beyond twice the journal's size; the
    store would not have kept them, so with Redis up none of it is counted as dropped."""
    sp: Simproxy = simproxy_factory("-redis-url", redis_server.url, "-journal-size", "2")
    assert sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/busy", "served")))[0] == 200
    conn = http.client.HTTPConnection("127.0.0.1", sp.proxy_port, timeout=10)
    for _ in range(400):  # one keep-alive connection, as fast as it answers
        conn.request("GET", "http://h/busy")
        assert conn.getresponse().read() == b"served"
    conn.close()
    journal = sp.admin_json("GET", "/api/v2/journal")[1]
    assert journal["total"] == 2
    metrics = sp.admin("GET", "/metrics")[2].decode()
    assert re.search(r'simproxy_requests_total\{mode="simulate",outcome="hit"\} 400', metrics)
    assert not re.search(r'simproxy_records_dropped_total\{kind="journal"\} [1-9]', metrics)


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


def _counters(metrics: str) -> dict[str, float]:
    """Every sample of a counter or histogram in a scrape (gauges may go down), by name and labels."""
    samples = {}
    for line in metrics.splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            if not series.startswith(("simproxy_journal_entries", "simproxy_cache_entries")):
                samples[series] = float(value)
    return samples


def test_metrics_never_go_down_when_redis_comes_back_empty_and_store_errors_are_counted(
    simproxy_factory: Any,
) -> None:
    port = free_port()
    redis = RedisServer(port=port).start()
    try:
        sp: Simproxy = simproxy_factory("-workers", "2", "-redis-url", redis.url)
        assert sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/m", "counted")))[0] == 200
        for _ in range(40):
            assert sp.proxy("http://h/m")[2] == b"counted"
        scrapes = [_counters(sp.admin("GET", "/metrics")[2].decode()) for _ in range(10)]  # both workers answer
        before = {series: max(s.get(series, 0.0) for s in scrapes) for series in scrapes[-1]}
        assert before['simproxy_requests_total{mode="simulate",outcome="hit"}'] == 40
        assert before["simproxy_store_errors_total"] == 0

        redis.stop()
        for _ in range(10):
            assert sp.proxy("http://h/m")[2] == b"counted"
        assert sp.admin("GET", "/metrics")[0] == 503
        redis = RedisServer(port=port).start()  # back, and empty
        assert wait_until(lambda: sp.admin("GET", "/metrics")[0] == 200)

        for _ in range(10):  # whichever worker answers
            after = _counters(sp.admin("GET", "/metrics")[2].decode())
            lower = {
                series: (value, after.get(series)) for series, value in before.items() if after.get(series, 0) < value
            }
            assert lower == {}
            assert after['simproxy_requests_total{mode="simulate",outcome="hit"}'] == 50
            assert after["simproxy_store_errors_total"] > 0
            before = after
    finally:
        redis.stop()
