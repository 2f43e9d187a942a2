"""Small helpers every admin handler uses: JSON responses and the worker's services."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast
from urllib.parse import unquote, unquote_plus

import orjson
from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.gowire import SniffedTypeResponse
from simproxy.admin.api.services import Services
from simproxy.engine.gocompat.dialect import SPEC, Dialect
from simproxy.engine.gocompat.gojson import go_html_escape
from simproxy.engine.wire.request import valid_escapes

JSON_TYPE = "application/json; charset=utf-8"


def json_response(value: Any, status: int = 200, *, newline: bool = False) -> HTTPResponse:
    body = orjson.dumps(value)
    return HTTPResponse(body + b"\n" if newline else body, status=status, content_type=JSON_TYPE)


def empty_response() -> HTTPResponse:
    """200 with an empty ``text/plain`` body: Hoverfly's answer to a successful DELETE of some resources."""
    return HTTPResponse(b"", status=200, content_type="text/plain; charset=utf-8")


class _Untyped(HTTPResponse):
    """A response sent without ``Content-Type`` (Sanic adds one to every status that has a body)."""

    @property
    def processed_headers(self) -> Iterator[tuple[bytes, bytes]]:
        return ((name.encode("ascii"), str(value).encode()) for name, value in self.headers.items())


def untyped_empty(status: int) -> HTTPResponse:
    """``status`` with an empty body and no ``Content-Type``: Hoverfly's 401 and 429."""
    return _Untyped(b"", status)


def error_response(message: str, status: int, dialect: Dialect = SPEC) -> HTTPResponse:
    """``{"error": message}``; Hoverfly's dialect escapes it as Go does and sends it as plain text
    (Hoverfly sets the type after the status line, so Go's sniffing decides)."""
    body = orjson.dumps({"error": message})
    if dialect.is_hoverfly:
        body = go_html_escape(body.decode()).encode()
        return SniffedTypeResponse(body, status=status, content_type=dialect.error_content_type)
    return HTTPResponse(body, status=status, content_type=dialect.error_content_type)


def path_name(raw: str, dialect: Dialect) -> str:
    """A name taken from the path (``/journal/index/<name>`` and the like). Hoverfly's router decodes
    the segment as a query value (``%24`` is ``$``, ``+`` a space; an invalid escape leaves nothing);
    the spec dialect decodes it as a path segment (``%20`` is a space, ``+`` stays a plus)."""
    if not dialect.is_hoverfly:
        return unquote(raw, errors="surrogateescape")
    if not valid_escapes(raw):
        return ""
    return unquote_plus(raw, errors="surrogateescape")


def services(request: Request) -> Services:
    return cast(Services, request.app.ctx.services)
