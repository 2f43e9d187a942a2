"""What one client may hold of simproxy: body and header sizes, slow and idle connections, pipelining."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, pair, simulation
from tests.integration.upstream import Upstream

LIMITS = (
    "-max-body-size", "1KB", "-max-header-size", "2KB", "-read-timeout", "1s", "-idle-timeout", "2s",
    "-max-admin-body-size", "4KB", "-max-pairs", "3",
)  # fmt: skip


@pytest.fixture(scope="module")
def limited() -> Iterator[Simproxy]:
    sp = Simproxy(*LIMITS).start()
    assert sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/p", "ok")))[0] == 200
    yield sp
    sp.stop()


def _exchange(sp: Simproxy, raw: bytes, wait: float = 10.0) -> bytes:
    """Send ``raw`` on a new connection and read until simproxy closes it."""
    with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=wait) as sock:
        sock.sendall(raw)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


def test_a_body_over_the_limit_is_413(limited: Simproxy) -> None:
    status, _, _ = limited.proxy("http://h/p", "POST", body=b"x" * 1024)
    assert status == 200
    status, _, body = limited.proxy("http://h/p", "POST", body=b"x" * 1025)
    assert status == 413 and b"larger than 1024 bytes" in body


def test_headers_over_the_limit_are_431(limited: Simproxy) -> None:
    assert limited.proxy("http://h/p", headers={"X-Big": "y" * 1500})[0] == 200
    status, _, body = limited.proxy("http://h/p", headers={"X-Big": "y" * 2100})
    assert status == 431 and b"larger than 2048 bytes" in body


def test_a_request_that_stalls_gets_408_and_the_connection_closes(limited: Simproxy) -> None:
    answer = _exchange(limited, b"GET http://h/p HTTP/1.1\r\nHost: h\r\n")  # never ends its headers
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")


def test_an_idle_connection_is_closed_and_a_busy_one_is_not(limited: Simproxy) -> None:
    port = limited.proxy_port
    with (
        socket.create_connection(("127.0.0.1", port), timeout=15) as idle,
        socket.create_connection(("127.0.0.1", port), timeout=15) as busy,
    ):
        for _ in range(9):  # a request every half second keeps one open well past the 2 s idle limit
            busy.sendall(b"GET http://h/p HTTP/1.1\r\nHost: h\r\n\r\n")
            assert busy.recv(65536).startswith(b"HTTP/1.1 200 ")
            time.sleep(0.5)
        assert idle.recv(65536) == b""  # the other one was closed without a word


def test_many_pipelined_requests_are_all_answered_in_order(limited: Simproxy) -> None:
    requests = b"".join(b"GET http://h/p?n=%d HTTP/1.1\r\nHost: h\r\n\r\n" % n for n in range(500))
    answer = _exchange(limited, requests + b"GET http://h/p HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
    assert answer.count(b"HTTP/1.1 200 OK\r\n") == 501


def test_an_admin_body_over_the_limit_is_413_and_changes_nothing(limited: Simproxy) -> None:
    big = simulation(*(pair(f"/p{i}", "z" * 100) for i in range(60)))
    status, body = limited.admin_json("PUT", "/api/v2/simulation", big)
    assert status == 413 and "error" in body
    pairs = limited.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"]
    assert [p["request"]["path"][0]["value"] for p in pairs] == ["/p"]


def test_a_header_that_never_ends_is_cut_off_at_the_limit(limited: Simproxy) -> None:
    with socket.create_connection(("127.0.0.1", limited.proxy_port), timeout=10) as sock:
        sock.sendall(b"GET http://h/p HTTP/1.1\r\nHost: h\r\nX-Endless: ")
        answer = b""
        for _ in range(8):  # 8 KB in separate reads, four times the limit, and still no end of line
            time.sleep(0.05)
            try:
                sock.sendall(b"z" * 1024)
            except OSError:
                break
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")


def test_a_simulation_over_max_pairs_is_refused_whole(limited: Simproxy) -> None:
    four = simulation(*(pair(f"/q{i}", "q") for i in range(4)))
    status, body = limited.admin_json("PUT", "/api/v2/simulation", four)
    assert status == 413 and "more than -max-pairs 3" in body["error"]
    assert limited.admin_json("POST", "/api/v2/simulation", simulation(pair("/a", "a"), pair("/b", "b")))[0] == 200
    status, body = limited.admin_json("POST", "/api/v2/simulation", simulation(pair("/c", "c")))
    assert status == 413 and "would hold 4 pairs" in body["error"]
    pairs = limited.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"]
    assert [p["request"]["path"][0]["value"] for p in pairs] == ["/p", "/a", "/b"]
    limited.admin_json("PUT", "/api/v2/simulation", simulation(pair("/p", "ok")))  # as the other tests expect


def test_captures_beyond_max_pairs_are_answered_but_not_stored(simproxy_factory: Any, upstream: Upstream) -> None:
    sp: Simproxy = simproxy_factory("-capture", "-max-pairs", "2")
    for name in ("one", "two", "three"):
        assert sp.proxy(upstream.url(f"/{name}"))[2] == f"real /{name}".encode()
    pairs = sp.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"]
    assert [p["request"]["path"][0]["value"] for p in pairs] == ["/one", "/two"]
