"""Playbooks of ``CONNECT`` and of proxy authentication (``-auth``) on one connection."""

from __future__ import annotations

from simproxy.engine.server.tunnel import split_authority
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire
from tests.engine.server.playbook import (
    DATE,
    Asked,
    Check,
    Closed,
    Expect,
    ProxyCredentials,
    Reading,
    Send,
    get,
    ok,
    play,
    written,
)

CREDENTIALS = "Proxy-Authorization: Basic Z29vZDpwYXNz"
REFUSED = (
    "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Type: text/plain; charset=utf-8\r\n"
    "Proxy-Authenticate: Basic realm=hoverfly\r\nProxy-Connection: close\r\nContent-Length: 33\r\n"
    f"Date: {DATE}\r\nConnection: close\r\n\r\n407 Proxy Authentication Required"
).encode()
TUNNEL = b"HTTP/1.0 200 OK\r\n\r\n"


def _connect(authority: str, *headers: str) -> bytes:
    return "\r\n".join((f"CONNECT {authority} HTTP/1.1", f"Host: {authority}", *headers, "", "")).encode()


def _where(req: RequestDetails) -> Wire:
    return ok(f"{req.method} {req.scheme}://{req.destination}{req.path}")


def test_a_connect_without_proxy_credentials_is_407_and_closed() -> None:
    auth = ProxyCredentials(CREDENTIALS.partition(": ")[2])
    play(
        Send(_connect("h.test:8080")),
        Expect(REFUSED),
        Closed(),
        Asked(),
        auth=auth,
        plain_http_tunneling=True,
    )
    assert auth.checked == [None]


def test_a_connect_with_proxy_credentials_opens_the_tunnel_and_its_requests_are_not_asked_for_them() -> None:
    auth = ProxyCredentials(CREDENTIALS.partition(": ")[2])
    play(
        Send(_connect("h.test:8080", CREDENTIALS)),
        Expect(TUNNEL),  # once the check has passed; nothing of the tunnel is read before
        Reading(True),
        Send(get("/inside", host="h.test:8080", origin=True), get("/again", host="h.test:8080", origin=True)),
        Expect(written("GET http://h.test:8080/inside"), written("GET http://h.test:8080/again")),
        Closed(False),
        answers={"/inside": _where, "/again": _where},
        auth=auth,
        plain_http_tunneling=True,
    )
    assert auth.checked == [CREDENTIALS.partition(": ")[2]]  # the CONNECT's, once


def test_a_connect_to_no_host_is_400_and_without_a_ca_501() -> None:
    play(
        Send(_connect("h.test:")),
        Expect(written("Bad Request: CONNECT needs host:port\n", status="400 Bad Request", close=True)),
        Closed(),
    )
    play(Send(_connect("h.test:443")), Expect(written("No CA\n", status="501 Not Implemented", close=True)), ca=False)


def test_a_request_without_proxy_credentials_is_407_in_its_turn() -> None:
    play(
        Send(get("/first", CREDENTIALS), get("/second")),
        Expect(written("/first"), REFUSED),
        Closed(),
        Asked("/first"),  # the refused one is never asked
        auth=ProxyCredentials(CREDENTIALS.partition(": ")[2]),
    )


def test_requests_whose_credentials_are_checked_are_answered_in_order_and_checked_once_they_passed() -> None:
    auth = ProxyCredentials(CREDENTIALS.partition(": ")[2])
    play(
        Send(get("/one", CREDENTIALS), get("/two", CREDENTIALS)),  # both before any check ended
        Expect(written("/one"), written("/two")),
        Check("both checked", lambda _: len(auth.checked) == 2),
        Send(get("/three", CREDENTIALS)),  # they passed a moment ago: let through at once
        Check("answered as it is read", lambda t: bytes(t.client.written).endswith(written("/three")), at_once=True),
        Expect(written("/three")),
        Asked("/one", "/two", "/three"),
        auth=auth,
    )
    assert len(auth.checked) == 2


def test_connect_targets() -> None:
    """Moved here from tests/engine/test_proxy_flow.py."""
    assert split_authority("api.example.com:8443") == ("api.example.com", 8443)
    assert split_authority("api.example.com") == ("api.example.com", 443)
    # Go's client through a proxy may send an absolute URI: its host, and its scheme's port
    assert split_authority("http://hoverfly.io/") == ("hoverfly.io", 80)
    assert split_authority("https://api.example.com:8443/x") == ("api.example.com", 8443)
    assert split_authority("http://[::1]/") == ("::1", 80)
    assert split_authority("ftp://files.example.com/") is None
    assert split_authority("10.0.0.1:1") == ("10.0.0.1", 1)
    assert split_authority("[::1]:65535") == ("::1", 65535)
    assert split_authority("[2001:db8::1]") == ("2001:db8::1", 443)
    for malformed in ("", "::::", "::1", ":443", "host:", "host:0", "host:65536", "host:+80", "host:1:2", "[::1"):
        assert split_authority(malformed) is None, malformed
    for malformed in ("[::1]x", "[::1]:", "[v1.x]:443", "[host]:443", "user@host:443", "host/path:443", "h st:1"):
        assert split_authority(malformed) is None, malformed
