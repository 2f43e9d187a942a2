"""A Redis that stops answering in the middle of state steps never has a step taken twice.

Two instances of two workers walk one sequence under load while the test's own redis-server is
stopped (SIGSTOP) for longer than a command may wait: the steps in flight then have no reply, and
Redis runs the ones it had received once it goes on (SIGCONT). Each request is answered with the
step it took (200), or 502 while the state cannot be reached; a step whose reply was lost may have
been taken, but never again by another request, nor twice by one.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from simproxy.admin.process.redisserver import RedisServer, free_port
from tests.integration.conftest import Simproxy, sequence_pairs, simulation

pytestmark = pytest.mark.slow

STEPS = 3000
THREADS = 8
PAUSE_S = 2.5
"""Longer than a command waits for its reply (one second): the steps in flight are given up on."""
AROUND_S = 1.0


class Walk:
    """Threads asking for the next step over keep-alive connections to both instances until ``stop``."""

    def __init__(self, instances: list[Simproxy]) -> None:
        self.instances = instances
        self.stopping = threading.Event()
        self.answers: list[tuple[int, bytes]] = []
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=THREADS)
        self._runs = [self._pool.submit(self._run, n) for n in range(THREADS)]

    def _run(self, n: int) -> None:
        port = self.instances[n % len(self.instances)].proxy_port
        while not self.stopping.is_set():
            with contextlib.closing(http.client.HTTPConnection("127.0.0.1", port, timeout=60)) as conn:
                for _ in range(20):
                    conn.request("GET", "http://svc.example.com/next")
                    resp = conn.getresponse()
                    answer = (resp.status, resp.read())
                    with self._lock:
                        self.answers.append(answer)
                    time.sleep(0.003)

    def stop(self) -> list[tuple[int, bytes]]:
        self.stopping.set()
        for run in self._runs:
            run.result()
        self._pool.shutdown()
        return self.answers


def test_a_redis_stopped_mid_step_never_has_a_transition_applied_twice(simproxy_factory: Any) -> None:
    redis = RedisServer(port=free_port()).start()
    try:
        flags = ("-workers", "2", "-redis-url", redis.url, "-redis-prefix", "paused-steps:")
        a: Simproxy = simproxy_factory(*flags)
        b: Simproxy = simproxy_factory(*flags)
        assert a.admin_json("PUT", "/api/v2/simulation", simulation(*sequence_pairs(STEPS)))[0] == 200
        assert redis.pid is not None
        walk = Walk([a, b])
        try:
            time.sleep(AROUND_S)
            os.kill(redis.pid, signal.SIGSTOP)  # alive, holding what it was sent, answering nothing
            try:
                time.sleep(PAUSE_S)
            finally:
                os.kill(redis.pid, signal.SIGCONT)
            time.sleep(AROUND_S)
        finally:
            answers = walk.stop()

        taken = Counter(body for status, body in answers if status == 200)
        unanswered = sum(1 for status, _ in answers if status == 502)
        assert all(status in (200, 502) for status, _ in answers), Counter(s for s, _ in answers)
        assert unanswered > 0  # the pause did cut steps off
        assert [body for body, n in taken.items() if n > 1] == []  # no step answered twice
        state = b.admin_json("GET", "/api/v2/state")[1]["state"]
        reached = int(state["sequence:1"])
        assert reached < STEPS  # the walk did not run out of steps: every request stepped or failed
        assert {int(body.split()[1]) for body in taken} <= set(range(1, reached))
        # every step taken belongs to one request: those answered, and some of those given up on
        assert len(taken) <= reached - 1 <= len(taken) + unanswered
        # the fleet goes on from where the state is: the next request takes the next step
        assert a.proxy("http://svc.example.com/next")[2] == f"step {reached}".encode()
        assert b.admin_json("GET", "/api/v2/state")[1] == {"state": {"sequence:1": str(reached + 1)}}
    finally:
        redis.stop()
