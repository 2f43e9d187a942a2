"""The proxy port of one worker: its listening socket, the connections accepted on it (each an
``engine.server.protocol.ProxyProtocol``), the sweep of their timeouts, and the drain when it stops."""

from __future__ import annotations

import asyncio
import contextlib
import resource
import socket
import time
from collections.abc import Callable
from email.utils import formatdate

from simproxy.engine.auth import Authenticator
from simproxy.engine.execution.tasks import TaskSet
from simproxy.engine.fleet.config import BACKLOG, ProxyLimits
from simproxy.engine.modes.dispatch import Dispatcher
from simproxy.engine.server.certs import Interception
from simproxy.engine.server.protocol import ProxyProtocol
from simproxy.engine.wire.parse import RequestMemos
from simproxy.engine.wire.response import plain_error

SWEEP_INTERVAL = 1.0
RESERVED_DESCRIPTORS = 256
"""Descriptors a worker keeps out of its proxy connections' reach: the admin API's connections, the
store's, the real services' (capture, spy), files, the PAC child."""
DRAIN_GRACE = 8.0
"""Seconds a stopping worker waits for the answers of requests in flight."""
RENEW_AFTER = 0.001
"""How long after a second starts the ``Date`` value is renewed: a timer that fired a little early
finds the old second and waits again, rather than spin until the new one."""


class HttpDate:
    """The ``Date`` header value. While ``keep`` runs (a task of the proxy server) it is renewed as
    each second starts and a request reads it as it is; otherwise it is made at most once a second."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._second = -1
        self._value = b""
        self._kept = False

    def value(self) -> bytes:
        return self._value if self._kept else self._renewed()

    def _renewed(self) -> bytes:
        now = self._clock()
        second = int(now)
        if second != self._second:
            self._second = second
            self._value = formatdate(now, usegmt=True).encode("ascii")
        return self._value

    async def keep(self) -> None:
        """Renew the value just after each second starts, for as long as this runs."""
        try:
            while True:
                self._renewed()
                self._kept = True
                await asyncio.sleep(self._second + 1 + RENEW_AFTER - self._clock())
        finally:
            self._kept = False


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
        auth: Authenticator | None = None,
        chunked_tunnel: bool = False,
        product: str = "simproxy",
        go_layout: bool = False,
    ) -> None:
        self.dispatcher = dispatcher
        self.auth = auth
        """``-auth``: every request needs ``Proxy-Authorization`` (checked on the CONNECT for a tunnel)."""
        self.port = port
        self.limits = limits or ProxyLimits()
        self.tls = tls
        self.plain_http_tunneling = plain_http_tunneling
        self.chunked_tunnel = chunked_tunnel
        self.go_layout = go_layout
        """``-compat hoverfly``: answers laid out as Go's server writes Hoverfly's (engine/wire/golayout.py)."""
        """``-compat hoverfly``: every answer inside a tunnel is chunked and closes the connection."""
        self.date = HttpDate()
        self.internal_error = plain_error(500, f"Internal error in {product}\n")
        """The answer to a request whose handling raised (a bug), naming the product (``-compat``)."""
        self.header_names: dict[str, str] = {}
        """Canonical header names seen by this worker's connections (engine/wire/parse.py)."""
        self.requests = RequestMemos()
        """The requests built from bytes that came before, by way of arriving (engine/wire/parse.py)."""
        self.max_connections = connection_budget()
        """Proxy connections this worker holds at once; one more is answered 503 and closed."""
        self.tasks = TaskSet()
        self.connections: set[ProxyProtocol] = set()
        self._server: asyncio.Server | None = None
        self._quiet: asyncio.Event | None = None
        """While stopping: set once no connection has an answer still to write."""

    async def start(self, sock: socket.socket) -> None:
        """Serve connections accepted on ``sock``, a listening socket (admin/process/listeners.py binds it)."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: ProxyProtocol(self), sock=sock, backlog=BACKLOG)
        self.tasks.spawn(self._sweep(), name="proxy-timeouts")
        self.tasks.spawn(self.date.keep(), name="date-header")

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
