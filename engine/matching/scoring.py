"""Matching a request against a compiled simulation: Hoverfly's scoring, strategies and closest miss.

Pure functions over immutable data. ``CompiledSimulation.candidates`` narrows the pairs that can
possibly hit by their exact path and method, so a hit never scans every pair; the result is the
same as Hoverfly's full scan (core/matching/strongest_match_strategy.go): every field is scored,
``exact`` earns 2 points, ties go to the later pair, and a miss reports the best-scoring pair.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from simproxy.engine.matching.candidates import PairIndex
from simproxy.engine.matching.registry import CompiledMatcher, MatcherRegistry
from simproxy.engine.matching.stategroups import StateLayout, state_layout
from simproxy.engine.openapi.validate import Contracts
from simproxy.engine.simulation.delays import Delays
from simproxy.engine.simulation.faults import FaultRules, compile_faults
from simproxy.engine.simulation.model import Matchers, NamedMatchers, Pair, Simulation
from simproxy.engine.templating import TemplateEngine, Variables
from simproxy.engine.templating.pairs import PairTemplates, compile_pair_templates
from simproxy.engine.wire.golayout import go_rendered
from simproxy.engine.wire.hot import hot_value
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import RenderedResponse, render_response

CompiledList = tuple[CompiledMatcher, ...]
Strategy = Literal["strongest", "first"]


@dataclass(frozen=True, slots=True)
class CompiledPair:
    index: int
    pair: Pair
    body: CompiledList
    destination: CompiledList
    path: CompiledList
    method: CompiledList
    headers: tuple[tuple[str, CompiledList], ...]
    query: tuple[tuple[str, CompiledList], ...] | None
    requires_state: tuple[tuple[str, str], ...]
    rendered: RenderedResponse
    body_form: tuple[tuple[str, CompiledList], ...] | None = None
    """The fields of the body's ``form`` matchers; when set, the body's other matchers are ignored."""
    templates: PairTemplates | None = None
    """The response's templates when it is ``templated``."""


@dataclass(frozen=True, slots=True)
class ClosestMiss:
    pair: Pair
    missed_fields: tuple[str, ...]
    state: dict[str, str]
    index: int
    """The pair's place in the simulation: what the shared match cache keeps instead of the pair."""


@hot_value
class MatchResult:
    """A hit (``pair`` set) or a miss (``pair`` None, ``closest`` set under strongest with pairs)."""

    pair: CompiledPair | None
    closest: ClosestMiss | None = None
    cacheable: bool = False
    """Hoverfly's rule (§4.5): the result does not depend on headers or state, so it may be cached."""


@dataclass(frozen=True, slots=True)
class MissRanking:
    """The closest miss without scoring every pair, and exactly the full scan's answer.

    The closest miss is the pair with the most points, the later one on a tie: the greatest
    (points, index). A pair can never score more than all its matchers' points (its ceiling), and
    a pair whose path list holds an exact matcher scores nothing for that matcher unless the path
    is its value. So pairs are ranked by (ceiling without that matcher, index), best first, and
    the ones whose exact path is the request's are looked up and scored first: the search stops at
    the first ranked pair whose (ceiling, index) is below the best (points, index) found, as no
    pair after it can reach it. A simulation of exact-path stubs scores one pair for a miss.
    """

    ranked: tuple[tuple[int, int, str | None, CompiledPair], ...]
    """(ceiling without the exact path matcher's points, index, exact path, pair), greatest first."""
    by_path: dict[str, tuple[CompiledPair, ...]]
    """The pairs with an exact path matcher, by its value."""

    @staticmethod
    def build(pairs: Iterable[CompiledPair]) -> MissRanking:
        ranked: list[tuple[int, int, str | None, CompiledPair]] = []
        by_path: dict[str, list[CompiledPair]] = {}
        for cp in pairs:
            exact, exact_points = _exact_path(cp)
            if exact is not None:
                by_path.setdefault(exact, []).append(cp)
            ranked.append((_ceiling(cp) - exact_points, cp.index, exact, cp))
        ranked.sort(key=lambda entry: (entry[0], entry[1]), reverse=True)
        return MissRanking(tuple(ranked), {path: tuple(found) for path, found in by_path.items()})


def _exact_path(cp: CompiledPair) -> tuple[str | None, int]:
    """The value of the path list's first exact matcher (as the candidate index reads it) and its points."""
    for written, compiled in zip(cp.pair.request.path or (), cp.path, strict=True):
        if written.name.lower() in ("exact", "") and isinstance(written.value, str):
            return written.value, compiled.points
    return None, 0


def _ceiling(cp: CompiledPair) -> int:
    """The most points ``evaluate`` can give the pair, whatever the request and state."""

    def points(matchers: CompiledList) -> int:
        return sum(m.points for m in matchers)

    body = sum(points(ms) for _, ms in cp.body_form) if cp.body_form is not None else points(cp.body)
    query = 1 if not cp.query else sum(points(ms) for _, ms in cp.query)
    headers = sum(points(ms) for _, ms in cp.headers)
    return (
        body + points(cp.destination) + points(cp.path) + points(cp.method) + headers + query + len(cp.requires_state)
    )


@dataclass(frozen=True, slots=True, weakref_slot=True)
class CompiledSimulation:
    """A simulation ready for the hot path, with its candidate index."""

    simulation: Simulation
    pairs: tuple[CompiledPair, ...]
    index: PairIndex[CompiledPair] = field(repr=False)
    misses: MissRanking = field(repr=False)
    """The pairs in the order the closest miss is searched, best possible score first."""
    reads_state: bool = False
    """Some pair has ``requiresState``: matching needs the shared state."""
    writes_state: bool = False
    """Some pair has ``requiresState``, ``transitionsState`` or ``removesState``."""
    delays: Delays = field(default_factory=Delays)
    """The global delays, compiled."""
    literals: Mapping[str, Any] = field(default_factory=dict)
    variables: Variables | None = None
    """The simulation's templating variables (None when it has no templated response)."""
    templates_read_state: bool = False
    """Some templated response reads ``State``."""
    faults: FaultRules = ()
    """The global faults, compiled (a pair's own fault is on its rendered wire)."""
    faulty: bool = False
    """Some pair or global rule has a fault: the dispatcher decides each answer's (one roll)."""
    templates_fetch: bool = False
    """Some templated response reads a CSV data source or the journal, which it may have to fetch."""
    contracts: Contracts | None = None
    """An imported OpenAPI document's request and response contracts (engine/openapi/validate.py),
    compiled with the rest; None when no pair carries one, so the hot path asks one identity test."""
    state_layout: StateLayout = field(default_factory=StateLayout, repr=False)
    """Which state keys a request may read or step together (engine/matching/stategroups.py); no
    group when no pair names a state key."""

    def candidates(self, path: str, method: str) -> Iterable[CompiledPair]:
        """Pairs that may hit a request with this path and method, in simulation order."""
        return self.index.candidates(path, method)


def compile_simulation(
    sim: Simulation, registry: MatcherRegistry, templates: TemplateEngine | None = None, go: bool = False
) -> CompiledSimulation:
    """Compile every matcher and template (raising ``SimulationError`` with its path) and build the
    index; ``go``: the answers laid out as Go's server writes Hoverfly's (``-compat hoverfly``).

    The registry's ``lenient`` goes for the templates too: what Hoverfly stores though it cannot
    work, a matcher value or a template, is loaded as Hoverfly runs it or refused, alike."""
    engine = templates or TemplateEngine(lenient=registry.lenient)
    compiled = tuple(_compile_pair(i, pair, registry, engine, go) for i, pair in enumerate(sim.pairs))
    index = PairIndex.build((p.request.path, p.request.method) for p in sim.pairs).with_items(compiled, _position)
    reads = any(cp.requires_state for cp in compiled)
    writes = reads or any(p.response.transitions_state or p.response.removes_state for p in sim.pairs)
    templated = any(cp.templates is not None for cp in compiled)
    variables = engine.compile_variables(sim.variables, "data.variables") if templated or sim.variables else None
    literals = {str(item.get("name", "")): item.get("value") for item in sim.literals}
    templates_read_state = any(cp.templates is not None and cp.templates.uses_state for cp in compiled)
    return CompiledSimulation(
        sim,
        compiled,
        index,
        MissRanking.build(compiled),
        reads,
        writes,
        Delays.compile(sim),
        literals,
        variables,
        templates_read_state,
        compile_faults(sim),
        bool(sim.faults) or any(p.response.fault is not None for p in sim.pairs),
        any(cp.templates is not None and (cp.templates.uses_csv or cp.templates.uses_journal) for cp in compiled),
        Contracts.build((p.labels for p in sim.pairs), strict=not registry.lenient) or None,
        state_layout((cp.pair, cp.templates) for cp in compiled) if writes or templates_read_state else StateLayout(),
    )


def _position(cp: CompiledPair) -> int:
    return cp.index


def _compile_pair(index: int, pair: Pair, registry: MatcherRegistry, engine: TemplateEngine, go: bool) -> CompiledPair:
    base = f"data.pairs[{index}].request"
    req = pair.request

    def lst(matchers: Matchers | None, name: str) -> CompiledList:
        return tuple(registry.compile(m, f"{base}.{name}[{i}]") for i, m in enumerate(matchers or ()))

    def named(entries: NamedMatchers, name: str) -> tuple[tuple[str, CompiledList], ...]:
        return tuple((key.lower(), lst(ms, f"{name}.{key}")) for key, ms in entries)

    body = lst(req.body, "body")
    forms = [m.form for m in body if m.form is not None]
    return CompiledPair(
        index=index,
        pair=pair,
        body=body,
        body_form=tuple(entry for form in forms for entry in form) if forms else None,
        destination=lst(req.destination, "destination"),
        path=lst(req.path, "path"),
        method=lst(req.method, "method"),
        headers=named(req.headers, "headers"),
        query=None if req.query is None else named(req.query, "query"),
        requires_state=req.requires_state or (),
        rendered=(go_rendered if go else render_response)(
            pair.response, f"data.pairs[{index}].response", pair_name(index, pair)
        ),
        templates=compile_pair_templates(
            pair.response, engine, f"data.pairs[{index}].response", pair_name(index, pair), go=go
        ),
    )


def pair_name(index: int, pair: Pair) -> str:
    """How the metrics name a pair: its first label, or its position."""
    return pair.labels[0] if pair.labels else f"pair-{index}"


def _score_list(matchers: CompiledList, actual: str) -> tuple[bool, int]:
    # Every matcher runs even after one failed: each that matches still earns its points.
    ok, points = True, 0
    for m in matchers:
        if m.matches(actual):
            points += m.points
        else:
            ok = False
    return ok, points


def evaluate(cp: CompiledPair, req: RequestDetails, state: Mapping[str, str], webserver: bool) -> tuple[int, list[str]]:
    """Score one pair against a request: (points, names of the fields that missed).

    The fields are written out one by one rather than looped over: this runs for every
    candidate of every request, and the unrolled form saves a call and a lookup per field.
    """
    missed: list[str] = []
    score = 0
    if cp.body_form is not None:
        ok, pts = _score_form(cp.body_form, req.form)
        score += pts
        if not ok:
            missed.append("body")
    elif cp.body:
        ok, pts = _score_list(cp.body, req.body)
        score += pts
        if not ok:
            missed.append("body")
    if cp.destination and not webserver:
        ok, pts = _score_list(cp.destination, req.destination)
        score += pts
        if not ok:
            missed.append("destination")
    if cp.path:
        ok, pts = _score_list(cp.path, req.path)
        score += pts
        if not ok:
            missed.append("path")
    if cp.method:
        ok, pts = _score_list(cp.method, req.method)
        score += pts
        if not ok:
            missed.append("method")
    if cp.headers:
        ok, pts = _score_named(cp.headers, req.headers_lower)
        score += pts
        if not ok:
            missed.append("headers")
    if cp.query is None:
        score += 1  # an absent query matches anything and earns a point
    elif not cp.query:
        if req.query:
            missed.append("queries")  # `query: {}` only matches a request without parameters
        else:
            score += 1
    else:
        ok, pts = _score_named(cp.query, req.query_lower)
        score += pts
        if not ok:
            missed.append("queries")
    if cp.requires_state:
        ok = True
        for key, value in cp.requires_state:
            if state.get(key) == value:
                score += 1
            else:
                ok = False
        if not ok:
            missed.append("state")
    return score, missed


def _score_form(fields: tuple[tuple[str, CompiledList], ...], form: dict[str, list[str]]) -> tuple[bool, int]:
    """Hoverfly's form rule: each named field must be present (exact name); its first value is matched."""
    ok, points = True, 0
    for name, matchers in fields:
        values = form.get(name)
        if not values:
            ok = False
            continue
        field_ok, pts = _score_list(matchers, values[0])
        points += pts
        ok = ok and field_ok
    return ok, points


def _score_named(entries: tuple[tuple[str, CompiledList], ...], actual: dict[str, list[str]]) -> tuple[bool, int]:
    ok, points = True, 0
    for name, matchers in entries:
        values = actual.get(name)
        if values is None:
            ok = False
            continue
        field_ok, pts = _score_list(matchers, ";".join(values))
        points += pts
        ok = ok and field_ok
    return ok, points


def match(
    sim: CompiledSimulation,
    req: RequestDetails,
    state: Mapping[str, str],
    strategy: Strategy = "strongest",
    webserver: bool = False,
) -> MatchResult:
    """Find the pair that answers ``req`` with Hoverfly's ``strongest`` or ``first`` strategy."""
    # Only candidates can hit, and only they can miss on nothing but headers or state (a pair
    # that is not a candidate fails its exact path or method), so they decide cacheability too.
    candidates = sim.candidates(req.path, req.method)
    blocked = False
    if strategy == "first":
        for cp in candidates:
            hit, blocks = _check(cp, req, state, webserver)
            if hit:
                return MatchResult(cp)  # Hoverfly never caches a first-strategy hit
            blocked = blocked or blocks
        return MatchResult(None, cacheable=not blocked)
    best: CompiledPair | None = None
    best_score = -1  # scored only when a second hit competes: only hits need points, a lone one none
    for cp in candidates:
        hit, blocks = _check(cp, req, state, webserver)
        blocked = blocked or blocks
        if not hit:
            continue
        if best is None:
            best = cp
            continue
        if best_score < 0:
            best_score = evaluate(best, req, state, webserver)[0]
        score = evaluate(cp, req, state, webserver)[0]
        if score >= best_score:  # `>=`: on a tie the later pair wins
            best, best_score = cp, score
    if best is not None:
        return MatchResult(best, cacheable=not blocked)
    return MatchResult(None, closest_miss(sim, req, state, webserver), cacheable=not blocked)


def _check(cp: CompiledPair, req: RequestDetails, state: Mapping[str, str], webserver: bool) -> tuple[bool, bool]:
    """(hit, outcome depends on headers or state) without scoring: stops at the first failed field.

    The same verdict as ``evaluate`` gives (a hit has no missed field; see
    ``_depends_on_headers_or_state``), cheapest and most selective fields first.
    """
    if (cp.path and not _all(cp.path, req.path)) or (cp.method and not _all(cp.method, req.method)):
        return False, False
    if cp.destination and not webserver and not _all(cp.destination, req.destination):
        return False, False
    query = cp.query
    if query is not None and not (_named_all(query, req.query_lower) if query else not req.query):
        return False, False
    if cp.body_form is not None:
        if not _form_all(cp.body_form, req.form):
            return False, False
    elif cp.body and not _all(cp.body, req.body):
        return False, False
    headers_ok = not cp.headers or _named_all(cp.headers, req.headers_lower)
    state_ok = not cp.requires_state or _state_holds(cp.requires_state, state)
    blocks = (bool(cp.headers) and state_ok) or (bool(cp.requires_state) and headers_ok)
    return headers_ok and state_ok, blocks


def _all(matchers: CompiledList, actual: str) -> bool:
    # a loop, not all() over a generator: this runs for every candidate of every request matched
    for m in matchers:  # noqa: SIM110
        if not (m.predicate(actual) if m.then is None else m.matches(actual)):
            return False
    return True


def _state_holds(required: tuple[tuple[str, str], ...], state: Mapping[str, str]) -> bool:
    for key, value in required:  # noqa: SIM110 (a loop, as in _all)
        if state.get(key) != value:
            return False
    return True


def _named_all(entries: tuple[tuple[str, CompiledList], ...], actual: dict[str, list[str]]) -> bool:
    for name, matchers in entries:
        values = actual.get(name)
        if values is None or not _all(matchers, ";".join(values)):
            return False
    return True


def _form_all(fields: tuple[tuple[str, CompiledList], ...], form: dict[str, list[str]]) -> bool:
    for name, matchers in fields:
        values = form.get(name)
        if not values or not _all(matchers, values[0]):
            return False
    return True


def _depends_on_headers_or_state(cp: CompiledPair, missed: list[str]) -> bool:
    """The pair matched every field but its headers (or its state): its outcome hangs on them."""
    return (bool(cp.headers) and all(f == "headers" for f in missed)) or (
        bool(cp.requires_state) and all(f == "state" for f in missed)
    )


def closest_miss(
    sim: CompiledSimulation, req: RequestDetails, state: Mapping[str, str], webserver: bool
) -> ClosestMiss | None:
    """The best-scoring pair of a request that hit nothing (later pair wins ties), found through
    ``MissRanking``: the pairs that cannot beat the best found so far are never scored."""
    closest: tuple[CompiledPair, list[str]] | None = None
    best = (-1, -1)  # (points, index) of the closest so far
    path = req.path
    for cp in sim.misses.by_path.get(path, ()):
        score, missed = evaluate(cp, req, state, webserver)
        if (score, cp.index) > best:
            closest, best = (cp, missed), (score, cp.index)
    for ceiling, index, exact, cp in sim.misses.ranked:
        if (ceiling, index) < best:
            break  # neither it nor any pair after it can reach the best
        if exact == path:
            continue  # scored above, against its whole ceiling
        score, missed = evaluate(cp, req, state, webserver)
        if (score, index) > best:
            closest, best = (cp, missed), (score, index)
    if closest is None:
        return None
    return ClosestMiss(closest[0].pair, tuple(closest[1]), dict(state), closest[0].index)
