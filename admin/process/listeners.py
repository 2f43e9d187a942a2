"""The listening sockets of one simproxy process: bound once, by the main process, before anything
else starts, and closed first when it stops.

Binding first makes a taken port the first thing a start reports (nothing has been started that
would need stopping). The admin port is one socket, shared by every worker. The proxy port is one
socket with one worker; with several, each worker gets its own ``SO_REUSEPORT`` socket so that the
kernel spreads new connections evenly over them (one shared socket would let whichever worker wakes
first accept a whole burst). Without ``SO_REUSEPORT`` (one worker, not in a fleet) no other program,
an earlier simproxy still stopping included, can listen on the same port beside this one.
"""

from __future__ import annotations

import contextlib
import errno
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from simproxy.engine.fleet.config import BACKLOG
from simproxy.store.errors import SimproxyError


class PortInUse(SimproxyError):
    """A port simproxy must listen on is held by another program (or another simproxy)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a listener binds: ``-listen-on-host`` and a port."""

    host: str
    port: int
    label: str
    """``admin`` or ``proxy``: names the port in messages."""

    def bind(self, *, reuse_port: bool = False) -> socket.socket:
        """A listening socket on this endpoint; ``PortInUse`` when the port is taken."""
        family = _family(self.host)
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # connections left in TIME_WAIT
            if reuse_port:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sock.bind((self.host, self.port))
            sock.listen(BACKLOG)
        except OSError as exc:
            sock.close()
            if exc.errno == errno.EADDRINUSE:
                raise PortInUse(f"the {self.label} port {self.host}:{self.port} is already in use") from None
            raise SimproxyError(
                f"cannot listen on the {self.label} port {self.host}:{self.port}: {exc.strerror}"
            ) from None
        sock.setblocking(False)
        return sock

    def free(self) -> bool:
        """Nothing listens on this endpoint any more: a socket without ``SO_REUSEPORT`` can bind it."""
        try:
            probe = socket.socket(_family(self.host), socket.SOCK_STREAM)
        except OSError:
            return False
        with probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((self.host, self.port))
            except OSError:
                return False
        return True


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def close_all(socks: Iterable[socket.socket]) -> None:
    for sock in socks:
        with contextlib.suppress(OSError):
            sock.close()
