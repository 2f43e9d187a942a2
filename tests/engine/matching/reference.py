"""Hoverfly's own matching algorithm, visiting every pair: the reference the candidate index and the
closest-miss ranking of ``engine/matching/scoring.py`` are tested against (never used to serve)."""

from __future__ import annotations

from collections.abc import Mapping

from simproxy.engine.matching.scoring import (
    ClosestMiss,
    CompiledPair,
    CompiledSimulation,
    MatchResult,
    Strategy,
    _depends_on_headers_or_state,
    evaluate,
)
from simproxy.engine.wire.request import RequestDetails


def full_scan(
    sim: CompiledSimulation, req: RequestDetails, state: Mapping[str, str], strategy: Strategy, webserver: bool
) -> MatchResult:
    """Hoverfly's own algorithm, visiting every pair; the reference the index is tested against."""
    best: CompiledPair | None = None
    best_score = 0
    closest: tuple[CompiledPair, list[str]] | None = None
    closest_score = 0
    blocked = False
    for cp in sim.pairs:
        score, missed = evaluate(cp, req, state, webserver)
        blocked = blocked or _depends_on_headers_or_state(cp, missed)
        if not missed:
            if strategy == "first":
                return MatchResult(cp)
            if score >= best_score:
                best, best_score, closest = cp, score, None
        elif best is None and score >= closest_score:
            closest, closest_score = (cp, missed), score
    if best is not None:
        return MatchResult(best, cacheable=not blocked)
    if strategy == "first" or closest is None:
        return MatchResult(None, cacheable=not blocked)
    return MatchResult(
        None, ClosestMiss(closest[0].pair, tuple(closest[1]), dict(state), closest[0].index), cacheable=not blocked
    )
