"""The proxy port: simproxy's own HTTP/1.1 server on httptools, run inside every worker.

``ProxyProtocol`` is one connection. It parses requests (absolute-form for the proxy, origin-form
for ``-webserver``) within the limits, builds a ``RequestDetails`` and hands it on; it knows nothing
of modes or matching (Sanic serves only the admin port). Its parts, as uvicorn splits its own:

- the protocol (here): parsing, the limits and timeouts of a request, and flow control: a
  connection is not read while its client does not read its answers or ``max_pipelined`` of them
  are owed (engine/server/flow.py ``ReadGate``);
- the answer queue (engine/server/answers.py): the dispatcher is asked there, and the answers are
  written in request order, with their faults (engine/server/faults.py), as the write buffer has room;
- the CONNECT handler (engine/server/connect.py): proxy authentication, TLS and tunnels;
- HTTP/2 (engine/server/http2.py): a connection whose first bytes are the client preface, that
  asked ``Upgrade: h2c``, or picked ``h2`` by ALPN in a tunnel, is handed over to it, as a blind
  tunnel is (``_relay``): the first read of a connection goes through a ``Sniffer`` only.

What every connection shares comes in one ``ServerState`` (engine/server/state.py), built by the
listener (engine/server/listener.py), which this module never imports.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING, cast

import httptools

from simproxy.engine.errors import RequestRejected
from simproxy.engine.fleet.config import ProxyLimits
from simproxy.engine.server.answers import AnswerQueue, OnTurn
from simproxy.engine.server.connect import ConnectHandler, checked_answer, proxy_credentials
from simproxy.engine.server.flow import FEED_SLICE, HOLD_WRITE, ReadGate, limit_writes
from simproxy.engine.server.http2_wire import Sniffer
from simproxy.engine.server.state import ServerState
from simproxy.engine.server.tunnel import Tunnel
from simproxy.engine.wire.parse import Arrival, build_request
from simproxy.engine.wire.request import Received, RequestDetails
from simproxy.engine.wire.response import Wire, plain_error

if TYPE_CHECKING:  # imported when a connection turns to HTTP/2: h2 stays out of the start-up
    from simproxy.engine.server.http2 import Http2Connection

log = logging.getLogger(__name__)


class ProxyProtocol(asyncio.Protocol):
    """One connection of the proxy port: it parses the requests and decides when its client is read;
    its answers are the queue's (``answers``), a CONNECT the handler's (``_connecting``)."""

    def __init__(self, state: ServerState) -> None:
        self.state = state
        self.parser = httptools.HttpRequestParser(self)
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []
        """The current request's body as it came; made by its first piece (a request without one
        makes no list), so read only while ``_body_size`` says there is one."""
        self._body_size = 0
        limits = state.limits
        self._max_head, self._max_body = limits.max_head, limits.max_body
        self._head_size = 0
        """Bytes of the current request's target and headers so far."""
        self._in_head = False
        """The current request's headers are still arriving."""
        self._head_reads = 0
        """Bytes of the reads (slices) that ended inside the current head and began after it did (a
        huge header spans many reads); -1 while it began in the one being parsed."""
        self._reading = False
        """A request has begun and not yet arrived whole."""
        self._served = 0
        self._drained = 0
        """Times the write buffer drained after it had filled: a slow client still reading its answers."""
        self._mark = (-1, 0, False, 0.0)
        """(requests served, drains, reading, when the sweep first saw them so): how long nothing has moved."""
        self._gate = ReadGate(self.data_received)
        self.answers = AnswerQueue(state, self._gate)
        self._arrival = Arrival(state.dispatcher.webserver, state.auth is not None, own_port=state.port)
        self._arrival_encoded = self._arrival.encode()
        self._memo = state.requests.of(self._arrival_encoded)
        self._chunk: bytes | None = None
        """The read being parsed when it began with a new request (none was half-read before it):
        when it holds exactly one request, its bytes find the request built from them before
        (``RequestMemo``) and the journal keeps them."""
        self._chunk_requests = 0
        """Requests begun in that read."""
        self._connect: ConnectHandler | None = None
        """Made for the connection's first CONNECT."""
        self._relay: Tunnel | Http2Connection | Sniffer | None = (
            Sniffer(self._as_http1, self._as_http2) if state.http2 else None
        )
        """Where what the client sends goes instead of the HTTP/1.1 parser: a blind tunnel's
        connection to the real host (bytes go through untouched), HTTP/2, or, for the first read
        of a connection, the ``Sniffer`` that tells which of HTTP/1.1 and HTTP/2 it speaks."""
        self._h2c = state.http2
        """An HTTP/1.1 request may ask ``Upgrade: h2c`` (not inside TLS, where ALPN says it)."""
        self._http2: Http2Connection | None = None
        """The connection's HTTP/2 side, once it turned to HTTP/2 (then also ``_relay``)."""
        self._unswitched: list[tuple[bytes, bytes]] | None = None
        """A request that asked ``Upgrade`` and is not switched: its headers while it is read again
        as a plain request (``_read_unswitched``), for its body and what follows it."""

    # -- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        state = self.state
        self.answers.transport = self._gate.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio's
        if len(state.connections) >= state.max_connections:
            # the worker's descriptors are for everyone: the admin API, the store, the real services
            self.answers.fail(503, "Service Unavailable: too many connections to this worker")
            return
        limit_writes(self.answers.transport, state.limits.write_buffer)
        state.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.state.connections.discard(self)
        self.state.note_answered()
        self._gate.transport = None
        self._gate.unparsed = None
        if self._relay is not None:
            self._relay.close()
        self.answers.end()

    def data_received(self, data: bytes | memoryview) -> None:
        """Parse what was read, ``FEED_SLICE`` bytes at a time: a hold (engine/server/flow.py) stops
        the parsing too, and what is left waits in the gate, to come back (a memoryview) once none holds."""
        if self._relay is not None:
            self._relay.send(data)
            return
        answers = self.answers
        if answers.closing:
            return
        gate = self._gate
        if gate.holds or gate.unparsed is not None:  # not expected: nothing is read while held
            gate.keep(data)
            self._chunk = None
            return
        if type(data) is bytes:  # a read, not the rest of one
            self._chunk, self._chunk_requests = None if self._reading else data, 0
        piece, left = data, None
        if len(data) > FEED_SLICE:
            left = memoryview(data)
            piece, left = left[:FEED_SLICE], left[FEED_SLICE:]
        while True:
            try:
                self.parser.feed_data(piece)
            except httptools.HttpParserUpgrade as exc:
                upgraded = self._upgraded()
                rest = bytes(piece[exc.args[0] :]) + (bytes(left) if left is not None else b"")
                if upgraded is not None:  # Upgrade: h2c, switched: the rest of the read is HTTP/2
                    if rest:
                        upgraded.send(rest)
                elif self._unswitched is not None:
                    self._read_unswitched(rest)
                return  # CONNECT: answered in on_message_complete; what follows it in the read is dropped
            except httptools.HttpParserError as exc:
                self._parse_failed(exc)
                return
            if self._in_head:
                self._count_head(len(piece))
            if left is None or self.answers.closing or self.answers.transport is None:
                return
            if self._gate.holds:
                gate.unparsed = left
                return
            piece, left = (left, None) if len(left) <= FEED_SLICE else (left[:FEED_SLICE], left[FEED_SLICE:])

    def pause_writing(self) -> None:
        """The write buffer passed its high-water mark: read nothing that would add to it (the
        client's requests, or what a blind tunnel's host sends) until it drains."""
        self.answers.paused = True
        if self._relay is not None:
            self._relay.pause_reading()
        else:
            self._gate.hold(HOLD_WRITE)

    def resume_writing(self) -> None:
        """The write buffer drained to its low-water mark: answers and reads go on."""
        self._drained += 1
        self.answers.resumed()
        if self._relay is not None:
            self._relay.resume_reading()
        else:
            self._gate.release(HOLD_WRITE)

    def close(self) -> None:
        if self._http2 is not None:
            self._http2.goaway()
        self.answers.closing = True
        if self.answers.transport is not None:
            self.answers.transport.close()

    @property
    def busy(self) -> bool:
        """Requests this connection received still wait for their answers."""
        return self.answers.busy or (self._relay is not None and self._relay.busy)

    def check_timeouts(self, now: float, limits: ProxyLimits) -> None:
        """Called by the sweep: 408 for a request still arriving after ``read_timeout``; close after
        ``idle_timeout`` without a request, or with answers the client has not read for as long (a
        blind tunnel is left alone: it is not HTTP any more)."""
        answers, relay = self.answers, self._relay
        if self._http2 is not None:
            self._http2.check_timeouts(now, limits)
            return
        if answers.closing or answers.transport is None or (relay is not None and type(relay) is not Sniffer):
            return
        served, drained, reading, since = self._mark
        if (served, drained, reading) != (self._served, self._drained, self._reading):
            self._mark = (self._served, self._drained, self._reading, now)  # something moved since the last sweep
        elif answers.paused and now - since > limits.idle_timeout:
            answers.transport.abort()  # its buffers are bounded, its descriptor is not to be kept forever
        elif reading and now - since > limits.read_timeout:
            answers.fail(408, "Request Timeout: the request did not arrive in time")
        elif not reading and not answers.busy and now - since > limits.idle_timeout:
            self.close()

    # -- limits ---------------------------------------------------------------------------------

    def _count_head(self, size: int) -> None:
        """A read (or slice) of ``size`` bytes ended inside a head: httptools keeps a header that spans
        reads in memory, so what came counts against ``max_head``."""
        self._head_reads = 0 if self._head_reads < 0 else self._head_reads + size
        if self._head_reads > self._max_head:
            self._fail_head()

    def _parse_failed(self, exc: httptools.HttpParserError) -> None:
        cause = exc.__context__  # what a callback raised: httptools reports it as a callback error
        if isinstance(cause, _BodyTooLarge):
            self.answers.fail(413, f"request body larger than {self._max_body} bytes")
        elif isinstance(cause, _HeadTooLarge):
            self._fail_head()
        else:
            self.answers.fail(400, f"Bad Request: {exc}")

    def _fail_head(self) -> None:
        self.answers.fail(431, f"request target and headers larger than {self._max_head} bytes")

    # -- httptools callbacks ---------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._chunk_requests += 1
        self._url = b""
        self._headers = []
        self._body_size = 0
        self._head_size = 0
        self._head_reads = -1  # what came before it in this read is not this head's
        self._in_head = True
        self._reading = True

    def on_url(self, url: bytes) -> None:
        self._url += url
        self._head_size += len(url)
        if self._head_size > self._max_head:
            raise _HeadTooLarge

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))
        self._head_size += len(name) + len(value) + 4
        if self._head_size > self._max_head:
            raise _HeadTooLarge

    def on_headers_complete(self) -> None:
        self._in_head = False
        if self._unswitched is not None:  # read again: the headers as they came, 100 Continue written
            self._headers, self._unswitched = self._unswitched, None
            return
        transport = self.answers.transport
        if transport is None:
            return
        for name, value in self._headers:  # the length first: it makes no bytes, as lower() does
            if len(name) == 6 and name.lower() == b"expect" and value.lower() == b"100-continue":
                transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        if self._body_size:
            self._body.append(body)
        else:
            self._body = [body]
        self._body_size += len(body)
        if self._body_size > self._max_body:
            raise _BodyTooLarge

    def on_message_complete(self) -> None:
        self._reading = False
        self._served += 1
        parser = self.parser
        method = parser.get_method()  # decoded only to build a request: a known one is not built
        keep_alive = parser.should_keep_alive()
        auth, credentials, checked = self.state.auth, None, True
        if auth is not None and not self._arrival.tunnel_scheme:  # in a tunnel: checked on its CONNECT
            credentials = proxy_credentials(self._headers)
            checked = auth.proxy_passed(credentials)
        if method == b"CONNECT":
            self._connecting().connect(self._url.decode("latin-1"), checked, credentials)
            return
        if parser.should_upgrade():
            if self._h2c and checked and self._upgrade_h2c(method):
                return
            self._served -= 1  # not switched: read again as a plain request once httptools stops
            self._reading, self._unswitched = True, self._headers
            return
        # the read, when it held exactly this request (not split over reads, not pipelined with
        # others, no chunked body): the same bytes make the same request, and the journal keeps them
        raw = self._chunk
        if raw is not None and (self._chunk_requests != 1 or raw.find(b"\r\n\r\n") + 4 + self._body_size != len(raw)):
            raw = None
        known = None if raw is None else self._memo.get(raw)
        if known is not None:
            raw, request = known  # the journal holds the first read of these bytes, not this one
        else:
            built = self._build_request(method, raw)
            if isinstance(built, Wire):
                self.answers.answer(built, keep_alive, method == b"HEAD")
                return
            request = built
        received = Received(request, time.time(), time.perf_counter(), raw, self._arrival_encoded)
        if checked:
            self.answers.answer(request, keep_alive, method == b"HEAD", received)
        else:
            self._answer_checked(request, credentials, keep_alive, method == b"HEAD", received)

    # -- requests -------------------------------------------------------------------------------

    def _build_request(self, method: bytes, raw: bytes | None) -> RequestDetails | Wire:
        """The request just parsed, or the error that answers it; ``raw``: the bytes of exactly this
        request, when one read held them (kept with the request when they come again)."""
        try:
            req = build_request(
                method.decode("latin-1"),
                self._url,
                self._headers,
                b"".join(self._body) if self._body_size else b"",
                self._arrival,
                self.state.header_names,
            )
        except RequestRejected as exc:
            return plain_error(exc.status, exc.text)
        except Exception as exc:  # a malformed target must not take the worker down
            log.debug("unparsable request target %r: %s", self._url, exc)
            return plain_error(400, "Bad Request: invalid request target\n")
        if raw is not None:
            self._memo.keep(raw, req)
        return req

    def _answer_checked(
        self, request: RequestDetails, credentials: str | None, keep_alive: bool, head_only: bool, received: Received
    ) -> None:
        """``-auth``: the answer once the credentials are checked, begun in the request's turn."""
        auth, dispatcher = self.state.auth, self.state.dispatcher
        assert auth is not None
        turn = OnTurn(lambda: checked_answer(auth, dispatcher, credentials, request))
        self.answers.answer(turn, keep_alive, head_only, received)

    # -- HTTP/2 -----------------------------------------------------------------------------------

    def _upgraded(self) -> Http2Connection | None:
        """The HTTP/2 connection an ``Upgrade: h2c`` just switched to, if it did."""
        return self._http2

    def _turn_to_http2(self, transport: asyncio.Transport) -> Http2Connection:
        """From now on the connection speaks HTTP/2 (engine/server/http2.py, imported only now)."""
        from simproxy.engine.server.http2 import Http2Connection

        self._relay = self._http2 = Http2Connection(self.state, transport, self._arrival)
        return self._http2

    def _as_http1(self, data: bytes) -> None:
        """The first bytes are no HTTP/2 preface: HTTP/1.1 from now on."""
        self._relay = None
        self.data_received(data)

    def _as_http2(self, data: bytes) -> None:
        """The first bytes are the HTTP/2 preface (h2c with prior knowledge)."""
        transport = self.answers.transport
        if transport is None:
            return
        self._turn_to_http2(transport).start(data)

    def _upgrade_h2c(self, method: bytes) -> bool:
        """``Upgrade: h2c`` (RFC 7540 §3.2) on a request without a body, nothing else owed: ``101``,
        and the request is answered on HTTP/2's stream 1. False: the request is answered as asked."""
        upgrade = settings = None
        body = False
        for name, value in self._headers:
            lower = name.lower()
            if lower == b"upgrade":
                upgrade = value
            elif lower == b"http2-settings":
                settings = value
            elif lower == b"transfer-encoding" or (lower == b"content-length" and value.strip() != b"0"):
                body = True  # the parser leaves an upgrade's body unread: not switched, answered as before
        transport, answers = self.answers.transport, self.answers
        if upgrade is None or settings is None or b"h2c" not in upgrade.lower().replace(b" ", b"").split(b","):
            return False
        if transport is None or body or answers.owed or answers.waiting:
            return False
        transport.write(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")
        self._turn_to_http2(transport).upgrade(settings, self._build_request(method, None), method == b"HEAD", b"")
        return True

    def _read_unswitched(self, rest: bytes) -> None:
        """A request asked ``Upgrade`` (a WebSocket, ``h2c`` with a body) and is answered as a plain
        HTTP/1.1 request, as Hoverfly does. httptools stopped at the end of its head, its body
        unread: a new parser reads the same head without ``Upgrade`` (the request keeps its
        headers as they came, ``on_headers_complete``), then its body and what follows it."""
        parser, headers = self.parser, self._unswitched
        assert headers is not None
        method, version = parser.get_method(), parser.get_http_version().encode()
        lines = [name + b": " + value for name, value in headers if name.lower() != b"upgrade"]
        head = b"%s %s HTTP/%s\r\n%s\r\n\r\n" % (method, self._url, version, b"\r\n".join(lines))
        self.parser = httptools.HttpRequestParser(self)
        self._chunk = None  # these bytes are not the read's
        try:
            self.parser.feed_data(head)
        except httptools.HttpParserError as exc:
            self._parse_failed(exc)
            return
        if rest:
            self.data_received(rest)

    # -- tunnels ----------------------------------------------------------------------------------

    def _connecting(self) -> ConnectHandler:
        if self._connect is None:
            self._connect = ConnectHandler(
                self, self.state, self.answers, self._gate, self._enter_tunnel, self._relay_to
            )
        return self._connect

    def _enter_tunnel(self, authority: str, scheme: str) -> None:
        """From now on the requests come inside a tunnel to ``authority``, with ``scheme``."""
        self.parser = httptools.HttpRequestParser(self)
        self._arrival = replace(self._arrival, tunnel_authority=authority, tunnel_scheme=scheme)
        self._arrival_encoded = self._arrival.encode()
        self._memo = self.state.requests.of(self._arrival_encoded)
        self.answers.tunnelled = True
        transport = self.answers.transport
        if scheme == "https":
            self._h2c = False  # inside TLS, ALPN says whether it is HTTP/2
            tls = transport.get_extra_info("ssl_object") if transport is not None else None
            if self.state.http2 and tls is not None and tls.selected_alpn_protocol() == "h2":
                assert transport is not None
                self._turn_to_http2(transport).start(b"")

    def _relay_to(self, tunnel: Tunnel) -> None:
        """A blind tunnel: what the client sends goes to the host from now on, unparsed."""
        self._relay = tunnel


class _HeadTooLarge(Exception):
    pass


class _BodyTooLarge(Exception):
    pass
