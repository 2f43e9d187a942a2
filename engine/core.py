"""The engine a worker runs for every proxied request: the current mode applied to one request.

Framework-free: it takes a ``RequestDetails`` and returns the ``Wire`` to send, synchronously
when it can (simulate mode never waits on anything), or as a coroutine when it must wait.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any

from engine.goregex import GoRegex, compile_go
from engine.matching import Strategy, match
from engine.miss import error_text, miss_text
from engine.request import RequestDetails
from engine.responses import Wire, plain_error
from engine.runtime import Runtime, Snapshot

log = logging.getLogger(__name__)

Outcome = Wire | Coroutine[Any, Any, Wire]


class Engine:
    def __init__(self, runtime: Runtime, *, webserver: bool = False) -> None:
        self.runtime = runtime
        self.webserver = webserver
        self._destinations: dict[str, GoRegex] = {}
        self._state: dict[str, str] = {}  # stays empty until the shared state store arrives

    def handle(self, req: RequestDetails) -> Outcome:
        snap = self.runtime.snapshot
        config = snap.config
        if not self.webserver and not self._in_destination(config.destination, req):
            return plain_error(
                502,
                error_text(
                    "There was an error when forwarding the request to the intended destination",
                    f"{req.destination} is outside the destination filter {config.destination!r}; "
                    "passing such requests through is not supported yet",
                ),
            )
        mode = config.mode
        self.runtime.count(mode)
        if mode == "simulate":
            return self._simulate(snap, req)
        return plain_error(
            502,
            error_text("There was an error when processing the request", f"{mode} mode is not supported yet"),
        )

    def _simulate(self, snap: Snapshot, req: RequestDetails) -> Wire:
        strategy: Strategy = "strongest" if snap.config.strategy == "strongest" else "first"
        result = match(snap.simulation, req, self._state, strategy, self.webserver)
        if result.pair is None:
            return plain_error(502, miss_text(req, result.closest))
        rendered = result.pair.rendered
        return rendered.webserver if self.webserver else rendered.proxy

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
