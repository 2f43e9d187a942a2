"""``free_port``: loopback ports for servers started next, out of the way of outgoing connections."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Sequence
from pathlib import Path

import pytest

from simproxy.admin.process import redisserver
from simproxy.admin.process.redisserver import free_port


def _range(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str) -> None:
    path = tmp_path / "ip_local_port_range"
    path.write_text(text)
    monkeypatch.setattr(redisserver, "EPHEMERAL_RANGE", path)


def _bindable(first: int, count: int) -> None:
    with contextlib.ExitStack() as stack:
        for port in range(first, first + count):
            stack.enter_context(socket.create_server(("127.0.0.1", port)))


@pytest.mark.skipif(not redisserver.EPHEMERAL_RANGE.exists(), reason="no Linux ephemeral port range to stay under")
@pytest.mark.parametrize("count", [1, 4])
def test_the_ports_are_below_the_machines_ephemeral_range_and_servers_can_bind_them(count: int) -> None:
    low = int(redisserver.EPHEMERAL_RANGE.read_text().split()[0])
    for _ in range(20):
        first = free_port(count)
        assert low - redisserver.BELOW_EPHEMERAL <= first and first + count <= low
        _bindable(first, count)


def test_a_block_with_a_port_already_bound_is_never_given(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _range(monkeypatch, tmp_path, "40000\t60999\n")
    held = socket.create_server(("127.0.0.1", 39_999))
    try:
        draws: list[Sequence[int]] = []

        def choice(firsts: Sequence[int]) -> int:
            draws.append(firsts)
            return firsts[-1] if len(draws) == 1 else firsts[0]  # the block ending on the held port first

        monkeypatch.setattr(redisserver.secrets, "choice", choice)
        assert free_port(2) == 30_000
        assert draws[0] == range(30_000, 39_999)
    finally:
        held.close()


def test_without_a_readable_range_the_ports_are_below_linuxs_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(redisserver, "EPHEMERAL_RANGE", tmp_path / "missing")
    first = free_port(3)
    assert first >= 22_768 and first + 3 <= 32_768
    _bindable(first, 3)


def test_with_no_room_below_the_range_one_port_is_the_kernels_and_a_block_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _range(monkeypatch, tmp_path, "1024 65535\n")
    _bindable(free_port(), 1)
    with pytest.raises(RuntimeError, match="no 2 consecutive free loopback ports below 1024"):
        free_port(2)
