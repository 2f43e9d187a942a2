"""Concise constructors for the engine tests: requests, pairs written as v5 JSON, compiled simulations."""

from __future__ import annotations

from typing import Any

from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.matching.scoring import CompiledSimulation, MatchResult, Strategy, compile_simulation, match
from simproxy.engine.simulation.codec import decode_simulation
from simproxy.engine.simulation.model import Matcher, Simulation
from simproxy.engine.wire.request import RequestDetails

REGISTRY = MatcherRegistry()


def request(
    path: str = "/",
    method: str = "GET",
    destination: str = "example.com",
    query: str = "",
    headers: dict[str, list[str]] | None = None,
    body: str = "",
    scheme: str = "http",
) -> RequestDetails:
    """A request as the proxy hands it to the engine (``query`` is the raw query string)."""
    return RequestDetails.build(method, scheme, destination, path, query, body, headers or {})


def m(name: str, value: Any, **extra: Any) -> dict[str, Any]:
    """A v5 matcher object, e.g. ``m("glob", "/a*")``; ``extra`` adds ``config`` or ``doMatch``."""
    return {"matcher": name, "value": value, **extra}


def exact(value: Any) -> dict[str, Any]:
    return m("exact", value)


def glob(value: Any) -> dict[str, Any]:
    return m("glob", value)


def regex(value: Any) -> dict[str, Any]:
    return m("regex", value)


def pair(request: dict[str, Any] | None = None, **response: Any) -> dict[str, Any]:
    """A v5 pair; the response defaults to ``{"status": 200}``."""
    return {"request": request or {}, "response": {"status": 200, **response}}


def simulation(*pairs: dict[str, Any], **data: Any) -> Simulation:
    """Decode v5 pairs (and other ``data`` members) into the domain model."""
    return decode_simulation({"pairs": list(pairs), **data})


def compiled(*requests: dict[str, Any]) -> CompiledSimulation:
    """A compiled simulation with one pair per request matcher set, in order."""
    return compile_simulation(simulation(*(pair(r) for r in requests)), REGISTRY)


def run(
    sim: CompiledSimulation,
    req: RequestDetails,
    state: dict[str, str] | None = None,
    strategy: Strategy = "strongest",
    webserver: bool = False,
) -> MatchResult:
    return match(sim, req, state or {}, strategy, webserver)


def hit(sim: CompiledSimulation, req: RequestDetails, state: dict[str, str] | None = None, **kwargs: Any) -> int | None:
    """Index of the pair that answers ``req``, or None for a miss."""
    result = run(sim, req, state, **kwargs)
    return None if result.pair is None else result.pair.index


def closest_index(sim: CompiledSimulation, result: MatchResult) -> int | None:
    """Index of the closest-miss pair (by identity: duplicate pairs are equal but distinct)."""
    if result.closest is None:
        return None
    return next(cp.index for cp in sim.pairs if cp.pair is result.closest.pair)


def matcher(name: str, value: Any, config: dict[str, Any] | None = None, then: Matcher | None = None) -> Matcher:
    return Matcher(name, value, config, then)
