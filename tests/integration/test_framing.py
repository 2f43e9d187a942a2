"""No answer in any mode carries both ``Content-Length`` and ``Transfer-Encoding`` (RFC 9112 §6.1: a
sender must not send both; a receiver that trusts the other one is where request smuggling starts).

A pair, a middleware or a real service may declare both; simproxy sends the chunked framing alone,
as Go's server (and so Hoverfly) does. Read from raw sockets, so nothing between hides the bytes.
"""

from __future__ import annotations

import json
import socket
import ssl
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, simulation
from tests.integration.upstream import Upstream

BOTH = {"Content-Length": ["999"], "Transfer-Encoding": ["chunked"], "X-Pair": ["both"]}
# A middleware that answers (synthesize) or rewrites the answer (modify) declaring both headers.
DECLARES_BOTH = textwrap.dedent(
    """
    import json, sys
    pair = json.load(sys.stdin)
    if pair["response"]["status"] != 0 or "synth" in pair["request"]["path"]:
        pair["response"] = {"status": 200, "body": "from middleware", "encodedBody": False,
                            "headers": {"Content-Length": ["3"], "Transfer-Encoding": ["chunked"]}}
    json.dump(pair, sys.stdout)
    """
)


def both_pairs() -> dict[str, Any]:
    def declared(path: str, **response: Any) -> dict[str, Any]:
        return {
            "request": {"path": [{"matcher": "exact", "value": path}]},
            "response": {"status": 200, "body": "hello", "headers": BOTH, **response},
        }

    return simulation(
        declared("/both"),
        declared("/templated", body="method {{Request.Method}}", templated=True),
        declared("/empty", body=""),
    )


def exchange(port: int, target: str, host: str, method: str = "GET") -> tuple[list[str], bytes]:
    """One request on a new connection (closed after it); the answer's head lines and the rest."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head.decode("latin-1").split("\r\n"), rest


def framing(head: list[str]) -> set[str]:
    return {line.split(":", 1)[0].lower() for line in head[1:]} & {"content-length", "transfer-encoding"}


def assert_chunked_alone(head: list[str], rest: bytes, content: bytes) -> None:
    assert framing(head) == {"transfer-encoding"}, head
    assert rest.endswith(b"0\r\n\r\n") and (content in rest if content else rest == b"0\r\n\r\n"), rest


@pytest.fixture(scope="module")
def sp() -> Iterator[Simproxy]:
    proc = Simproxy("-enable-middleware-api").start()
    yield proc
    proc.stop()


@pytest.fixture(autouse=True)
def reset(sp: Simproxy) -> None:
    assert sp.admin("PUT", "/api/v2/hoverfly/middleware", {"binary": "", "script": "", "remote": ""})[0] == 200
    assert sp.admin("PUT", "/api/v2/simulation", both_pairs())[0] == 200
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200


@pytest.mark.parametrize("mode", ["simulate", "spy"])
@pytest.mark.parametrize(("path", "content"), [("/both", b"hello"), ("/templated", b"method GET"), ("/empty", b"")])
def test_a_pair_declaring_both_is_sent_chunked_alone(sp: Simproxy, mode: str, path: str, content: bytes) -> None:
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": mode})[0] == 200
    head, rest = exchange(sp.proxy_port, f"http://svc.test{path}", "svc.test")
    assert head[0] == "HTTP/1.1 200 OK" and "X-Pair: both" in head
    assert_chunked_alone(head, rest, content)


def test_a_head_request_for_such_a_pair_declares_no_length_either(sp: Simproxy) -> None:
    head, rest = exchange(sp.proxy_port, "http://svc.test/both", "svc.test", "HEAD")
    assert framing(head) == {"transfer-encoding"} and rest == b""  # a HEAD answer has no body


def test_the_journal_keeps_what_the_pair_declared(sp: Simproxy) -> None:
    assert sp.admin("DELETE", "/api/v2/journal")[0] == 200
    exchange(sp.proxy_port, "http://svc.test/both", "svc.test")
    [entry] = sp.admin_json("GET", "/api/v2/journal")[1]["journal"]
    assert entry["response"]["headers"]["Content-Length"] == ["999"]  # what the simulation said


@pytest.mark.parametrize("mode", ["modify", "synthesize"])
def test_a_middleware_answer_declaring_both_is_sent_chunked_alone(sp: Simproxy, upstream: Upstream, mode: str) -> None:
    body = {"binary": sys.executable, "script": DECLARES_BOTH, "remote": ""}
    assert sp.admin("PUT", "/api/v2/hoverfly/middleware", body)[0] == 200
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": mode})[0] == 200
    head, rest = exchange(sp.proxy_port, upstream.url("/synth" if mode == "synthesize" else "/plain"), upstream.host)
    assert head[0] == "HTTP/1.1 200 OK"
    assert_chunked_alone(head, rest, b"from middleware")


@pytest.mark.parametrize("mode", ["capture", "spy", "diff"])
def test_a_chunked_real_service_is_forwarded_with_one_framing(sp: Simproxy, upstream: Upstream, mode: str) -> None:
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": mode})[0] == 200
    head, _ = exchange(sp.proxy_port, upstream.url("/chunked"), upstream.host)
    assert head[0] == "HTTP/1.1 200 OK" and len(framing(head)) == 1, head


@pytest.mark.parametrize("compat", [(), ("-compat", "hoverfly")])
def test_inside_an_intercepted_https_tunnel_too(simproxy_factory: Any, compat: tuple[str, ...]) -> None:
    sp = simproxy_factory(*compat)
    assert sp.admin("PUT", "/api/v2/simulation", both_pairs())[0] == 200
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # the CA is another test's subject
    with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=10) as raw:
        raw.sendall(b"CONNECT svc.test:443 HTTP/1.1\r\nHost: svc.test:443\r\n\r\n")
        assert raw.recv(4096).startswith(b"HTTP/1.")
        with context.wrap_socket(raw, server_hostname="svc.test") as tls:
            tls.sendall(b"GET /both HTTP/1.1\r\nHost: svc.test\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := tls.recv(65536):
                data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    assert_chunked_alone(head.decode("latin-1").split("\r\n"), rest, b"hello")


def test_the_webserver_answers_chunked_alone(simproxy_factory: Any) -> None:
    web = simproxy_factory("-webserver")
    assert web.admin("PUT", "/api/v2/simulation", both_pairs())[0] == 200
    head, rest = exchange(web.proxy_port, "/both", "svc.test")
    assert_chunked_alone(head, rest, b"hello")


def test_the_compat_dialect_answers_the_same(simproxy_factory: Any) -> None:
    compat = simproxy_factory("-compat", "hoverfly")
    assert compat.admin("PUT", "/api/v2/simulation", both_pairs())[0] == 200
    head, rest = exchange(compat.proxy_port, "http://svc.test/both", "svc.test")
    assert_chunked_alone(head, rest, b"hello")
    assert json.loads(compat.admin("GET", "/api/v2/simulation")[2])["data"]["pairs"][0]["response"]["headers"] == BOTH
