"""simproxy's own HTTP/2 framing (``FrameServer``) against the h2 library's client as the peer:
what a well-behaved client sends arrives whole and as sent (header lists through HPACK's dynamic
table, bodies past the windows both ways), and what breaks the protocol ends the stream or the
connection with the code RFC 9113 names."""

from __future__ import annotations

import base64
import random
import struct
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.settings
import pytest

from simproxy.engine.server.http2_frames import (
    BODY,
    ENDED,
    REQUEST,
    RESET,
    TERMINATED,
    Code,
    Event,
    FrameError,
    FrameServer,
    StreamGone,
    frame,
)
from simproxy.engine.server.http2_wire import PREFACE

GET = [(b":method", b"GET"), (b":path", b"/a"), (b":scheme", b"http"), (b":authority", b"h")]


def _client(**settings: int) -> h2.connection.H2Connection:
    config = h2.config.H2Configuration(client_side=True, header_encoding=None)
    client = h2.connection.H2Connection(config)
    if settings:
        client.local_settings = h2.settings.Settings(
            client=True, initial_values={getattr(h2.settings.SettingCodes, k): v for k, v in settings.items()}
        )
    client.initiate_connection()
    return client


def _pair(**settings: int) -> tuple[FrameServer, h2.connection.H2Connection]:
    """A server and a client that exchanged prefaces and settings."""
    server = FrameServer(100, 64 * 1024)
    server.start()
    client = _client(**settings)
    assert server.receive(client.data_to_send()) == []
    client.receive_data(server.take())
    server.receive(client.data_to_send())  # the client's acknowledgement of the server's settings
    return server, client


def _exchange(server: FrameServer, client: h2.connection.H2Connection) -> tuple[list[Event], list[Any]]:
    """What the client has to send, to the server; what the server has to send, to the client."""
    events = server.receive(client.data_to_send())
    return events, client.receive_data(server.take())


def test_requests_arrive_as_sent_through_the_dynamic_table() -> None:
    rng = random.Random(7)
    server, client = _pair()
    for n in range(300):  # new fields grow the table and evict; repeated ones are indexed
        fields = [(f"x-{rng.randrange(40)}".encode(), f"v{rng.randrange(6)}".encode()) for _ in range(rng.randrange(4))]
        sent = [*GET[:1], (b":path", f"/p{rng.randrange(3)}".encode()), *GET[2:], *fields]
        sid = client.get_next_available_stream_id()
        client.send_headers(sid, sent, end_stream=True)
        events, _ = _exchange(server, client)
        assert events == [(REQUEST, sid, sent, True)], n
        server.send_headers(sid, [(b":status", b"204")], end=True)
        client.receive_data(server.take())


def test_a_repeated_block_is_decoded_again_once_the_table_changed() -> None:
    server, client = _pair()
    base = [(b":method", b"GET"), (b":path", b"/"), (b":scheme", b"http"), (b":authority", b"h")]
    client.send_headers(1, [*base, (b"x-a", b"first")], end_stream=True)  # :authority, then x-a enter the table
    server.receive(client.data_to_send())
    client.send_headers(3, [*base, (b"x-a", b"first")], end_stream=True)  # indexed: entries 63 and 62
    raw = client.data_to_send()
    assert server.receive(raw)[0][2] == [*base, (b"x-a", b"first")]
    assert server.receive(raw.replace(b"\x00\x00\x00\x03", b"\x00\x00\x00\x05", 1))[0][2] == [*base, (b"x-a", b"first")]
    client.send_headers(7, [*base[:3], (b"host", b"other")], end_stream=True)  # a new entry 62: the others move on
    server.receive(client.data_to_send())
    fields = server.receive(raw.replace(b"\x00\x00\x00\x03", b"\x00\x00\x00\x09", 1))[0][2]
    assert fields == [*base[:3], (b"x-a", b"first"), (b"host", b"other")]


def test_a_block_that_changes_the_table_is_decoded_each_time() -> None:
    server, client = _pair()
    client.send_headers(1, [*GET, (b"x-a", b"first")], end_stream=True)  # x-a: entry 62
    server.receive(client.data_to_send())
    # :method, :path /, :scheme, :authority h (not indexed), entry 62, then x-n: v added as the new 62
    block = b"\x82\x84\x86\x01\x01h\xbe\x40\x03x-n\x01v"
    first = server.receive(frame(1, 0x5, 3, block))[0][2]
    second = server.receive(frame(1, 0x5, 5, block))[0][2]
    assert first[-2:] == [(b"x-a", b"first"), (b"x-n", b"v")]
    assert second[-2:] == [(b"x-n", b"v"), (b"x-n", b"v")]


def test_trailers_that_change_the_table_make_a_repeated_block_decode_again() -> None:
    server, client = _pair()
    client.send_headers(1, [*GET, (b"x-a", b"first")], end_stream=True)  # x-a: entry 62
    server.receive(client.data_to_send())
    server.receive(frame(1, 0x4, 3, b"\x83\x84\x86\x01\x01h"))  # a POST, its trailers to come
    block = b"\x82\x84\x86\x01\x01h\xbe"  # ..., entry 62
    assert server.receive(frame(1, 0x5, 5, block))[0][2][-1] == (b"x-a", b"first")
    assert server.receive(frame(1, 0x5, 7, block))[0][2][-1] == (b"x-a", b"first")
    assert server.receive(frame(1, 0x5, 3, b"\x40\x03x-t\x011")) == [(ENDED, 3)]  # trailers adding x-t: 1
    assert server.receive(frame(1, 0x5, 9, block))[0][2][-1] == (b"x-t", b"1")


def test_answers_arrive_as_sent_while_the_client_shrinks_its_table() -> None:
    rng = random.Random(3)
    server, client = _pair()
    repeated = [(b":status", b"200"), (b"content-type", b"text/plain"), (b"x-same", b"1")]
    for n in range(200):
        sid = client.get_next_available_stream_id()
        client.send_headers(sid, GET, end_stream=True)
        server.receive(client.data_to_send())
        if n == 100:  # the client lowers SETTINGS_HEADER_TABLE_SIZE: the encoder must follow
            client.update_settings({h2.settings.SettingCodes.HEADER_TABLE_SIZE: 64})
            server.receive(client.data_to_send())
        fields = repeated if rng.random() < 0.5 else [(b":status", b"201"), (b"x-n", str(n).encode())]
        if n in (99, 100):  # the same list before and after the change
            fields = repeated
        server.send_headers(sid, fields, end=True)
        out = server.take()
        if n == 100:  # the next block starts with the table's new size (RFC 7541 §4.2)
            assert [payload[0] & 0xE0 for kind, _, payload in _frames(out) if kind == 1] == [0x20]
        got = client.receive_data(out)
        answers = [e for e in got if isinstance(e, h2.events.ResponseReceived)]
        assert [list(a.headers) for a in answers] == [fields], n


def test_a_large_upload_passes_the_windows_and_arrives_whole() -> None:
    server, client = _pair()
    body = bytes(random.Random(1).randbytes(1_000_000))
    client.send_headers(1, [(b":method", b"POST"), *GET[1:]])
    got = bytearray()
    at = 0
    while at < len(body):
        room = min(client.local_flow_control_window(1), client.max_outbound_frame_size)
        assert room > 0  # the server gives the windows back as it reads
        assert client.outbound_flow_control_window <= 65_535  # and never more than it took
        client.send_data(1, body[at : at + room], end_stream=at + room >= len(body))
        at += room
        events, _ = _exchange(server, client)
        got += b"".join(e[2] for e in events if e[0] == BODY)
    assert got == body and events[-1] == (ENDED, 1)


def test_a_large_answer_waits_for_the_clients_window() -> None:
    server, client = _pair(INITIAL_WINDOW_SIZE=1000)
    client.send_headers(1, GET, end_stream=True)
    server.receive(client.data_to_send())
    server.send_headers(1, [(b":status", b"200")], end=False)
    assert server.window(1) == 1000
    server.send_data(1, b"x" * 1000, end=False)
    assert server.window(1) == 0
    events = client.receive_data(server.take())
    client.acknowledge_received_data(1000, 1)
    server.receive(client.data_to_send())
    assert server.window(1) == 1000  # the stream's window came back
    server.send_data(1, b"y", end=True)
    events += client.receive_data(server.take())
    body = b"".join(e.data for e in events if isinstance(e, h2.events.DataReceived))
    assert body == b"x" * 1000 + b"y" and any(isinstance(e, h2.events.StreamEnded) for e in events)
    with pytest.raises(StreamGone):
        server.window(1)


def test_too_many_streams_are_refused_one_by_one() -> None:
    server = FrameServer(2, 64 * 1024)
    server.start()
    client = _client()
    server.receive(client.data_to_send())
    for sid in (1, 3, 5):
        client.send_headers(sid, GET, end_stream=True)
    events = server.receive(client.data_to_send())
    assert [e[1] for e in events if e[0] == REQUEST] == [1, 3]
    resets = [e for e in client.receive_data(server.take()) if isinstance(e, h2.events.StreamReset)]
    assert [(r.stream_id, r.error_code) for r in resets] == [(5, Code.REFUSED_STREAM)]


def test_a_reset_from_the_client_closes_its_stream() -> None:
    server, client = _pair()
    client.send_headers(1, GET, end_stream=True)
    client.reset_stream(1, 8)
    events = server.receive(client.data_to_send())
    assert events == [(REQUEST, 1, GET, True), (RESET, 1, 8)]
    with pytest.raises(StreamGone):
        server.send_headers(1, [(b":status", b"200")], end=True)


def test_after_the_servers_goaway_newer_streams_are_ignored_and_older_ones_answered() -> None:
    server, client = _pair()
    client.send_headers(1, GET, end_stream=True)
    server.receive(client.data_to_send())
    server.close(Code.NO_ERROR)
    client.send_headers(3, GET, end_stream=True)
    client.send_headers(5, [*GET, (b"x-more", b"1")], end_stream=True)
    assert server.receive(client.data_to_send()) == []
    server.send_headers(1, [(b":status", b"200")], end=True)
    sent = _frames(server.take())
    assert [(kind, sid) for kind, sid, _ in sent] == [(7, 0), (1, 1)]  # GOAWAY naming 1, then 1's answer
    assert sent[0][2] == struct.pack(">LL", 1, Code.NO_ERROR)


def test_ping_is_answered_and_goaway_is_handed_over() -> None:
    server, client = _pair()
    client.ping(b"12345678")
    events, got = _exchange(server, client)
    assert events == []
    assert [e.ping_data for e in got if isinstance(e, h2.events.PingAckReceived)] == [b"12345678"]
    client.close_connection(0)
    assert server.receive(client.data_to_send()) == [(TERMINATED, 0, 0)]


def test_an_upgrade_takes_the_settings_header_and_answers_on_stream_one() -> None:
    payload = struct.pack(">HL", 4, 100)  # SETTINGS_INITIAL_WINDOW_SIZE 100
    server = FrameServer(100, 64 * 1024)
    server.start_upgraded(base64.urlsafe_b64encode(payload).rstrip(b"="))
    assert server.window(1) == 100
    with pytest.raises(ValueError):
        FrameServer(100, 1024).start_upgraded(base64.urlsafe_b64encode(b"\x00\x04\x00").rstrip(b"="))


def _frames(data: bytes) -> list[tuple[int, int, bytes]]:
    """The frames of ``data``: type, stream, payload."""
    found, at = [], 0
    while at < len(data):
        size = int.from_bytes(data[at : at + 3], "big")
        found.append((data[at + 3], int.from_bytes(data[at + 5 : at + 9], "big"), data[at + 9 : at + 9 + size]))
        at += 9 + size
    return found


def _settings(*pairs: tuple[int, int]) -> bytes:
    return frame(4, 0, 0, b"".join(struct.pack(">HL", k, v) for k, v in pairs))


HEADERS_1 = frame(1, 0x5, 1, b"\x82\x84\x86\x41\x01h")  # GET / http, :authority h; END_STREAM|END_HEADERS


def _after(*frames: bytes) -> bytes:
    """The client's preface and settings, then ``frames``."""
    return PREFACE + _settings() + b"".join(frames)


CONNECTION_ERRORS = [
    ("a preface that is not HTTP/2's", b"PRI * HTTP/1.1\r\n\r\nSM\r\n\r\n", Code.PROTOCOL_ERROR),
    ("a first frame other than SETTINGS", PREFACE + frame(6, 0, 0, b"x" * 8), Code.PROTOCOL_ERROR),
    ("a frame over 16 KB", _after(frame(0, 0, 1, b"x" * 16_385)), Code.FRAME_SIZE_ERROR),
    ("SETTINGS of a length no multiple of 6", PREFACE + frame(4, 0, 0, b"\x00" * 5), Code.FRAME_SIZE_ERROR),
    ("SETTINGS on a stream", _after(frame(4, 0, 1)), Code.PROTOCOL_ERROR),
    ("an ACK with a payload", _after(frame(4, 1, 0, b"\x00" * 6)), Code.FRAME_SIZE_ERROR),
    ("a window setting over 2^31-1", PREFACE + _settings((4, 2**31)), Code.FLOW_CONTROL_ERROR),
    ("a frame size setting under 16 KB", PREFACE + _settings((5, 100)), Code.PROTOCOL_ERROR),
    ("SETTINGS_ENABLE_PUSH of 2", PREFACE + _settings((2, 2)), Code.PROTOCOL_ERROR),
    ("PING of 7 bytes", _after(frame(6, 0, 0, b"x" * 7)), Code.FRAME_SIZE_ERROR),
    ("PING on a stream", _after(frame(6, 0, 1, b"x" * 8)), Code.PROTOCOL_ERROR),
    ("a WINDOW_UPDATE of 0", _after(frame(8, 0, 0, b"\x00" * 4)), Code.PROTOCOL_ERROR),
    ("a window over 2^31-1", _after(frame(8, 0, 0, b"\x7f\xff\xff\xff")), Code.FLOW_CONTROL_ERROR),
    ("DATA on stream 0", _after(frame(0, 0, 0, b"x")), Code.PROTOCOL_ERROR),
    ("DATA on an idle stream", _after(frame(0, 0, 5, b"x")), Code.PROTOCOL_ERROR),
    ("HEADERS on an even stream", _after(frame(1, 0x5, 2, b"\x82")), Code.PROTOCOL_ERROR),
    ("a block that does not decode", _after(frame(1, 0x5, 1, b"\xff\xff\xff\xff")), Code.COMPRESSION_ERROR),
    ("a malformed request", _after(frame(1, 0x5, 1, b"\x84\x86")), Code.PROTOCOL_ERROR),
    ("CONTINUATION out of a block", _after(frame(9, 0x4, 1, b"\x82")), Code.PROTOCOL_ERROR),
    ("a block cut by another frame", _after(frame(1, 0, 1, b"\x82"), frame(6, 0, 0, b"x" * 8)), Code.PROTOCOL_ERROR),
    ("PUSH_PROMISE from the client", _after(frame(5, 0x4, 1, b"\x00\x00\x00\x02")), Code.PROTOCOL_ERROR),
    ("RST_STREAM on an idle stream", _after(frame(3, 0, 9, b"\x00" * 4)), Code.PROTOCOL_ERROR),
    ("HEADERS on a stream the client ended", _after(HEADERS_1, frame(1, 0x5, 1, b"\x82")), Code.PROTOCOL_ERROR),
    (
        "trailers that do not end the stream",
        _after(frame(1, 0x4, 1, b"\x83\x84\x86\x41\x01h"), frame(1, 0x4, 1, b"\x40\x01x\x01y")),
        Code.PROTOCOL_ERROR,
    ),
    (
        "a CONTINUATION flood",
        _after(frame(1, 0, 1, b"\x82"), frame(9, 0, 1, b"\x00" * 100) * 64),
        Code.PROTOCOL_ERROR,
    ),
]


@pytest.mark.parametrize(("what", "sent", "code"), CONNECTION_ERRORS, ids=[c[0] for c in CONNECTION_ERRORS])
def test_a_broken_protocol_ends_the_connection_with_its_code(what: str, sent: bytes, code: Code) -> None:
    server = FrameServer(100, 64 * 1024)
    server.start()
    server.take()
    with pytest.raises(FrameError) as raised:
        server.receive(sent)
    assert raised.value.code == code, what
    kind, _, payload = _frames(server.take())[-1]
    assert kind == 7 and struct.unpack(">L", payload[4:])[0] == code, what  # the last frame sent is its GOAWAY
    assert server.receive(HEADERS_1) == []  # nothing more is read


def test_an_oversized_header_list_is_enhance_your_calm() -> None:
    server = FrameServer(100, 1024)
    client = _client()
    server.receive(client.data_to_send())
    client.send_headers(1, [*GET, (b"x-big", b"v" * 2000)], end_stream=True)
    with pytest.raises(FrameError) as raised:
        server.receive(client.data_to_send())
    assert raised.value.code == Code.ENHANCE_YOUR_CALM


STREAM_ERRORS = [
    ("a stream's WINDOW_UPDATE of 0", frame(8, 0, 1, b"\x00" * 4), Code.PROTOCOL_ERROR),
    ("a stream's window over 2^31-1", frame(8, 0, 1, b"\x7f\xff\xff\xff"), Code.FLOW_CONTROL_ERROR),
    ("PRIORITY on itself", frame(2, 0, 1, b"\x00\x00\x00\x01\x10"), Code.PROTOCOL_ERROR),
]


@pytest.mark.parametrize(("what", "sent", "code"), STREAM_ERRORS, ids=[c[0] for c in STREAM_ERRORS])
def test_a_stream_error_resets_that_stream_and_others_go_on(what: str, sent: bytes, code: Code) -> None:
    server, client = _pair()
    client.send_headers(1, GET, end_stream=True)
    client.send_headers(3, GET, end_stream=True)
    server.receive(client.data_to_send())
    server.take()
    events = server.receive(sent)
    assert events == [(RESET, 1, code)], what
    assert _frames(server.take()) == [(3, 1, struct.pack(">L", code))]  # its RST_STREAM
    server.send_headers(3, [(b":status", b"200")], end=True)  # the other stream is answered
    assert [type(e) for e in client.receive_data(server.take())][-2:] == [
        h2.events.ResponseReceived,
        h2.events.StreamEnded,
    ]


def test_data_on_a_closed_stream_is_stream_closed_unless_the_server_reset_it() -> None:
    server, client = _pair()
    client.send_headers(1, GET, end_stream=True)
    client.send_headers(3, [(b":method", b"POST"), *GET[1:]])
    server.receive(client.data_to_send())
    server.send_headers(1, [(b":status", b"200")], end=True)  # stream 1 is closed both ways
    server.reset(3, Code.NO_ERROR)  # the server ended stream 3 (an answer that needs no more)
    server.take()
    assert server.receive(frame(0, 0, 3, b"late")) == []  # on its way before the reset: dropped
    assert _frames(server.take()) == []
    assert server.receive(frame(0, 1, 1, b"x")) == []
    assert _frames(server.take()) == [(3, 1, struct.pack(">L", Code.STREAM_CLOSED))]


@pytest.mark.parametrize(("declared", "whole"), [(b"5", True), (b"3", False), (b"9", False)])
def test_a_body_must_add_up_to_its_content_length(declared: bytes, whole: bool) -> None:
    server, client = _pair()
    client.send_headers(1, [(b":method", b"POST"), *GET[1:], (b"content-length", declared)])
    client.send_data(1, b"he")
    client.send_data(1, b"llo", end_stream=True)
    events = server.receive(client.data_to_send())
    if whole:
        assert events[1:] == [(BODY, 1, b"he"), (BODY, 1, b"llo"), (ENDED, 1)]
    else:  # a stream error: RST_STREAM (PROTOCOL_ERROR), the request never whole
        assert events[-1] == (RESET, 1, Code.PROTOCOL_ERROR) and (ENDED, 1) not in events
        assert _frames(server.take())[-1] == (3, 1, struct.pack(">L", Code.PROTOCOL_ERROR))


def test_a_content_length_that_is_no_number_refuses_the_stream() -> None:
    server, client = _pair()
    client.send_headers(1, [(b":method", b"POST"), *GET[1:], (b"content-length", b"five")])
    client.send_data(1, b"hello", end_stream=True)
    assert server.receive(client.data_to_send()) == []  # never asked; its DATA dropped
    assert _frames(server.take())[-1] == (3, 1, struct.pack(">L", Code.PROTOCOL_ERROR))
