"""What the admin handlers of one worker work with, built once per worker by the server."""

from __future__ import annotations

from dataclasses import dataclass

from simproxy.admin.settings import Settings
from simproxy.engine.auth import Authenticator
from simproxy.engine.execution.offload import Offloader
from simproxy.engine.fleet.runtime import Runtime
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.outbound.middleware import MiddlewareRunner
from simproxy.engine.server.certs import Interception
from simproxy.store import CacheStore, DiffStore, JournalStore, SharedState, Telemetry


@dataclass(frozen=True, slots=True)
class Services:
    settings: Settings
    runtime: Runtime
    registry: MatcherRegistry
    """Compiles what an admin write brings: what Hoverfly accepts though it cannot work is refused,
    or with ``-compat hoverfly`` loaded as Hoverfly runs it (the runtime's own registry loads it always)."""
    middleware: MiddlewareRunner
    """The worker's runner: ``PUT .../middleware`` tries a new middleware with it first."""
    interception: Interception | None = None
    """The CA that clients trust to let simproxy intercept HTTPS, found on first use."""
    auth: Authenticator | None = None
    """``-auth``: checks logins and tokens (None: authentication is off)."""

    @property
    def offload(self) -> Offloader:
        """Runs the admin API's heavy work (large simulations and journals) off the event loop:
        the runtime's, as there must be one per process (engine/execution/offload.py)."""
        return self.runtime.offload

    # the shared resources the handlers read and clear, each by its own narrow type (one store behind them)

    @property
    def state(self) -> SharedState:
        return self.runtime.store.state

    @property
    def journal(self) -> JournalStore:
        return self.runtime.store.journal

    @property
    def cache(self) -> CacheStore:
        return self.runtime.store.cache

    @property
    def diffs(self) -> DiffStore:
        return self.runtime.store.diffs

    @property
    def telemetry(self) -> Telemetry:
        return self.runtime.store.telemetry
