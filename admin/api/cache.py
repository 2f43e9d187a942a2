"""``/api/v2/cache``: the match cache of the whole fleet (every worker mirrors its entries)."""

from __future__ import annotations

import orjson
from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.configuration import write_config
from simproxy.admin.api.responses import JSON_TYPE, json_response, services
from simproxy.admin.errors import ServerError
from simproxy.engine.fleet.runtime import Runtime
from simproxy.engine.matching.cache import listing


def _require_cache(runtime: Runtime) -> None:
    if not runtime.cache.enabled:
        raise ServerError("No cache set")  # Hoverfly's answer under -disable-cache


async def get_cache(request: Request) -> HTTPResponse:
    runtime = services(request).runtime
    _require_cache(runtime)
    raw_entries = await runtime.cache_entries()
    snap = runtime.snapshot
    sim, generation = snap.simulation, (snap.lineage, snap.config.cache_epoch)
    # entries name pairs by index: each pair is encoded once, off the loop (a pair can be large)
    dialect = services(request).runtime.dialect
    body = await services(request).offload.run(
        lambda: orjson.dumps({"cache": dialect.listed(listing(raw_entries, sim, generation))})
    )
    return HTTPResponse(body, content_type=JSON_TYPE)


async def delete_cache(request: Request) -> HTTPResponse:
    svc = services(request)
    _require_cache(svc.runtime)
    await write_config(svc.runtime, lambda config: config.flushing_cache())
    await svc.cache.cache_clear()
    return json_response({"cache": svc.runtime.dialect.listed([])})
