"""Where the spec is silent, Hoverfly's behaviour is the answer (issue 19): each case through a real
simproxy process, a real upstream server and raw sockets where the bytes matter."""

from __future__ import annotations

import socket
import ssl
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, simulation
from tests.integration.upstream import Upstream


@pytest.fixture
def sp(simproxy: Simproxy) -> Simproxy:
    """The module's simproxy, emptied and in simulate mode."""
    assert simproxy.admin("DELETE", "/api/v2/simulation")[0] == 200
    assert simproxy.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200
    return simproxy


def raw_get(port: int, url: str) -> tuple[str, list[tuple[str, str]], bytes]:
    """GET ``url`` through the proxy on one connection: the status line, every header line in order
    (repeats kept), and the body."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        host = url.split("/")[2]
        sock.sendall(f"GET {url} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = [(name, value.strip()) for name, _, value in (line.partition(":") for line in lines)]
    return status, headers, body


def values(headers: list[tuple[str, str]], name: str) -> list[str]:
    return [value for key, value in headers if key.lower() == name.lower()]


def test_a_pair_with_its_own_date_is_sent_with_that_date_alone(sp: Simproxy) -> None:
    stored = "Tue, 03 Mar 2020 10:00:00 GMT"
    dated = {
        "request": {"path": [{"matcher": "exact", "value": "/dated"}]},
        "response": {"status": 200, "body": "old news", "headers": {"Date": [stored]}},
    }
    plain = {"request": {"path": [{"matcher": "exact", "value": "/plain"}]}, "response": {"status": 200, "body": "x"}}
    assert sp.admin("PUT", "/api/v2/simulation", simulation(dated, plain))[0] == 200

    status, headers, body = raw_get(sp.proxy_port, "http://api.test/dated")
    assert (status, body) == ("HTTP/1.1 200 OK", b"old news")
    assert values(headers, "Date") == [stored]

    _, headers, _ = raw_get(sp.proxy_port, "http://api.test/plain")
    [fresh] = values(headers, "Date")  # a pair without one gets the server's, once
    assert parsedate_to_datetime(fresh).year >= 2026


def test_a_captured_pair_replays_with_the_real_services_date_once(sp: Simproxy, upstream: Upstream) -> None:
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    _, live, _ = raw_get(sp.proxy_port, upstream.url("/hello"))
    [real_date] = values(live, "Date")  # the real service's, forwarded alone

    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200
    status, replayed, body = raw_get(sp.proxy_port, upstream.url("/hello"))
    assert (status, body) == ("HTTP/1.1 200 OK", b"real /hello")
    assert values(replayed, "Date") == [real_date]


def test_requests_for_the_admin_port_are_forwarded_like_any_service(sp: Simproxy) -> None:
    """Only the proxy port would loop; Hoverfly forwards to its own admin API like to any service."""
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    status, _, body = raw_get(sp.proxy_port, f"http://localhost:{sp.admin_port}/api/v2/hoverfly/mode")
    assert status == "HTTP/1.1 200 OK"
    assert b'"mode":"capture"' in body.replace(b" ", b"")
    [captured] = sp.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"]
    assert captured["request"]["path"] == [{"matcher": "exact", "value": "/api/v2/hoverfly/mode"}]


def _leaf_subject(sp: Simproxy, host: str) -> dict[str, str]:
    """The subject of the certificate simproxy shows inside a CONNECT tunnel to ``host``."""
    from cryptography import x509

    with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=10) as raw:
        raw.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
        assert raw.recv(4096).startswith(b"HTTP/1.")
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        with context.wrap_socket(raw, server_hostname=host if not host[0].isdigit() else None) as tls:
            der = tls.getpeercert(binary_form=True)
    assert der is not None
    subject = x509.load_der_x509_certificate(der).subject
    return {attribute.rfc4514_attribute_name: str(attribute.value) for attribute in subject}


def test_certificates_for_intercepted_hosts_carry_hoverflys_organisation(sp: Simproxy) -> None:
    assert _leaf_subject(sp, "api.secure.test") == {"O": "GoProxy untrusted MITM proxy Inc", "CN": "api.secure.test"}
    assert _leaf_subject(sp, "10.1.2.3") == {"O": "GoProxy untrusted MITM proxy Inc"}  # an IP: no common name


def test_the_journal_helpers_read_the_journal_through_its_indexes(sp: Simproxy) -> None:
    """``{{ journal index key "response" "jsonpath" query }}`` reads an earlier request's entry, found by
    its key in a journal index; ``hasJournalKey`` says whether there is one."""
    assert sp.admin("DELETE", "/api/v2/journal")[0] == 200
    assert sp.admin("POST", "/api/v2/journal/index", {"name": "Request.QueryParam.id"})[0] == 200
    try:
        stored = {
            "request": {"path": [{"matcher": "exact", "value": "/customers"}]},
            "response": {"status": 200, "body": '{"name": "Ada", "tier": "gold"}'},
        }
        body = (
            '{{ journal "Request.QueryParam.id" Request.QueryParam.id "response" "jsonpath" "$.name" }}'
            '/{{ hasJournalKey "Request.QueryParam.id" Request.QueryParam.id }}'
        )
        echo = {
            "request": {"path": [{"matcher": "exact", "value": "/greeting"}]},
            "response": {"status": 200, "body": body, "templated": True},
        }
        assert sp.admin("PUT", "/api/v2/simulation", simulation(stored, echo))[0] == 200
        unknown = raw_get(sp.proxy_port, "http://api.test/greeting?id=7")[2]  # nothing journaled yet
        assert unknown.startswith(b"{{ journal ") and unknown.endswith(b"/false")  # Hoverfly prints the call
        assert raw_get(sp.proxy_port, "http://api.test/customers?id=7")[2] == b'{"name": "Ada", "tier": "gold"}'
        assert raw_get(sp.proxy_port, "http://api.test/greeting?id=7")[2] == b"Ada/true"
        assert raw_get(sp.proxy_port, "http://api.test/greeting?id=8")[2] == unknown.replace(b"7", b"8")
    finally:
        assert sp.admin("DELETE", "/api/v2/journal/index/Request.QueryParam.id")[0] == 200


def _first_nameserver() -> str:
    for line in Path("/etc/resolv.conf").read_text().splitlines():
        if line.startswith("nameserver"):
            return line.split()[1] + ":53"
    return ""


REFUSED = 'Get "http://127.0.0.1:9/refused": dial tcp 127.0.0.1:9: connect: connection refused'
NO_HOST = 'Get "http://nohost.invalid/x": dial tcp: lookup nohost.invalid on {ns}: no such host'


@pytest.mark.parametrize(
    ("url", "error"), [("http://127.0.0.1:9/refused", REFUSED), ("http://nohost.invalid/x", NO_HOST)]
)
def test_forwarding_failures_are_worded_as_gos_client_words_them(sp: Simproxy, url: str, error: str) -> None:
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    status, _, body = raw_get(sp.proxy_port, url)
    assert status == "HTTP/1.1 502 Bad Gateway"
    assert body.decode().endswith("Got error: " + error.format(ns=_first_nameserver()))


def test_a_relayed_request_that_fails_is_a_500_with_the_transports_words_alone(sp: Simproxy) -> None:
    """Outside the destination a request is relayed by goproxy's transport, not Go's client: its
    error has no ``Get "url": `` in front (seen beside a real Hoverfly v1.12.10)."""
    assert sp.admin("PUT", "/api/v2/hoverfly/destination", {"destination": "inside.test"})[0] == 200
    try:
        status, _, body = raw_get(sp.proxy_port, "http://127.0.0.1:9/refused")
    finally:
        assert sp.admin("PUT", "/api/v2/hoverfly/destination", {"destination": "."})[0] == 200
    assert (status, body) == (
        "HTTP/1.1 500 Internal Server Error",
        b"dial tcp 127.0.0.1:9: connect: connection refused\n",
    )


def test_inside_a_tunnel_a_stored_length_that_disagrees_with_the_body_is_sent_chunked(
    sp: Simproxy, tmp_path: Path
) -> None:
    """Hoverfly chunks every tunnelled answer; simproxy at least never sends a length that disagrees
    with the body it sends, so the client reads the whole body instead of a broken answer."""
    import requests

    wrong = {
        "request": {"path": [{"matcher": "exact", "value": "/wrong-length"}]},
        "response": {"status": 200, "body": "short", "headers": {"Content-Length": ["100"]}},
    }
    assert sp.admin("PUT", "/api/v2/simulation", simulation(wrong))[0] == 200
    ca = tmp_path / "ca.pem"
    ca.write_bytes(sp.admin("GET", "/api/v2/hoverfly/ca-cert")[2])
    proxy = f"http://127.0.0.1:{sp.proxy_port}"
    response = requests.get(
        "https://api.secure.test/wrong-length", proxies={"https": proxy}, verify=str(ca), timeout=10
    )
    assert (response.status_code, response.text) == (200, "short")
    assert response.headers["Transfer-Encoding"] == "chunked" and "Content-Length" not in response.headers
    assert response.headers["Connection"] == "close"


def test_dev_mode_puts_hoverflys_cors_headers_on_every_admin_answer(simproxy_factory: Any, sp: Simproxy) -> None:
    dev: Simproxy = simproxy_factory("-dev", "-dev-cors-origin", "http://ui.test:4200")
    for path, status in (("/api/v2/hoverfly/mode", 200), ("/api/v2/no-such-thing", 404)):
        got, headers, _ = dev.admin("GET", path)
        assert got == status
        assert headers["access-control-allow-origin"] == "http://ui.test:4200"
        assert headers["access-control-allow-methods"] == "GET, PUT, POST, OPTIONS, DELETE"
        assert headers["access-control-allow-credentials"] == "true"
    assert "access-control-allow-origin" not in sp.admin("GET", "/api/v2/hoverfly/mode")[1]  # only with -dev


def test_an_index_keyed_on_a_quoted_expression_serves_the_journal_helper(
    simproxy_factory: Any, upstream: Upstream
) -> None:
    """Hoverfly keeps an index's expression as given (``'jsonpath'`` quoted) and names it without the
    quotes: the helper looks it up by that name (Hoverfly's ft_journal_indexing_test)."""
    sp: Simproxy = simproxy_factory("-journal-indexing-key", "Request.Body 'jsonpath' '$.id'")
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    assert sp.proxy(upstream.url("/echo"), "POST", b'{"id": "1234"}')[0] == 200
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200
    template = "{{ journal 'Request.Body jsonpath $.id' '1234' 'Response' 'jsonpath' '$.method' }}"
    echo = {
        "request": {"path": [{"matcher": "exact", "value": "/journaltest"}]},
        "response": {"status": 200, "body": template, "templated": True},
    }
    assert sp.admin("POST", "/api/v2/simulation", simulation(echo))[0] == 200
    assert raw_get(sp.proxy_port, "http://test-server.com/journaltest")[2] == b"POST"
    [index] = sp.admin_json("GET", "/api/v2/journal/index")[1]
    assert index["name"] == "Request.Body jsonpath $.id"
    # the GET that rendered the template has no body: Hoverfly indexes it under "" too
    assert sorted(e["key"] for e in index["entries"]) == ["", "1234"]
