"""A Redis that stops answering under load loses no count and counts nothing twice.

Workers flush what they buffered (usage counters, journal entries, metrics) every few
milliseconds. A flush whose reply does not come is sent again, while Redis may still run the first
copy once it answers again: each batch carries an id Redis records with it, so either copy is
applied and the other is dropped.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import signal
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from simproxy.admin.process.redisserver import RedisServer, free_port
from tests.integration.conftest import Simproxy, pair, simulation, wait_until

pytestmark = pytest.mark.slow

THREADS = 8
PER_CONNECTION = 20
"""Requests per keep-alive connection: new connections are spread over every worker by the kernel."""
PACE_S = 0.002
"""A thread's wait between two requests: some thousands a second in all, a journal read can take them."""
PAUSE_S = 5.0
LOAD_AROUND_PAUSE_S = 2.0
"""Seconds of load before the pause and after it: flushes are in flight when Redis stops, and the
late copies of the ones it had not answered run when it goes on, among the workers' retries."""


class Load:
    """Threads sending proxied GETs, each on keep-alive connections alternating over the instances,
    until ``stop``; ``answered`` counts the responses by (status, body)."""

    def __init__(self, instances: list[Simproxy], path: str) -> None:
        self.instances = instances
        self.path = path
        self.stopping = threading.Event()
        self.answered: Counter[tuple[int, bytes]] = Counter()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=THREADS)
        self._runs = [self._pool.submit(self._run, n) for n in range(THREADS)]

    def _run(self, n: int) -> None:
        turn = n
        while not self.stopping.is_set():
            port = self.instances[turn % len(self.instances)].proxy_port
            turn += 1
            with contextlib.closing(http.client.HTTPConnection("127.0.0.1", port, timeout=60)) as conn:
                for _ in range(PER_CONNECTION):
                    conn.request("GET", f"http://svc.example.com{self.path}")
                    resp = conn.getresponse()
                    answer = (resp.status, resp.read())
                    with self._lock:
                        self.answered[answer] += 1
                    time.sleep(PACE_S)

    def stop(self) -> Counter[tuple[int, bytes]]:
        self.stopping.set()
        for run in self._runs:
            run.result()
        self._pool.shutdown()
        return self.answered


def _requests_metric(sp: Simproxy) -> int:
    status, _, body = sp.admin("GET", "/metrics")
    assert status == 200, body
    found = re.search(rb'simproxy_requests_total\{mode="simulate",outcome="hit"\} ([0-9.e+]+)', body)
    return int(float(found[1])) if found else 0


def _journal_ids(sp: Simproxy, expected: int) -> list[str]:
    status, body = sp.admin_json("GET", f"/api/v2/journal?limit={expected + 1000}")
    assert status == 200, body
    ids = [entry["id"] for entry in body["journal"]]
    assert body["total"] == len(ids)
    return ids


def test_a_redis_paused_under_load_counts_every_answered_request_exactly_once(simproxy_factory: Any) -> None:
    redis = RedisServer(port=free_port()).start()
    try:
        flags = ("-workers", "2", "-redis-url", redis.url, "-journal-size", "1000000")
        a: Simproxy = simproxy_factory(*flags)
        b: Simproxy = simproxy_factory(*flags)
        assert a.admin_json("PUT", "/api/v2/simulation", simulation(pair("/load", "served")))[0] == 200
        assert redis.pid is not None

        load = Load([a, b], "/load")
        try:
            time.sleep(LOAD_AROUND_PAUSE_S)
            os.kill(redis.pid, signal.SIGSTOP)  # alive, accepting connections, answering nothing
            try:
                during = a.admin_json(
                    "PUT", "/api/v2/hoverfly/templating-data-source/csv", {"name": "during", "data": "k\nv\n"}
                )
                time.sleep(PAUSE_S)
            finally:
                os.kill(redis.pid, signal.SIGCONT)
            time.sleep(LOAD_AROUND_PAUSE_S)
        finally:
            answered = load.stop()

        served = answered[(200, b"served")]
        assert answered == Counter({(200, b"served"): served}) and served > 0
        assert wait_until(lambda: a.admin_json("GET", "/api/v2/service/usage")[0] == 200)

        usage = a.admin_json("GET", "/api/v2/service/usage")[1]["usage"]["counters"]["simulate"]
        ids = _journal_ids(b, served)
        duplicates = [entry_id for entry_id, n in Counter(ids).items() if n > 1]
        metrics = _requests_metric(a) + _requests_metric(b)
        assert (usage, len(ids), len(duplicates), metrics) == (served, served, 0, served)

        # an admin write answered during the pause either was applied (200) or was not (503)
        sources = a.admin_json("GET", "/api/v2/hoverfly/templating-data-source/csv")[1]["csvDataSources"]
        assert during[0] in (200, 503), during
        assert ("during" in [s["name"] for s in sources]) == (during[0] == 200), (during, sources)
    finally:
        redis.stop()
