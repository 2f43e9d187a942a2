"""The proxy port: simproxy's own HTTP/1.1 server on httptools, run inside every worker.

It parses requests (absolute-form for the proxy, origin-form for ``-webserver``), builds a
``RequestDetails``, asks the engine for the answer and writes it, in order, with keep-alive and
pipelining. It knows nothing of modes or matching; Sanic serves only the admin port.
"""

from __future__ import annotations

import asyncio
import gzip
import logging
import time
import zlib
from collections import deque
from collections.abc import Callable
from email.utils import formatdate
from typing import cast

import httptools

from engine.core import Engine, Outcome
from engine.request import RequestDetails, canonical_header, request_path
from engine.responses import Wire, plain_error
from engine.tasks import TaskSet

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024 * 1024

Received = tuple[RequestDetails, float, float]
"""A request the engine processed: (request, wall-clock time received, perf_counter received)."""
_SKIPPED_HEADERS = frozenset({"host", "transfer-encoding"})


class HttpDate:
    """The ``Date`` header value, formatted at most once a second."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._second = -1
        self._value = b""

    def value(self) -> bytes:
        now = self._clock()
        second = int(now)
        if second != self._second:
            self._second = second
            self._value = formatdate(now, usegmt=True).encode("ascii")
        return self._value


class ProxyServer:
    """Owns the listening socket of one worker and the connections it accepted."""

    def __init__(self, engine: Engine, *, port: int, max_body: int = MAX_BODY) -> None:
        self.engine = engine
        self.port = port
        self.max_body = max_body
        self.date = HttpDate()
        self.tasks = TaskSet()
        self.connections: set[ProxyProtocol] = set()
        self._server: asyncio.Server | None = None

    async def start(self, host: str) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: ProxyProtocol(self), host, self.port, reuse_port=True, backlog=2048
        )

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
        for conn in list(self.connections):
            conn.close()
        await self.tasks.aclose()
        if self._server is not None:
            await self._server.wait_closed()


class ProxyProtocol(asyncio.Protocol):
    def __init__(self, server: ProxyServer) -> None:
        self.server = server
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []
        self._body_size = 0
        self._queue: deque[tuple[asyncio.Future[Wire] | Wire, bool, bool, Received | None]] = deque()
        self._draining = False
        self._closing = False

    # -- asyncio.Protocol ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports do not subclass asyncio's
        self.server.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.connections.discard(self)
        self.transport = None
        for item, *_ in self._queue:
            if isinstance(item, asyncio.Future):
                item.cancel()
        self._queue.clear()

    def data_received(self, data: bytes) -> None:
        if self._closing:
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            pass  # CONNECT: answered in on_message_complete
        except httptools.HttpParserError as exc:
            self._fail(400, f"Bad Request: {exc}")
        except _BodyTooLarge:
            self._fail(413, f"request body larger than {self.server.max_body} bytes")

    def close(self) -> None:
        self._closing = True
        if self.transport is not None:
            self.transport.close()

    # -- httptools callbacks ---------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._url = b""
        self._headers = []
        self._body = []
        self._body_size = 0

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        for name, value in self._headers:
            if name.lower() == b"expect" and value.lower() == b"100-continue" and self.transport is not None:
                self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        self._body_size += len(body)
        if self._body_size > self.server.max_body:
            raise _BodyTooLarge
        self._body.append(body)

    def on_message_complete(self) -> None:
        method = self.parser.get_method().decode("latin-1")
        keep_alive = self.parser.should_keep_alive()
        head_only = method == "HEAD"
        if method == "CONNECT":
            self._enqueue(plain_error(501, "HTTPS interception (CONNECT) is not supported yet\n"), False, False)
            return
        try:
            request_or_error = self._build_request(method)
        except Exception as exc:  # a malformed target must not take the worker down
            log.debug("unparsable request target %r: %s", self._url, exc)
            request_or_error = plain_error(400, "Bad Request: invalid request target\n")
        if isinstance(request_or_error, Wire):
            self._enqueue(request_or_error, keep_alive, head_only)
            return
        received = (request_or_error, time.time(), time.perf_counter())
        try:
            outcome: Outcome = self.server.engine.handle(request_or_error)
        except Exception:
            log.exception("request handling failed")
            outcome = plain_error(500, "Internal error in simproxy\n")
        if isinstance(outcome, Wire):
            self._enqueue(outcome, keep_alive, head_only, received)
        else:
            self._enqueue(asyncio.ensure_future(outcome), keep_alive, head_only, received)

    # -- request building ---------------------------------------------------------------------

    def _build_request(self, method: str) -> RequestDetails | Wire:
        headers: dict[str, list[str]] = {}
        host = ""
        encoding = ""
        for raw_name, raw_value in self._headers:
            name = raw_name.decode("latin-1")
            value = raw_value.decode("utf-8", "surrogateescape")
            lower = name.lower()
            if lower == "host":
                host = host or value
            elif lower == "content-encoding" and not encoding:
                encoding = value
            if lower not in _SKIPPED_HEADERS:
                headers.setdefault(canonical_header(name), []).append(value)
        url = self._url
        if url[:7].lower() == b"http://" or url[:8].lower() == b"https://":
            parsed = httptools.parse_url(url)
            scheme = parsed.schema.decode("latin-1").lower()
            authority = parsed.host.decode("ascii" if parsed.host.isascii() else "utf-8")
            if parsed.port is not None:
                authority = f"{authority}:{parsed.port}"
            raw_path, raw_query = parsed.path or b"", parsed.query or b""
        else:
            if not host:
                return plain_error(400, "Cannot handle requests without Host header, e.g., HTTP 1.0\n")
            if not self.server.engine.webserver and _port_of(host) == self.server.port:
                return plain_error(500, "This is a proxy server. Does not respond to non-proxy requests.\n")
            scheme, authority = "http", host
            raw_path, _, raw_query = url.partition(b"?")
            raw_query = raw_query.partition(b"#")[0]
        body = b"".join(self._body)
        if encoding.strip().lower() == "gzip" and body:
            body = _gunzip(body)
        return RequestDetails.build(
            method=method,
            scheme="http" if self.server.engine.webserver else scheme,
            destination=authority,
            path=request_path(raw_path.decode("utf-8", "surrogateescape")),
            raw_query=raw_query.decode("utf-8", "surrogateescape"),
            body=body.decode("utf-8", "surrogateescape"),
            headers=headers,
        )

    # -- responses, in request order ---------------------------------------------------------------

    def _enqueue(
        self, item: asyncio.Future[Wire] | Wire, keep_alive: bool, head_only: bool, received: Received | None = None
    ) -> None:
        if not self._queue and isinstance(item, Wire):
            self._write(item, keep_alive, head_only, received)
            return
        self._queue.append((item, keep_alive, head_only, received))
        if not self._draining:
            self._draining = True
            self.server.tasks.spawn(self._drain(), name="proxy-drain")

    async def _drain(self) -> None:
        try:
            while self._queue and not self._closing:
                item, keep_alive, head_only, received = self._queue[0]
                try:
                    wire = item if isinstance(item, Wire) else await item
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("request handling failed")
                    wire = plain_error(500, "Internal error in simproxy\n")
                if self._queue:
                    self._queue.popleft()
                self._write(wire, keep_alive, head_only, received)
        finally:
            self._draining = False

    def _write(self, wire: Wire, keep_alive: bool, head_only: bool, received: Received | None = None) -> None:
        transport = self.transport
        if transport is None or self._closing:
            return
        if received is not None:
            self.server.engine.record(received[0], wire, received[1], received[2])
        keep = keep_alive and wire.keep_alive
        parts = [wire.head, b"Date: ", self.server.date.value(), b"\r\n"]
        if not keep:
            parts.append(b"Connection: close\r\n")
        parts.append(b"\r\n")
        if not head_only:
            parts.append(wire.body)
        transport.write(b"".join(parts))
        if not keep:
            self._closing = True
            transport.close()

    def _fail(self, status: int, text: str) -> None:
        self._write(plain_error(status, text + "\n"), False, False)


class _BodyTooLarge(Exception):
    pass


def _port_of(host: str) -> int | None:
    """The port of a ``Host`` value (``h``, ``h:80``, ``[::1]:80``), or None when it names none."""
    _, sep, port = host.rpartition(":")
    if not sep or not port.isdigit() or host.endswith("]"):
        return None
    return int(port)


def _gunzip(body: bytes) -> bytes:
    try:
        return gzip.decompress(body)
    except (OSError, EOFError, zlib.error):
        return body  # Hoverfly matches the raw body when it cannot be gunzipped
