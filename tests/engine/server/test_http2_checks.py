"""h2's checks of received header blocks, run (and remembered) by ``Http2Connection`` itself:
a malformed request or trailer block ends the connection with ``GOAWAY`` (``PROTOCOL_ERROR``)
naming the last stream opened, and nothing of that read is asked of the dispatcher; the same
valid request again and again is answered each time."""

from __future__ import annotations

import asyncio
from typing import Any

import h2.config
import h2.connection
import h2.events
from h2.errors import ErrorCodes

from simproxy.engine.fleet.config import ProxyLimits
from simproxy.engine.server.http2 import Http2Connection
from simproxy.engine.server.state import ServerState
from simproxy.engine.wire.parse import Arrival
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire, plain_error

GOOD = [(b":method", b"GET"), (b":path", b"/hello"), (b":scheme", b"http"), (b":authority", b"a:1")]


class _Dispatcher:
    webserver = True

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.seen: list[tuple[str, str, str]] = []

    def handle(self, request: RequestDetails) -> Wire:
        self.asked.append(request.path)
        self.seen.append((request.method, request.headers.get("X-N", [""])[0], request.protocol))
        return plain_error(200, request.path)

    def served(self, wire: Wire, received: Any) -> None:
        """Nothing is journaled here."""


class _Transport:
    def __init__(self) -> None:
        self.out: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.out.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def can_write_eof(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        """Not needed here."""

    def resume_reading(self) -> None:
        """Not needed here."""


def h2_server(dispatcher: _Dispatcher) -> tuple[Http2Connection, _Transport]:
    """A webserver's HTTP/2 side over a recording transport, asking ``dispatcher`` (in a running loop)."""
    state = ServerState(
        dispatcher,  # type: ignore[arg-type]
        ProxyLimits(),
        8500,
        internal_error=plain_error(500, "x"),
        max_connections=4,
        note_answered=lambda: None,
        http2=True,
    )
    transport = _Transport()
    return Http2Connection(state, transport, Arrival(webserver=True)), transport  # type: ignore[arg-type]


def _talk(
    *requests: tuple[list[tuple[bytes, bytes]], list[tuple[bytes, bytes]] | None],
) -> tuple[list[h2.events.Event], _Dispatcher, _Transport]:
    """Send ``requests`` (header list, trailers or None) in one read; what the client got back."""

    async def main() -> tuple[list[h2.events.Event], _Dispatcher, _Transport]:
        dispatcher = _Dispatcher()
        server, transport = h2_server(dispatcher)
        config = h2.config.H2Configuration(validate_outbound_headers=False, normalize_outbound_headers=False)
        client = h2.connection.H2Connection(config)
        client.initiate_connection()
        server.start(client.data_to_send())
        events = client.receive_data(b"".join(transport.out))
        transport.out.clear()
        server.send(client.data_to_send())
        for _ in range(3):  # the same requests again and again: the checks remembered answer alike
            for headers, trailers in requests:
                sid = client.get_next_available_stream_id()
                client.send_headers(sid, headers, end_stream=trailers is None)
                if trailers is not None:
                    client.send_headers(sid, trailers, end_stream=True)
            server.send(client.data_to_send())
            events += client.receive_data(b"".join(transport.out))
            transport.out.clear()
            if transport.closed:
                break
        return events, dispatcher, transport

    return asyncio.run(main())


def test_valid_requests_are_answered_each_time() -> None:
    events, dispatcher, transport = _talk((GOOD, None), ([*GOOD, (b"cookie", b"a=1"), (b"cookie", b"b=2")], None))
    assert dispatcher.asked == ["/hello"] * 6
    assert sum(type(e) is h2.events.StreamEnded for e in events) == 6
    assert not transport.closed


def test_requests_that_differ_in_a_field_or_the_method_are_told_apart_every_time() -> None:
    head = [(b":method", b"HEAD"), *GOOD[1:]]
    events, dispatcher, _ = _talk((GOOD, None), ([*GOOD, (b"x-n", b"1")], None), (head, None))
    assert dispatcher.seen == [("GET", "", "HTTP/2.0"), ("GET", "1", "HTTP/2.0"), ("HEAD", "", "HTTP/2.0")] * 3
    bodies = [e.stream_id for e in events if type(e) is h2.events.DataReceived]
    assert set(bodies) == {1, 3, 7, 9, 13, 15}  # a HEAD's answer has no body, each time


def _goaway(events: list[h2.events.Event]) -> h2.events.ConnectionTerminated:
    ended = [e for e in events if type(e) is h2.events.ConnectionTerminated]
    assert len(ended) == 1
    return ended[0]


def test_a_malformed_request_ends_the_connection_and_nothing_of_that_read_is_asked() -> None:
    for bad in (
        [*GOOD, (b"Upper", b"x")],  # upper-case name
        [*GOOD, (b"connection", b"keep-alive")],  # connection-specific
        [*GOOD, (b"te", b"gzip")],
        [(b":path", b"/hello"), (b":scheme", b"http")],  # no :method
        [*GOOD, (b"x", b"a\r\nb")],  # illegal characters
        [*GOOD[:2], (b"x", b"1"), *GOOD[2:]],  # a pseudo-header after a field
    ):
        events, dispatcher, transport = _talk((GOOD, None), (bad, None))
        ended = _goaway(events)
        assert ended.error_code == ErrorCodes.PROTOCOL_ERROR, bad
        assert ended.last_stream_id == 3, bad  # the malformed one, the last opened
        assert dispatcher.asked == [], bad  # the good stream of that same read was not asked either
        assert transport.closed


def test_pseudo_headers_in_trailers_end_the_connection() -> None:
    events, dispatcher, transport = _talk(
        ([(b":method", b"POST"), *GOOD[1:]], [(b"x-sum", b"1")]), (GOOD, [(b":path", b"/no")])
    )
    ended = _goaway(events)
    assert ended.error_code == ErrorCodes.PROTOCOL_ERROR
    assert ended.last_stream_id == 3
    assert dispatcher.asked == []
    assert transport.closed
