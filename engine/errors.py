"""Engine errors (a branch of the tree drawn in store/errors.py).

EngineError
├── SimulationError   a simulation that cannot be compiled (admin answers 400, nothing stored)
│   └── InvalidValue      a matcher value Hoverfly accepts though it cannot work (-compat hoverfly loads it)
├── ImportFailure     a simulation Hoverfly rejects at import time with 500 "An error occurred: ..."
├── UpstreamError     a forwarded request got no usable answer (the proxy answers Hoverfly's 502)
├── RequestRejected   a request the proxy cannot serve (no Host, addressed to the proxy itself)
├── WriteConflict     a compare-and-set write kept meeting other writes (engine/fleet/cas.py)
│   └── CaptureConflict   captured pairs could not be stored: the simulation kept changing
└── AuthError         -auth refused someone (admin answers with the subclass's status)
    ├── LoginRefused      wrong user name or password (401)
    ├── TooManyAttempts   the fleet-wide lock-out after failed logins (429)
    └── TokenRejected     a bearer token that is missing, forged, expired or logged out (401)
"""

from __future__ import annotations

from collections.abc import Callable

from simproxy.store.errors import SimproxyError


class EngineError(SimproxyError):
    """Base class of engine errors."""


class SimulationError(EngineError):
    """The simulation is well-formed JSON of the right shape but cannot be used.

    ``path`` points at the offending element, e.g. ``data.pairs[3].request.path[0]``.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


def _never(_actual: str) -> bool:
    return False


class InvalidValue(SimulationError):
    """A matcher value that cannot do what it says (a number for ``exact``, a regex or JSONPath that
    does not compile, text that is not JSON for ``json``...), which Hoverfly nevertheless stores: its
    matcher then fails at run time and answers ``runtime(input)``, most often "no match".

    The spec dialect refuses it with 400 (``refusal``); ``-compat hoverfly``, and every worker
    loading a stored document, compiles ``runtime`` in its place, as Hoverfly runs it."""

    def __init__(
        self, path: str, message: str, runtime: Callable[[str], bool] = _never, behaviour: str = "never matches"
    ) -> None:
        super().__init__(path, message)
        self.runtime = runtime
        self.behaviour = behaviour

    def refusal(self) -> SimulationError:
        """The spec dialect's 400: what is wrong, and what ``-compat hoverfly`` would do instead."""
        hint = f"-compat hoverfly loads it as Hoverfly does: a matcher that {self.behaviour}"
        return SimulationError(self.path, f"{self.message} ({hint})")


class ImportFailure(EngineError):
    """A failure Hoverfly reports as 500 ``An error occurred: <reason>`` (e.g. a bad delay)."""


class UpstreamError(EngineError):
    """The request could not be sent or its response not read; the text says why, as Go's client
    words it (``Get "http://host/path": dial tcp ...``). ``cause`` is the reason alone, as Go's
    transport words it when no client wraps it (``dial tcp ...``): what a relayed request's 500 says."""

    def __init__(self, text: str, *, cause: str | None = None) -> None:
        super().__init__(text)
        self.cause = text if cause is None else cause

    @classmethod
    def of_call(cls, operation: str, cause: str) -> UpstreamError:
        """Go's client's words for a failed ``operation`` (``_go_op``), the transport's ``cause`` kept."""
        return cls(f"{operation}: {cause}", cause=cause)


class RequestRejected(EngineError):
    """A request the proxy answers with ``status`` and the plain-text ``text``, as Hoverfly does."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text.strip())
        self.status = status
        self.text = text


class WriteConflict(EngineError):
    """Every attempt of a compare-and-set write met a concurrent write of the same document."""


class CaptureConflict(WriteConflict):
    """Every attempt to store captured pairs met a concurrent write of the simulation."""


class AuthError(EngineError):
    """Authentication refused a login, a token or proxy credentials."""


class LoginRefused(AuthError):
    """Wrong user name or password."""


class TooManyAttempts(AuthError):
    """Logins are locked: too many failed in the last 10 minutes (fleet-wide)."""


class TokenRejected(AuthError):
    """A bearer token that is missing, forged, expired, for an unknown user, or logged out."""
