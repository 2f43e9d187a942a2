"""``-compat hoverfly``: the admin API's answers have the head Go's ``net/http`` gives Hoverfly
v1.12.10's (issue 38): the handler's headers sorted in canonical case, ``Date``, ``Content-Length``,
then a sniffed type, ``Connection: close`` or ``Transfer-Encoding: chunked``; no ``Connection`` on a
keep-alive answer; over 2048 bytes, one chunk. The expected heads are what Hoverfly v1.12.10 sent
for the same requests. Read from raw sockets, so nothing between hides the bytes.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.conftest import Simproxy

DATE = re.compile(r"Date: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT")


@pytest.fixture(scope="module")
def hoverfly_like() -> Iterator[Simproxy]:
    proc = Simproxy("-compat", "hoverfly").start()
    yield proc
    proc.stop()


def _read_answer(sock: socket.socket) -> tuple[list[str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before the head ended: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if any(line == "Transfer-Encoding: chunked" for line in lines):
        while not rest.endswith(b"0\r\n\r\n"):
            rest += sock.recv(65536)
    else:
        length = next(int(line.split(": ")[1]) for line in lines if line.lower().startswith("content-length:"))
        while len(rest) < length:
            rest += sock.recv(65536)
    return lines, rest


def exchange(port: int, request: bytes) -> tuple[list[str], bytes]:
    """One request on a new connection; the answer's head lines (``Date``'s value replaced) and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        lines, body = _read_answer(sock)
    return [DATE.sub("Date: <date>", line) for line in lines], body


def get(port: int, path: str, method: str = "GET", extra: str = "") -> tuple[list[str], bytes]:
    return exchange(port, f"{method} {path} HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n".encode())


def test_a_json_answer_has_the_type_then_date_then_length_and_no_connection(hoverfly_like: Simproxy) -> None:
    head, body = get(hoverfly_like.admin_port, "/api/v2/hoverfly/cors")
    assert head == [
        "HTTP/1.1 200 OK",
        "Content-Type: application/json; charset=utf-8",
        "Date: <date>",
        "Content-Length: 17",
    ]
    assert body == b'{"enabled":false}'


def test_an_error_answer_has_its_sniffed_type_after_the_length(hoverfly_like: Simproxy) -> None:
    head, body = get(hoverfly_like.admin_port, "/api/v2/hoverfly/pac")
    assert head == [
        "HTTP/1.1 404 Not Found",
        "Date: <date>",
        "Content-Length: 21",
        "Content-Type: text/plain; charset=utf-8",
    ]
    assert body == b'{"error":"Not found"}'


def test_the_router_404_sorts_its_own_headers_before_date(hoverfly_like: Simproxy) -> None:
    head, body = get(hoverfly_like.admin_port, "/api/v2/nothing-here")
    assert head == [
        "HTTP/1.1 404 Not Found",
        "Content-Type: text/plain; charset=utf-8",
        "X-Content-Type-Options: nosniff",
        "Date: <date>",
        "Content-Length: 19",
    ]
    assert body == b"404 page not found\n"


def test_options_lists_allow_and_type_sorted_then_a_zero_length(hoverfly_like: Simproxy) -> None:
    head, body = get(hoverfly_like.admin_port, "/api/v2/hoverfly/mode", "OPTIONS")
    assert head == [
        "HTTP/1.1 200 OK",
        "Allow: OPTIONS, GET, PUT",
        "Content-Type: text/plain; charset=utf-8",
        "Date: <date>",
        "Content-Length: 0",
    ]
    assert body == b""


def test_connection_close_is_said_last(hoverfly_like: Simproxy) -> None:
    head, _ = get(hoverfly_like.admin_port, "/api/v2/hoverfly/pac", extra="Connection: close\r\n")
    assert head == [
        "HTTP/1.1 404 Not Found",
        "Date: <date>",
        "Content-Length: 21",
        "Content-Type: text/plain; charset=utf-8",
        "Connection: close",
    ]


def test_an_answer_over_2048_bytes_is_one_chunk(hoverfly_like: Simproxy) -> None:
    head, body = get(hoverfly_like.admin_port, "/api/v2/simulation/schema")
    assert head == [
        "HTTP/1.1 200 OK",
        "Content-Type: application/json; charset=utf-8",
        "Date: <date>",
        "Transfer-Encoding: chunked",
    ]
    size, _, rest = body.partition(b"\r\n")
    assert int(size, 16) > 2048
    assert rest == rest[: int(size, 16)] + b"\r\n0\r\n\r\n"


def test_a_keep_alive_connection_answers_twice_in_go_form(hoverfly_like: Simproxy) -> None:
    request = b"GET /api/v2/hoverfly/cors HTTP/1.1\r\nHost: localhost\r\n\r\n"
    with socket.create_connection(("127.0.0.1", hoverfly_like.admin_port), timeout=10) as sock:
        for _ in range(2):
            sock.sendall(request)
            head, body = _read_answer(sock)
            assert [DATE.sub("Date: <date>", line) for line in head][1:] == [
                "Content-Type: application/json; charset=utf-8",
                "Date: <date>",
                "Content-Length: 17",
            ]
            assert body == b'{"enabled":false}'


def test_dev_cors_headers_are_sorted_among_the_handlers_own(simproxy_factory: Any) -> None:
    proc = simproxy_factory("-compat", "hoverfly", "-dev")
    cors = [
        "Access-Control-Allow-Credentials: true",
        "Access-Control-Allow-Headers: Origin, X-Requested-With, Content-Type, Accept, Authorization",
        "Access-Control-Allow-Methods: GET, PUT, POST, OPTIONS, DELETE",
        "Access-Control-Allow-Origin: http://localhost:4200",
    ]
    head, _ = get(proc.admin_port, "/api/v2/hoverfly/pac")
    assert head == [
        "HTTP/1.1 404 Not Found",
        *cors,
        "Date: <date>",
        "Content-Length: 21",
        "Content-Type: text/plain; charset=utf-8",
    ]
    head, _ = get(proc.admin_port, "/api/v2/hoverfly/mode", "OPTIONS")
    assert head == [
        "HTTP/1.1 200 OK",
        *cors,
        "Allow: OPTIONS, GET, PUT",
        "Content-Type: text/plain; charset=utf-8",
        "Date: <date>",
        "Content-Length: 0",
    ]


def test_without_the_switch_the_head_is_unchanged(simproxy_factory: Any) -> None:
    proc = simproxy_factory()
    head, _ = get(proc.admin_port, "/api/v2/hoverfly/cors")
    assert head == [
        "HTTP/1.1 200 OK",
        "content-length: 17",
        "connection: keep-alive",
        "content-type: application/json; charset=utf-8",
    ]
