"""The proxy port: simproxy's own HTTP/1.1 server on httptools, run inside every worker.

It parses requests (absolute-form for the proxy, origin-form for ``-webserver``), builds a
``RequestDetails``, asks the dispatcher for the answer and writes it, in order, with keep-alive and
pipelining. It knows nothing of modes or matching; Sanic serves only the admin port.

``CONNECT`` (hoverfly-admin.md §7.3): answered ``200`` and then, by default, intercepted: the same
connection turns into TLS with a certificate for the host signed by simproxy's CA, and the
requests inside are handled like any other, with scheme ``https``. A host the destination filter
leaves out gets a blind TCP tunnel (engine/server/tunnel.py); with ``-plain-http-tunneling`` a CONNECT to
a port other than 443 carries plain HTTP.

Flow control (engine/server/flow.py): a connection is not read while its client does not read its answers
or ``max_pipelined`` of them are owed; answers wait, in order, for room in the write buffer.

Faults (engine/server/faults.py): an answer the dispatcher handed with a fault (it rolled the fraction)
goes through the queue and is written in its turn as the fault asks; the answers after a timed one wait.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple, cast

import httptools

from simproxy.engine.errors import RequestRejected
from simproxy.engine.fleet.config import ProxyLimits
from simproxy.engine.modes.dispatch import Outcome, Received
from simproxy.engine.server.faults import write_fault
from simproxy.engine.server.flow import (
    FEED_SLICE,
    HOLD_CONNECT,
    HOLD_FAILED,
    HOLD_PIPELINE,
    HOLD_RELAY,
    HOLD_WRITE,
    ReadGate,
    limit_writes,
)
from simproxy.engine.server.tunnel import Tunnel, open_tunnel, split_authority, start_tls
from simproxy.engine.simulation.model import TIMED_FAULTS
from simproxy.engine.wire.golayout import as_go, go_tunnelled, written_head
from simproxy.engine.wire.parse import Arrival, build_request
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import (
    Wire,
    as_hoverfly_tunnels_it,
    chunked_instead,
    plain_error,
    proxy_auth_required,
)

if TYPE_CHECKING:
    from simproxy.engine.server.listener import ProxyServer

log = logging.getLogger(__name__)

_new_record = tuple.__new__
"""Makes a NamedTuple from a tuple of its fields without a Python frame (``Received``'s own
``__new__`` is one), looked up once rather than on every request."""

JOIN_LIMIT = 64 * 1024
"""Bodies longer than this are written apart from their head: the transport keeps the body itself,
shared by every answer of the pair, instead of a copy joined to the head."""


class ProxyProtocol(asyncio.Protocol):
    def __init__(self, server: ProxyServer) -> None:
        self.server = server
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []
        self._body_size = 0
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
        self._gate = ReadGate(self._feed)
        self._write_paused = False
        """The transport's write buffer is above its high-water mark (``pause_writing``)."""
        self._resumed: asyncio.Future[None] | None = None
        """Set by ``resume_writing``, for an answer waiting for room in the write buffer."""
        self._lost = asyncio.Event()
        """Set by ``connection_lost``: a fault waiting (a dribble's pause, a reset's) ends at once."""
        self._queue: deque[tuple[_Answer, bool, bool, Received | None]] = deque()
        self._deferred = 0
        """Requests in the queue not answered yet (``_Deferred``): they came beyond ``max_pipelined``."""
        self._draining = False
        self._closing = False
        self._arrival = Arrival(server.dispatcher.webserver, server.auth is not None, own_port=server.port)
        self._arrival_encoded = self._arrival.encode()
        self._memo = server.requests.of(self._arrival_encoded)
        self._chunk: bytes | None = None
        """The read being parsed when it began with a new request (none was half-read before it):
        when it holds exactly one request, its bytes find the request built from them before
        (``RequestMemo``) and the journal keeps them."""
        self._chunk_requests = 0
        """Requests begun in that read."""
        self._relay: Tunnel | None = None
        """A blind tunnel's connection to the real host: bytes go through untouched."""

    # -- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = self._gate.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio's
        if len(self.server.connections) >= self.server.max_connections:
            # the worker's descriptors are for everyone: the admin API, the store, the real services
            self._write(plain_error(503, "Service Unavailable: too many connections to this worker\n"), False, False)
            return
        limit_writes(self.transport, self.server.limits.write_buffer)
        self.server.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.connections.discard(self)
        self.server.note_answered()
        self.transport = self._gate.transport = None
        self._gate.unparsed = None
        if self._relay is not None:
            self._relay.close()
        for item, *_ in self._queue:
            if isinstance(item, asyncio.Future):
                item.cancel()
        self._queue.clear()
        self._deferred = 0
        self.resume_writing()  # an answer waiting for room ends its wait, and is not written
        self._lost.set()

    def data_received(self, data: bytes) -> None:
        if self._relay is not None:
            self._relay.send(data)
            return
        if self._closing:
            return
        gate = self._gate
        if gate.holds or gate.unparsed is not None:  # not expected: nothing is read while held
            gate.keep(data)
            self._chunk = None
            return
        self._chunk, self._chunk_requests = None if self._reading else data, 0
        if len(data) > FEED_SLICE:
            gate.parse(data)
            return
        try:  # what _feed does, inline: a read of one request or a few is the hot path
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            return
        except httptools.HttpParserError as exc:
            self._parse_failed(exc)
            return
        if self._in_head:
            self._count_head(len(data))

    def pause_writing(self) -> None:
        """The write buffer passed its high-water mark: read nothing that would add to it (the
        client's requests, or what a blind tunnel's host sends) until it drains."""
        self._write_paused = True
        if self._relay is not None:
            self._relay.pause_reading()
        else:
            self._gate.hold(HOLD_WRITE)

    def resume_writing(self) -> None:
        """The write buffer drained to its low-water mark: answers and reads go on."""
        self._write_paused = False
        self._drained += 1
        if self._resumed is not None:
            if not self._resumed.done():
                self._resumed.set_result(None)
            self._resumed = None
        if self._relay is not None:
            self._relay.resume_reading()
        else:
            self._gate.release(HOLD_WRITE)

    def close(self) -> None:
        self._closing = True
        if self.transport is not None:
            self.transport.close()

    def _feed(self, data: bytes | memoryview) -> bool:
        """Parse ``data``; False when nothing after it is to be parsed (a CONNECT, an error, a close)."""
        if self._closing:
            return False
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            return False  # CONNECT: answered in on_message_complete; what follows it in the read is dropped
        except httptools.HttpParserError as exc:
            self._parse_failed(exc)
            return False
        if self._in_head:
            self._count_head(len(data))
        return not self._closing

    def _count_head(self, size: int) -> None:
        """A read (or slice) of ``size`` bytes ended inside a head: httptools keeps a header that spans
        reads in memory, so what came counts against ``max_head``."""
        self._head_reads = 0 if self._head_reads < 0 else self._head_reads + size
        if self._head_reads > self.server.limits.max_head:
            self._fail_head()

    def _parse_failed(self, exc: httptools.HttpParserError) -> None:
        cause = exc.__context__  # what a callback raised: httptools reports it as a callback error
        if isinstance(cause, _BodyTooLarge):
            self._fail(413, f"request body larger than {self.server.limits.max_body} bytes")
        elif isinstance(cause, _HeadTooLarge):
            self._fail_head()
        else:
            self._fail(400, f"Bad Request: {exc}")

    # -- httptools callbacks ---------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._chunk_requests += 1
        self._url = b""
        self._headers = []
        self._body = []
        self._body_size = 0
        self._head_size = 0
        self._head_reads = -1  # what came before it in this read is not this head's
        self._in_head = True
        self._reading = True

    def on_url(self, url: bytes) -> None:
        self._url += url
        self._head_size += len(url)
        if self._head_size > self.server.limits.max_head:
            raise _HeadTooLarge

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))
        self._head_size += len(name) + len(value) + 4
        if self._head_size > self.server.limits.max_head:
            raise _HeadTooLarge

    def on_headers_complete(self) -> None:
        self._in_head = False
        for name, value in self._headers:
            if name.lower() == b"expect" and value.lower() == b"100-continue" and self.transport is not None:
                self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        self._body_size += len(body)
        if self._body_size > self.server.limits.max_body:
            raise _BodyTooLarge
        self._body.append(body)

    def on_message_complete(self) -> None:
        self._reading = False
        self._served += 1
        method = self.parser.get_method().decode("latin-1")
        keep_alive = self.parser.should_keep_alive()
        head_only = method == "HEAD"
        auth, credentials = self.server.auth, None
        checked = True
        if auth is not None and not self._arrival.tunnel_scheme:  # in a tunnel: checked on its CONNECT
            credentials = self._header(b"proxy-authorization")
            checked = auth.proxy_passed(credentials)
        if method == "CONNECT":
            authority = self._url.decode("latin-1")
            if checked:
                self._connect(authority)
            else:
                self._check_then_connect(credentials, authority)
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
                self._enqueue(built, keep_alive, head_only)
                return
            request = built
        received = _new_record(Received, (request, time.time(), time.perf_counter(), raw, self._arrival_encoded))
        if self._queue and (self._deferred or len(self._queue) >= self.server.limits.max_pipelined):
            self._queue.append((_Deferred(request, checked, credentials), keep_alive, head_only, received))
            self._deferred += 1  # answered once fewer are owed (_start_deferred)
            self._gate.hold(HOLD_PIPELINE)
            return
        if not checked:
            self._enqueue(self._answer(request, checked, credentials), keep_alive, head_only, received)
            return
        try:  # what _answer does, inline: the hot path
            outcome: Outcome = self.server.dispatcher.handle(request)
        except Exception:
            log.exception("request handling failed")
            outcome = self.server.internal_error
        if isinstance(outcome, Wire):
            self._enqueue(outcome, keep_alive, head_only, received)
        else:
            self._enqueue(asyncio.ensure_future(outcome), keep_alive, head_only, received)

    def _answer(self, req: RequestDetails, checked: bool, credentials: str | None) -> asyncio.Future[Wire] | Wire:
        """Ask the dispatcher for the answer to ``req``: ready, or to come."""
        if not checked:
            return asyncio.ensure_future(self._check_then_handle(credentials, req))
        try:
            outcome = self.server.dispatcher.handle(req)
        except Exception:
            log.exception("request handling failed")
            outcome = self.server.internal_error
        return outcome if isinstance(outcome, Wire) else asyncio.ensure_future(outcome)

    # -- proxy authentication (-auth) ------------------------------------------------------------

    def _header(self, lower_name: bytes) -> str | None:
        for name, value in self._headers:
            if name.lower() == lower_name:
                return value.decode("latin-1")
        return None

    async def _check_then_handle(self, credentials: str | None, req: RequestDetails) -> Wire:
        auth = self.server.auth
        denial = await auth.proxy_check(credentials) if auth is not None else None
        if denial is not None:
            return proxy_auth_required(denial)
        outcome = self.server.dispatcher.handle(req)
        return outcome if isinstance(outcome, Wire) else await outcome

    def _check_then_connect(self, credentials: str | None, authority: str) -> None:
        transport, auth = self.transport, self.server.auth
        if transport is None or auth is None:
            return
        self._gate.hold(HOLD_CONNECT)  # nothing of the tunnel is read before the answer

        async def check() -> None:
            denial = await auth.proxy_check(credentials)
            if self.transport is None:
                return
            if denial is not None:
                self._write(proxy_auth_required(denial), False, False)
                return
            self._connect(authority)  # it resumes reading once the tunnel is ready

        self.server.tasks.spawn(check(), name="proxy-auth-connect")

    # -- request building ---------------------------------------------------------------------

    def _build_request(self, method: str, raw: bytes | None) -> RequestDetails | Wire:
        """The request just parsed, or the error that answers it; ``raw``: the bytes of exactly this
        request, when one read held them (kept with the request when they come again)."""
        try:
            req = build_request(
                method, self._url, self._headers, b"".join(self._body), self._arrival, self.server.header_names
            )
        except RequestRejected as exc:
            return plain_error(exc.status, exc.text)
        except Exception as exc:  # a malformed target must not take the worker down
            log.debug("unparsable request target %r: %s", self._url, exc)
            return plain_error(400, "Bad Request: invalid request target\n")
        if raw is not None:
            self._memo.keep(raw, req)
        return req

    # -- CONNECT ---------------------------------------------------------------------------------

    def _connect(self, authority: str) -> None:
        server, transport = self.server, self.transport
        if transport is None:
            return
        target = split_authority(authority)
        if target is None:
            self._fail(400, "Bad Request: CONNECT needs host:port")
            return
        if server.tls is None:
            self._fail(501, "No CA")
            return
        host, port = target
        if "://" in authority:  # an absolute URI: the tunnel's requests go to its host and port
            authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if server.plain_http_tunneling and port != 443:
            transport.write(b"HTTP/1.0 200 OK\r\n\r\n")
            self._enter_tunnel(authority, "http")
            self._gate.release(HOLD_CONNECT)  # held while -auth checked the CONNECT
            return
        self._gate.hold(HOLD_CONNECT)  # nothing is read until the tunnel is ready
        if server.dispatcher.intercepts(authority):
            transport.write(b"HTTP/1.0 200 OK\r\n\r\n")
            server.tasks.spawn(self._start_tls(transport, authority, host), name="proxy-tls")
        else:
            server.tasks.spawn(self._blind_tunnel(transport, host, port), name="proxy-tunnel")

    def _enter_tunnel(self, authority: str, scheme: str) -> None:
        self.parser = httptools.HttpRequestParser(self)
        self._arrival = replace(self._arrival, tunnel_authority=authority, tunnel_scheme=scheme)
        self._arrival_encoded = self._arrival.encode()
        self._memo = self.server.requests.of(self._arrival_encoded)

    async def _start_tls(self, transport: asyncio.Transport, authority: str, host: str) -> None:
        assert self.server.tls is not None
        tls = await start_tls(transport, self, self.server.tls, authority, host)
        if tls is None:
            return
        self.transport = tls  # it tells of its own write buffer: no hold of the plain one is left
        self._write_paused = False
        limit_writes(tls, self.server.limits.write_buffer)
        self._enter_tunnel(authority, "https")
        self._gate.open(tls)

    async def _blind_tunnel(self, transport: asyncio.Transport, host: str, port: int) -> None:
        """A CONNECT the destination filter leaves out: the bytes go to the host untouched."""
        hold, release = (lambda: self._gate.hold(HOLD_RELAY)), (lambda: self._gate.release(HOLD_RELAY))
        relay = await open_tunnel(transport, host, port, self.server.limits.write_buffer, hold, release)
        if relay is None:
            return
        self._relay = relay
        if not self._write_paused:
            relay.resume_reading()  # the host's bytes only after the CONNECT's answer
        self._gate.open(transport)  # from now on only HOLD_RELAY: the host decides when the client is read

    # -- responses, in request order ---------------------------------------------------------------

    def _enqueue(
        self, item: asyncio.Future[Wire] | Wire, keep_alive: bool, head_only: bool, received: Received | None = None
    ) -> None:
        if not self._queue and isinstance(item, Wire) and item.fault is None and not self._write_paused:
            self._write(item, keep_alive, head_only, received)
            return
        self._queue.append((item, keep_alive, head_only, received))
        if len(self._queue) >= self.server.limits.max_pipelined:
            self._gate.hold(HOLD_PIPELINE)  # a client pipelining without reading its answers waits for them
        if not self._draining:
            self._draining = True
            self.server.tasks.spawn(self._drain(), name="proxy-drain")

    async def _drain(self) -> None:
        """Write the answers owed, in order, each once it is ready and the write buffer has room."""
        try:
            while self._queue and not self._closing:
                self._start_deferred()
                item, keep_alive, head_only, received = self._queue[0]
                try:
                    wire = item if isinstance(item, Wire) else await cast("asyncio.Future[Wire]", item)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("request handling failed")
                    wire = self.server.internal_error
                if self._write_paused:
                    await self._room()
                if wire.fault is not None:
                    await self._write_fault(wire, keep_alive, head_only, received)  # still first in the queue
                if self._queue:
                    self._queue.popleft()
                if wire.fault is None:
                    self._write(wire, keep_alive, head_only, received)
                if len(self._queue) < self.server.limits.max_pipelined // 2:
                    self._gate.release(HOLD_PIPELINE)
        finally:
            self._draining = False
            self.server.note_answered()

    async def _room(self) -> bool:
        """Wait while the write buffer is full; False once the connection is gone or closing."""
        while self._write_paused and self.transport is not None and not self._closing:
            self._resumed = self._resumed or asyncio.get_running_loop().create_future()
            await self._resumed  # resolved by resume_writing (connection_lost calls it too)
        return self.transport is not None and not self._closing

    async def _write_fault(self, wire: Wire, keep_alive: bool, head_only: bool, received: Received | None) -> None:
        """Write ``wire`` as its fault asks (engine/server/faults.py); the observers are told as for any other."""
        transport, fault, server = self.transport, wire.fault, self.server
        if transport is None or self._closing or fault is None:
            return
        if received is not None:
            server.dispatcher.served(wire, received)
        if self._arrival.tunnel_scheme and not head_only and fault.kind in TIMED_FAULTS:
            wire = self._tunnelled(wire)
        keep, date, rng = keep_alive and wire.keep_alive, server.date.value(), server.dispatcher.rng
        if not await write_fault(fault, transport, wire, keep, head_only, date, rng, self._room, self._lost):
            self._closing = True

    def _start_deferred(self) -> None:
        """Answer the requests that came beyond ``max_pipelined`` once they are among the first
        ``max_pipelined`` owed, oldest first (the head of the queue is always answered)."""
        for index in range(min(len(self._queue), self.server.limits.max_pipelined) if self._deferred else 0):
            later, keep_alive, head_only, received = self._queue[index]
            if isinstance(later, _Deferred):
                self._queue[index] = (self._answer(*later), keep_alive, head_only, received)
                self._deferred -= 1

    def _write(self, wire: Wire, keep_alive: bool, head_only: bool, received: Received | None = None) -> None:
        transport = self.transport
        if transport is None or self._closing:
            return
        if wire.tail is None and self.server.go_layout:
            wire = as_go(wire)  # an error or a forwarded answer: pairs are compiled in Go's layout
        if received is not None:
            self.server.dispatcher.served(wire, received)
        if self._arrival.tunnel_scheme and not head_only:
            wire = self._tunnelled(wire)
        keep = keep_alive and wire.keep_alive
        if wire.tail is not None:
            head = written_head(wire, wire.tail, self.server.date.value(), keep_alive or not wire.keep_alive, head_only)
            parts = [head]
        else:
            parts = [wire.head] if wire.dated else [wire.head, b"Date: ", self.server.date.value(), b"\r\n"]
            if not keep:
                parts.append(b"Connection: close\r\n")
            parts.append(b"\r\n")
        if head_only or len(wire.body) <= JOIN_LIMIT:
            if not head_only:
                parts.append(wire.body)
            transport.write(b"".join(parts))
        else:
            transport.write(b"".join(parts))
            transport.write(wire.body)
        if not keep:
            self._closing = True
            transport.close()

    def _tunnelled(self, wire: Wire) -> Wire:
        """Inside a tunnel: never a length that disagrees with the body (chunked instead), and
        every answer chunked and closing under ``-compat hoverfly``."""
        if wire.tail is not None:
            return go_tunnelled(wire)
        if self.server.chunked_tunnel:
            return as_hoverfly_tunnels_it(wire)
        return wire if wire.keep_alive else chunked_instead(wire)

    @property
    def busy(self) -> bool:
        """Requests this connection received still wait for their answers."""
        return self.transport is not None and bool(self._queue)

    def check_timeouts(self, now: float, limits: ProxyLimits) -> None:
        """Called by the sweep: 408 for a request still arriving after ``read_timeout``; close after
        ``idle_timeout`` without a request, or with answers the client has not read for as long (a
        blind tunnel is left alone: it is not HTTP any more)."""
        if self._closing or self.transport is None or self._relay is not None:
            return
        served, drained, reading, since = self._mark
        if (served, drained, reading) != (self._served, self._drained, self._reading):
            self._mark = (self._served, self._drained, self._reading, now)  # something moved since the last sweep
        elif self._write_paused and now - since > limits.idle_timeout:
            self.transport.abort()  # its buffers are bounded, its descriptor is not to be kept forever
        elif reading and now - since > limits.read_timeout:
            self._fail(408, "Request Timeout: the request did not arrive in time")
        elif not reading and not self._queue and now - since > limits.idle_timeout:
            self.close()

    def _fail_head(self) -> None:
        self._fail(431, f"request target and headers larger than {self.server.limits.max_head} bytes")

    def _fail(self, status: int, text: str) -> None:
        """Answer ``status`` and close: after the answers still owed (in order), nothing more read."""
        wire = plain_error(status, text + "\n")
        if not self._queue:
            self._write(wire, False, False)
            return
        self._gate.hold(HOLD_FAILED)
        self._enqueue(wire, False, False)


class _Deferred(NamedTuple):
    """A request read beyond ``max_pipelined``: answered once fewer are owed."""

    request: RequestDetails
    checked: bool
    credentials: str | None


_Answer = asyncio.Future[Wire] | Wire | _Deferred
"""What the queue holds for each request, in order: its answer, ready or to come, or the request."""


class _HeadTooLarge(Exception):
    pass


class _BodyTooLarge(Exception):
    pass
