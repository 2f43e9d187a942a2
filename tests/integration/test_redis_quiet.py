"""An idle worker leaves the shared Redis alone: after serving, only its heartbeat reaches Redis."""

from __future__ import annotations

import time
from typing import Any

import redis

from simproxy.admin.process.redisserver import RedisServer
from tests.integration.conftest import Simproxy


def test_an_idle_worker_sends_redis_no_more_than_its_heartbeat(
    simproxy_factory: Any, redis_server: RedisServer
) -> None:
    sp: Simproxy = simproxy_factory("-redis-url", redis_server.url, "-redis-prefix", "quiet:")
    for n in range(20):
        assert sp.proxy(f"http://api.test/miss/{n}")[0] == 502
    time.sleep(1.0)  # the last buffered writes about those requests
    client = redis.Redis.from_url(redis_server.url)
    try:
        client.config_resetstat()
        time.sleep(2.0)
        calls = {name: stat["calls"] for name, stat in client.info("commandstats").items()}
    finally:
        client.close()
    calls.pop("cmdstat_config", None)
    calls.pop("cmdstat_info", None)
    # a heartbeat is one transaction a second (MULTI, three writes, EXEC) plus the generation's read
    assert sum(calls.values()) < 30, calls
