"""Server assembly: bind the ports, choose the store, write the start-up state, serve.

``run`` is what the ``simproxy`` command calls once the flags are parsed. The ports are bound first,
so a taken port is reported before anything else starts. One worker (the default) serves in this
process (admin/process/serving.py): nothing else is started. Several workers are forked from it
(admin/process/workers.py); without ``-redis-url`` they share a private redis-server on a Unix socket,
stopped on exit. Both modules are imported only then: a one-worker start does not load them.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import socket
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from simproxy.admin.process.listeners import Endpoint, close_all
from simproxy.admin.process.serving import StoppedBeforeReady, Worker, WorkerSockets, settle_heap, stop_before_ready
from simproxy.admin.process.startup import bootstrap, initial_config
from simproxy.admin.settings import Settings
from simproxy.engine.fleet.runtime import Runtime
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.store import SimproxyError, open_store

if TYPE_CHECKING:
    from simproxy.admin.process.redisserver import RedisServer


def run(settings: Settings) -> int:
    """Serve until shut down; returns the process exit status."""
    instance = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
    settings = replace(settings, instance_id=instance, main_pid=os.getpid())
    for sig in (signal.SIGTERM, signal.SIGINT):  # until serving begins
        signal.signal(sig, stop_before_ready)
    private: RedisServer | None = None
    sockets: list[socket.socket] = []
    try:
        admin = Endpoint(settings.listen_on_host, settings.admin_port, "admin").bind()
        sockets.append(admin)
        proxy = Endpoint(settings.listen_on_host, settings.proxy_port, "proxy")
        several = settings.workers > 1
        proxies = [proxy.bind(reuse_port=several or settings.share_proxy_port) for _ in range(settings.workers)]
        sockets += proxies
        if (several or settings.db_path) and not settings.redis_url:
            from simproxy.admin.process.redisserver import (
                RedisServer,  # imported only when needed, as the workers below
            )

            private = RedisServer(save_to=Path(settings.db_path) if settings.db_path else None).start()
            settings = replace(settings, redis_url=private.url, private_store=True)
        if settings.redis_url:
            asyncio.run(_bootstrap_shared(settings))  # the in-process store is written by its worker
        if several:
            from simproxy.admin.process.workers import Supervisor

            settle_heap()  # before the forks: the workers share these pages, not touched by a scan
            Supervisor(settings, admin, proxies).run()
        else:
            Worker(settings, WorkerSockets(admin, proxies[0])).run(on_ready=lambda: None)
    except StoppedBeforeReady:
        pass
    except (SimproxyError, OSError) as exc:
        print(f"simproxy: {exc}", file=sys.stderr)
        return 1
    finally:
        close_all(sockets)
        if private is not None:
            private.stop()
    return 0


async def _bootstrap_shared(settings: Settings) -> None:
    store = open_store(settings.redis_url, settings.redis_prefix)
    runtime = Runtime(store, MatcherRegistry(lenient=True), default_config=initial_config(settings))
    try:
        await store.ping()
        # other instances on the store (pods, a fleet) apply the start-up before this one serves;
        # a private store has no worker yet
        await bootstrap(runtime, settings, wait=not settings.private_store)
    finally:
        await runtime.aclose()  # also unregisters: the main process is not a worker
        await store.aclose()
