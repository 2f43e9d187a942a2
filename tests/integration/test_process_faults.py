"""Processes dying: a killed worker is replaced, a killed main process takes its workers with it,
and SIGTERM lets requests in flight finish before the process exits 0."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import socket
import subprocess
import time
from typing import Any

import pytest

from benchmarks.procs import descendants
from simproxy.admin.command import COMMAND
from simproxy.admin.process.redisserver import free_port
from simproxy.engine.execution.lifeline import start_time
from tests.integration.conftest import ROOT, Simproxy, pair, refused, simulation, wait_until

pytestmark = pytest.mark.slow


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
    started = {(pid, start_time(pid)) for pid in descendants(sp.process.pid)}
    assert len(started) == 3  # the two workers and the private redis-server
    sp.process.kill()
    assert wait_until(lambda: refused(sp.proxy_port) and refused(sp.admin_port), 1.5)  # no orphan keeps the ports

    def left() -> set[tuple[int, int | None]]:
        return {(pid, start) for pid, start in started if start_time(pid) == start}

    assert wait_until(lambda: not left(), 5), left()  # nor lingers idle


def test_sigterm_lets_the_request_in_flight_finish_and_exits_0(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory()
    slow = pair("/slow", "finished")
    slow["response"]["fixedDelay"] = 1500
    assert sp.admin_json("PUT", "/api/v2/simulation", simulation(slow))[0] == 200
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        in_flight = pool.submit(sp.proxy, "http://h/slow")
        time.sleep(0.4)
        assert sp.process is not None
        sp.process.send_signal(signal.SIGTERM)
        assert in_flight.result(timeout=20)[::2] == (200, b"finished")
    assert sp.process.wait(timeout=20) == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_while_the_workers_start_ends_the_start_and_exits_0(sig: signal.Signals) -> None:
    admin, proxy = free_port(), free_port()
    command = [*COMMAND, "-workers", "2", "-ap", str(admin), "-pp", str(proxy)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # the admin port is bound by the main process before any worker runs: stop right then
        def bound() -> bool:
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", admin)) == 0

        assert wait_until(bound, timeout=30, interval=0.01)
        process.send_signal(sig)
        assert process.wait(timeout=20) == 0
        assert not descendants(process.pid)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
