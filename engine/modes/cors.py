"""Proxy-side CORS (``-cors``, hoverfly-admin.md §3.8, §7.11): pre-flights answered by simproxy itself,
and the allow headers added to other answers for requests that carry an ``Origin``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from simproxy.engine.simulation.model import Response
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire, render_wire

ALLOW_METHODS = "GET,POST,PUT,PATCH,DELETE,HEAD,OPTIONS"
ALLOW_HEADERS = "Content-Type,Origin,Accept,Authorization,Content-Length,X-Requested-With"
MAX_AGE = 1800


def cors_view(enabled: bool) -> dict[str, Any]:
    """``GET .../cors``: Hoverfly's fixed settings when on, ``{"enabled": false}`` when off."""
    if not enabled:
        return {"enabled": False}
    return {
        "enabled": True,
        "allowOrigin": "*",
        "allowMethods": ALLOW_METHODS,
        "allowHeaders": ALLOW_HEADERS,
        "preflightMaxAge": MAX_AGE,
        "allowCredentials": True,
    }


def is_preflight(req: RequestDetails) -> bool:
    return (
        req.method == "OPTIONS"
        and "origin" in req.headers_lower
        and "access-control-request-method" in (req.headers_lower)
    )


def preflight(req: RequestDetails) -> Wire:
    """200, no body: the request's origin allowed (credentials are, so ``*`` becomes the origin)."""
    origin = req.headers_lower["origin"][0]
    asked = req.headers_lower.get("access-control-request-headers")
    headers = (
        ("Access-Control-Allow-Origin", (origin,)),
        ("Access-Control-Allow-Methods", (ALLOW_METHODS,)),
        ("Access-Control-Max-Age", (str(MAX_AGE),)),
        ("Access-Control-Allow-Headers", (asked[0] if asked else ALLOW_HEADERS,)),
        ("Access-Control-Allow-Credentials", ("true",)),
    )
    return render_wire(Response(status=200, headers=headers), "the CORS pre-flight")


def allow_origin(req: RequestDetails, wire: Wire) -> Wire:
    """A served answer to a request with an ``Origin``: allow it, unless the answer already says."""
    origin = req.headers_lower.get("origin")
    if not origin or wire.outcome in ("miss", "error"):
        return wire
    if any(name.lower() == "access-control-allow-origin" for name, _ in wire.headers):
        return wire
    added = (("Access-Control-Allow-Origin", (origin[0],)), ("Access-Control-Allow-Credentials", ("true",)))
    lines = b"".join(f"{n}: {v[0]}\r\n".encode("latin-1", "replace") for n, v in added)
    return replace(wire, head=wire.head + lines, headers=wire.headers + added, journal=None)
