"""A pair's response as the bytes simproxy writes (spec §8.4, §9.4): status line, headers, framing."""

from __future__ import annotations

from typing import Any

import pytest

from simproxy.engine.errors import SimulationError
from simproxy.engine.matching.scoring import compile_simulation
from simproxy.engine.modes.failures import miss_text
from simproxy.engine.simulation.model import Response
from simproxy.engine.wire.response import (
    RenderedResponse,
    as_hoverfly_tunnels_it,
    plain_error,
    render_response,
    render_wire,
    status_line,
)
from tests.engine.conftest import REGISTRY, exact, pair, request, simulation

WHERE = "data.pairs[0].response"


def rendered(**response: Any) -> RenderedResponse:
    """Render a response written as v5 JSON (``status`` defaults to 200)."""
    return render_response(simulation(pair(**response)).pairs[0].response, WHERE)


def header_lines(head: bytes) -> list[bytes]:
    """The header lines after the status line, without their CRLF."""
    lines = head.split(b"\r\n")
    assert lines[-1] == b"", "the head ends with a complete header line"
    return lines[1:-1]


# ---------------------------------------------------------------------------------------------
# status line


@pytest.mark.parametrize(
    ("status", "line"),
    [
        (200, "HTTP/1.1 200 OK"),
        (201, "HTTP/1.1 201 Created"),
        (204, "HTTP/1.1 204 No Content"),
        (302, "HTTP/1.1 302 Found"),
        (308, "HTTP/1.1 308 Permanent Redirect"),
        (404, "HTTP/1.1 404 Not Found"),
        (422, "HTTP/1.1 422 Unprocessable Entity"),
        (429, "HTTP/1.1 429 Too Many Requests"),
        (500, "HTTP/1.1 500 Internal Server Error"),
        (502, "HTTP/1.1 502 Bad Gateway"),
        (503, "HTTP/1.1 503 Service Unavailable"),
        # Go's wording where Python's differs
        (414, "HTTP/1.1 414 Request URI Too Long"),
        (418, "HTTP/1.1 418 I'm a teapot"),
        # codes Go has no text for
        (299, "HTTP/1.1 299 status code 299"),
        (599, "HTTP/1.1 599 status code 599"),
    ],
)
def test_status_line(status: int, line: str) -> None:
    assert status_line(status) == f"{line}\r\n".encode()
    wires = rendered(status=status)
    assert wires.proxy.head.startswith(f"{line}\r\n".encode())
    assert wires.webserver.head.startswith(f"{line}\r\n".encode())


# ---------------------------------------------------------------------------------------------
# headers


def test_a_simple_response_byte_for_byte() -> None:
    wires = rendered(body="hello", headers={"Content-Type": ["text/plain"]})
    assert wires.proxy.head == b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
    assert wires.proxy.body == b"hello"
    assert wires.proxy.keep_alive


def test_header_names_are_written_as_stored_in_proxy_mode_and_canonical_in_webserver_mode() -> None:
    wires = rendered(headers={"x-request-id": ["abc"], "X-API-VERSION": ["2"], "Content-Type": ["text/plain"]})
    assert header_lines(wires.proxy.head)[:3] == [
        b"Content-Type: text/plain",
        b"X-API-VERSION: 2",
        b"x-request-id: abc",
    ]
    assert header_lines(wires.webserver.head)[:3] == [
        b"Content-Type: text/plain",
        b"X-Api-Version: 2",
        b"X-Request-Id: abc",
    ]


def test_each_value_is_its_own_header_line_in_order() -> None:
    wires = rendered(headers={"Set-Cookie": ["b=2", "a=1"], "Vary": ["Accept, Origin"]})
    assert header_lines(wires.proxy.head) == [
        b"Set-Cookie: b=2",
        b"Set-Cookie: a=1",
        b"Vary: Accept, Origin",
        b"Content-Length: 0",
    ]


def test_a_header_without_values_writes_no_line() -> None:
    assert header_lines(rendered(headers={"X-Empty": []}).proxy.head) == [b"Content-Length: 0"]


def test_header_values_are_written_as_utf8() -> None:
    assert b"X-Name: caf\xc3\xa9\r\n" in rendered(headers={"X-Name": ["caf\u00e9"]}).proxy.head


@pytest.mark.parametrize(
    "headers",
    [
        {"X-A": ["ok\r\nX-Injected: 1"]},
        {"X-A": ["line\nbreak"]},
        {"X-A": ["carriage\rreturn"]},
        {"X-A\r\nX-B": ["1"]},
        {"X-A:": ["1"]},
        {"": ["1"]},
    ],
)
def test_header_names_and_values_that_break_the_framing_are_rejected(headers: dict[str, list[str]]) -> None:
    with pytest.raises(SimulationError) as caught:
        rendered(headers=headers)
    assert caught.value.path.startswith(f"{WHERE}.headers")


def test_an_unsendable_header_is_rejected_when_the_simulation_is_compiled() -> None:
    sim = simulation(pair({"path": [exact("/a")]}), pair({"path": [exact("/b")]}, headers={"X-Bad": ["a\nb"]}))
    with pytest.raises(SimulationError) as caught:
        compile_simulation(sim, REGISTRY)
    assert caught.value.path == "data.pairs[1].response.headers.X-Bad"


# ---------------------------------------------------------------------------------------------
# framing

SNIFFED_TEXT = b"Content-Type: text/plain; charset=utf-8"


@pytest.mark.parametrize(
    ("body", "sniffed"),
    [
        ('{"id": 1}', "text/plain; charset=utf-8"),
        ("  <html><body>hi</body></html>", "text/html; charset=utf-8"),
        ('<?xml version="1.0"?><a/>', "text/xml; charset=utf-8"),
        ("<p>para</p>", "text/html; charset=utf-8"),
        ("<pre>not a sniffed tag</pre>", "text/plain; charset=utf-8"),
    ],
)
def test_a_body_without_a_content_type_is_sent_with_the_type_go_sniffs(body: str, sniffed: str) -> None:
    wires = rendered(body=body)
    for wire in (wires.proxy, wires.webserver):
        assert f"Content-Type: {sniffed}".encode() in header_lines(wire.head)
    assert wires.proxy.headers == ()  # the journal records the pair's headers, as Hoverfly's does


def test_an_encoded_body_is_not_sniffed_as_go_sniffs_none() -> None:
    wire = rendered(body="compressed?", headers={"Content-Encoding": ["gzip"]}).proxy
    assert not any(line.lower().startswith(b"content-type") for line in header_lines(wire.head))


def test_a_declared_content_type_is_not_sniffed() -> None:
    wire = rendered(body="<html>", headers={"Content-Type": ["application/x-mine"]}).proxy
    assert [line for line in header_lines(wire.head) if line.lower().startswith(b"content-type")] == [
        b"Content-Type: application/x-mine"
    ]


@pytest.mark.parametrize(("body", "length"), [("", 0), ("hello", 5), ("caf\u00e9", 5), ("\U0001f600", 4)])
def test_content_length_is_added_from_the_byte_length(body: str, length: int) -> None:
    wires = rendered(body=body)
    for wire in (wires.proxy, wires.webserver):
        sniffed = [SNIFFED_TEXT] if body else []  # Go's server sniffs a body's type, never an empty one's
        assert header_lines(wire.head) == [f"Content-Length: {length}".encode(), *sniffed]
        assert wire.body == body.encode()
        assert wire.keep_alive


def test_content_length_of_a_binary_body() -> None:
    wire = render_response(Response(body=b"\x00\xff\x10"), WHERE).proxy
    assert header_lines(wire.head) == [b"Content-Length: 3", b"Content-Type: application/octet-stream"]
    assert wire.body == b"\x00\xff\x10"


@pytest.mark.parametrize("name", ["Content-Length", "content-length"])
def test_a_declared_content_length_is_not_repeated(name: str) -> None:
    wires = rendered(body="hello", headers={name: ["5"]})
    assert header_lines(wires.proxy.head) == [f"{name}: 5".encode(), SNIFFED_TEXT]
    assert wires.proxy.keep_alive
    assert header_lines(wires.webserver.head) == [b"Content-Length: 5", SNIFFED_TEXT]


@pytest.mark.parametrize("declared", ["4", "6", "0", "abc", "-1"])
def test_a_wrong_declared_content_length_closes_the_connection(declared: str) -> None:
    wires = rendered(body="hello", headers={"Content-Length": [declared]})
    for wire in (wires.proxy, wires.webserver):
        assert header_lines(wire.head) == [f"Content-Length: {declared}".encode(), SNIFFED_TEXT]
        assert not wire.keep_alive


@pytest.mark.parametrize("value", ["chunked", "Chunked", "gzip, chunked"])
def test_transfer_encoding_chunked_frames_the_body_in_chunks(value: str) -> None:
    wires = rendered(body="hello world", headers={"Transfer-Encoding": [value]})
    for wire in (wires.proxy, wires.webserver):
        assert b"Content-Length" not in wire.head
        assert wire.body == b"b\r\nhello world\r\n0\r\n\r\n"
        assert wire.keep_alive
    assert header_lines(wires.proxy.head) == [f"Transfer-Encoding: {value}".encode()]  # Go sniffs no such body


def test_an_empty_chunked_body_is_just_the_last_chunk() -> None:
    wire = rendered(headers={"transfer-encoding": ["chunked"]}).proxy
    assert wire.body == b"0\r\n\r\n"
    assert b"Content-Length" not in wire.head


def test_chunk_sizes_count_bytes() -> None:
    wire = rendered(body="\u00e9" * 10, headers={"Transfer-Encoding": ["chunked"]}).proxy
    assert wire.body == b"14\r\n" + "\u00e9".encode() * 10 + b"\r\n0\r\n\r\n"


@pytest.mark.parametrize("status", [204, 304])
def test_statuses_without_a_body_send_no_body_and_no_length(status: int) -> None:
    """Go's server drops the body (ErrBodyNotAllowed) and the Content-Length of 204 and 304 responses."""
    wires = rendered(status=status, body="ignored")
    for wire in (wires.proxy, wires.webserver):
        assert wire.body == b""
        assert b"Content-Length" not in wire.head


# ---------------------------------------------------------------------------------------------
# the 502 of a miss


def test_a_miss_is_a_plain_text_502() -> None:
    text = miss_text(request("/a"), None)
    wire = plain_error(502, text)
    body = text.encode()
    assert (
        wire.head == f"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n".encode()
    )
    assert wire.body == body
    assert wire.keep_alive


def test_the_502_length_counts_utf8_bytes() -> None:
    wire = plain_error(502, "caf\u00e9")
    assert header_lines(wire.head)[-1] == b"Content-Length: 5"
    assert wire.body == "caf\u00e9".encode()


def test_hoverflys_tunnel_drops_the_sniffed_line_only() -> None:
    """The sniffed ``Content-Type`` line is removed whole; the same text inside another header stays."""
    resp = Response(status=200, body=b"hello", headers=(("X-Original-Content-Type", ("text/plain; charset=utf-8",)),))
    wire = render_wire(resp, "data.pairs[0].response")
    assert wire.sniffed == b"Content-Type: text/plain; charset=utf-8\r\n"
    tunnelled = as_hoverfly_tunnels_it(wire)
    assert tunnelled.head == (
        b"HTTP/1.1 200 OK\r\nX-Original-Content-Type: text/plain; charset=utf-8\r\nTransfer-Encoding: chunked\r\n"
    )
    assert (tunnelled.body, tunnelled.dated, tunnelled.keep_alive) == (b"5\r\nhello\r\n0\r\n\r\n", True, False)
