"""Small helpers every admin handler uses: JSON responses and the worker's services."""

from __future__ import annotations

from typing import Any, cast

import orjson
from sanic import Request
from sanic.response import HTTPResponse

from admin.services import Services

JSON_TYPE = "application/json; charset=utf-8"


def json_response(value: Any, status: int = 200, *, newline: bool = False) -> HTTPResponse:
    body = orjson.dumps(value)
    return HTTPResponse(body + b"\n" if newline else body, status=status, content_type=JSON_TYPE)


def empty_response() -> HTTPResponse:
    """200 with an empty ``text/plain`` body: Hoverfly's answer to a successful DELETE of some resources."""
    return HTTPResponse(b"", status=200, content_type="text/plain; charset=utf-8")


def error_response(message: str, status: int) -> HTTPResponse:
    return HTTPResponse(orjson.dumps({"error": message}), status=status, content_type="application/json")


def services(request: Request) -> Services:
    return cast(Services, request.app.ctx.services)
