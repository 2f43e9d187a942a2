"""One worker's life in the current process: the admin app (Sanic) and the proxy port
(engine/server/listener.py) on one uvloop event loop, from start to a graceful stop.

With one worker (the default) this runs in the main process: nothing else is started. With
several, each process the supervisor (admin/process/workers.py) forks runs it. A stop (SIGTERM, SIGINT or
``DELETE /api/v2/shutdown``) closes both listening sockets at once, so new connections are refused
from that moment, then lets the requests in flight be answered (up to ``DRAIN_GRACE`` seconds) and
ends. The shutdown call answers only once both ports are free, so whoever called it can start the
next instance on the same ports straight away.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

import uvloop
from sanic import Sanic
from sanic.application.state import ApplicationServerInfo
from sanic.http.constants import HTTP

from simproxy.admin.api.app import create_app
from simproxy.admin.process.codecache import cache_folder
from simproxy.admin.process.listeners import Endpoint
from simproxy.admin.process.startlog import announce_ready
from simproxy.admin.process.touchup import take_over, touch_up
from simproxy.admin.process.worker import WorkerParts, build_worker
from simproxy.admin.settings import Settings
from simproxy.engine.fleet.config import BACKLOG
from simproxy.engine.server.listener import DRAIN_GRACE

log = logging.getLogger(__name__)

SWITCH_INTERVAL = 0.0005
"""Seconds a thread holds the GIL while another waits for it (CPython's default: 0.005). Only the
admin API's heavy work runs in threads (engine/execution/offload.py): with the default, the loop waited up to
5 ms for each of its turns, and proxied requests took up to 130 ms (p99) during a 50,000-pair
upload; at 0.5 ms, under 10 ms. Without a second thread nothing changes."""
PORTS_FREE_TIMEOUT = 5.0
"""Seconds the shutdown call waits for every process of the instance to close its listeners."""


def settle_heap() -> None:
    """Start-up is over: what it built lives as long as the worker, so it is moved out of every later
    collection's scan (``gc.freeze``; still freed by reference counting when let go), and collection,
    paused during start-up by admin/process/cli.py, resumes. It also spares the exit a full scan of it all."""
    gc.freeze()
    gc.enable()


class StoppedBeforeReady(BaseException):
    """A stop signal arrived before serving began: unwinds the start (exit 0)."""


def stop_before_ready(signum: int, frame: FrameType | None) -> None:
    """The handler of SIGTERM and SIGINT until serving begins (in the main process, and in a forked
    worker until it has its own)."""
    raise StoppedBeforeReady


class StartAborted(Exception):
    """A stop arrived while the worker was starting: it ends without serving."""


@dataclass(frozen=True, slots=True)
class WorkerSockets:
    """The listening sockets one worker serves (admin/process/listeners.py binds them)."""

    admin: socket.socket
    proxy: socket.socket | None
    """None: the worker binds its own (``SO_REUSEPORT``) once it can serve (a worker started again)."""


class Worker:
    """Serves the admin and the proxy port in this process until stopped.

    With several workers, ``stop_instance`` asks the main process to stop every worker (the
    shutdown call reaches one worker only), and ``wait_for_fleet`` holds the admin port back until
    the main process sends SIGUSR1: it does once every first worker serves, so that an instance
    that answers its health check serves with all its workers.
    """

    def __init__(
        self,
        settings: Settings,
        sockets: WorkerSockets,
        *,
        stop_instance: Callable[[], None] | None = None,
        wait_for_fleet: bool = False,
        announce: bool = True,
    ) -> None:
        self.settings = settings
        self._announce = announce
        """Log the instance's start-up messages (one worker of an instance does, once)."""
        self._sockets = sockets
        self._stop_instance = stop_instance
        self._wait_for_fleet = wait_for_fleet
        self._endpoints = (
            Endpoint(settings.listen_on_host, settings.admin_port, "admin"),
            Endpoint(settings.listen_on_host, settings.proxy_port, "proxy"),
        )
        self._app: Sanic[Any, Any] | None = None
        self._worker: WorkerParts | None = None
        self._admin: Any = None
        """Sanic's AsyncioServer on the admin socket: made not serving, opened once the worker is ready."""
        self._stop: asyncio.Event | None = None
        self._go: asyncio.Event | None = None
        """Set by SIGUSR1 (every worker serves), or by a stop: the admin port may answer."""

    def run(self, on_ready: Callable[[], None]) -> None:
        """Start, call ``on_ready`` once this worker can serve, serve until stopped, then return.

        Raises what made the start fail (the caller reports it); a stop during the start ends it
        quietly.
        """
        sys.setswitchinterval(SWITCH_INTERVAL)
        loop = uvloop.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._main(on_ready))
        except StartAborted:
            log.info("stopped while starting")
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            asyncio.set_event_loop(None)
            loop.close()

    async def _main(self, on_ready: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        self._stop, self._go = asyncio.Event(), asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)
        loop.add_signal_handler(signal.SIGUSR1, self._go.set)
        app = create_app(self.settings)
        app.ctx.stop_instance = self.shutdown
        self._app = app
        # Sanic's AsyncioServer (its lifecycle methods are untyped; None only for HTTP/3), not serving yet
        admin: Any = await app.create_server(
            sock=self._sockets.admin,
            backlog=BACKLOG,
            return_asyncio_server=True,
            asyncio_server_kwargs={"start_serving": False},
        )
        assert admin is not None
        self._admin = admin
        # Sanic's start-up rewrites its HTTP/1 writer for the protocols it serves, as it learns them
        # from run(): told of this one server, it drops the empty Alt-Svc header it adds otherwise
        app.state.server_info.append(ApplicationServerInfo(settings={"version": HTTP.VERSION_1}))
        ours = take_over(app)
        await admin.startup()
        if ours:  # Sanic's rewrite of its methods for this app, kept between starts
            touch_up(app, cache_folder(self.settings.ca_folder))
        # the store, the runtime and the proxy port; the API's handlers are given its services
        worker = self._worker = await build_worker(
            self.settings, proxy_socket=self._sockets.proxy, announce_start=self._announce
        )
        app.ctx.services = worker.services
        await admin.before_start()
        settle_heap()
        try:
            self._check_stop()
            if self._wait_for_fleet:
                on_ready()
                await self._go.wait()
                self._check_stop()
            await admin.start_serving()  # the admin port answers from here
            if self._announce:  # every first worker serves: the instance is ready
                announce_ready(self.settings)
            await admin.after_start()
            if not self._wait_for_fleet:
                on_ready()
            await self._stop.wait()
            await self._drain_admin(DRAIN_GRACE)
            await admin.before_stop()
        finally:
            await admin.after_stop()
            await worker.aclose()  # the proxy's requests in flight, the last flush

    def _check_stop(self) -> None:
        if self._stop is not None and self._stop.is_set():
            raise StartAborted

    def request_stop(self) -> None:
        """Refuse new connections on both ports from now on, and end once the requests in flight
        are answered. Called again, it does nothing more."""
        if self._stop is None or self._go is None or self._stop.is_set():
            return
        self._stop.set()
        self._go.set()
        if self._admin is not None:
            self._admin.server.close()
        if self._worker is not None:
            self._worker.proxy.stop_accepting()

    async def shutdown(self) -> None:
        """``DELETE /api/v2/shutdown``: stop the whole instance; return once its ports are free."""
        if self._stop_instance is not None:
            self._stop_instance()
        self.request_stop()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PORTS_FREE_TIMEOUT
        while not all(endpoint.free() for endpoint in self._endpoints):
            if loop.time() > deadline:
                log.warning("the ports were still held %.0f s after the shutdown call", PORTS_FREE_TIMEOUT)
                return
            await asyncio.sleep(0.001)

    async def _drain_admin(self, grace: float) -> None:
        """Let the admin requests in flight be answered, close idle connections; abort the rest after ``grace``."""
        connections = self._admin.connections
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while connections and loop.time() < deadline:
            for conn in list(connections):
                conn.close_if_idle()
            await asyncio.sleep(0.005)
        for conn in list(connections):
            conn.abort()
