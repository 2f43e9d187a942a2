"""HTTP/2's framing for the server side of a connection (RFC 9113), sans-IO: ``FrameServer``.

It reads what the client sends into events (a request's header block, body pieces, a stream's end,
a reset, the client's ``GOAWAY``) and keeps the rest of the protocol to itself: the preface, both
sides' settings (each ``SETTINGS`` acknowledged), ``PING`` answered, the stream states, the flow
control windows both ways (what the client sends is acknowledged as it is read: simproxy holds the
client back by not reading, never by its windows), header blocks in pieces (``CONTINUATION``) and
the limits: ``max_streams`` streams open at once (more are refused with ``RST_STREAM``,
``REFUSED_STREAM``), header lists of ``max_header_list`` bytes (more: ``ENHANCE_YOUR_CALM``), frames
of 16 KB, a header block in at most ``CONTINUATION_LIMIT`` frames.

What breaks the protocol is a ``FrameError``: for the whole connection (its ``GOAWAY`` is queued;
nothing of the read that broke it is handed over, and nothing more is read), or for one stream (its
``RST_STREAM`` is queued, the others go on). Header blocks are read and written by
engine/server/http2_hpack.py (``Decoder``, ``encode_block``) and checked as RFC 9113 says
(engine/server/http2_fields.py).

It is written for the hot path: a load tester's requests are a few bytes of HEADERS each, read ten
at a time, and answered with a HEADERS and a DATA frame each; each costs a few dict and struct
steps, no object per frame. The upstream side (engine/outbound/h2upstream.py) keeps the h2 library.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from simproxy.engine.server.http2_fields import Malformed, request_fields, trailer_fields
from simproxy.engine.server.http2_hpack import Decoder, HpackError, ListTooLarge, encode_block
from simproxy.engine.server.http2_wire import MEMO_BYTES, PREFACE, Headers


class Code(IntEnum):
    """HTTP/2's error codes (RFC 9113 §7)."""

    NO_ERROR = 0x0
    PROTOCOL_ERROR = 0x1
    INTERNAL_ERROR = 0x2
    FLOW_CONTROL_ERROR = 0x3
    SETTINGS_TIMEOUT = 0x4
    STREAM_CLOSED = 0x5
    FRAME_SIZE_ERROR = 0x6
    REFUSED_STREAM = 0x7
    CANCEL = 0x8
    COMPRESSION_ERROR = 0x9
    CONNECT_ERROR = 0xA
    ENHANCE_YOUR_CALM = 0xB
    INADEQUATE_SECURITY = 0xC
    HTTP_1_1_REQUIRED = 0xD


# Frame types and flags (RFC 9113 §6).
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20
# Settings (RFC 9113 §6.5.2).
HEADER_TABLE_SIZE, ENABLE_PUSH, MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE, MAX_HEADER_LIST_SIZE = (
    range(1, 7)
)

# The events ``receive`` hands over, as tuples: (REQUEST, sid, header list, ended), (BODY, sid,
# data), (ENDED, sid), (RESET, sid, code), (TERMINATED, 0, code).
REQUEST, BODY, ENDED, RESET, TERMINATED = range(5)
Event = tuple[Any, ...]

FRAME_SIZE = 16_384
"""The largest frame the client may send (the default ``SETTINGS_MAX_FRAME_SIZE``, never raised)."""
WINDOW = 65_535
"""The windows both sides start with, and the server's for the client's DATA (never raised)."""
MAX_WINDOW = 2**31 - 1
CONTINUATION_LIMIT = 64
"""The most frames one header block may come in: a ``CONTINUATION`` flood ends the connection."""
RESETS_KEPT = 256
"""Streams the server reset that are remembered, for the client's frames still on their way to be
dropped rather than answered ``STREAM_CLOSED`` (RFC 9113 §5.1)."""

_HEAD = struct.Struct(">HBBBL")
"""A frame header: the length (24 bits: its high 16, then its low 8), type, flags, stream id."""
_U32 = struct.Struct(">L")
_SETTING = struct.Struct(">HL")
_GOAWAY = struct.Struct(">LL")


class FrameError(Exception):
    """The client broke the protocol: ``code`` says how; ``stream`` 0 for the whole connection."""

    def __init__(self, code: Code, message: str, stream: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.stream = stream


class StreamGone(Exception):
    """The stream is closed for sending: reset by the client, or its answer ended already."""


def frame(kind: int, flags: int, sid: int, payload: bytes = b"") -> bytes:
    """One frame, as bytes."""
    size = len(payload)
    return _HEAD.pack(size >> 8, size & 0xFF, kind, flags, sid) + payload


@dataclass(slots=True, eq=False)
class _Stream:
    """One stream's protocol state (mutable: it is the state)."""

    send_window: int
    recv_window: int = WINDOW
    remote_open: bool = True
    """The client may still send on it (no ``END_STREAM`` yet)."""
    local_open: bool = True
    """The server may still send on it."""
    expected: int | None = None
    """The body's length its ``content-length`` declares (RFC 9113 §8.1.1: DATA must add up to it)."""
    received: int = 0


def _content_length(fields: Headers, sid: int) -> int | None:
    """What a request's ``content-length`` fields say (all alike), if any."""
    length = None
    for name, value in fields:
        if name == b"content-length":
            if not value.isdigit() or (length is not None and int(value) != length):
                raise FrameError(Code.PROTOCOL_ERROR, f"content-length of {value!r}", sid)
            length = int(value)
    return length


class FrameServer:
    """The server side of one HTTP/2 connection's framing. ``receive`` the client's bytes, get
    events; ``send_headers`` and ``send_data`` answer; ``take`` what is to be written."""

    __slots__ = (
        "_again",
        "_block",
        "_buffer",
        "_decoder",
        "_out",
        "_preface",
        "_reset_here",
        "_resize_next",
        "_settings_seen",
        "_streams",
        "_unacked",
        "accepted",
        "ended",
        "highest",
        "max_outbound_frame",
        "max_streams",
        "send_window",
        "stream_window",
    )

    def __init__(self, max_streams: int, max_header_list: int) -> None:
        self.max_streams = max_streams
        self._decoder = Decoder(max_header_list)
        self._streams: dict[int, _Stream] = {}
        self._buffer = b""
        self._out: list[bytes] = []
        self._preface = True
        """The client's preface is still to come."""
        self._settings_seen = False
        """The client's first frame (its ``SETTINGS``) came."""
        self._block: tuple[int, int, list[bytes], int] | None = None
        """A header block still to be completed by ``CONTINUATION`` frames: stream, flags, pieces, frames."""
        self._again: tuple[bytes, Headers] | None = None
        """The last request's header block and its checked fields, when decoding it left the
        dynamic table as it was: the same bytes again mean the same fields (a load tester's
        requests), handed over as the same list without decoding or checking again."""
        self._reset_here: dict[int, None] = {}
        """The streams the server reset lately, oldest first (``RESETS_KEPT`` at most)."""
        self._resize_next = False
        """The client set ``SETTINGS_HEADER_TABLE_SIZE``: the next block the server sends starts by
        sizing its dynamic table to 0 (RFC 7541 §4.2), though ``encode_block`` never fills it."""
        self._unacked = 0
        """Bytes of DATA read and not yet given back to the client's connection window, which
        is ``WINDOW`` less these."""
        self.highest = 0
        """The newest stream the client opened."""
        self.ended = False
        """The server said ``GOAWAY`` for an error: nothing more is read."""
        self.accepted = MAX_WINDOW
        """The newest stream the server still answers: after its ``GOAWAY``, the one it named
        (the client's newer streams are ignored, as RFC 9113 §6.8 says, for it to retry elsewhere)."""
        self.send_window = WINDOW
        """The connection's window for what the server sends."""
        self.stream_window = WINDOW
        """The window a new stream starts with for what the server sends (the client's setting)."""
        self.max_outbound_frame = FRAME_SIZE

    # -- the start ---------------------------------------------------------------------------------

    def start(self) -> None:
        """The server's preface: its ``SETTINGS``."""
        limit = self._decoder.max_list
        values = ((MAX_CONCURRENT_STREAMS, self.max_streams), (MAX_HEADER_LIST_SIZE, limit))
        self._out.append(frame(SETTINGS, 0, 0, b"".join(_SETTING.pack(k, v) for k, v in values)))

    def start_upgraded(self, settings: bytes) -> None:
        """After ``Upgrade: h2c``: the client's ``HTTP2-Settings`` (base64url, RFC 7540 §3.2.1) taken
        as its settings (the ``101`` acknowledged them), stream 1 half-closed by the client (the
        request came over HTTP/1.1), and the server's preface. A malformed value: ``ValueError``."""
        payload = base64.urlsafe_b64decode(settings + b"=" * (-len(settings) % 4))
        try:
            self._apply_settings(payload)
        except FrameError as exc:
            raise ValueError(str(exc)) from None
        self._streams[1] = _Stream(self.stream_window, remote_open=False)
        self.highest = 1
        self.start()

    # -- what the client sends ---------------------------------------------------------------------

    def receive(self, data: bytes) -> list[Event]:
        """The events of ``data`` (with what came before it unfinished). A ``FrameError`` for the
        connection queues its ``GOAWAY`` and is raised; none of the read's events are handed over."""
        if self.ended:
            return []
        buffer = self._buffer + data if self._buffer else data
        events: list[Event] = []
        try:
            at = 0
            if self._preface:
                if len(buffer) < len(PREFACE):
                    if not PREFACE.startswith(buffer):
                        raise FrameError(Code.PROTOCOL_ERROR, "invalid HTTP/2 preface")
                    self._buffer = buffer
                    return events
                if buffer[: len(PREFACE)] != PREFACE:
                    raise FrameError(Code.PROTOCOL_ERROR, "invalid HTTP/2 preface")
                self._preface = False
                at = len(PREFACE)
            end = len(buffer)
            unpack = _HEAD.unpack_from
            while end - at >= 9:
                high, low, kind, flags, sid = unpack(buffer, at)
                size = (high << 8) | low
                if size > FRAME_SIZE:
                    raise FrameError(Code.FRAME_SIZE_ERROR, f"a frame of {size} bytes (at most {FRAME_SIZE})")
                if end - at - 9 < size:
                    break
                payload = buffer[at + 9 : at + 9 + size]
                at += 9 + size
                sid &= 0x7FFFFFFF
                try:
                    self._frame(kind, flags, sid, payload, events)
                except FrameError as exc:
                    if not exc.stream:
                        raise
                    if self._streams.pop(exc.stream, None) is not None:
                        events.append((RESET, exc.stream, exc.code))
                    self._rst(exc.stream, exc.code)  # a refused stream too, never opened
            self._buffer = buffer[at:] if at < end else b""
        except FrameError as exc:
            self.close(exc.code)
            self.ended = True
            raise
        return events

    def _frame(self, kind: int, flags: int, sid: int, payload: bytes, events: list[Event]) -> None:
        if self._block is not None and kind != CONTINUATION:
            raise FrameError(Code.PROTOCOL_ERROR, "a header block was cut by another frame")
        if not self._settings_seen:
            if kind != SETTINGS or flags & ACK:
                raise FrameError(Code.PROTOCOL_ERROR, "the client's preface did not start with SETTINGS")
            self._settings_seen = True
        if kind == HEADERS:
            self._headers(flags, sid, payload, events)
        elif kind == DATA:
            self._data(flags, sid, payload, events)
        elif kind == CONTINUATION:
            self._continuation(flags, sid, payload, events)
        elif kind == WINDOW_UPDATE:
            self._window_update(sid, payload)
        elif kind == RST_STREAM:
            self._rst_stream(sid, payload, events)
        elif kind == SETTINGS:
            self._settings(flags, sid, payload)
        elif kind == PING:
            if sid:
                raise FrameError(Code.PROTOCOL_ERROR, "PING on a stream")
            if len(payload) != 8:
                raise FrameError(Code.FRAME_SIZE_ERROR, "PING of other than 8 bytes")
            if not flags & ACK:
                self._out.append(frame(PING, ACK, 0, payload))
        elif kind == PRIORITY:
            if not sid:
                raise FrameError(Code.PROTOCOL_ERROR, "PRIORITY on stream 0")
            if len(payload) != 5:
                raise FrameError(Code.FRAME_SIZE_ERROR, "PRIORITY of other than 5 bytes", sid)
            if _U32.unpack_from(payload)[0] & 0x7FFFFFFF == sid:
                raise FrameError(Code.PROTOCOL_ERROR, "a stream that depends on itself", sid)
        elif kind == GOAWAY:
            if sid:
                raise FrameError(Code.PROTOCOL_ERROR, "GOAWAY on a stream")
            if len(payload) < 8:
                raise FrameError(Code.FRAME_SIZE_ERROR, "GOAWAY of fewer than 8 bytes")
            events.append((TERMINATED, 0, _GOAWAY.unpack_from(payload)[1]))
        elif kind == PUSH_PROMISE:
            raise FrameError(Code.PROTOCOL_ERROR, "PUSH_PROMISE from a client")
        # other frame types are ignored (RFC 9113 §5.5)

    def _unpadded(self, flags: int, payload: bytes) -> bytes:
        if not flags & PADDED:
            return payload
        if not payload or payload[0] >= len(payload):
            raise FrameError(Code.PROTOCOL_ERROR, "padding as long as the frame")
        return payload[1 : len(payload) - payload[0]]

    def _headers(self, flags: int, sid: int, payload: bytes, events: list[Event]) -> None:
        if not sid or not sid & 1:
            raise FrameError(Code.PROTOCOL_ERROR, f"HEADERS on stream {sid}")
        block = self._unpadded(flags, payload)
        if flags & PRIORITY_FLAG:
            if len(block) < 5:
                raise FrameError(Code.FRAME_SIZE_ERROR, "HEADERS too short for its priority")
            if _U32.unpack_from(block)[0] & 0x7FFFFFFF == sid:
                raise FrameError(Code.PROTOCOL_ERROR, "a stream that depends on itself")
            block = block[5:]
        if flags & END_HEADERS:
            self._block_done(sid, flags, block, events)
        else:
            self._block = (sid, flags, [block], 1)

    def _continuation(self, flags: int, sid: int, payload: bytes, events: list[Event]) -> None:
        pending = self._block
        if pending is None or pending[0] != sid:
            raise FrameError(Code.PROTOCOL_ERROR, "CONTINUATION without a header block to continue")
        pieces, count = pending[2], pending[3] + 1
        pieces.append(payload)
        if count > CONTINUATION_LIMIT:
            raise FrameError(Code.PROTOCOL_ERROR, f"a header block in more than {CONTINUATION_LIMIT} frames")
        if flags & END_HEADERS:
            self._block = None
            self._block_done(sid, pending[1], b"".join(pieces), events)
        else:
            self._block = (sid, pending[1], pieces, count)

    def _decode(self, block: bytes) -> tuple[Headers, bool]:
        """The fields of ``block``, and whether decoding it left the dynamic table as it was."""
        decoder = self._decoder
        try:
            headers = decoder.decode(block)
        except ListTooLarge as exc:
            raise FrameError(Code.ENHANCE_YOUR_CALM, str(exc)) from None
        except HpackError as exc:
            raise FrameError(Code.COMPRESSION_ERROR, f"a header block that does not decode: {exc}") from None
        return headers, decoder.kept

    def _block_done(self, sid: int, flags: int, block: bytes, events: list[Event]) -> None:
        """A whole header block on stream ``sid``: a new request, or a stream's trailers."""
        ended = bool(flags & END_STREAM)
        if sid > self.highest:
            self.highest = sid
            again = self._again
            if again is not None and block == again[0]:
                checked = again[1]
            else:  # decoded always: the dynamic table must follow the client's
                headers, kept = self._decode(block)
                try:
                    checked = request_fields(headers)
                except Malformed as exc:
                    raise FrameError(Code.PROTOCOL_ERROR, str(exc)) from None
                self._again = (block, checked) if kept and len(block) <= MEMO_BYTES else None
            if sid > self.accepted:
                return
            if len(self._streams) >= self.max_streams:
                raise FrameError(Code.REFUSED_STREAM, "too many streams at once", sid)
            opened = _Stream(self.stream_window, remote_open=not ended)
            if not ended:  # a body follows: its length is held to what content-length says
                opened.expected = _content_length(checked, sid)
            self._streams[sid] = opened
            events.append((REQUEST, sid, checked, ended))
            return
        headers, kept = self._decode(block)
        if not kept:
            self._again = None
        stream = self._streams.get(sid)
        if stream is not None and stream.remote_open:
            if not ended:
                raise FrameError(Code.PROTOCOL_ERROR, "trailers that do not end the stream")
            if stream.expected is not None and stream.received != stream.expected:
                raise FrameError(Code.PROTOCOL_ERROR, "a body of other than its content-length", sid)
            try:
                trailer_fields(headers)
            except Malformed as exc:
                raise FrameError(Code.PROTOCOL_ERROR, str(exc)) from None
            self._remote_closed(sid, stream)
            events.append((ENDED, sid))
        elif sid < self.highest and stream is None:
            raise FrameError(Code.STREAM_CLOSED, f"HEADERS on closed stream {sid}")
        else:
            raise FrameError(Code.PROTOCOL_ERROR, f"HEADERS on stream {sid}, which the client ended")

    def _data(self, flags: int, sid: int, payload: bytes, events: list[Event]) -> None:
        if not sid:
            raise FrameError(Code.PROTOCOL_ERROR, "DATA on stream 0")
        size = len(payload)
        if self._unacked + size > WINDOW:
            raise FrameError(Code.FLOW_CONTROL_ERROR, "DATA beyond the connection's window")
        self._acknowledge(size)
        stream = self._streams.get(sid)
        if stream is None or not stream.remote_open:
            if sid > self.highest:
                raise FrameError(Code.PROTOCOL_ERROR, f"DATA on idle stream {sid}")
            if stream is None and sid in self._reset_here:
                return  # the server reset it a moment ago: what was on its way is dropped
            raise FrameError(Code.STREAM_CLOSED, f"DATA on stream {sid}, which the client ended", sid)
        if size > stream.recv_window:
            raise FrameError(Code.FLOW_CONTROL_ERROR, "DATA beyond the stream's window", sid)
        data = self._unpadded(flags, payload)
        if stream.expected is not None:
            stream.received += len(data)
            if stream.received > stream.expected or (flags & END_STREAM and stream.received != stream.expected):
                raise FrameError(Code.PROTOCOL_ERROR, "a body of other than its content-length", sid)
        if flags & END_STREAM:
            if data:
                events.append((BODY, sid, data))
            self._remote_closed(sid, stream)
            events.append((ENDED, sid))
            return
        stream.recv_window -= size
        if stream.recv_window < WINDOW // 2:
            self._out.append(frame(WINDOW_UPDATE, 0, sid, _U32.pack(WINDOW - stream.recv_window)))
            stream.recv_window = WINDOW
        if data:
            events.append((BODY, sid, data))

    def _acknowledge(self, size: int) -> None:
        """``size`` bytes of DATA read: the connection's window is given back in halves."""
        self._unacked += size
        if self._unacked >= WINDOW // 2:
            self._out.append(frame(WINDOW_UPDATE, 0, 0, _U32.pack(self._unacked)))
            self._unacked = 0

    def _window_update(self, sid: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise FrameError(Code.FRAME_SIZE_ERROR, "WINDOW_UPDATE of other than 4 bytes")
        increment = _U32.unpack(payload)[0] & 0x7FFFFFFF
        if not sid:
            if not increment:
                raise FrameError(Code.PROTOCOL_ERROR, "a WINDOW_UPDATE of 0")
            self.send_window += increment
            if self.send_window > MAX_WINDOW:
                raise FrameError(Code.FLOW_CONTROL_ERROR, "the connection's window beyond 2^31-1")
            return
        stream = self._streams.get(sid)
        if stream is None:
            if sid > self.highest:
                raise FrameError(Code.PROTOCOL_ERROR, f"WINDOW_UPDATE on idle stream {sid}")
            return
        if not increment:
            raise FrameError(Code.PROTOCOL_ERROR, "a WINDOW_UPDATE of 0", sid)
        stream.send_window += increment
        if stream.send_window > MAX_WINDOW:
            raise FrameError(Code.FLOW_CONTROL_ERROR, "a stream's window beyond 2^31-1", sid)

    def _rst_stream(self, sid: int, payload: bytes, events: list[Event]) -> None:
        if len(payload) != 4:
            raise FrameError(Code.FRAME_SIZE_ERROR, "RST_STREAM of other than 4 bytes")
        if not sid or sid > self.highest:
            raise FrameError(Code.PROTOCOL_ERROR, f"RST_STREAM on idle stream {sid}")
        if self._streams.pop(sid, None) is not None:
            events.append((RESET, sid, _U32.unpack(payload)[0]))

    def _settings(self, flags: int, sid: int, payload: bytes) -> None:
        if sid:
            raise FrameError(Code.PROTOCOL_ERROR, "SETTINGS on a stream")
        if flags & ACK:
            if payload:
                raise FrameError(Code.FRAME_SIZE_ERROR, "a SETTINGS acknowledgement with a payload")
            return
        self._apply_settings(payload)
        self._out.append(frame(SETTINGS, ACK, 0))

    def _apply_settings(self, payload: bytes) -> None:
        if len(payload) % 6:
            raise FrameError(Code.FRAME_SIZE_ERROR, "SETTINGS of a length that is no multiple of 6")
        for at in range(0, len(payload), 6):
            key, value = _SETTING.unpack_from(payload, at)
            if key == INITIAL_WINDOW_SIZE:
                if value > MAX_WINDOW:
                    raise FrameError(Code.FLOW_CONTROL_ERROR, "SETTINGS_INITIAL_WINDOW_SIZE beyond 2^31-1")
                delta, self.stream_window = value - self.stream_window, value
                for stream in self._streams.values():
                    stream.send_window += delta
                    if stream.send_window > MAX_WINDOW:
                        raise FrameError(Code.FLOW_CONTROL_ERROR, "a stream's window beyond 2^31-1")
            elif key == MAX_FRAME_SIZE:
                if not FRAME_SIZE <= value <= 2**24 - 1:
                    raise FrameError(Code.PROTOCOL_ERROR, f"SETTINGS_MAX_FRAME_SIZE of {value}")
                self.max_outbound_frame = value
            elif key == HEADER_TABLE_SIZE:
                self._resize_next = True
            elif key == ENABLE_PUSH and value > 1:
                raise FrameError(Code.PROTOCOL_ERROR, f"SETTINGS_ENABLE_PUSH of {value}")
            # MAX_CONCURRENT_STREAMS, MAX_HEADER_LIST_SIZE and the unknown: nothing to follow

    def _remote_closed(self, sid: int, stream: _Stream) -> None:
        stream.remote_open = False
        if not stream.local_open:
            del self._streams[sid]

    # -- what the server sends ---------------------------------------------------------------------

    def window(self, sid: int) -> int:
        """How many bytes of DATA the windows let the server send on ``sid`` now: none while a
        window is below zero (the client lowered ``SETTINGS_INITIAL_WINDOW_SIZE``)."""
        stream = self._streams.get(sid)
        if stream is None or not stream.local_open:
            raise StreamGone(sid)
        room = min(self.send_window, stream.send_window)
        return room if room > 0 else 0

    def send_headers(self, sid: int, headers: Headers, end: bool) -> None:
        """A header list on ``sid`` (trailers, a fault's answer); ``end``: nothing follows."""
        self.send_block(sid, encode_block(headers), end)

    def send_block(self, sid: int, block: bytes, end: bool) -> None:
        """An answer's header block (``encode_block``'s) on ``sid``; ``end``: nothing follows."""
        stream = self._streams.get(sid)
        if stream is None or not stream.local_open:
            raise StreamGone(sid)
        if self._resize_next:
            block, self._resize_next = b"\x20" + block, False
        limit, out = self.max_outbound_frame, self._out
        flags = END_STREAM if end else 0
        if len(block) <= limit:
            size = len(block)
            out.append(_HEAD.pack(size >> 8, size & 0xFF, HEADERS, flags | END_HEADERS, sid) + block)
        else:
            out.append(frame(HEADERS, flags, sid, block[:limit]))
            for at in range(limit, len(block), limit):
                last = at + limit >= len(block)
                out.append(frame(CONTINUATION, END_HEADERS if last else 0, sid, block[at : at + limit]))
        if end:
            self._local_closed(sid, stream)

    def send_data(self, sid: int, data: bytes, end: bool) -> None:
        """``data`` on ``sid`` in one frame (within ``window(sid)`` and ``max_outbound_frame``)."""
        stream = self._streams.get(sid)
        if stream is None or not stream.local_open:
            raise StreamGone(sid)
        size = len(data)
        self.send_window -= size
        stream.send_window -= size
        self._out.append(_HEAD.pack(size >> 8, size & 0xFF, DATA, END_STREAM if end else 0, sid) + data)
        if end:
            self._local_closed(sid, stream)

    def _local_closed(self, sid: int, stream: _Stream) -> None:
        stream.local_open = False
        if not stream.remote_open:
            del self._streams[sid]

    def reset(self, sid: int, code: Code) -> None:
        """``RST_STREAM`` for ``sid``, which is then closed both ways (nothing, if it was already)."""
        if self._streams.pop(sid, None) is not None:
            self._rst(sid, code)

    def _rst(self, sid: int, code: Code) -> None:
        """``RST_STREAM`` for ``sid``, remembered (``RESETS_KEPT``): what the client still sends on
        it is dropped."""
        self._out.append(frame(RST_STREAM, 0, sid, _U32.pack(code)))
        held = self._reset_here
        held[sid] = None
        if len(held) > RESETS_KEPT:
            del held[next(iter(held))]

    def close(self, code: Code, last_stream: int | None = None) -> None:
        """``GOAWAY`` with ``code``, naming ``last_stream`` (the newest the client opened, unless
        told) as the last the server will answer."""
        last = self.highest if last_stream is None else last_stream
        self.accepted = min(self.accepted, last)
        self._out.append(frame(GOAWAY, 0, 0, _GOAWAY.pack(last, code)))

    def take(self) -> bytes:
        """What is to be written now."""
        out = self._out
        if not out:
            return b""
        data = out[0] if len(out) == 1 else b"".join(out)
        out.clear()
        return data
