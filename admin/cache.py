"""``/api/v2/cache``: the match cache of the whole fleet (every worker mirrors its entries)."""

from __future__ import annotations

import orjson
from sanic import Request
from sanic.response import HTTPResponse

from admin.configuration import write_config
from admin.errors import ServerError
from admin.responses import json_response, services
from engine.runtime import Runtime


def _require_cache(runtime: Runtime) -> None:
    if not runtime.cache.enabled:
        raise ServerError("No cache set")  # Hoverfly's answer under -disable-cache


async def get_cache(request: Request) -> HTTPResponse:
    runtime = services(request).runtime
    _require_cache(runtime)
    raw_entries = await runtime.cache_entries()
    generation = list(runtime.cache.generation)
    entries = [orjson.loads(raw) for raw in raw_entries]
    return json_response({"cache": [e["view"] for e in entries if e.get("generation") == generation]})


async def delete_cache(request: Request) -> HTTPResponse:
    runtime = services(request).runtime
    _require_cache(runtime)
    await write_config(runtime, lambda config: config.flushing_cache())
    await runtime.store.cache_clear()
    return json_response({"cache": []})
