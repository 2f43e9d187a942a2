"""The composition root of one worker: its store, runtime, dispatcher and proxy port, and the
services the admin API is given, built from the settings without Sanic.

``build_worker`` is what every worker process runs before its admin port serves
(admin/process/serving.py mounts the API on the result); a test can call it alone and send
requests to the proxy port it opens.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

from simproxy.admin.api.services import Services
from simproxy.admin.process.listeners import Endpoint
from simproxy.admin.process.logsetup import LogSinks, install_logging
from simproxy.admin.process.metricslog import log_usage
from simproxy.admin.process.startlog import announce
from simproxy.admin.process.startup import bootstrap, initial_config
from simproxy.admin.settings import Settings
from simproxy.engine.auth import Authenticator, shared_secret
from simproxy.engine.execution.tasks import TaskSet
from simproxy.engine.fleet.runtime import REGISTRY_SETTLE_MS, Runtime
from simproxy.engine.journal.recorder import Recorder
from simproxy.engine.matching.cache import MatchCache
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.modes.dispatch import Dispatcher
from simproxy.engine.outbound.upstream import Upstream, UpstreamOptions
from simproxy.engine.server.certs import Interception, fleet_ca, load_ca
from simproxy.engine.server.listener import ProxyServer
from simproxy.store import Store, open_store


@dataclass(frozen=True, slots=True)
class WorkerParts:
    """One worker, assembled and serving its proxy port; ``aclose`` takes it apart in order."""

    services: Services
    """What the admin API's handlers are given (the runtime, the middleware runner, ...)."""
    proxy: ProxyServer
    tasks: TaskSet
    """The worker's own background work (the ``-metrics-log`` lines)."""
    log_sinks: LogSinks

    async def aclose(self) -> None:
        """Stop the proxy port (the requests in flight answered), then the dispatcher, the runtime
        (its last flush) and the store."""
        await self.tasks.aclose()
        self.log_sinks.remove()
        await self.proxy.aclose()
        await self.proxy.dispatcher.aclose()
        await self.services.runtime.aclose()
        await self.services.runtime.store.aclose()


async def build_worker(
    settings: Settings, *, proxy_socket: socket.socket | None = None, announce_start: bool = False
) -> WorkerParts:
    """Build one worker from ``settings`` and start its proxy port.

    ``proxy_socket``: the proxy port's listening socket, bound by the parent process (else bound
    here, with ``SO_REUSEPORT``); ``announce_start``: this worker logs the instance's start lines.
    Whatever was built is closed again when a later step fails.
    """
    undo = contextlib.AsyncExitStack()
    try:
        # a stored document compiles whatever an instance of either dialect accepted; an admin write is
        # refused or loaded as its dialect says (engine.errors.InvalidValue)
        store = open_store(settings.redis_url, settings.redis_prefix)
        undo.push_async_callback(store.aclose)
        recorder = Recorder(
            journal_size=settings.journal_size,
            sample=settings.journal_sample,
            logs_size=settings.logs_size,
            body_limit=settings.journal_body_size_limit or None,
            repeats=not store.shared,  # the in-process store keeps a run of repeated entries as one object
        )
        sinks = install_logging(settings, recorder)
        undo.callback(sinks.remove)
        runtime = _runtime(settings, store, recorder)
        if not settings.redis_url:
            await bootstrap(runtime, settings, wait=False)  # the in-process store starts empty in this worker
        dispatcher = Dispatcher(
            runtime,
            webserver=settings.webserver,
            upstream=Upstream(_upstream_options(settings)),
            own_ports=frozenset({settings.proxy_port}),  # the admin port is a service like any other (Hoverfly)
            cors=settings.cors,
            middleware_timeout=settings.middleware_timeout,
            middleware_queue=settings.middleware_queue,
            max_pairs=settings.max_pairs,
        )
        undo.push_async_callback(dispatcher.aclose)
        await runtime.start(prepare=dispatcher.prepare)  # a start in a mode that forwards: its client loaded
        undo.push_async_callback(runtime.aclose)
        interception = _interception(settings, store)
        authenticator = None
        if settings.auth:
            secret = settings.jwt_secret.encode("utf-8") or await shared_secret(store.documents)
            authenticator = Authenticator(settings.users, secret, store.auth, token_seconds=settings.token_seconds)
        dialect = settings.dialect
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
            http2=dialect.http2,
        )
        sock = proxy_socket or Endpoint(settings.listen_on_host, settings.proxy_port, "proxy").bind(reuse_port=True)
        await proxy.start(sock)
        undo.push_async_callback(proxy.aclose)
        tasks = TaskSet()
        if announce_start:
            announce(settings)
            if settings.metrics_log:
                tasks.spawn(log_usage(runtime), name="metrics-log")
        services = Services(
            settings=settings,
            runtime=runtime,
            registry=MatcherRegistry(lenient=dialect.is_hoverfly),
            middleware=dispatcher.middleware,
            interception=interception,
            auth=authenticator,
        )
    except BaseException:
        await undo.aclose()
        raise
    return WorkerParts(services, proxy, tasks, sinks)  # from here the worker's aclose takes it apart


@contextlib.asynccontextmanager
async def running_worker(
    settings: Settings, *, proxy_socket: socket.socket | None = None
) -> AsyncIterator[WorkerParts]:
    """``build_worker``, closed on the way out."""
    worker = await build_worker(settings, proxy_socket=proxy_socket)
    try:
        yield worker
    finally:
        await worker.aclose()


def _runtime(settings: Settings, store: Store, recorder: Recorder) -> Runtime:
    registry = MatcherRegistry(lenient=True)
    return Runtime(
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


def _upstream_options(settings: Settings) -> UpstreamOptions:
    return UpstreamOptions(
        tls_verify=settings.tls_verification,
        proxy=settings.upstream_proxy,
        timeout=settings.upstream_timeout,
        client_auth=settings.client_auth,
        go_client=settings.dialect.go_layout,
    )


def _interception(settings: Settings, store: Store) -> Interception:
    """The CA the proxy signs intercepted hosts with: the one given, else the fleet's own (generated
    once and shared through the store); one generated with Hoverfly's names is kept apart."""
    given = load_ca(settings.cert, settings.key) if settings.cert else None
    dialect = settings.dialect
    ca_home = settings.ca_home / dialect.name if dialect.is_hoverfly else settings.ca_home
    alpn = ("h2", "http/1.1") if dialect.http2 else ("http/1.1",)
    return Interception(lambda: fleet_ca(store.documents, given, ca_home, (dialect.ca_name, dialect.ca_org)), alpn)
