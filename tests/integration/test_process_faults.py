"""Processes dying: a killed worker is replaced, a killed main process takes its workers with it,
and SIGTERM lets requests in flight finish before the process exits 0."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import socket
import time
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, pair, simulation, wait_until

pytestmark = pytest.mark.slow


def _refused(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) != 0


def test_a_killed_worker_is_replaced_and_serves_the_same_simulation(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-workers", "2")
    assert sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/still", "here")))[0] == 200
    first, second = sp.proxy_listeners()
    os.kill(first, signal.SIGKILL)
    replaced = wait_until(lambda: len(sp.proxy_listeners()) == 2 and first not in sp.proxy_listeners(), 20)
    assert replaced, sp.proxy_listeners()
    assert second in sp.proxy_listeners()
    for _ in range(20):  # new connections reach both workers, the new one included
        assert sp.proxy("http://h/still")[::2] == (200, b"here")


def test_a_killed_main_process_takes_its_workers_with_it(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-workers", "2")
    assert sp.process is not None and len(sp.proxy_listeners()) == 2
    sp.process.kill()
    assert wait_until(lambda: _refused(sp.proxy_port) and _refused(sp.admin_port), 1.5)  # no orphan keeps the ports


def test_sigterm_lets_the_request_in_flight_finish_and_exits_0(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory()
    slow = pair("/slow", "finished")
    slow["response"]["fixedDelay"] = 1500
    assert sp.admin_json("PUT", "/api/v2/simulation", simulation(slow))[0] == 200
    time.sleep(1.0)  # past Sanic's start-up moment, when a SIGTERM can be lost (README, known issues)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        in_flight = pool.submit(sp.proxy, "http://h/slow")
        time.sleep(0.4)
        assert sp.process is not None
        sp.process.send_signal(signal.SIGTERM)
        assert in_flight.result(timeout=20)[::2] == (200, b"finished")
    assert sp.process.wait(timeout=20) == 0
