"""The OpenAPI description of simproxy's own routes: the fleet views and the dashboard page."""

from __future__ import annotations

from simproxy.admin.api.openapi_build import (
    Schema,
    array,
    integer,
    nullable,
    object_,
    ok,
    op,
    path_param,
    query,
    string,
    text,
)
from simproxy.admin.dashboard.page import ASSETS

PAGE_PATHS = ("/", "/dashboard", "/dashboard/{name}")
"""The page and its files: they hold no data and answer without a token, even with ``-auth``."""


def live_paths(base: str) -> dict[str, Schema]:
    """What the fleet does now (admin/api/live.py): Hoverfly's API has no view of it; the dashboard reads it."""
    series = object_(
        {"mode": string(), "outcome": string("hit, miss, forwarded or error."), "requests": array(integer())},
        "*",
    )
    traffic = object_(
        {"start": integer("First second (epoch)."), "end": integer("Last second."), "series": array(series)}, "*"
    )
    worker = object_({"id": string(), "pid": nullable(integer(), "Its process id."), "lastSeen": string()}, "*")
    workers = object_(
        {"instances": array(object_({"id": string(), "workers": array(worker)}, "*")), "workers": integer()}, "*"
    )
    seconds = query("seconds", "How many seconds back, 1 to 900 (default 60).", integer())
    return {
        f"{base}/traffic": {
            "get": op(
                "Read the fleet's requests per second",
                ok("Requests per second by mode and outcome, one number a second, oldest first.", traffic),
                {400: "`seconds` is not a whole number from 1 to 900."},
                params=(seconds,),
            )
        },
        f"{base}/workers": {"get": op("List the live workers", ok("Live workers by instance.", workers))},
    }


def page_paths() -> dict[str, Schema]:
    html = text("The dashboard page (HTML).", "text/html")
    name = path_param("name", "A file of the page.", string(enum=list(ASSETS)))
    media = dict.fromkeys(content_type.split(";")[0] for content_type in ASSETS.values())
    asset = {"description": "The file.", "content": {m: {"schema": string()} for m in media}}
    return {
        "/": {"get": op("The dashboard", html)},
        "/dashboard": {"get": op("The dashboard", html)},
        "/dashboard/{name}": {"get": op("A file of the dashboard", asset, {404: "No such file."}, params=(name,))},
    }
