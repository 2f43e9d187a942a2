"""The admin app of one worker: routes under both namespaces, one error handler, and the
listeners that build the worker's store, runtime and proxy port (admin/serving.py runs it)."""

from __future__ import annotations

import functools
import logging
import os
from typing import Any

from sanic import Request, Sanic
from sanic.exceptions import SanicException
from sanic.response import BaseHTTPResponse, HTTPResponse

from simproxy.admin import actions, auth, cache, datasources, diff, journal, live, logs, metrics, openapi, page, state
from simproxy.admin import configuration as conf
from simproxy.admin import simulation as sim
from simproxy.admin.errors import ApiError
from simproxy.admin.gowire import go_wire
from simproxy.admin.listeners import Endpoint
from simproxy.admin.logsetup import LogSinks, install_logging
from simproxy.admin.metricslog import log_usage
from simproxy.admin.responses import error_response, untyped_empty
from simproxy.admin.services import Services
from simproxy.admin.settings import Settings
from simproxy.admin.startlog import announce
from simproxy.admin.startup import bootstrap, initial_config
from simproxy.engine.auth import Authenticator, shared_secret
from simproxy.engine.errors import ImportFailure, SimulationError, WriteConflict
from simproxy.engine.execution.tasks import TaskSet
from simproxy.engine.fleet.runtime import REGISTRY_SETTLE_MS, Runtime
from simproxy.engine.gocompat.dialect import Dialect
from simproxy.engine.journal.recorder import Recorder
from simproxy.engine.matching.cache import MatchCache
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.modes.dispatch import Dispatcher
from simproxy.engine.outbound.upstream import Upstream, UpstreamOptions
from simproxy.engine.server.certs import Interception, fleet_ca, load_ca
from simproxy.engine.server.listener import ProxyServer
from simproxy.store import StoreError, StoreUnavailable, open_store

log = logging.getLogger(__name__)

NAMESPACES = ("service", "hoverfly")


def create_app(settings: Settings) -> Sanic[Any, Any]:
    """The Sanic app factory; Sanic calls it in the main process and in every worker."""
    app = Sanic("simproxy", configure_logging=False)
    app.config.ACCESS_LOG = False
    app.config.MOTD = False
    app.config.REQUEST_MAX_SIZE = settings.max_admin_body
    app.ctx.settings = settings
    app.ctx.dashboard = page.load_assets()
    _routes(app, settings)
    app.register_middleware(auth.require_token, "request")
    if settings.dialect.is_hoverfly:  # registered first, Sanic runs it after every other response middleware
        app.register_middleware(go_wire, "response")
    if settings.dev_cors_origin:
        app.register_middleware(_dev_cors, "response")
    app.error_handler.add(Exception, _handle_error)
    app.register_listener(_start_worker, "before_server_start")
    app.register_listener(_stop_worker, "after_server_stop")
    return app


_DEV_CORS = (
    ("Access-Control-Allow-Methods", "GET, PUT, POST, OPTIONS, DELETE"),
    ("Access-Control-Allow-Headers", "Origin, X-Requested-With, Content-Type, Accept, Authorization"),
    ("Access-Control-Allow-Credentials", "true"),
)


async def _dev_cors(request: Request, response: BaseHTTPResponse) -> None:
    """``-dev``: Hoverfly's CORS headers on every admin answer, for a UI served from another origin."""
    response.headers["Access-Control-Allow-Origin"] = request.app.ctx.settings.dev_cors_origin
    for name, value in _DEV_CORS:
        response.headers[name] = value


def _routes(app: Sanic[Any, Any], settings: Settings) -> None:
    # every error answers JSON through _handle_error: naming the format spares Sanic reading each
    # handler's source to guess one (a fifth of a start)
    add = functools.partial(app.add_route, error_format="json")
    add(conf.health, "/api/health", methods=["GET"], name="health")
    add(page.index, "/", methods=["GET"], name="page_root")
    add(page.index, "/dashboard", methods=["GET"], name="page_dashboard")
    add(page.asset, "/dashboard/<name>", methods=["GET"], name="page_asset")
    add(openapi.get_openapi, "/api/v2/openapi.json", methods=["GET"], name="openapi")
    add(auth.login, "/api/token-auth", methods=["POST"], name="token_auth")
    add(auth.login_options, "/api/token-auth", methods=["OPTIONS"], name="token_auth_options")
    add(auth.refresh, "/api/refresh-token-auth", methods=["GET"], name="token_refresh")
    add(auth.logout, "/api/logout", methods=["GET"], name="logout")
    add(auth.users, "/api/users", methods=["GET"], name="users")
    add(metrics.get_metrics, "/metrics", methods=["GET"], name="metrics")
    add(sim.get_simulation, "/api/v2/simulation", methods=["GET"], name="sim_get")
    add(sim.put_simulation, "/api/v2/simulation", methods=["PUT"], name="sim_put")
    add(sim.post_simulation, "/api/v2/simulation", methods=["POST"], name="sim_post")
    add(sim.delete_simulation, "/api/v2/simulation", methods=["DELETE"], name="sim_delete")
    add(sim.get_schema, "/api/v2/simulation/schema", methods=["GET"], name="sim_schema")
    add(conf.shutdown, "/api/v2/shutdown", methods=["DELETE"], name="shutdown")
    add(journal.get_journal, "/api/v2/journal", methods=["GET"], name="journal_get")
    add(journal.search_journal, "/api/v2/journal", methods=["POST"], name="journal_search")
    add(journal.delete_journal, "/api/v2/journal", methods=["DELETE"], name="journal_delete")
    add(journal.get_indexes, "/api/v2/journal/index", methods=["GET"], name="journal_index_get")
    add(journal.add_index, "/api/v2/journal/index", methods=["POST"], name="journal_index_add")
    add(journal.delete_index, "/api/v2/journal/index/<name>", methods=["DELETE"], name="journal_index_delete")
    add(logs.get_logs, "/api/v2/logs", methods=["GET"], name="logs_get")
    add(diff.get_diff, "/api/v2/diff", methods=["GET"], name="diff_get")
    add(diff.post_diff, "/api/v2/diff", methods=["POST"], name="diff_post")
    add(diff.delete_diff, "/api/v2/diff", methods=["DELETE"], name="diff_delete")
    add(cache.get_cache, "/api/v2/cache", methods=["GET"], name="cache_get")
    add(cache.delete_cache, "/api/v2/cache", methods=["DELETE"], name="cache_delete")
    add(state.get_state, "/api/v2/state", methods=["GET"], name="state_get")
    add(state.put_state, "/api/v2/state", methods=["PUT"], name="state_put")
    add(state.patch_state, "/api/v2/state", methods=["PATCH"], name="state_patch")
    add(state.delete_state, "/api/v2/state", methods=["DELETE"], name="state_delete")
    for ns in NAMESPACES:
        base = f"/api/v2/{ns}"
        add(conf.get_config, base, methods=["GET"], name=f"{ns}_config")
        add(conf.get_mode, f"{base}/mode", methods=["GET"], name=f"{ns}_mode_get")
        add(conf.put_mode, f"{base}/mode", methods=["PUT"], name=f"{ns}_mode_put")
        add(conf.get_destination, f"{base}/destination", methods=["GET"], name=f"{ns}_dest_get")
        add(conf.put_destination, f"{base}/destination", methods=["PUT"], name=f"{ns}_dest_put")
        add(conf.get_usage, f"{base}/usage", methods=["GET"], name=f"{ns}_usage")
        add(conf.get_version, f"{base}/version", methods=["GET"], name=f"{ns}_version")
        add(conf.get_upstream_proxy, f"{base}/upstream-proxy", methods=["GET"], name=f"{ns}_upstream")
        add(conf.get_cors, f"{base}/cors", methods=["GET"], name=f"{ns}_cors")
        add(conf.get_middleware, f"{base}/middleware", methods=["GET"], name=f"{ns}_middleware")
        add(conf.get_ca_certificate, f"{base}/ca-cert", methods=["GET"], name=f"{ns}_ca_cert")
        add(live.get_traffic, f"{base}/traffic", methods=["GET"], name=f"{ns}_traffic")
        add(live.get_workers, f"{base}/workers", methods=["GET"], name=f"{ns}_workers")
        if settings.enable_middleware_api:  # Hoverfly registers the PUT only then (else: 404)
            add(conf.put_middleware, f"{base}/middleware", methods=["PUT"], name=f"{ns}_middleware_put")
        add(actions.get_actions, f"{base}/post-serve-action", methods=["GET"], name=f"{ns}_actions_get")
        add(actions.put_action, f"{base}/post-serve-action", methods=["PUT"], name=f"{ns}_actions_put")
        add(actions.delete_action, f"{base}/post-serve-action/<name>", methods=["DELETE"], name=f"{ns}_action_del")
        add(conf.get_pac, f"{base}/pac", methods=["GET"], name=f"{ns}_pac_get")
        add(conf.put_pac, f"{base}/pac", methods=["PUT"], name=f"{ns}_pac_put")
        add(conf.delete_pac, f"{base}/pac", methods=["DELETE"], name=f"{ns}_pac_delete")
        csv_path = f"{base}/templating-data-source/csv"
        add(datasources.get_sources, csv_path, methods=["GET"], name=f"{ns}_csv_get")
        add(datasources.put_source, csv_path, methods=["PUT"], name=f"{ns}_csv_put")
        add(datasources.delete_source, f"{csv_path}/<name>", methods=["DELETE"], name=f"{ns}_csv_delete")
    _options_routes(app, settings)


# Hoverfly's OPTIONS answers (hoverfly-admin.md §3.0): 200, an empty body and its ``Allow`` list, which
# is each handler's own and not always what the path serves (cors, shutdown)
_ALLOW = (
    ("/api/v2/simulation", "OPTIONS, GET, PUT, DELETE"),
    ("/api/v2/simulation/schema", "OPTIONS, GET, PUT, DELETE"),
    ("/api/v2/cache", "OPTIONS, GET, DELETE"),
    ("/api/v2/logs", "OPTIONS, GET"),
    ("/api/v2/journal", "OPTIONS, GET, DELETE, POST"),
    ("/api/v2/state", "OPTIONS, GET, DELETE, PUT, PATCH"),
    ("/api/v2/diff", "OPTIONS, GET, DELETE"),
    ("/api/v2/shutdown", "OPTIONS, GET"),
)
_ALLOW_NAMESPACED = (
    ("", "OPTIONS, GET"),
    ("/destination", "OPTIONS, GET, PUT"),
    ("/mode", "OPTIONS, GET, PUT"),
    ("/usage", "OPTIONS, GET"),
    ("/version", "OPTIONS, GET"),
    ("/upstream-proxy", "OPTIONS, GET"),
    ("/pac", "OPTIONS, GET, PUT, DELETE"),
    ("/cors", "OPTIONS, GET, PUT"),
)


def _options_routes(app: Sanic[Any, Any], settings: Settings) -> None:
    middleware = "OPTIONS, GET, PUT" if settings.enable_middleware_api else "OPTIONS, GET"
    namespaced = (*_ALLOW_NAMESPACED, ("/middleware", middleware))
    paths = (*_ALLOW, *((f"/api/v2/{ns}{suffix}", allow) for ns in NAMESPACES for suffix, allow in namespaced))
    for index, (path, allow) in enumerate(paths):
        app.add_route(functools.partial(_options, allow=allow), path, methods=["OPTIONS"], name=f"options_{index}")


async def _options(request: Request, allow: str) -> HTTPResponse:
    return HTTPResponse(b"", headers={"Allow": allow}, content_type="text/plain; charset=utf-8")


def _handle_error(request: Request, exc: Exception) -> HTTPResponse:
    dialect: Dialect = request.app.ctx.settings.dialect
    if isinstance(exc, SanicException) and exc.status_code in (404, 405):
        # Hoverfly never answers 405: any unrouted method or path is its router's plain 404
        if dialect.is_hoverfly:
            return HTTPResponse(NOT_FOUND_PAGE, 404, {"X-Content-Type-Options": "nosniff"}, "text/plain; charset=utf-8")
        return error_response(f"no such endpoint: {request.method} {request.path}", 404)
    message, status = _error_of(exc, dialect)
    if dialect.is_hoverfly and status in (401, 429):
        return untyped_empty(status)  # Hoverfly's are empty, without a type
    return error_response(message, status, dialect)


NOT_FOUND_PAGE = b"404 page not found\n"


def _error_of(exc: Exception, dialect: Dialect) -> tuple[str, int]:
    """The message and status of an error an admin handler raised, as ``dialect`` words it."""
    if isinstance(exc, ApiError):
        return exc.text(dialect), exc.status
    if isinstance(exc, SimulationError):
        return f"Invalid simulation: {exc}", 400
    if isinstance(exc, ImportFailure):
        return f"An error occurred: {exc}", 500
    if isinstance(exc, WriteConflict):
        return str(exc), 500
    if isinstance(exc, StoreUnavailable):
        return str(exc), 503
    if isinstance(exc, StoreError):
        return str(exc), 500
    if isinstance(exc, SanicException):
        return str(exc) or "request rejected", exc.status_code
    log.exception("admin handler failed", exc_info=exc)
    return f"internal error: {exc}", 500


async def _start_worker(app: Sanic[Any, Any]) -> None:
    settings: Settings = app.ctx.settings
    # a stored document compiles whatever an instance of either dialect accepted; an admin write is
    # refused or loaded as its dialect says (engine.errors.InvalidValue)
    registry = MatcherRegistry(lenient=True)
    store = open_store(settings.redis_url, settings.redis_prefix)
    recorder = Recorder(
        journal_size=settings.journal_size,
        logs_size=settings.logs_size,
        body_limit=settings.journal_body_size_limit or None,
        repeats=not store.shared,  # the in-process store keeps a run of repeated entries as one object
    )
    app.ctx.log_sinks = install_logging(settings, recorder)
    runtime = Runtime(
        store,
        registry,
        default_config=initial_config(settings),
        cache=MatchCache(max(settings.cache_size, 1), enabled=not settings.disable_cache, mirrored=store.shared),
        webserver=settings.webserver,
        records=recorder,
        instance=settings.instance_id,
        # "<instance>/<pid>": the dashboard groups the live workers by instance
        worker_id=f"{settings.instance_id}/{os.getpid()}" if settings.instance_id else None,
        registry_settle_ms=0 if settings.private_store else REGISTRY_SETTLE_MS,
        dialect=settings.dialect,
    )
    if not settings.redis_url:
        await bootstrap(runtime, settings, wait=False)  # the in-process store starts empty in this worker
    await runtime.start()
    upstream = Upstream(
        UpstreamOptions(
            tls_verify=settings.tls_verification,
            proxy=settings.upstream_proxy,
            timeout=settings.upstream_timeout,
            client_auth=settings.client_auth,
            go_client=settings.dialect.go_layout,
        )
    )
    dispatcher = Dispatcher(
        runtime,
        webserver=settings.webserver,
        upstream=upstream,
        own_ports=frozenset({settings.proxy_port}),  # the admin port is a service like any other (Hoverfly)
        cors=settings.cors,
        middleware_timeout=settings.middleware_timeout,
        max_pairs=settings.max_pairs,
    )
    runtime.prepare = dispatcher.prepare
    await dispatcher.prepare(runtime.snapshot)  # a start in a mode that forwards
    given = load_ca(settings.cert, settings.key) if settings.cert else None
    dialect = settings.dialect
    # a CA generated with Hoverfly's names (-compat hoverfly) is kept apart from simproxy's own
    ca_home = settings.ca_home / dialect.name if dialect.is_hoverfly else settings.ca_home
    interception = Interception(lambda: fleet_ca(store.documents, given, ca_home, (dialect.ca_name, dialect.ca_org)))
    authenticator = None
    if settings.auth:
        secret = settings.jwt_secret.encode("utf-8") or await shared_secret(store.documents)
        authenticator = Authenticator(settings.users, secret, store.auth, token_seconds=settings.token_seconds)
    proxy = ProxyServer(
        dispatcher,
        port=settings.proxy_port,
        limits=settings.proxy_limits,
        tls=interception,
        plain_http_tunneling=settings.plain_http_tunneling,
        auth=authenticator,
        chunked_tunnel=dialect.chunked_tunnel,
        product=dialect.product,
        go_layout=dialect.go_layout,
    )
    sock = app.ctx.proxy_socket or Endpoint(settings.listen_on_host, settings.proxy_port, "proxy").bind(reuse_port=True)
    await proxy.start(sock)
    app.ctx.tasks = TaskSet()
    if getattr(app.ctx, "announce", False):
        announce(settings)
        if settings.metrics_log:
            app.ctx.tasks.spawn(log_usage(runtime), name="metrics-log")
    app.ctx.services = Services(
        settings=settings,
        runtime=runtime,
        registry=MatcherRegistry(lenient=settings.dialect.is_hoverfly),
        middleware=dispatcher.middleware,
        interception=interception,
        auth=authenticator,
    )
    app.ctx.proxy = proxy


async def _stop_worker(app: Sanic[Any, Any]) -> None:
    tasks: TaskSet | None = getattr(app.ctx, "tasks", None)
    if tasks is not None:
        await tasks.aclose()
    sinks: LogSinks | None = getattr(app.ctx, "log_sinks", None)
    if sinks is not None:
        sinks.remove()
    proxy: ProxyServer | None = getattr(app.ctx, "proxy", None)
    if proxy is not None:
        proxy.dispatcher.runtime.prepare = None  # no new HTTP client for a worker that is closing it
        await proxy.aclose()
        await proxy.dispatcher.aclose()
    services: Services | None = getattr(app.ctx, "services", None)
    if services is not None:
        await services.runtime.aclose()
        await services.runtime.store.aclose()
