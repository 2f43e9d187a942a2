"""A ``CONNECT`` on a proxy connection, and proxy authentication (``-auth``): ``ConnectHandler``.

``CONNECT`` (hoverfly-admin.md §7.3) is answered ``200`` and then, by default, intercepted: the
same connection turns into TLS with a certificate for the host signed by simproxy's CA, and the
requests inside are handled like any other, with scheme ``https``. A host the destination filter
leaves out gets a blind TCP tunnel (engine/server/tunnel.py); with ``-plain-http-tunneling`` a
CONNECT to a port other than 443 carries plain HTTP.

With ``-auth`` every request needs ``Proxy-Authorization``: a CONNECT's is checked once for its
tunnel, and a value that passed a moment ago is let through without a check (``proxy_passed``);
any other is checked on its turn (``checked_answer``), and a refusal is ``407`` and the close.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from simproxy.engine.server.answers import AnswerQueue
from simproxy.engine.server.flow import HOLD_CONNECT, HOLD_RELAY, ReadGate, limit_writes
from simproxy.engine.server.state import Answering, ProxyAuth, ServerState
from simproxy.engine.server.tunnel import Tunnel, open_tunnel, split_authority, start_tls
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire, proxy_auth_required

PROXY_AUTHORIZATION = b"proxy-authorization"


def proxy_credentials(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The request's ``Proxy-Authorization`` value, if it sent one."""
    for name, value in headers:
        if name.lower() == PROXY_AUTHORIZATION:
            return value.decode("latin-1")
    return None


async def checked_answer(auth: ProxyAuth, dispatcher: Answering, credentials: str | None, req: RequestDetails) -> Wire:
    """The answer to ``req`` once its credentials are checked: a ``407`` when they do not pass."""
    denial = await auth.proxy_check(credentials)
    if denial is not None:
        return proxy_auth_required(denial)
    outcome = dispatcher.handle(req)
    return outcome if isinstance(outcome, Wire) else await outcome


class ConnectHandler:
    """Turns one connection into a tunnel as its ``CONNECT`` asks, once its credentials pass.

    ``enter`` starts the connection's parsing anew for the requests inside the tunnel (authority,
    scheme); ``relay`` hands it a blind tunnel, to which it sends what it reads from then on."""

    def __init__(
        self,
        protocol: asyncio.Protocol,
        state: ServerState,
        answers: AnswerQueue,
        gate: ReadGate,
        enter: Callable[[str, str], None],
        relay: Callable[[Tunnel], None],
    ) -> None:
        self.protocol = protocol
        self.state = state
        self.answers = answers
        self.gate = gate
        self.enter = enter
        self.relay = relay

    def connect(self, authority: str, checked: bool, credentials: str | None) -> None:
        """Answer a CONNECT to ``authority``: at once when no check is needed (``checked``),
        else once ``credentials`` pass (nothing is read meanwhile)."""
        if checked:
            self._open(authority)
            return
        auth = self.state.auth
        if self.answers.transport is None or auth is None:
            return
        self.gate.hold(HOLD_CONNECT)  # nothing of the tunnel is read before the answer

        async def check() -> None:
            denial = await auth.proxy_check(credentials)
            if self.answers.transport is None:
                return
            if denial is not None:
                self.answers.write(proxy_auth_required(denial), False, False)
                return
            self._open(authority)  # it resumes reading once the tunnel is ready

        self.state.tasks.spawn(check(), name="proxy-auth-connect")

    def _open(self, authority: str) -> None:
        state, transport = self.state, self.answers.transport
        if transport is None:
            return
        target = split_authority(authority)
        if target is None:
            self.answers.fail(400, "Bad Request: CONNECT needs host:port")
            return
        if state.tls is None:
            self.answers.fail(501, "No CA")
            return
        host, port = target
        if "://" in authority:  # an absolute URI: the tunnel's requests go to its host and port
            authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if state.plain_http_tunneling and port != 443:
            transport.write(b"HTTP/1.0 200 OK\r\n\r\n")
            self.enter(authority, "http")
            self.gate.release(HOLD_CONNECT)  # held while -auth checked the CONNECT
            return
        self.gate.hold(HOLD_CONNECT)  # nothing is read until the tunnel is ready
        if state.dispatcher.intercepts(authority):
            transport.write(b"HTTP/1.0 200 OK\r\n\r\n")
            state.tasks.spawn(self._start_tls(transport, authority, host), name="proxy-tls")
        else:
            state.tasks.spawn(self._blind_tunnel(transport, host, port), name="proxy-tunnel")

    async def _start_tls(self, transport: asyncio.Transport, authority: str, host: str) -> None:
        assert self.state.tls is not None
        tls = await start_tls(transport, self.protocol, self.state.tls, authority, host)
        if tls is None:
            return
        answers = self.answers
        answers.transport = tls  # it tells of its own write buffer: no hold of the plain one is left
        answers.paused = False
        limit_writes(tls, self.state.limits.write_buffer)
        self.enter(authority, "https")
        self.gate.open(tls)

    async def _blind_tunnel(self, transport: asyncio.Transport, host: str, port: int) -> None:
        """A CONNECT the destination filter leaves out: the bytes go to the host untouched."""
        gate = self.gate
        hold, release = (lambda: gate.hold(HOLD_RELAY)), (lambda: gate.release(HOLD_RELAY))
        relay = await open_tunnel(transport, host, port, self.state.limits.write_buffer, hold, release)
        if relay is None:
            return
        self.relay(relay)
        if not self.answers.paused:
            relay.resume_reading()  # the host's bytes only after the CONNECT's answer
        gate.open(transport)  # from now on only HOLD_RELAY: the host decides when the client is read
