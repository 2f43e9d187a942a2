"""HTTP/2 messages to and from simproxy's forms (engine/server/http2_wire.py), and the first read's
sniffing of the client preface (``Sniffer``)."""

from __future__ import annotations

from simproxy.engine.server.http2_fields import request_fields
from simproxy.engine.server.http2_wire import PREFACE, Sniffer, response_headers, stream_head
from simproxy.engine.simulation.model import Response
from simproxy.engine.wire.response import Wire, render_wire


def test_authority_becomes_host_and_cookie_pieces_are_joined() -> None:
    head = stream_head(
        request_fields(
            [
                (b":method", b"POST"),
                (b":scheme", b"https"),
                (b":authority", b"api.test:8443"),
                (b":path", b"/v1/items?id=7"),
                (b"cookie", b"a=1"),
                (b"accept", b"*/*"),
                (b"cookie", b"b=2"),
            ]
        )
    )
    assert (head.method, head.target, head.scheme) == (b"POST", b"/v1/items?id=7", b"https")
    assert head.headers == [(b"host", b"api.test:8443"), (b"accept", b"*/*"), (b"cookie", b"a=1; b=2")]


def test_a_host_header_the_client_sent_is_kept_as_it_is() -> None:
    head = stream_head([(b":method", b"GET"), (b":authority", b"a.test"), (b":path", b"/"), (b"host", b"b.test")])
    assert head.headers == [(b"host", b"b.test")]


def wire(status: int, body: str, headers: dict[str, list[str]]) -> Wire:
    response = Response(status=status, body=body.encode(), headers=tuple((k, tuple(v)) for k, v in headers.items()))
    return render_wire(response, "response")


def test_an_answer_loses_the_headers_http2_forbids_and_a_chunked_body_its_framing() -> None:
    answer = wire(201, "hello", {"X-Kept": ["1"], "Connection": ["keep-alive"], "Transfer-Encoding": ["chunked"]})
    headers, body = response_headers(answer, b"Sun, 29 Nov 2026 10:00:00 GMT", head_only=False)
    assert headers[0] == (b":status", b"201")
    assert (b"x-kept", b"1") in headers and (b"date", b"Sun, 29 Nov 2026 10:00:00 GMT") in headers
    assert not {b"connection", b"transfer-encoding"} & {name for name, _ in headers}
    assert body == b"hello"


def test_a_length_the_body_disagrees_with_is_left_out_and_head_gets_no_body() -> None:
    answer = wire(200, "four", {"Content-Length": ["10"]})
    headers, body = response_headers(answer, b"d", head_only=False)
    assert b"content-length" not in {name for name, _ in headers} and body == b"four"
    fine = wire(200, "four", {})
    headers, body = response_headers(fine, b"d", head_only=True)
    assert (b"content-length", b"4") in headers and body == b""


def test_the_sniffer_tells_the_preface_from_http1_even_split_over_reads() -> None:
    seen: list[tuple[str, bytes]] = []
    sniffer = Sniffer(lambda data: seen.append(("h1", data)), lambda data: seen.append(("h2", data)))
    sniffer.send(PREFACE[:5])
    sniffer.send(PREFACE[5:] + b"frames")
    other = Sniffer(lambda data: seen.append(("h1", data)), lambda data: seen.append(("h2", data)))
    other.send(b"PO")
    broken = Sniffer(lambda data: seen.append(("h1", data)), lambda data: seen.append(("h2", data)))
    broken.send(PREFACE[:16] + b"\r\nXX\r\n\r\n")  # HTTP/2's request line, then not its preface
    assert seen == [("h2", PREFACE + b"frames"), ("h1", b"PO"), ("h2", PREFACE[:16] + b"\r\nXX\r\n\r\n")]
