"""Mutual TLS towards real services (Hoverfly's ``-client-authentication-*`` flags): requests to a
destination the regular expression finds present a client certificate; the service's certificate
is checked against the given CA, or not checked at all when none is given, as in Hoverfly."""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field

from simproxy.engine.gocompat.goregex import GoRegex, compile_go


@dataclass(frozen=True, slots=True)
class ClientAuthentication:
    destination: str
    """A Go regular expression searched in the request's destination (host and port)."""
    cert: str
    key: str
    ca_cert: str = ""
    """PEM file of the CA that signs the services' certificates; "" accepts any certificate."""
    _pattern: GoRegex = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_pattern", compile_go(self.destination))

    def applies_to(self, destination: str) -> bool:
        return self._pattern.search(destination) is not None

    def context(self) -> ssl.SSLContext:
        """A client context with the certificate (``OSError``/``ssl.SSLError`` when a file is unusable)."""
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        context.load_cert_chain(self.cert, self.key)
        if self.ca_cert:
            context.load_verify_locations(self.ca_cert)
        else:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context
