"""Server assembly: choose the store, write the start-up state, run Sanic's workers.

``run`` is what the ``simproxy`` command calls once the flags are parsed. With several workers and
no ``-redis-url`` it starts a private redis-server on a Unix socket and stops it on exit.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import multiprocessing
import os
import secrets
import signal
import socket
import sys
import threading
from dataclasses import replace
from functools import partial
from types import FrameType
from typing import Any

from sanic import Sanic
from sanic.worker.loader import AppLoader

from admin.api import create_app
from admin.settings import Settings
from admin.startup import StartupError, bootstrap, initial_config, load_data_sources, load_imports
from admin.workers import Reviver, StoppedBeforeReady
from engine.matchers import MatcherRegistry
from engine.runtime import Runtime
from store import RedisStore, SimproxyError
from store.lifeline import Reaper
from store.redisserver import RedisServer

log = logging.getLogger(__name__)


def run(settings: Settings) -> int:
    """Serve until shut down; returns the process exit status."""
    private: RedisServer | None = None
    instance = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
    settings = replace(settings, instance_id=instance, main_pid=os.getpid())
    for sig in (signal.SIGTERM, signal.SIGINT):  # until Sanic's manager (then the Reviver) takes them
        signal.signal(sig, _stop_before_ready)
    try:
        if settings.workers > 1 and not settings.redis_url:
            private = RedisServer().start()
            settings = replace(settings, redis_url=private.url)
        if settings.redis_url:
            asyncio.run(_bootstrap_shared(settings))
        else:
            asyncio.run(_check_start_files(settings))  # fail before any worker starts
        _serve(settings)
    except StoppedBeforeReady:
        log.info("stopped before every worker was ready")
    except (StartupError, SimproxyError, OSError) as exc:
        print(f"simproxy: {exc}", file=sys.stderr)
        return 1
    finally:
        if private is not None:
            private.stop()
    return 0


def _stop_before_ready(signum: int, frame: FrameType | None) -> None:
    raise StoppedBeforeReady


async def _check_start_files(settings: Settings) -> None:
    await load_imports(settings, MatcherRegistry())
    await load_data_sources(settings)


async def _bootstrap_shared(settings: Settings) -> None:
    store = RedisStore.from_url(settings.redis_url, settings.redis_prefix)
    runtime = Runtime(store, MatcherRegistry(), default_config=initial_config(settings))
    try:
        await store.ping()
        await bootstrap(runtime, settings, wait=False)  # no worker runs yet: nobody to wait for
    finally:
        await runtime.aclose()  # also unregisters: the main process is not a worker
        await store.aclose()


def _serve(settings: Settings) -> None:
    loader = AppLoader(factory=partial(create_app, settings))
    app = loader.load()
    app.register_listener(_start_reaper, "main_process_start")
    app.register_listener(_start_reviver, "main_process_ready")
    app.register_listener(_stop_reviver, "main_process_stop")
    app.register_listener(_stop_reaper, "main_process_stop")
    app.prepare(
        host=settings.listen_on_host,
        port=settings.admin_port,
        workers=settings.workers,
        motd=False,
        access_log=False,
    )
    # From here Sanic's code runs: a stop is noted (not raised into it) until its manager takes the
    # signals over; the Reviver then ends the start if one was noted.
    app.ctx.stop_requested = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: app.ctx.stop_requested.set())
    try:
        Sanic.serve(primary=app, app_loader=loader)
    except OSError as exc:  # Sanic binds the admin port here, in the main process
        if exc.errno != errno.EADDRINUSE:
            raise
        raise StartupError(
            f"the admin port {settings.listen_on_host}:{settings.admin_port} is already in use"
        ) from None


def _start_reaper(app: Sanic[Any, Any]) -> None:
    """Sanic's shared-state manager is a process of multiprocessing's, not of simproxy's: the workers
    die with the main process, it would not (lifeline.Reaper ends it if the main process is killed)."""
    managers = [p.pid for p in multiprocessing.active_children() if p.name.startswith("SyncManager") and p.pid]
    app.ctx.reaper = Reaper(managers)


def _stop_reaper(app: Sanic[Any, Any]) -> None:
    reaper: Reaper | None = getattr(app.ctx, "reaper", None)
    if reaper is not None:
        reaper.close()


def _start_reviver(app: Sanic[Any, Any]) -> None:
    app.ctx.reviver = Reviver(app.manager)
    app.ctx.reviver.start(app.ctx.stop_requested)


def _stop_reviver(app: Sanic[Any, Any]) -> None:
    reviver: Reviver | None = getattr(app.ctx, "reviver", None)
    if reviver is not None:
        reviver.stop()
