"""Admin answers written as Go's ``net/http`` writes Hoverfly's (``-compat hoverfly`` only).

Sanic writes the headers a handler set as they were spelt, then ``content-length``, ``connection``
and ``content-type`` in lower case, and never ``Date``. Go's server writes the headers the handler
set sorted by name, in canonical case, then ``Date``, then ``Content-Length`` (an answer of up to
2048 bytes) and last what it worked out itself: the type it sniffed from the body when the handler
set none (Hoverfly's error answers), ``Connection: close`` when the connection ends, and
``Transfer-Encoding: chunked`` for a longer answer, sent as one chunk. A keep-alive HTTP/1.1
answer has no ``Connection`` header.

``go_wire`` is a response middleware the app installs under ``-compat hoverfly`` only: it hands
Sanic the same answer as a ``GoWireResponse``, whose header list and framing follow those rules.
Without the switch nothing here runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from email.utils import formatdate
from typing import Any

from sanic import Request
from sanic.response import BaseHTTPResponse, HTTPResponse

from simproxy.engine.wire.golayout import BUFFERED
from simproxy.engine.wire.request import canonical_header
from simproxy.engine.wire.response import bodyless

_SERVER_SET = frozenset({"content-length", "transfer-encoding", "connection", "alt-svc", "content-type", "date"})
"""Headers Sanic adds to every answer (or the type, which is placed apart): never the handler's."""


class SniffedTypeResponse(HTTPResponse):
    """An answer whose ``Content-Type`` Hoverfly leaves to Go's sniffing (it sets it after the
    status): under ``-compat hoverfly`` the type is written after ``Content-Length``."""

    __slots__ = ()


class GoWireResponse(HTTPResponse):
    """An admin answer whose head and framing are the ones Go's ``net/http`` writes."""

    __slots__ = ("sniffed",)

    def __init__(self, response: HTTPResponse) -> None:
        super().__init__(response.body, response.status, response.headers, response.content_type)
        self.sniffed = isinstance(response, SniffedTypeResponse)
        """The type goes after ``Content-Length`` (Go's sniffing) instead of among the handler's."""

    @property
    def processed_headers(self) -> Iterator[tuple[bytes, bytes]]:
        """The head in Go's order: the handler's headers sorted in canonical case, ``Date``,
        ``Content-Length``, then the sniffed type, ``Connection: close``, ``Transfer-Encoding``."""
        headers = self.headers
        content_type = headers.get("content-type") or self.content_type
        if bodyless(self.status) or (self.sniffed and not self.body):
            content_type = None
        own = [
            (canonical_header(name), str(value)) for name, value in headers.items() if name.lower() not in _SERVER_SET
        ]
        if content_type and not self.sniffed:
            own.append(("Content-Type", content_type))
        own.sort(key=lambda item: item[0])  # stable: the values of one name keep their order
        lines = [(name.encode("ascii"), value.encode(errors="surrogateescape")) for name, value in own]
        lines.append((b"Date", formatdate(usegmt=True).encode("ascii")))
        length = headers.get("content-length")
        if length is not None:
            lines.append((b"Content-Length", str(length).encode("ascii")))
        if content_type and self.sniffed:
            lines.append((b"Content-Type", content_type.encode()))
        if headers.get("connection") == "close":
            lines.append((b"Connection", b"close"))
        if headers.get("transfer-encoding") == "chunked":
            lines.append((b"Transfer-Encoding", b"chunked"))
        return iter(lines)

    async def send(self, data: Any = None, end_stream: bool | None = None) -> None:
        """Send the answer; a body over ``BUFFERED`` bytes goes as one chunk and the last chunk."""
        body = self.body or b""
        if not data and end_stream and len(body) > BUFFERED and not bodyless(self.status):
            self.body = b""  # Sanic would otherwise take the whole body as a sized answer
            await super().send(body, end_stream=False)
            await super().send(b"", end_stream=True)
            return
        await super().send(data, end_stream)


async def go_wire(request: Request, response: BaseHTTPResponse) -> HTTPResponse | None:
    """Response middleware (``-compat hoverfly``): the answer as a ``GoWireResponse``."""
    if type(response) is GoWireResponse or not isinstance(response, HTTPResponse):
        return None
    return GoWireResponse(response)
