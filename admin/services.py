"""What the admin handlers of one worker work with, built once per worker by the server."""

from __future__ import annotations

from dataclasses import dataclass

from admin.settings import Settings
from engine.auth import Authenticator
from engine.matchers import MatcherRegistry
from engine.middleware import MiddlewareRunner
from engine.runtime import Runtime


@dataclass(frozen=True, slots=True)
class Services:
    settings: Settings
    runtime: Runtime
    registry: MatcherRegistry
    middleware: MiddlewareRunner
    """The worker's runner: ``PUT .../middleware`` tries a new middleware with it first."""
    ca_certificate: bytes = b""
    """The CA certificate (PEM) that clients trust to let simproxy intercept HTTPS."""
    auth: Authenticator | None = None
    """``-auth``: checks logins and tokens (None: authentication is off)."""
