"""An import swaps the simulation and starts its sequences again in one step, fleet-wide.

Two instances of two workers each on one Redis serve a sequence (each answer takes the next step)
under load while a ``PUT`` replaces it with another sequence on the same state key. Every step is
taken once, so the answers of each simulation, counted, must be exactly the start of its sequence:
an answer of the new simulation taken on the old sequence state (or an old simulation's step
landing on the new state) shows as an answer out of turn.
"""

from __future__ import annotations

import contextlib
import http.client
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from simproxy.admin.process.redisserver import RedisServer, free_port
from tests.integration.conftest import Simproxy, simulation

pytestmark = pytest.mark.slow

STEPS = 20
"""Pairs of each sequence; the last step leads back to the first, so a sequence never runs out."""
THREADS = 8
LOAD_S = 1.5
"""Seconds of load before the PUT and after it."""


def _sequence(name: str) -> dict[str, Any]:
    pairs = [
        {
            "request": {
                "path": [{"matcher": "exact", "value": "/seq"}],
                "requiresState": {"sequence:s": str(step)},
            },
            "response": {
                "status": 200,
                "body": f"{name}{step}",
                "transitionsState": {"sequence:s": str(step % STEPS + 1)},
            },
        }
        for step in range(1, STEPS + 1)
    ]
    return simulation(*pairs)


def _expected(name: str, answers: int) -> Counter[str]:
    """The answers ``answers`` requests get from a sequence started at its first step."""
    return Counter(f"{name}{n % STEPS + 1}" for n in range(answers))


def _load(instances: list[Simproxy], stop: threading.Event, n: int) -> Counter[str]:
    seen: Counter[str] = Counter()
    turn = n
    while not stop.is_set():
        port = instances[turn % len(instances)].proxy_port
        turn += 1
        with contextlib.closing(http.client.HTTPConnection("127.0.0.1", port, timeout=30)) as conn:
            for _ in range(10):
                conn.request("GET", "http://svc.example.com/seq")
                resp = conn.getresponse()
                body = resp.read().decode()
                seen[body if resp.status == 200 else f"{resp.status}: {body}"] += 1
    return seen


def test_a_put_never_lets_the_new_simulation_see_the_old_sequence_state(simproxy_factory: Any) -> None:
    with RedisServer(port=free_port()) as redis:
        flags = ("-workers", "2", "-redis-url", redis.url)
        a: Simproxy = simproxy_factory(*flags)
        b: Simproxy = simproxy_factory(*flags)
        assert a.admin_json("PUT", "/api/v2/simulation", _sequence("A"))[0] == 200
        stop = threading.Event()
        with ThreadPoolExecutor(max_workers=THREADS) as pool:
            runs = [pool.submit(_load, [a, b], stop, n) for n in range(THREADS)]
            time.sleep(LOAD_S)
            status, body = b.admin_json("PUT", "/api/v2/simulation", _sequence("B"))
            time.sleep(LOAD_S)
            stop.set()
            seen = sum((run.result() for run in runs), Counter())
        assert status == 200, body
        old = Counter({k: v for k, v in seen.items() if k.startswith("A")})
        new = Counter({k: v for k, v in seen.items() if k.startswith("B")})
        assert old + new == seen  # every request answered by one simulation or the other
        assert old.total() > STEPS and new.total() > STEPS  # load on both sides of the PUT
        assert (old, new) == (_expected("A", old.total()), _expected("B", new.total()))
