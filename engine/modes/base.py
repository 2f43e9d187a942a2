"""What every mode is, and what the server tells once an answer is out.

A mode takes one request and gives the ``Wire`` to send: synchronously when it can (simulate mode
never waits on anything), or a coroutine when it must wait. After the server has written an answer
it tells the observers (journal, metrics, post-serve actions), in order.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from simproxy.engine.wire.response import Wire

if TYPE_CHECKING:
    from simproxy.engine.fleet.config import Mode
    from simproxy.engine.fleet.runtime import Runtime, Snapshot
    from simproxy.engine.modes.capture import Captures
    from simproxy.engine.modes.forwarding import Forwarder
    from simproxy.engine.modes.simulator import Simulator
    from simproxy.engine.wire.request import Received, RequestDetails

Outcome = Wire | Coroutine[Any, Any, Wire]


class ProxyMode(Protocol):
    """One mode: its name, and its answer to a request under a configuration snapshot."""

    name: ClassVar[Mode]
    runs_actions: ClassVar[bool]
    """Whether a hit in this mode runs the pair's post-serve action (Hoverfly: simulate, synthesize)."""

    def handle(self, snap: Snapshot, req: RequestDetails) -> Outcome: ...


class Observer(Protocol):
    """Told of every request answered in a mode (not of relayed or refused ones), in order: the
    answer written, what the server knew of the request, the seconds from its arrival to its answer
    (delays included) and the mode that answered. Plain arguments, no object made per request: this
    runs once per request on the hot path."""

    def served(self, wire: Wire, received: Received, seconds: float, mode: str) -> None: ...


class Kit:
    """What the modes are built from (one per worker): the mode table hands it to each mode."""

    __slots__ = ("captures", "forwarder", "runtime", "simulator")

    def __init__(self, runtime: Runtime, simulator: Simulator, forwarder: Forwarder, captures: Captures) -> None:
        self.runtime = runtime
        self.simulator = simulator
        self.forwarder = forwarder
        self.captures = captures
