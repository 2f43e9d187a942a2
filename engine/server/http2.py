"""HTTP/2 on the proxy port and the webserver: ``Http2Connection``, one connection's streams.

A connection becomes HTTP/2 in one of three ways (engine/server/protocol.py decides): its first
bytes are the client preface (h2c with prior knowledge), an HTTP/1.1 request asked ``Upgrade: h2c``
(answered ``101``, its answer then goes on stream 1), or the client picked ``h2`` by ALPN in an
intercepted CONNECT tunnel. ``FrameServer`` (engine/server/http2_frames.py, sans-IO) does the
framing, HPACK, the checks of header lists, the stream states and the flow-control windows;
simproxy keeps its own loop. Each stream's request becomes the same ``RequestDetails`` an
HTTP/1.1 request does (``build_request``: ``:authority`` as ``Host``, ``:path`` as the target)
and is asked of the same dispatcher, so every mode works unchanged; its ``Wire`` answer is
written as HEADERS and DATA frames (engine/server/http2_wire.py).

Streams are answered concurrently, each as soon as its answer is ready: a delay on one holds no
other. DATA goes out as the client's windows allow, and no more while the write buffer is above
its high-water mark (then the client is not read either). A fault on an answer
(engine/server/faults.py) becomes, over HTTP/2:

==================== ================================================================
type                 on the wire
==================== ================================================================
connectionReset      ``RST_STREAM`` (``INTERNAL_ERROR``) on that stream; others go on
emptyResponse        ``GOAWAY`` (``INTERNAL_ERROR``), nothing written, the close
malformedChunk       the answer's HEADERS, then ``GOAWAY`` (``PROTOCOL_ERROR``), the close
randomDataThenClose  random bytes that are no frame, then the close
dribble, bandwidth   that stream's DATA paced as over HTTP/1.1; others go on
==================== ================================================================

Limits: ``MAX_CONCURRENT_STREAMS`` streams at once, header lists of ``ProxyLimits.max_head``
bytes, frames of 16 KB, ``max_body`` bytes of request bodies over all the streams still arriving
(more: ``413`` and ``RST_STREAM`` for the stream that went over). A CONTINUATION flood meets
the limit of 64 frames to a header block (``GOAWAY``, ``PROTOCOL_ERROR``); a rapid reset
(CVE-2023-44487), more than ``RESET_BUDGET`` streams reset by the client within ``RESET_WINDOW``
seconds, ``GOAWAY`` (``ENHANCE_YOUR_CALM``); then the close. A stream opened and reset in one read is never asked of
the dispatcher. Bytes that break the protocol get ``GOAWAY`` with the error code RFC 9113 names
for them, and the close (a fault of one stream only: ``RST_STREAM`` for it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from typing import Any

from simproxy.engine.errors import RequestRejected
from simproxy.engine.fleet.config import ProxyLimits
from simproxy.engine.server.connect import checked_answer, proxy_credentials
from simproxy.engine.server.faults import SLICE_SECONDS, pause, random_data
from simproxy.engine.server.http2_frames import (
    BODY,
    ENDED,
    REQUEST,
    RESET,
    TERMINATED,
    Code,
    FrameError,
    FrameServer,
    StreamGone,
)
from simproxy.engine.server.http2_hpack import encode_block
from simproxy.engine.server.http2_wire import Headers, KnownRequests, response_headers, stream_head, trailer_fields
from simproxy.engine.server.state import ServerState
from simproxy.engine.simulation.model import Fault, FaultKind
from simproxy.engine.wire.parse import Arrival, build_request
from simproxy.engine.wire.request import Received, RequestDetails
from simproxy.engine.wire.response import Wire, plain_error

log = logging.getLogger(__name__)

PROTOCOL = "HTTP/2.0"
"""The protocol the journal records for a request that came over HTTP/2 (Go's ``Request.Proto``)."""
MAX_CONCURRENT_STREAMS = 100
"""Streams a client may have open at once (``SETTINGS_MAX_CONCURRENT_STREAMS``); more are refused."""
RESET_BUDGET = 200
"""Streams a client may reset within ``RESET_WINDOW`` seconds before the connection is ended."""
RESET_WINDOW = 10.0
LINGER_SECONDS = 1.0
"""How long a connection ended with ``GOAWAY`` is still read (and what comes dropped) before its close."""
DATA_SLICE = 64 * 1024
"""The most bytes of one stream sent before the others get their turn."""


@dataclass(slots=True, eq=False)
class _Stream:
    """One stream's request as it arrives, then its answer as it goes out (mutable: it is its state)."""

    block: Headers
    body: list[bytes] = field(default_factory=list)
    size: int = 0
    head_only: bool = False
    task: asyncio.Task[None] | None = None
    """The answer still to come (a delay, a real service, a timed fault): cancelled on a reset."""
    out: bytes = b""
    """Body bytes still to send from ``sent`` on, as the windows allow."""
    sent: int = 0
    end: bool = False
    """The stream ends once ``out`` is sent."""
    trailers: Headers | None = None
    """Trailer fields sent after ``out`` (they end the stream then)."""
    answered: bool = False


class Http2Connection:
    """The HTTP/2 side of one connection: fed what the client sends (``send``), it writes to
    ``transport`` itself. The connection's ``ProxyProtocol`` calls ``send``, ``pause_reading``,
    ``resume_reading`` (as its write buffer fills and drains), ``close`` (lost), ``goaway`` (the
    server stops) and ``check_timeouts`` (the sweep)."""

    def __init__(self, state: ServerState, transport: asyncio.Transport, arrival: Arrival) -> None:
        self.state = state
        self.transport = transport
        self.arrival = replace(arrival, http2=True)
        self.arrival_encoded = self.arrival.encode()
        self.frames = FrameServer(MAX_CONCURRENT_STREAMS, state.limits.max_head)
        self.known = KnownRequests()
        self.streams: dict[int, _Stream] = {}
        self._sending: dict[int, None] = {}
        """Streams with DATA still to send, in the order they got it (a dict: ordered, no repeats)."""
        self.paused = False
        """The write buffer is above its high-water mark: no DATA is sent, the client is not read."""
        self.closed = False
        self.lost = asyncio.Event()
        """Set once the connection is lost: a timed fault waiting ends at once."""
        self._resets: list[float] = []
        """When the client reset streams, within the last ``RESET_WINDOW`` seconds."""
        self._since = time.monotonic()
        """When the client last sent something, or the last answer was done."""
        self._buffered = 0
        """Bytes of request bodies still arriving, over all streams: at most ``max_body`` (as one
        HTTP/1.1 request's), so 100 streams cannot hold 100 bodies' worth."""

    # -- the ways in -----------------------------------------------------------------------------

    def start(self, data: bytes) -> None:
        """Prior knowledge, or ALPN: the server's preface, then what the client sent so far."""
        self.frames.start()
        self._flush()
        if data:
            self.send(data)

    def upgrade(self, settings: bytes, request: RequestDetails | Wire, head_only: bool, rest: bytes) -> None:
        """``Upgrade: h2c``: the ``101`` is written; ``request`` (or the error that answers it) is
        answered on stream 1, and ``rest`` (the client's preface and frames) read."""
        try:
            self.frames.start_upgraded(settings)
        except ValueError as exc:
            log.debug("bad HTTP2-Settings in an h2c upgrade: %s", exc)
            self.transport.close()
            self.closed = True
            return
        stream = self.streams[1] = _Stream([], head_only=head_only)
        self._flush()
        if isinstance(request, Wire):
            self._respond(1, stream, request, None)
        else:
            self._ask(1, stream, request)
        if rest:
            self.send(rest)
        else:
            self._flush()

    # -- what the connection calls -----------------------------------------------------------------

    def send(self, data: bytes | memoryview) -> None:
        """Bytes from the client: the events they make, handled; what they call for, written."""
        if self.closed:
            return
        self._since = time.monotonic()
        try:
            events = self.frames.receive(data if type(data) is bytes else bytes(data))
        except FrameError as exc:  # its GOAWAY is queued
            log.debug("HTTP/2 protocol error from the client: %s", exc)
            self._end()
            return
        reset = {e[1] for e in events if e[0] == RESET}
        for event in events:
            kind = event[0]
            if kind == REQUEST:
                sid = event[1]
                self.streams[sid] = _Stream(event[2])
                if event[3] and sid not in reset:  # opened and reset in one read: never asked of the dispatcher
                    self._arrived(sid)
            elif kind == BODY:
                self._data(event[1], event[2])
            elif kind == ENDED:
                if event[1] not in reset:
                    self._arrived(event[1])
            elif kind == RESET:
                self._reset_by_client(event[1])
            elif kind == TERMINATED:
                self._end()
                return
        if not self.closed:
            self._pump()

    def pause_reading(self) -> None:
        """The write buffer passed its high-water mark: no more DATA, and the client is not read."""
        self.paused = True
        self.transport.pause_reading()

    def resume_reading(self) -> None:
        self.paused = False
        if not self.closed:
            self.transport.resume_reading()
            self._pump()

    def close(self) -> None:
        """The connection is lost: the answers still to come are cancelled."""
        self.closed = True
        self.lost.set()
        for stream in self.streams.values():
            if stream.task is not None:
                stream.task.cancel()
        self.streams.clear()
        self._sending.clear()

    def goaway(self) -> None:
        """The server stops: ``GOAWAY`` (``NO_ERROR``), the streams begun are still answered."""
        if not self.closed:
            self.frames.close(Code.NO_ERROR)
            self._flush()

    @property
    def busy(self) -> bool:
        """Streams still wait for their answers."""
        return bool(self.streams) and not self.closed

    def check_timeouts(self, now: float, limits: ProxyLimits) -> None:
        """The sweep's look (``time.monotonic()``), as at an HTTP/1.1 connection: after
        ``idle_timeout`` seconds without a stream and nothing from the client, ``GOAWAY`` and the
        close (the abort, when the client does not read its answers either); after ``read_timeout``
        seconds without a byte, ``408`` for each request still arriving."""
        quiet = now - self._since
        if self.closed:
            return
        if quiet > limits.idle_timeout and (self.paused or not self.streams):
            if self.paused:
                self.close()
                self.transport.abort()
                return
            self.frames.close(Code.NO_ERROR)
            self._end()
        elif quiet > limits.read_timeout:
            late = [sid for sid, stream in self.streams.items() if not stream.answered and stream.task is None]
            timeout = plain_error(408, "Request Timeout: the request did not arrive in time\n")
            for sid in late:
                self._respond(sid, self.streams[sid], timeout, None)
                self._cancel(sid, Code.NO_ERROR)
            if late:
                self._pump()

    # -- requests ----------------------------------------------------------------------------------

    def _data(self, sid: int, data: bytes) -> None:
        stream = self.streams.get(sid)
        if stream is None or stream.answered:
            return
        stream.body.append(data)
        stream.size += len(data)
        self._buffered += len(data)
        limit = self.state.limits.max_body
        if stream.size > limit or self._buffered > limit:  # the streams' bodies together: one request's worth
            self._respond(sid, stream, plain_error(413, f"request body larger than {limit} bytes\n"), None)
            self._pump()
            self._cancel(sid, Code.NO_ERROR)  # the answer is complete: the rest is not wanted

    def _arrived(self, sid: int) -> None:
        """A request is whole: build it and ask the dispatcher."""
        stream = self.streams.get(sid)
        if stream is None or stream.answered:
            return
        known = None if stream.size else self.known.get(stream.block)
        if known is not None:
            head, request = known
            stream.head_only = head.method == b"HEAD"
        else:
            head = stream_head(stream.block)
            stream.head_only = head.method == b"HEAD"
            if head.method == b"CONNECT":
                self._respond(sid, stream, plain_error(501, "Not Implemented: CONNECT over HTTP/2\n"), None)
                return
            body = b"".join(stream.body)
            try:
                method = head.method.decode("latin-1")
                request = build_request(method, head.target, head.headers, body, self.arrival, self.state.header_names)
            except RequestRejected as exc:
                self._respond(sid, stream, plain_error(exc.status, exc.text), None)
                return
            except Exception as exc:  # a malformed target must not take the worker down
                log.debug("unparsable HTTP/2 request target %r: %s", head.target, exc)
                self._respond(sid, stream, plain_error(400, "Bad Request: invalid request target\n"), None)
                return
            object.__setattr__(request, "protocol", PROTOCOL)  # the journal records it; the request is new
            if not body:
                self.known.keep(stream.block, head, request)
        self._buffered -= stream.size
        stream.body, stream.size = [], 0
        self._ask(sid, stream, request, head.headers)

    def _ask(self, sid: int, stream: _Stream, request: RequestDetails, headers: Headers | None = None) -> None:
        state = self.state
        if request.protocol != PROTOCOL:  # an upgrade's request (new, no one else's): the journal records it
            object.__setattr__(request, "protocol", PROTOCOL)
        received = Received(request, time.time(), time.perf_counter(), None, self.arrival_encoded)
        outcome: Wire | Coroutine[Any, Any, Wire]
        auth = state.auth
        if auth is not None and not self.arrival.tunnel_scheme:
            credentials = proxy_credentials(headers or [])
            if not auth.proxy_passed(credentials):
                outcome = checked_answer(auth, state.dispatcher, credentials, request)
                stream.task = asyncio.ensure_future(self._later(sid, stream, outcome, received))
                return
        try:
            outcome = state.dispatcher.handle(request)
        except Exception:
            log.exception("request handling failed")
            outcome = state.internal_error
        if type(outcome) is Wire and outcome.fault is None:
            self._respond(sid, stream, outcome, received)
        else:
            stream.task = asyncio.ensure_future(self._later(sid, stream, outcome, received))

    async def _later(
        self, sid: int, stream: _Stream, outcome: Wire | Coroutine[Any, Any, Wire], received: Received
    ) -> None:
        """An answer to come (or one with a fault): written once ready, whatever the others do."""
        try:
            wire = outcome if isinstance(outcome, Wire) else await outcome
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("request handling failed")
            wire = self.state.internal_error
        if self.closed or self.streams.get(sid) is not stream:
            return
        try:
            if wire.fault is None:
                stream.task = None
                self._respond(sid, stream, wire, received)
            else:  # a timed fault's task stays the stream's: a reset ends it
                await self._fault(sid, stream, wire, wire.fault, received)
                stream.task = None
        except StreamGone:  # the client closed the stream meanwhile
            self._forget(sid)
        if not self.closed:
            self._pump()

    # -- answers -----------------------------------------------------------------------------------

    def _respond(self, sid: int, stream: _Stream, wire: Wire, received: Received | None) -> None:
        """HEADERS now, the body as the windows allow (``_pump``)."""
        if received is not None:
            self.state.dispatcher.served(wire, received)
        stream.answered = True
        date = self.state.date.kept or self.state.date.value()
        block, body = self.state.http2_answers.get(wire, date, stream.head_only, encode_block)
        frames = self.frames
        trailers = trailer_fields(wire) if wire.trailers and not stream.head_only else None
        try:
            frames.send_block(sid, block, not body and not trailers)
            if trailers and not body:
                frames.send_headers(sid, trailers, True)
            small = (
                body and not trailers and not self._sending and len(body) <= min(frames.max_outbound_frame, DATA_SLICE)
            )
            if small and len(body) <= frames.window(sid):  # the common case: one DATA frame now
                frames.send_data(sid, body, True)
                body = b""
        except StreamGone:  # the stream was reset meanwhile
            self._forget(sid)
            return
        if body:
            stream.out, stream.sent, stream.end, stream.trailers = body, 0, True, trailers
            self._sending[sid] = None
        else:
            self._forget(sid)

    def _pump(self) -> None:
        """Send what the windows and the write buffer allow, a slice of each stream in turn."""
        frames, sending = self.frames, self._sending
        while sending and not self._stopped():
            moved = False
            for sid in list(sending):
                stream = self.streams.get(sid)
                if stream is None:
                    sending.pop(sid, None)
                    continue
                try:
                    room = min(frames.window(sid), DATA_SLICE)
                except StreamGone:  # closed by the client
                    self._forget(sid)
                    continue
                size = min(room, len(stream.out) - stream.sent)
                frame = frames.max_outbound_frame
                start = stream.sent
                while start < stream.sent + size:
                    piece = stream.out[start : min(start + frame, stream.sent + size)]
                    start += len(piece)
                    last = stream.end and start == len(stream.out) and not stream.trailers
                    frames.send_data(sid, piece, last)
                if size:
                    moved = True
                stream.sent += size
                if stream.sent == len(stream.out):
                    sending.pop(sid, None)
                    if stream.end:
                        if stream.trailers:
                            frames.send_headers(sid, stream.trailers, True)
                        self._forget(sid)
                    else:
                        stream.out, stream.sent = b"", 0
                self._flush()
                if self._stopped():
                    return
            if not moved:
                break
        self._flush()

    def _stopped(self) -> bool:
        """Nothing more is sent for now: the write buffer is full (a write may fill it), or the end came."""
        return self.paused or self.closed

    def _forget(self, sid: int) -> None:
        """The stream is done for this side: its answer is all sent, or it was reset."""
        stream = self.streams.pop(sid, None)
        if stream is not None and stream.size:
            self._buffered -= stream.size  # a body that never arrived whole
        self._sending.pop(sid, None)
        if not self.streams:
            self._since = time.monotonic()
            self.state.note_answered()

    def _cancel(self, sid: int, code: Code) -> None:
        stream = self.streams.get(sid)
        if stream is not None and stream.task is not None:
            stream.task.cancel()
        self._forget(sid)
        self.frames.reset(sid, code)
        self._flush()

    def _reset_by_client(self, sid: int) -> None:
        """The client reset a stream: its answer is dropped. Too many resets in a short time (a
        rapid reset, CVE-2023-44487) end the connection."""
        stream = self.streams.get(sid)
        if stream is not None and stream.task is not None:
            stream.task.cancel()
        self._forget(sid)
        now = time.monotonic()
        resets = self._resets
        resets.append(now)
        if len(resets) > RESET_BUDGET:
            if now - resets[0] < RESET_WINDOW:
                log.info("HTTP/2 client reset %d streams in %.1f s: connection ended", len(resets), now - resets[0])
                self.frames.close(Code.ENHANCE_YOUR_CALM)
                self._end()
                return
            del resets[: len(resets) - RESET_BUDGET]

    # -- faults ------------------------------------------------------------------------------------

    async def _fault(self, sid: int, stream: _Stream, wire: Wire, fault: Fault, received: Received) -> None:
        """Write ``wire`` on stream ``sid`` as ``fault`` asks (the table in this module's docstring)."""
        self.state.dispatcher.served(wire, received)
        kind = fault.kind
        if kind is FaultKind.CONNECTION_RESET:
            self._cancel(sid, Code.INTERNAL_ERROR)
            return
        if kind is FaultKind.EMPTY_RESPONSE:
            self.frames.close(Code.INTERNAL_ERROR)
            self._end()
            return
        if kind is FaultKind.RANDOM_DATA_THEN_CLOSE:
            self._flush()
            self.transport.write(random_data(self.state.dispatcher.rng))
            self._end(flush=False)
            return
        date = self.state.date.value()
        headers, body = response_headers(wire, date, stream.head_only)
        stream.answered = True
        if kind is FaultKind.MALFORMED_CHUNK:
            self.frames.send_headers(sid, headers, False)
            self.frames.close(Code.PROTOCOL_ERROR, last_stream=sid)
            self._end()
            return
        if not body:
            if kind is FaultKind.DRIBBLE and not await pause(fault.duration_ms / 1000, self.lost):
                return
            self._respond(sid, stream, replace(wire, fault=None), None)
            return
        self.frames.send_headers(sid, headers, False)
        self._flush()
        if kind is FaultKind.DRIBBLE:
            await self._dribble(sid, stream, body, fault.chunks, fault.duration_ms / 1000)
        else:
            await self._paced(sid, stream, body, fault.bytes_per_second)

    async def _dribble(self, sid: int, stream: _Stream, body: bytes, chunks: int, seconds: float) -> None:
        """``body`` in ``chunks`` pieces spread evenly over ``seconds``, the last at the end."""
        loop = asyncio.get_running_loop()
        start, pieces = loop.time(), min(chunks, len(body))
        for sent in range(pieces):
            if not await pause(start + seconds * (sent + 1) / pieces - loop.time(), self.lost):
                return
            self._queue(
                sid, stream, body[len(body) * sent // pieces : len(body) * (sent + 1) // pieces], sent + 1 == pieces
            )

    async def _paced(self, sid: int, stream: _Stream, body: bytes, rate: int) -> None:
        """``body`` at no more than ``rate`` bytes a second, a slice of ``SLICE_SECONDS`` at a time."""
        loop = asyncio.get_running_loop()
        size = max(1, int(rate * SLICE_SECONDS))
        start, sent = loop.time(), 0
        while sent < len(body):
            end = min(sent + size, len(body))
            if not await pause(start + end / rate - loop.time(), self.lost):
                return
            self._queue(sid, stream, body[sent:end], end == len(body))
            sent = end

    def _queue(self, sid: int, stream: _Stream, data: bytes, last: bool) -> None:
        """More DATA for a stream whose answer goes out in pieces."""
        if self.closed or self.streams.get(sid) is not stream:
            return
        stream.out = stream.out[stream.sent :] + data
        stream.sent, stream.end = 0, last
        self._sending[sid] = None
        self._pump()

    # -- the connection ----------------------------------------------------------------------------

    def _flush(self) -> None:
        data = self.frames.take()
        if data and not self.transport.is_closing():
            self.transport.write(data)

    def _end(self, flush: bool = True) -> None:
        """The connection ends: what was queued (a ``GOAWAY``) written, then the close. On plain TCP
        the close waits ``LINGER_SECONDS``, after a FIN, while what the client still sends is read
        and dropped: closing with unread bytes would send an RST, and the client could lose the
        ``GOAWAY`` that tells it why."""
        if flush:
            self._flush()
        self.close()
        transport = self.transport
        if flush and transport.can_write_eof() and not transport.is_closing():
            transport.write_eof()
            transport.resume_reading()
            asyncio.get_running_loop().call_later(LINGER_SECONDS, transport.close)
        else:
            transport.close()
