"""The dispatcher a worker runs for every proxied request: the destination filter, CORS, the
current mode from the mode table, and whether the answer gets a fault (its pair's or a global
one, rolled once); after the answer is written, the observers.

Framework-free: it takes a ``RequestDetails`` and returns the ``Wire`` to send, synchronously
when the mode can (simulate mode never waits on anything), or as a coroutine when it must wait.
"""

from __future__ import annotations

import random
import time
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from simproxy.engine.fleet.config import DEFAULT_MAX_PAIRS, Mode
from simproxy.engine.fleet.runtime import Runtime, Snapshot
from simproxy.engine.gocompat.goregex import GoRegex, InvalidPattern, compile_go
from simproxy.engine.modes.base import Kit, Observer, Outcome, ProxyMode
from simproxy.engine.modes.capture import Captures
from simproxy.engine.modes.cors import allow_origin, is_preflight, preflight
from simproxy.engine.modes.forwarding import Forwarder
from simproxy.engine.modes.observers import ActionObserver, JournalObserver, MetricsObserver
from simproxy.engine.modes.simulator import Simulator
from simproxy.engine.modes.table import MODE_CLASSES, build_modes
from simproxy.engine.outbound.actions import ActionRunner
from simproxy.engine.outbound.middleware import DEFAULT_TIMEOUT as DEFAULT_MIDDLEWARE_TIMEOUT
from simproxy.engine.outbound.middleware import MiddlewareRunner
from simproxy.engine.outbound.upstream import Upstream
from simproxy.engine.simulation.faults import FaultRules, global_fault, rolled
from simproxy.engine.wire.request import Received, RequestDetails
from simproxy.engine.wire.response import Wire

__all__ = ("Dispatcher", "Outcome", "Received")

_UNOBSERVED = frozenset({"relayed", "refused"})
"""Outside the destination filter, or without proxy credentials: not journaled or counted."""


class Dispatcher:
    def __init__(
        self,
        runtime: Runtime,
        *,
        webserver: bool = False,
        rng: random.Random | None = None,
        upstream: Upstream | None = None,
        own_ports: frozenset[int] = frozenset(),
        cors: bool = False,
        middleware_timeout: float = DEFAULT_MIDDLEWARE_TIMEOUT,
        middleware_queue: int = 0,
        max_pairs: int = DEFAULT_MAX_PAIRS,
    ) -> None:
        self.runtime = runtime
        self.webserver = webserver
        self.cors = cors
        self.rng = rng or random.Random()
        """The worker's randomness: delays, templates, and whether a request gets its fault."""
        self.upstream = upstream or Upstream()
        self.middleware = MiddlewareRunner(
            self.upstream, timeout=middleware_timeout, queue=middleware_queue, go_errors=runtime.dialect.is_hoverfly
        )
        self.actions = ActionRunner(
            self.upstream,
            runtime.store.journal,
            runtime.records,
            hoverfly_payload=runtime.dialect.go_layout,
            metrics=runtime.metrics,
        )
        self.forwarder = Forwarder(
            runtime, self.upstream, self.middleware, webserver=webserver, own_ports=own_ports, rng=self.rng
        )
        simulator = Simulator(runtime, webserver=webserver, rng=self.rng)
        self.modes: dict[str, ProxyMode] = build_modes(
            Kit(runtime, simulator, self.forwarder, Captures(runtime, max_pairs))
        )
        journal = JournalObserver(runtime.records)
        acting = frozenset(name for name, cls in MODE_CLASSES.items() if cls.runs_actions)
        self.observers: tuple[Observer, ...] = (
            journal,
            MetricsObserver(runtime.metrics),
            ActionObserver(self.actions, runtime, journal, acting),
        )
        self._tell = tuple(observer.served for observer in self.observers)
        self._destinations: dict[str, GoRegex] = {}
        self._closed = False

    async def prepare(self, snap: Snapshot) -> None:
        """Ready what ``snap``'s mode needs before the worker says it applied it: a mode that forwards
        gets its HTTP client loaded, so the first request after ``PUT .../mode`` is not the slow one.
        Nothing once closed: a worker that is stopping makes no new HTTP client."""
        if snap.config.mode != Mode.SIMULATE and not self._closed:
            await self.upstream.prepare()

    async def aclose(self) -> None:
        self._closed = True
        await self.actions.aclose()
        await self.forwarder.pac.aclose()
        await self.upstream.aclose()
        await self.middleware.aclose()

    def handle(self, req: RequestDetails) -> Outcome:
        snap = self.runtime.snapshot
        config = snap.config
        if not self.webserver and not self._in_destination(config.destination, req):
            return self.forwarder.relay(req)
        self.runtime.count(config.mode)
        outcome = self._with_cors(snap, req) if self.cors else self.modes[config.mode].handle(snap, req)
        if snap.simulation.faulty:  # the one check a simulation without faults costs
            return self._faulted(snap.simulation.faults, req, outcome)
        return outcome

    def served(self, wire: Wire, received: Received) -> None:
        """The server wrote ``wire`` for a request: tell the observers (latency includes any delay)."""
        if wire.outcome in _UNOBSERVED:
            return
        seconds, mode = time.perf_counter() - received.perf, self.runtime.snapshot.config.mode
        for tell in self._tell:
            tell(wire, received, seconds, mode)

    def _faulted(self, rules: FaultRules, req: RequestDetails, outcome: Outcome) -> Outcome:
        """The answer with the fault this request gets (``with_fault_decided``)."""
        if isinstance(outcome, Wire):
            return with_fault_decided(rules, req, outcome, self.rng)
        return self._faulted_later(rules, req, outcome)

    async def _faulted_later(self, rules: FaultRules, req: RequestDetails, outcome: Coroutine[Any, Any, Wire]) -> Wire:
        return with_fault_decided(rules, req, await outcome, self.rng)

    def _with_cors(self, snap: Snapshot, req: RequestDetails) -> Outcome:
        if is_preflight(req):
            return preflight(req)  # journaled and counted, never matched or forwarded
        outcome = self.modes[snap.config.mode].handle(snap, req)
        if isinstance(outcome, Wire):
            return allow_origin(req, outcome)
        return self._cors_after(req, outcome)

    async def _cors_after(self, req: RequestDetails, outcome: Coroutine[Any, Any, Wire]) -> Wire:
        return allow_origin(req, await outcome)

    def intercepts(self, authority: str) -> bool:
        """Whether a CONNECT to ``authority`` is intercepted: always, unless the destination names a
        scheme and host (``https://api.example.com``) that the tunnel's does not match (Hoverfly)."""
        destination = self.runtime.snapshot.config.destination
        if "://" not in destination:
            return True
        parsed = urlsplit(destination)
        if not parsed.netloc:
            return True
        key = f"{parsed.scheme}://{parsed.netloc}"
        pattern = self._destinations.get(key)
        if pattern is None:
            try:
                pattern = self._destinations[key] = compile_go(key)
            except InvalidPattern:
                return True
        return pattern.search(f"https://{authority}") is not None

    def _in_destination(self, destination: str, req: RequestDetails) -> bool:
        """Hoverfly's filter: the regex may match the path, host+path or scheme://host+path."""
        if destination in (".", ""):
            return True
        pattern = self._destinations.get(destination)
        if pattern is None:
            pattern = self._destinations[destination] = compile_go(destination)
        host_path = req.destination + req.path
        return bool(
            pattern.search(req.path) or pattern.search(host_path) or pattern.search(f"{req.scheme}://{host_path}")
        )


def with_fault_decided(rules: FaultRules, req: RequestDetails, wire: Wire, rng: random.Random) -> Wire:
    """``wire`` as this request gets it, its ``fraction`` rolled here, the one roll an answer takes:
    with its pair's own fault, else with the first global rule's that applies to ``req``, when the
    roll gives it this request; without any otherwise. The server writes a fault it is handed."""
    own = wire.fault
    if own is not None:
        return wire if rolled(own, rng) else replace(wire, fault=None)
    fault = global_fault(rules, req.destination, req.path, req.method, rng)
    return wire if fault is None else replace(wire, fault=fault)
