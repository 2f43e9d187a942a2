"""The dashboard: a static page on the admin port (``/`` and ``/dashboard``) that drives the API.

Its files (admin/dashboard/) are read once per worker at start and served as they are; they hold
no data, so they answer without a token even with ``-auth`` (the page then asks for a login and
sends the bearer token on every API call it makes).
"""

from __future__ import annotations

from importlib import resources
from types import MappingProxyType
from typing import Any

from sanic import Request, Sanic
from sanic.response import HTTPResponse, raw

from simproxy.admin.errors import NotFound

ASSETS = MappingProxyType(
    {
        "index.html": "text/html; charset=utf-8",
        "app.js": "text/javascript; charset=utf-8",
        "app.css": "text/css; charset=utf-8",
    }
)
OPEN_PATHS = frozenset({"/", "/dashboard", *(f"/dashboard/{name}" for name in ASSETS)})
"""Paths of the page itself: served with ``-auth`` too."""


def load_assets() -> MappingProxyType[str, bytes]:
    folder = resources.files("simproxy.admin.dashboard")
    return MappingProxyType({name: (folder / name).read_bytes() for name in ASSETS})


def _serve(app: Sanic[Any, Any], name: str) -> HTTPResponse:
    # the page changes with each release: always asked again, never stale after an upgrade
    headers = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
    return raw(app.ctx.dashboard[name], content_type=ASSETS[name], headers=headers)


async def index(request: Request) -> HTTPResponse:
    return _serve(request.app, "index.html")


async def asset(request: Request, name: str) -> HTTPResponse:
    if name not in ASSETS:
        raise NotFound(f"no dashboard file {name!r}")
    return _serve(request.app, name)
