"""What the admin handlers of one worker work with, built once per worker by the server."""

from __future__ import annotations

from dataclasses import dataclass

from admin.settings import Settings
from engine.auth import Authenticator
from engine.certs import Interception
from engine.matchers import MatcherRegistry
from engine.middleware import MiddlewareRunner
from engine.offload import Offloader
from engine.runtime import Runtime


@dataclass(frozen=True, slots=True)
class Services:
    settings: Settings
    runtime: Runtime
    registry: MatcherRegistry
    middleware: MiddlewareRunner
    """The worker's runner: ``PUT .../middleware`` tries a new middleware with it first."""
    interception: Interception | None = None
    """The CA that clients trust to let simproxy intercept HTTPS, found on first use."""
    auth: Authenticator | None = None
    """``-auth``: checks logins and tokens (None: authentication is off)."""

    @property
    def offload(self) -> Offloader:
        """Runs the admin API's heavy work (large simulations and journals) off the event loop:
        the runtime's, as there must be one per process (engine/offload.py)."""
        return self.runtime.offload
