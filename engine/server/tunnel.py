"""What a ``CONNECT`` turns a proxy connection into: TLS intercepted with a certificate from
simproxy's CA, or, for a host the destination filter leaves out, a blind tunnel to the real host.

A blind tunnel reads each side only while the other side's write buffer is under its high-water mark
(``ProxyLimits.write_buffer``): a client that never reads stops simproxy reading the host, a host
that never reads stops simproxy reading the client. Either way a tunnel holds at most about one
write buffer per direction, whatever its two ends do; the kernel's buffers hold the rest.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import ssl
from collections.abc import Callable
from types import MappingProxyType
from typing import cast

from simproxy.engine.server.certs import CertificateError, Interception
from simproxy.store import StoreError

log = logging.getLogger(__name__)

DEFAULT_PORT = 443
CONNECT_TIMEOUT = 10.0
"""Seconds to connect to a blind tunnel's host (then 502), or for the client's TLS handshake."""
_REG_NAME = re.compile(r"(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})+")
"""A host name or IPv4 address as RFC 3986 writes one (``reg-name``): no ``:``, ``@``, ``/``, space."""
_PORT = re.compile(r"[0-9]{1,5}")


_SCHEME_PORTS = MappingProxyType({"http": 80, "https": 443})


def split_authority(authority: str) -> tuple[str, int] | None:
    """``(host, port)`` of a CONNECT's ``host:port`` (``[v6]:port`` too, the host then without its
    brackets; ``443`` when no port is given), or None when the target is no such thing: an empty
    host, an IPv6 address without brackets, a port that is empty, not a number or not 1-65535.

    Some clients (Go's, through a proxy) send an absolute URI instead (``CONNECT http://host/``):
    its host and port are taken, the port by its scheme when it names none (Hoverfly answers it)."""
    scheme, separator, rest = authority.partition("://")
    if separator and scheme.lower() in _SCHEME_PORTS:
        authority = rest.partition("/")[0]
        if authority and ":" not in authority.rpartition("]")[2]:  # no port, [v6] alone included
            authority = f"{authority}:{_SCHEME_PORTS[scheme.lower()]}"
    if authority.startswith("["):
        host, bracket, rest = authority[1:].partition("]")
        if not bracket or not _is_ipv6(host):
            return None
    else:
        host, colon, port = authority.partition(":")
        rest = colon + port
        if not _REG_NAME.fullmatch(host):
            return None
    if not rest:
        return host, DEFAULT_PORT
    if rest[0] != ":" or not _PORT.fullmatch(rest[1:]) or not 0 < int(rest[1:]) < 65536:
        return None
    return host, int(rest[1:])


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


async def start_tls(
    transport: asyncio.Transport, protocol: asyncio.Protocol, tls: Interception, authority: str, host: str
) -> asyncio.Transport | None:
    """The client's side of an intercepted CONNECT turned into TLS, with a certificate for ``host``;
    None, the connection closed, when that fails or the client left meanwhile."""
    loop = asyncio.get_running_loop()
    try:
        context = (await tls.leaves()).context(host)
        wrapped = await loop.start_tls(
            transport, protocol, context, server_side=True, ssl_handshake_timeout=CONNECT_TIMEOUT
        )
    except (OSError, ssl.SSLError, TimeoutError, ConnectionError, StoreError, CertificateError) as exc:
        log.debug("TLS handshake with the client for %s failed: %s", authority, exc)
        transport.close()
        return None
    if wrapped is None or transport.is_closing():
        transport.close()
        return None
    return wrapped


async def open_tunnel(
    client: asyncio.Transport,
    host: str,
    port: int,
    write_buffer: int,
    hold_client: Callable[[], None],
    release_client: Callable[[], None],
) -> Tunnel | None:
    """Connect to ``host:port`` for a blind tunnel and answer the CONNECT: ``200``, or ``502`` and
    the close (then None, as when the client left meanwhile). The host is not read yet: the caller
    resumes it once the client's side is ready for what it sends."""
    loop = asyncio.get_running_loop()
    try:
        _, tunnel = await asyncio.wait_for(
            loop.create_connection(lambda: Tunnel(client, write_buffer, hold_client, release_client), host, port),
            CONNECT_TIMEOUT,
        )
    except (OSError, TimeoutError) as exc:
        client.write(f"HTTP/1.0 502 Bad Gateway\r\n\r\n{exc}".encode())
        client.close()
        return None
    if client.is_closing():
        tunnel.close()
        return None
    client.write(b"HTTP/1.0 200 Connection established\r\n\r\n")
    tunnel.answered()
    return tunnel


class Tunnel(asyncio.Protocol):
    """The host's side of a blind tunnel; the client's side is the proxy connection that asked for it.

    What the host sends is written to the client; what the client sends comes in through ``send``.
    The client's connection calls ``pause_reading``/``resume_reading`` as its own write buffer fills
    and drains; ``hold_client``/``release_client`` do the same the other way round.
    """

    busy = False
    """A blind tunnel owes no answer: a stopping worker does not wait for it."""

    def __init__(
        self,
        client: asyncio.Transport,
        write_buffer: int,
        hold_client: Callable[[], None],
        release_client: Callable[[], None],
    ) -> None:
        self.client = client
        self.write_buffer = write_buffer
        self.hold_client = hold_client
        """Stop reading the client: the host's write buffer is above its high-water mark."""
        self.release_client = release_client
        self.transport: asyncio.Transport | None = None
        self._early: list[bytes] | None = []
        """What the host sent before the CONNECT was answered (a host that speaks first: SMTP, SSH);
        None once it was. uvloop starts reading right after ``connection_made``, whatever it did."""
        self._closed_early = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports do not subclass asyncio's
        self.transport.set_write_buffer_limits(high=self.write_buffer, low=self.write_buffer // 4)
        # nothing from the host before the CONNECT is answered: the client's side resumes reading
        self.transport.pause_reading()

    def data_received(self, data: bytes) -> None:
        if self._early is not None:  # the CONNECT is not answered yet: one read is held, then no more
            self._early.append(data)
            if self.transport is not None:
                self.transport.pause_reading()
            return
        self.client.write(data)

    def answered(self) -> None:
        """The CONNECT's ``200`` is written: what the host sent meanwhile follows it (and its close)."""
        early, self._early = self._early or [], None
        for data in early:
            self.client.write(data)
        if self._closed_early:
            self.client.close()

    def connection_lost(self, exc: Exception | None) -> None:
        """The host closed (or failed): the client gets what is buffered for it, then the close."""
        self.transport = None
        if self._early is not None:
            self._closed_early = True  # after the CONNECT's answer and what the host sent first
            return
        self.client.close()

    def pause_writing(self) -> None:
        self.hold_client()

    def resume_writing(self) -> None:
        self.release_client()

    # -- called by the client's side ----------------------------------------------------------------

    def send(self, data: bytes | memoryview) -> None:
        """Bytes from the client, for the host."""
        if self.transport is not None:
            self.transport.write(data)

    def pause_reading(self) -> None:
        """The client's write buffer is above its high-water mark: read nothing more from the host."""
        if self.transport is not None:
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self.transport is not None:
            self.transport.resume_reading()

    def close(self) -> None:
        """The client left: the host gets what is buffered for it, then the close."""
        if self.transport is not None:
            self.transport.close()
