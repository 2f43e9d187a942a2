"""Under ``-compat hoverfly`` the proxy port's answers are the bytes Hoverfly v1.12.10 writes.

Hoverfly hands Go's HTTP server a header map and a body; Go writes the map's headers sorted by
name, in canonical case, then what it adds itself: ``Date``, a length it computed, a sniffed
``Content-Type``, ``Connection: close``, ``Transfer-Encoding: chunked``. Hoverfly's handler sets
``Content-Length`` itself for a non-empty simulated body, so that one sorts among the pair's
headers. The expected heads below are what a real Hoverfly v1.12.10 answered to the same pairs
(its ``Date`` value aside). Without the switch the spec's layout stays (the last test).
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, simulation, wait_until
from tests.integration.upstream import Upstream


def answer(port: int, target: str, method: str = "GET", close: bool = False) -> tuple[list[str], bytes, bool]:
    """One request on a new connection: the answer's head lines (``Date``'s value blanked), its
    body bytes as framed, and whether the server closed the connection after it."""
    extra = "Connection: close\r\n" if close else ""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"{method} {target} HTTP/1.1\r\nHost: svc.test\r\n{extra}\r\n".encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = [_blanked(line) for line in head.decode("latin-1").split("\r\n")]
        sock.settimeout(1.0)
        closed = False
        try:
            while chunk := sock.recv(65536):
                rest += chunk
            closed = True
        except TimeoutError:
            pass
    return lines, rest, closed


PAIR_DATE = "Mon, 01 Jan 2024 00:00:00 GMT"


def _blanked(line: str) -> str:
    """The server's ``Date`` value blanked (not a pair's own)."""
    return "Date: -" if line.startswith("Date: ") and line != f"Date: {PAIR_DATE}" else line


def pair(path: str, body: str = "", status: int = 200, **response: Any) -> dict[str, Any]:
    return {
        "request": {"path": [{"matcher": "exact", "value": path}]},
        "response": {"status": status, "body": body, **response},
    }


PAIRS = simulation(
    pair("/a", "hello", headers={"X-B": ["1"], "a-lower": ["2"], "Content-Type": ["text/plain"]}),
    pair("/empty", headers={"X-Z": ["z"]}),
    pair("/big", "x" * 3000),
    pair("/tpl", "path {{ Request.Path }}", headers={"X-T": ["t"]}, templated=True),
    pair("/tplempty", "{{ Request.Body 'jsonpath' '$.nothing' }}", templated=True),
    pair("/nc", "x", status=204, headers={"Content-Length": ["1"]}),
    pair("/304", status=304, headers={"Content-Type": ["text/plain"], "Etag": ["e"]}),
    pair("/te", "chunky", headers={"Transfer-Encoding": ["chunked"]}),
    pair("/date", "d", headers={"Date": [PAIR_DATE], "B": ["b"]}),
    pair("/clshort", "hello", headers={"Content-Length": ["2"]}),
    pair("/cllong", "hello", headers={"Content-Length": ["9"]}),
    pair("/lc", "{}", headers={"content-type": ["application/json"], "x-multi": ["1", "2"]}),
    pair("/ce", "abc", headers={"Content-Encoding": ["gzip"]}),
)

# (path, method, expected head lines after the status line, body as framed, closed after it)
HOVERFLY_ANSWERS = [
    ("/a", "GET", ["A-Lower: 2", "Content-Length: 5", "Content-Type: text/plain", "X-B: 1", "Date: -"], b"hello",
     False),
    ("/empty", "GET", ["X-Z: z", "Date: -", "Content-Length: 0"], b"", False),
    ("/empty", "HEAD", ["X-Z: z", "Date: -"], b"", False),
    ("/big", "GET", ["Content-Length: 3000", "Date: -", "Content-Type: text/plain; charset=utf-8"], b"x" * 3000, False),
    ("/tpl", "GET", ["Content-Length: 8", "X-T: t", "Date: -", "Content-Type: text/plain; charset=utf-8"], b"path tpl",
     False),
    ("/tplempty", "GET", ["Date: -", "Content-Length: 0"], b"", False),
    ("/nc", "GET", ["Date: -"], b"", False),
    ("/304", "GET", ["Etag: e", "Date: -"], b"", False),
    ("/te", "GET", ["Date: -", "Transfer-Encoding: chunked"], b"6\r\nchunky\r\n0\r\n\r\n", False),
    ("/date", "GET", ["B: b", "Content-Length: 1", f"Date: {PAIR_DATE}",
                      "Content-Type: text/plain; charset=utf-8"], b"d", False),
    ("/clshort", "GET", ["Content-Length: 2", "Date: -"], b"", True),
    ("/cllong", "GET", ["Content-Length: 9", "Date: -", "Content-Type: text/plain; charset=utf-8"], b"hello", True),
    ("/lc", "GET", ["Content-Length: 2", "Content-Type: application/json", "X-Multi: 1", "X-Multi: 2", "Date: -"],
     b"{}", False),
    ("/ce", "GET", ["Content-Encoding: gzip", "Content-Length: 3", "Date: -"], b"abc", False),
]  # fmt: skip


@pytest.fixture(scope="module")
def hf() -> Any:
    proc = Simproxy("-compat", "hoverfly").start()
    assert proc.admin("PUT", "/api/v2/simulation", PAIRS)[0] == 200
    yield proc
    proc.stop()


@pytest.mark.parametrize(("path", "method", "headers", "body", "closed"), HOVERFLY_ANSWERS)
def test_a_hit_is_laid_out_as_gos_server_writes_hoverflys(
    hf: Simproxy, path: str, method: str, headers: list[str], body: bytes, closed: bool
) -> None:
    head, rest, was_closed = answer(hf.proxy_port, f"http://svc.test{path}", method)
    assert head[1:] == headers
    assert (rest, was_closed) == (body, closed)


def test_the_webserver_writes_the_same_bytes(simproxy_factory: Any) -> None:
    web = simproxy_factory("-compat", "hoverfly", "-webserver")
    assert web.admin("PUT", "/api/v2/simulation", PAIRS)[0] == 200
    head, rest, _ = answer(web.proxy_port, "/a")
    assert head[1:] == ["A-Lower: 2", "Content-Length: 5", "Content-Type: text/plain", "X-B: 1", "Date: -"]
    assert rest == b"hello"


def test_a_closing_request_gets_connection_close_after_gos_own_headers(hf: Simproxy) -> None:
    head, rest, closed = answer(hf.proxy_port, "http://svc.test/a", close=True)
    assert head[1:] == [
        "A-Lower: 2", "Content-Length: 5", "Content-Type: text/plain", "X-B: 1", "Date: -", "Connection: close"
    ]  # fmt: skip
    assert (rest, closed) == (b"hello", True)
    head, _, _ = answer(hf.proxy_port, "http://svc.test/te", close=True)
    assert head[1:] == ["Date: -", "Connection: close", "Transfer-Encoding: chunked"]


def test_a_miss_has_gos_length_after_date_and_a_long_one_goes_chunked(hf: Simproxy) -> None:
    head, rest, _ = answer(hf.proxy_port, "http://svc.test/miss")
    assert head[0] == "HTTP/1.1 502 Bad Gateway"
    assert head[1:] == ["Content-Type: text/plain", "Date: -", f"Content-Length: {len(rest)}"]
    head, rest, _ = answer(hf.proxy_port, "http://svc.test/miss-" + "q" * 2100)  # a page over 2048 bytes
    assert head[1:] == ["Content-Type: text/plain", "Date: -", "Transfer-Encoding: chunked"]
    size, _, content = rest.partition(b"\r\n")
    assert int(size, 16) > 2048 and content.startswith(b"Hoverfly Error!") and content.endswith(b"\r\n0\r\n\r\n")


def test_the_journal_lists_the_length_hoverflys_handler_set(hf: Simproxy) -> None:
    assert hf.admin("DELETE", "/api/v2/journal")[0] == 200
    for path in ("/a", "/empty", "/tpl"):
        answer(hf.proxy_port, f"http://svc.test{path}")
    entries = hf.admin_json("GET", "/api/v2/journal")[1]["journal"]
    assert [entry["response"].get("headers") for entry in entries] == [
        {"Content-Length": ["5"], "Content-Type": ["text/plain"], "X-B": ["1"], "a-lower": ["2"]},
        {"X-Z": ["z"]},
        {"Content-Length": ["8"], "X-T": ["t"]},
    ]


def test_the_spec_keeps_its_layout(simproxy_factory: Any) -> None:
    spec = simproxy_factory()
    assert spec.admin("PUT", "/api/v2/simulation", PAIRS)[0] == 200
    head, _, _ = answer(spec.proxy_port, "http://svc.test/a")
    assert head[1:] == ["Content-Type: text/plain", "X-B: 1", "a-lower: 2", "Content-Length: 5", "Date: -"]
    head, _, _ = answer(spec.proxy_port, "http://svc.test/empty")
    assert head[1:] == ["X-Z: z", "Content-Length: 0", "Date: -"]
    spec.admin("DELETE", "/api/v2/journal")
    answer(spec.proxy_port, "http://svc.test/a")
    [entry] = spec.admin_json("GET", "/api/v2/journal")[1]["journal"]
    assert "Content-Length" not in entry["response"]["headers"]


def _forwarded_headers(sp: Simproxy, upstream: Upstream, path: str) -> list[tuple[str, str]]:
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=10) as sock:
        target = upstream.url(path)
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: {upstream.host}\r\nx-b: 1\r\nA-Thing: 2\r\n\r\n".encode())
        sock.recv(65536)
    [seen] = [r for r in list(upstream.requests) if r.path == path]
    return list(seen.headers.items())


def test_requests_go_upstream_with_the_headers_gos_client_writes(simproxy_factory: Any, upstream: Upstream) -> None:
    hf = simproxy_factory("-compat", "hoverfly")
    assert _forwarded_headers(hf, upstream, "/echo/go-client") == [
        ("Host", upstream.host), ("User-Agent", "Go-http-client/1.1"), ("A-Thing", "2"), ("X-B", "1"),
        ("Accept-Encoding", "gzip"),
    ]  # fmt: skip
    spec = simproxy_factory()
    assert _forwarded_headers(spec, upstream, "/echo/spec-client") == [
        ("Host", upstream.host), ("X-B", "1"), ("A-Thing", "2"), ("Accept-Encoding", "gzip"),
    ]  # fmt: skip


def test_a_remote_post_serve_action_gets_hoverflys_payload(simproxy_factory: Any, upstream: Upstream) -> None:
    hf = simproxy_factory("-compat", "hoverfly")
    hook = {"actionName": "hook", "remote": upstream.url("/go-hook")}
    assert hf.admin("PUT", "/api/v2/hoverfly/post-serve-action", hook)[0] == 200
    acted = pair("/acted", "done", postServeAction="hook")
    assert hf.admin("PUT", "/api/v2/simulation", simulation(acted))[0] == 200
    answer(hf.proxy_port, "http://svc.test/acted")
    [call] = wait_until(lambda: [r for r in list(upstream.requests) if r.path == "/go-hook"])
    request = json.loads(call.body)["request"]
    assert (request["formData"], request["headers"]) == ({}, {})
    assert [name for name, _ in call.headers.items()] == [
        "Host", "User-Agent", "Content-Length", "Content-Type", "X-Correlation-Id", "Accept-Encoding"
    ]  # fmt: skip


def test_a_pair_without_a_status_is_answered_200_where_hoverfly_drops_the_connection(hf: Simproxy) -> None:
    """Hoverfly keeps status 0 and its Go server refuses to write it: the client's connection
    closes without an answer. simproxy answers 200, in Go's layout (docs/compatibility.md)."""
    no_status = {"request": {"path": [{"matcher": "exact", "value": "/zero"}]}, "response": {"body": "zero"}}
    assert hf.admin("POST", "/api/v2/simulation", simulation(no_status))[0] == 200
    head, rest, _ = answer(hf.proxy_port, "http://svc.test/zero")
    assert head == ["HTTP/1.1 200 OK", "Content-Length: 4", "Date: -", "Content-Type: text/plain; charset=utf-8"]
    assert rest == b"zero"
