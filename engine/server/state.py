"""What the connections of one worker's proxy port share: ``ServerState``, handed to each
connection (engine/server/protocol.py) in place of the server that accepted it, and ``HttpDate``.

The listener (engine/server/listener.py) builds the state and accepts the connections; a
connection reads the state and never the listener, so the two modules import one way only.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any, Protocol

from simproxy.engine.execution.tasks import TaskSet
from simproxy.engine.fleet.config import ProxyLimits
from simproxy.engine.server.certs import Interception
from simproxy.engine.server.http2_wire import AnswerBlocks
from simproxy.engine.wire.parse import RequestMemos
from simproxy.engine.wire.request import Received, RequestDetails
from simproxy.engine.wire.response import Wire

RENEW_AFTER = 0.001
"""How long after a second starts the ``Date`` value is renewed: a timer that fired a little early
finds the old second and waits again, rather than spin until the new one."""


class HttpDate:
    """The ``Date`` header value. While ``keep`` runs (a task of the proxy server) it is renewed as
    each second starts and a request reads it as it is (``kept``); otherwise it is made at most once
    a second."""

    __slots__ = ("_clock", "_second", "_value", "kept")

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._second = -1
        self._value = b""
        self.kept = b""
        """The value while ``keep`` runs, else empty: ``kept or value()`` reads it without a call."""

    def value(self) -> bytes:
        return self.kept or self._renewed()

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
                self.kept = self._renewed()
                await asyncio.sleep(self._second + 1 + RENEW_AFTER - self._clock())
        finally:
            self.kept = b""


class Answering(Protocol):
    """What a connection asks of the dispatcher (engine/modes/dispatch.py ``Dispatcher``)."""

    @property
    def webserver(self) -> bool:
        """``-webserver``: requests come in origin form."""

    @property
    def rng(self) -> random.Random:
        """The randomness of the faults that send random bytes."""

    def handle(self, req: RequestDetails) -> Wire | Coroutine[Any, Any, Wire]:
        """The answer to ``req``: ready, or to come."""

    def served(self, wire: Wire, received: Received) -> None:
        """``wire`` was written for the request ``received`` tells of."""

    def intercepts(self, authority: str) -> bool:
        """Whether a CONNECT to ``authority`` is intercepted (TLS), not a blind tunnel."""


class ProxyAuth(Protocol):
    """``-auth`` as the proxy port checks it (engine/auth.py ``Authenticator``)."""

    def proxy_passed(self, header: str | None) -> bool:
        """Whether this ``Proxy-Authorization`` value passed a full check a moment ago (no I/O)."""

    async def proxy_check(self, header: str | None) -> str | None:
        """None when ``Proxy-Authorization`` lets the request through, else the 407's body text."""


class Connection(Protocol):
    """What the listener asks of a connection it accepted."""

    @property
    def busy(self) -> bool:
        """Requests it received still wait for their answers."""

    def check_timeouts(self, now: float, limits: ProxyLimits) -> None:
        """The sweep's look at it: 408, or the close, when it has not moved for too long."""

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True, eq=False)
class ServerState:
    """One worker's proxy port as its connections see it: settings, shared helpers, bookkeeping."""

    dispatcher: Answering
    limits: ProxyLimits
    port: int
    """The proxy port: a proxy-mode request addressed to it is refused (engine/wire/parse.py)."""
    internal_error: Wire
    """The answer to a request whose handling raised (a bug), naming the product (``-compat``)."""
    max_connections: int
    """Proxy connections this worker holds at once; one more is answered 503 and closed."""
    note_answered: Callable[[], None]
    """A connection wrote its last pending answer, or closed: a stop may be waiting for that."""
    tls: Interception | None = None
    """The CA that intercepts CONNECTs; None: a CONNECT is answered 501."""
    auth: ProxyAuth | None = None
    """``-auth``: every request needs ``Proxy-Authorization`` (checked on the CONNECT for a tunnel)."""
    plain_http_tunneling: bool = False
    """``-plain-http-tunneling``: a CONNECT to a port other than 443 carries plain HTTP."""
    chunked_tunnel: bool = False
    """``-compat hoverfly``: every answer inside a tunnel is chunked and closes the connection."""
    go_layout: bool = False
    """``-compat hoverfly``: answers laid out as Go's server writes Hoverfly's (engine/wire/golayout.py)."""
    http2: bool = False
    """HTTP/2 is spoken (engine/server/http2.py): h2c, ``Upgrade: h2c`` and ALPN ``h2`` in tunnels."""
    date: HttpDate = field(default_factory=HttpDate)
    tasks: TaskSet = field(default_factory=TaskSet)
    """The connections' own tasks (answers to come, TLS handshakes, tunnels), ended with the server."""
    connections: set[Connection] = field(default_factory=set)
    header_names: dict[str, str] = field(default_factory=dict)
    """Canonical header names seen by this worker's connections (engine/wire/parse.py)."""
    requests: RequestMemos = field(default_factory=RequestMemos)
    """The requests built from bytes that came before, by way of arriving (engine/wire/parse.py)."""
    http2_answers: AnswerBlocks = field(default_factory=AnswerBlocks)
    """The answers' HTTP/2 header blocks, made once (engine/server/http2_wire.py)."""
