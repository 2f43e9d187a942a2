"""The configuration endpoints (``/api/v2/service/...``, also answered under ``/api/v2/hoverfly/...``),
plus health and shutdown.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.responses import empty_response, json_response, services
from simproxy.admin.api.services import Services
from simproxy.admin.api.views import (
    config_view,
    load_object,
    middleware_view,
    mode_view,
    parse_mode,
    typed,
    usage_view,
)
from simproxy.admin.errors import NotFound, Unprocessable
from simproxy.engine.fleet.cas import until_written
from simproxy.engine.fleet.config import MiddlewareSpec, Mode, RuntimeConfig
from simproxy.engine.fleet.runtime import Runtime
from simproxy.engine.gocompat.goregex import InvalidPattern, compile_go
from simproxy.engine.modes.cors import cors_view
from simproxy.engine.outbound.hooks import hook_name
from simproxy.engine.outbound.middleware import TRIAL, MiddlewareError
from simproxy.engine.outbound.pool import MAX_POOL

log = logging.getLogger(__name__)


async def _counters(svc: Services) -> dict[str, int]:
    await svc.runtime.barrier()  # every worker flushes what it counted before we read the sum
    return await svc.telemetry.read_counters()


async def get_config(request: Request) -> HTTPResponse:
    svc = services(request)
    counters = await _counters(svc)
    return json_response(
        config_view(
            svc.runtime.snapshot.config,
            counters,
            webserver=svc.settings.webserver,
            upstream_proxy=svc.settings.upstream_proxy,
            cors=svc.settings.cors,
            release=svc.runtime.dialect.release,
        )
    )


async def write_config(runtime: Runtime, build: Callable[[RuntimeConfig], RuntimeConfig]) -> RuntimeConfig:
    """Apply ``build`` to the current config with compare-and-set, retrying if another write won."""

    async def attempt() -> RuntimeConfig | None:
        await runtime.sync()
        snap = runtime.snapshot
        config = build(snap.config)
        return config if await runtime.write_config(config, expected=snap.config_version) else None

    return await until_written(attempt, "the configuration kept changing during the update; try again")


async def get_mode(request: Request) -> HTTPResponse:
    runtime = services(request).runtime
    await runtime.sync()
    return json_response(mode_view(runtime.snapshot.config))


async def put_mode(request: Request) -> HTTPResponse:
    svc = services(request)
    mode, arguments = parse_mode(request.body, webserver=svc.settings.webserver, product=svc.runtime.dialect.product)
    lineage = svc.runtime.snapshot.lineage

    def switch(current: RuntimeConfig) -> RuntimeConfig:
        config = current.with_mode(mode, arguments)
        if mode == Mode.CAPTURE:
            return config.flushing_cache()  # Hoverfly empties the cache when capture starts
        if mode in (Mode.SIMULATE, Mode.SPY):
            return config.preloading(lineage)  # ... and preloads it for simulate and spy
        return config

    await svc.runtime.barrier()  # every worker's cache entries are in the store before the switch
    config = await write_config(svc.runtime, switch)
    log.info("Mode has been changed", extra={"fields": {"mode": mode}})
    return json_response(mode_view(config))


async def get_destination(request: Request) -> HTTPResponse:
    runtime = services(request).runtime
    await runtime.sync()
    return json_response({"destination": runtime.snapshot.config.destination})


async def put_destination(request: Request) -> HTTPResponse:
    svc = services(request)
    destination = typed(load_object(request.body), "destination", str, "")
    try:
        compile_go(destination)
    except InvalidPattern as exc:
        raise Unprocessable("destination is not a valid regular expression string") from exc
    config = await write_config(svc.runtime, lambda current: _with_destination(current, destination))
    return json_response({"destination": config.destination})


def _with_destination(config: RuntimeConfig, destination: str) -> RuntimeConfig:
    return replace(config, destination=destination)


async def get_usage(request: Request) -> HTTPResponse:
    return json_response(usage_view(await _counters(services(request)), services(request).runtime.dialect))


async def get_version(request: Request) -> HTTPResponse:
    return json_response({"version": services(request).runtime.dialect.release})


async def get_upstream_proxy(request: Request) -> HTTPResponse:
    return json_response({"upstreamProxy": services(request).settings.upstream_proxy})


async def get_cors(request: Request) -> HTTPResponse:
    return json_response(cors_view(services(request).settings.cors))


async def get_middleware(request: Request) -> HTTPResponse:
    runtime = services(request).runtime
    await runtime.sync()
    return json_response(middleware_view(runtime.snapshot.config.middleware))


async def put_middleware(request: Request) -> HTTPResponse:
    """Set (or, all three empty, remove) the middleware after one trial run on a canned pair."""
    svc = services(request)
    body = load_object(request.body)
    pool = 0 if svc.runtime.dialect.is_hoverfly else typed(body, "pool", int, 0)  # Hoverfly ignores the member
    spec = MiddlewareSpec(
        binary=typed(body, "binary", str, ""),
        script=typed(body, "script", str, ""),
        remote=typed(body, "remote", str, ""),
        pool=pool,
    )
    if spec.script and not spec.binary:
        raise Unprocessable("cannot run script with no binary")
    if pool < 0 or pool > MAX_POOL:
        raise Unprocessable(f"pool must be from 0 (a process per request) to {MAX_POOL}")
    if pool and (spec.remote or hook_name(spec.binary) or not spec.binary):
        raise Unprocessable("pool applies to a local program only, not to a remote middleware or a python: hook")
    if spec.enabled:
        try:
            await svc.middleware.run(spec, TRIAL)
        except MiddlewareError as exc:
            raise Unprocessable(str(exc)) from exc
    config = await write_config(svc.runtime, lambda current: replace(current, middleware=spec))
    log.info("Middleware has been changed", extra={"fields": {"binary": spec.binary, "remote": spec.remote}})
    return json_response(middleware_view(config.middleware))


def _pac_response(pac: str) -> HTTPResponse:
    if not pac:
        raise NotFound("Not found")
    return HTTPResponse(pac.encode("utf-8", "surrogateescape"), content_type="application/x-ns-proxy-autoconfig")


async def get_pac(request: Request) -> HTTPResponse:
    runtime = services(request).runtime
    await runtime.sync()
    return _pac_response(runtime.snapshot.config.pac)


async def put_pac(request: Request) -> HTTPResponse:
    """The raw body is the PAC file (not JSON); an empty body unsets it, as in Hoverfly."""
    pac = (request.body or b"").decode("utf-8", "surrogateescape")
    config = await write_config(services(request).runtime, lambda current: replace(current, pac=pac))
    return _pac_response(config.pac)


async def delete_pac(request: Request) -> HTTPResponse:
    await write_config(services(request).runtime, lambda current: replace(current, pac=""))
    return empty_response()


async def get_ca_certificate(request: Request) -> HTTPResponse:
    """The CA certificate to trust (``curl --cacert``, ``REQUESTS_CA_BUNDLE``) for HTTPS through the proxy."""
    interception = services(request).interception
    ca = await interception.ca() if interception is not None else None
    return HTTPResponse(
        ca.cert_pem if ca is not None else b"",
        content_type="application/x-pem-file",
        headers={"Content-Disposition": 'attachment; filename="simproxy-ca.pem"'},
    )


async def health(request: Request) -> HTTPResponse:
    product = request.app.ctx.settings.dialect.product
    return json_response({"message": f"{product} is healthy"}, newline=True)


async def shutdown(request: Request) -> HTTPResponse:
    """Stop the instance (every worker); the answer comes once its ports are free (admin/process/serving.py)."""
    await request.app.ctx.stop_instance()
    return empty_response()
