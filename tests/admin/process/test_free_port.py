"""``free_port``: a loopback port for a server started next, out of the way of outgoing connections."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from simproxy.admin.process import redisserver
from simproxy.admin.process.redisserver import free_port


def _ephemeral_low() -> int:
    return int(redisserver.EPHEMERAL_RANGE.read_text().split()[0])


@pytest.mark.skipif(not redisserver.EPHEMERAL_RANGE.exists(), reason="no Linux ephemeral port range to stay under")
def test_the_port_is_below_the_ephemeral_range_and_a_server_can_bind_it() -> None:
    low = _ephemeral_low()
    for _ in range(20):
        port = free_port()
        assert low - redisserver.BELOW_EPHEMERAL <= port < low
        with socket.create_server(("127.0.0.1", port)):
            pass


@pytest.mark.skipif(not redisserver.EPHEMERAL_RANGE.exists(), reason="no Linux ephemeral port range to stay under")
def test_a_port_already_bound_is_never_given(monkeypatch: pytest.MonkeyPatch) -> None:
    low = _ephemeral_low()
    held = socket.create_server(("127.0.0.1", low - 1))
    try:
        draws = iter([redisserver.BELOW_EPHEMERAL - 1, 0])  # the held port first, then the lowest
        monkeypatch.setattr(redisserver.secrets, "randbelow", lambda _: next(draws))
        assert free_port() == low - redisserver.BELOW_EPHEMERAL
    finally:
        held.close()


def test_without_a_known_range_the_kernel_picks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(redisserver, "EPHEMERAL_RANGE", tmp_path / "missing")
    port = free_port()
    with socket.create_server(("127.0.0.1", port)):
        pass
