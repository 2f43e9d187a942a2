"""The proxy port of one worker: its listening socket, the connections accepted on it (each an
``engine.server.protocol.ProxyProtocol``, handed the ``ServerState`` built here), the sweep of their
timeouts, and the drain when it stops."""

from __future__ import annotations

import asyncio
import contextlib
import resource
import socket
import time

from simproxy.engine.fleet.config import BACKLOG, ProxyLimits
from simproxy.engine.modes.dispatch import Dispatcher
from simproxy.engine.server.certs import Interception
from simproxy.engine.server.protocol import ProxyProtocol
from simproxy.engine.server.state import ProxyAuth, ServerState
from simproxy.engine.wire.response import plain_error

SWEEP_INTERVAL = 1.0
RESERVED_DESCRIPTORS = 256
"""Descriptors a worker keeps out of its proxy connections' reach: the admin API's connections, the
store's, the real services' (capture, spy), files, the PAC child."""
DRAIN_GRACE = 8.0
"""Seconds a stopping worker waits for the answers of requests in flight."""


class ProxyServer:
    """Owns the listening socket of one worker and the connections it accepted."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        *,
        port: int,
        limits: ProxyLimits | None = None,
        tls: Interception | None = None,
        plain_http_tunneling: bool = False,
        auth: ProxyAuth | None = None,
        chunked_tunnel: bool = False,
        product: str = "simproxy",
        go_layout: bool = False,
        http2: bool = False,
    ) -> None:
        self.dispatcher = dispatcher
        self.limits = limits or ProxyLimits()
        self.state = ServerState(
            dispatcher,
            self.limits,
            port,
            internal_error=plain_error(500, f"Internal error in {product}\n"),
            max_connections=connection_budget(),
            note_answered=self.note_answered,
            tls=tls,
            auth=auth,
            plain_http_tunneling=plain_http_tunneling,
            chunked_tunnel=chunked_tunnel,
            go_layout=go_layout,
            http2=http2,
        )
        """What every connection reads (engine/server/state.py): a connection never sees the server."""
        self.tasks = self.state.tasks
        self.connections = self.state.connections
        self._server: asyncio.Server | None = None
        self._quiet: asyncio.Event | None = None
        """While stopping: set once no connection has an answer still to write."""

    async def start(self, sock: socket.socket) -> None:
        """Serve connections accepted on ``sock``, a listening socket (admin/process/listeners.py binds it)."""
        loop = asyncio.get_running_loop()
        state = self.state
        self._server = await loop.create_server(lambda: ProxyProtocol(state), sock=sock, backlog=BACKLOG)
        self.tasks.spawn(self._sweep(), name="proxy-timeouts")
        self.tasks.spawn(state.date.keep(), name="date-header")

    def stop_accepting(self) -> None:
        """Close the listening socket now: new connections are refused, those accepted go on."""
        if self._server is not None:
            self._server.close()

    def note_answered(self) -> None:
        """A connection wrote its last pending answer, or closed: a stop may be waiting for that."""
        if self._quiet is not None and not any(conn.busy for conn in self.connections):
            self._quiet.set()

    async def _sweep(self) -> None:
        """Once a second: answer 408 to requests that take too long to arrive, close idle connections."""
        while True:
            await asyncio.sleep(SWEEP_INTERVAL)
            now = time.monotonic()
            for conn in list(self.connections):
                conn.check_timeouts(now, self.limits)

    async def aclose(self, grace: float = DRAIN_GRACE) -> None:
        """Stop accepting, let requests in flight be answered (up to ``grace`` seconds), then close."""
        self.stop_accepting()
        self._quiet = asyncio.Event()
        self.note_answered()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._quiet.wait(), grace)
        for conn in list(self.connections):
            conn.close()
        await self.tasks.aclose()
        if self._server is not None:
            await self._server.wait_closed()


def connection_budget() -> int:
    """The proxy connections a worker may hold: its descriptor limit less ``RESERVED_DESCRIPTORS``
    (a client opening connections without end must not leave none for anything else)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 1 << 20
    return max(soft - RESERVED_DESCRIPTORS, 16)
