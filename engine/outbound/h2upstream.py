"""Real services over HTTP/2: ``Http2Upstream``, for requests that came over HTTP/2 and go to an
``https`` service directly (no upstream proxy, no client certificate, not ``-compat hoverfly``).

The first such request to a host and port opens a TLS connection offering ``h2`` and ``http/1.1``
by ALPN. When the service picks ``h2`` the connection is kept and every later request to it goes
there as a stream of its own (one connection per service, many requests at once); when it picks
HTTP/1.1 the connection is closed and the service remembered as one without HTTP/2: its requests
go out by the HTTP/1.1 client (engine/outbound/upstream.py) as before. The h2 library does the
framing; the windows are honoured both ways.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from dataclasses import dataclass, field
from typing import cast

import h2.config
import h2.connection
import h2.events
import h2.exceptions

RawHeaders = list[tuple[bytes, bytes]]
KNOWN_SERVICES = 1024
"""Services a worker remembers the ALPN answer of; beyond that it starts again (asks once more)."""


@dataclass(frozen=True, slots=True)
class Http2Answer:
    status: int
    headers: RawHeaders
    """Lower-case names as they came (no pseudo-headers)."""
    body: bytes
    trailers: RawHeaders = field(default_factory=list)
    """Trailer fields the service sent after the body."""


@dataclass(slots=True, eq=False)
class _Call:
    """One request's stream, while its answer comes (mutable: it is that stream's state)."""

    done: asyncio.Future[None]
    status: int = 0
    headers: RawHeaders = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)
    trailers: RawHeaders = field(default_factory=list)


class _Connection(asyncio.Protocol):
    """One HTTP/2 connection to a service: streams opened by ``call``, answered as frames come."""

    def __init__(self) -> None:
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding=None))
        self.transport: asyncio.Transport | None = None
        self.calls: dict[int, _Call] = {}
        self.window = asyncio.Event()
        """Set when the service opens a window: a body waiting for room goes on."""
        self.dead = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.conn.initiate_connection()
        self._flush()

    def data_received(self, data: bytes) -> None:
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError as exc:
            self._fail(ConnectionError(f"HTTP/2 protocol error from the service: {exc}"))
            return
        for event in events:
            call = self.calls.get(getattr(event, "stream_id", 0) or 0)
            if isinstance(event, h2.events.ResponseReceived) and call is not None:
                for name, value in event.headers or ():
                    if name == b":status":
                        call.status = int(value)
                    elif name[:1] != b":":
                        call.headers.append((name, value))
            elif isinstance(event, h2.events.DataReceived):
                if event.flow_controlled_length:
                    with contextlib.suppress(h2.exceptions.ProtocolError):
                        self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                if call is not None:
                    call.body += event.data or b""
            elif isinstance(event, h2.events.TrailersReceived) and call is not None:
                call.trailers.extend((name, value) for name, value in event.headers or () if name[:1] != b":")
            elif isinstance(event, h2.events.StreamEnded) and call is not None:
                self._finish(event.stream_id, None)
            elif isinstance(event, h2.events.StreamReset) and call is not None:
                self._finish(event.stream_id, ConnectionError(f"stream reset by the service ({event.error_code})"))
            elif isinstance(event, h2.events.WindowUpdated):
                self.window.set()
            elif isinstance(event, h2.events.ConnectionTerminated):
                self._fail(ConnectionError(f"GOAWAY from the service ({event.error_code})"))
                return
        self._flush()

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(ConnectionError("the service closed the connection"))

    async def call(self, headers: RawHeaders, body: bytes) -> Http2Answer:
        """Send one request on a new stream and wait for its whole answer."""
        sid = self.conn.get_next_available_stream_id()
        call = self.calls[sid] = _Call(asyncio.get_running_loop().create_future())
        try:
            self.conn.send_headers(sid, headers, end_stream=not body)
            self._flush()
            sent = 0
            while sent < len(body):
                room = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size)
                if room <= 0:
                    self.window.clear()
                    await self.window.wait()
                    continue
                piece = body[sent : sent + room]
                sent += len(piece)
                self.conn.send_data(sid, piece, end_stream=sent == len(body))
                self._flush()
            await call.done
        finally:
            self.calls.pop(sid, None)
        return Http2Answer(call.status, call.headers, bytes(call.body), call.trailers)

    @property
    def usable(self) -> bool:
        """Open, and another stream may be opened on it."""
        if self.dead or self.transport is None or self.transport.is_closing():
            return False
        limit = self.conn.remote_settings.max_concurrent_streams
        return self.conn.open_outbound_streams < limit

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def _finish(self, sid: int, error: Exception | None) -> None:
        call = self.calls.get(sid)
        if call is None or call.done.done():
            return
        if error is None:
            call.done.set_result(None)
        else:
            call.done.set_exception(error)

    def _fail(self, error: Exception) -> None:
        self.dead = True
        for sid in list(self.calls):
            self._finish(sid, error)
        self.window.set()
        self.close()

    def _flush(self) -> None:
        data = self.conn.data_to_send()
        if data and self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)


class Http2Upstream:
    """One worker's HTTP/2 connections to real services, and the services known to lack HTTP/2."""

    def __init__(self, verify: bool, timeout: float) -> None:
        self.timeout = timeout
        context = ssl.create_default_context()
        if not verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        context.set_alpn_protocols(["h2", "http/1.1"])
        self.context = context
        self._connections: dict[tuple[str, int], _Connection] = {}
        self._http1: set[tuple[str, int]] = set()
        self._opening: dict[tuple[str, int], asyncio.Lock] = {}

    def lacks_http2(self, host: str, port: int) -> bool:
        """The service answered ALPN with HTTP/1.1 before: no need to ask again."""
        return (host, port) in self._http1

    async def send(
        self, method: str, host: str, port: int, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> Http2Answer | None:
        """The service's answer over HTTP/2, or None when it does not speak it (then ask over HTTP/1.1).
        ``OSError``, ``ssl.SSLError``, ``TimeoutError`` or ``ConnectionError`` when the call fails."""
        key = (host, port)
        async with asyncio.timeout(self.timeout):
            conn = await self._connection(key)
            if conn is None:
                return None
            authority = host if port == 443 else f"{host}:{port}"
            block: RawHeaders = [
                (b":method", method.encode("latin-1")),
                (b":scheme", b"https"),
                (b":authority", authority.encode("idna") if not host.isascii() else authority.encode()),
                (b":path", target.encode("latin-1")),
            ]
            block.extend((n.lower().encode("latin-1"), v.encode("utf-8", "surrogateescape")) for n, v in headers)
            return await conn.call(block, body)

    async def _connection(self, key: tuple[str, int]) -> _Connection | None:
        conn = self._connections.get(key)
        if conn is not None and conn.usable:
            return conn
        if len(self._opening) >= KNOWN_SERVICES and key not in self._opening:
            self._opening.clear()  # bounded: an opening still under way keeps its own lock
        lock = self._opening.setdefault(key, asyncio.Lock())
        async with lock:
            conn = self._connections.get(key)
            if conn is not None and conn.usable:
                return conn
            if key in self._http1:
                return None
            host, port = key
            loop = asyncio.get_running_loop()
            transport, conn = await loop.create_connection(
                _Connection, host.strip("[]"), port, ssl=self.context, server_hostname=host.strip("[]")
            )
            tls = transport.get_extra_info("ssl_object")
            if tls is None or tls.selected_alpn_protocol() != "h2":
                transport.close()
                if len(self._http1) >= KNOWN_SERVICES:
                    self._http1.clear()
                self._http1.add(key)
                return None
            self._connections[key] = conn
            return conn

    async def aclose(self) -> None:
        for conn in self._connections.values():
            conn.close()
        self._connections.clear()
