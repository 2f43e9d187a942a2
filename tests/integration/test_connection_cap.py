"""A client opening proxy connections without end cannot take every descriptor of a worker."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import socket
import subprocess
import tempfile
from collections.abc import Iterator

import pytest

from simproxy.admin.command import COMMAND
from simproxy.admin.process.redisserver import free_port
from tests.integration.conftest import ROOT, call, pair, simulation, wait_until

pytestmark = pytest.mark.slow

DESCRIPTORS = 400
"""The worker's descriptor limit in this test: 256 kept for everything else leaves 144 for clients."""
BUDGET = DESCRIPTORS - 256


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, DESCRIPTORS))


@pytest.fixture
def limited_simproxy() -> Iterator[tuple[int, int]]:
    admin, proxy = free_port(), free_port()
    env = {**os.environ, "SIMPROXY_HOME": os.path.join(tempfile.gettempdir(), "simproxy-tests-home")}
    process = subprocess.Popen(
        [*COMMAND, "-ap", str(admin), "-pp", str(proxy)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_limited,
    )
    try:
        assert wait_until(lambda: _healthy(admin), timeout=30, interval=0.02)
        yield admin, proxy
    finally:
        process.terminate()
        process.wait(timeout=20)


def _healthy(port: int) -> bool:
    try:
        return call(port, "GET", "/api/health")[0] == 200
    except OSError:
        return False


def _answer(sock: socket.socket) -> bytes:
    data = b""
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            data += chunk
    return data


def test_connections_beyond_the_descriptor_budget_get_503_and_the_rest_serves_on(
    limited_simproxy: tuple[int, int],
) -> None:
    admin, proxy = limited_simproxy
    assert call(admin, "PUT", "/api/v2/simulation", json.dumps(simulation(pair("/up", "served"))).encode())[0] == 200
    held = [socket.create_connection(("127.0.0.1", proxy), timeout=5) for _ in range(BUDGET)]
    try:
        extra = socket.create_connection(("127.0.0.1", proxy), timeout=5)
        with extra:
            refused = _answer(extra)
        assert refused.startswith(b"HTTP/1.1 503") and b"too many connections" in refused
        assert _healthy(admin)  # the admin API still has descriptors
        first = held.pop()
        first.sendall(b"GET http://h/up HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        assert _answer(first).endswith(b"served")  # the connections it holds are served
        first.close()
    finally:
        for sock in held:
            sock.close()
    assert wait_until(lambda: call(proxy, "GET", "http://h/up")[::2] == (200, b"served"))  # room again
