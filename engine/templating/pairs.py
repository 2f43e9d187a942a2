"""Templated responses (``templated: true``): their templates compiled once, rendered per request.

Hoverfly renders the body, then every header value, then every ``transitionsState`` value, each
in a fresh context (hoverfly-engine.md §8.1). A failed render serves that part unrendered and
drops its ``setStatusCode``/``setHeader``; a failed header or transition render keeps all of them
unrendered. This module is pure: the engine brings the state, the data sources and the request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from simproxy.engine.simulation.model import Response
from simproxy.engine.templating import (
    CsvTables,
    JournalLookup,
    NoJournal,
    RenderContext,
    RenderResult,
    Template,
    TemplateEngine,
    Variables,
)
from simproxy.engine.templating.direct import DirectText, StateText
from simproxy.engine.wire.golayout import go_shape
from simproxy.engine.wire.hot import hot_value
from simproxy.engine.wire.request import RequestDetails, canonical_header
from simproxy.engine.wire.response import Wire, WireShape, render_wire, wire_shape

if TYPE_CHECKING:  # closures bring the body helpers, loaded with the first template that uses them
    from simproxy.engine.templating.closures import ClosureText

_NO_JOURNAL = NoJournal()


@dataclass(frozen=True, slots=True)
class PairTemplates:
    body: Template
    headers: tuple[tuple[str, tuple[Template, ...]], ...]
    transitions: tuple[tuple[str, Template], ...]
    uses_state: bool
    uses_csv: bool
    writes_csv: bool
    uses_journal: bool
    """Calls ``journal`` or ``hasJournalKey``: the render needs the fleet's journal indexes."""
    direct: DirectAnswer | None = None
    """Set when only the body is templated and it prints nothing but request fields."""
    shapes: WireShapes | None = None
    """Set when no header is templated and the wire's shape does not hang on the body: a render
    that changes neither the status nor a header is served through it (``Rendered.wire``)."""
    stated: StatedAnswer | None = None
    """Set when only the body is templated, it prints nothing but request fields and state keys,
    and every state transition is text alone: answered on the state without a render context."""
    closed: ClosureAnswer | None = None
    """Set when only the body is templated, it compiles to closures (helpers of no effect, body
    queries, state keys, blocks over them) and every state transition is text alone: answered
    without a render context when the closures take the request."""

    @property
    def all(self) -> tuple[Template, ...]:
        return (self.body, *(t for _, ts in self.headers for t in ts), *(t for _, t in self.transitions))


@dataclass(frozen=True, slots=True)
class WireShapes:
    """A response's wire but its body, in proxy and in webserver mode."""

    proxy: WireShape
    webserver: WireShape

    def wire(self, text: str, webserver: bool) -> Wire:
        return (self.webserver if webserver else self.proxy).wire(text)


@dataclass(frozen=True, slots=True)
class DirectAnswer:
    """A templated response whose body alone varies, and only with the request's fields: answered
    without a render context, a rendered ``Response`` or a walk over its headers. Without
    variables only: Hoverfly computes every variable at every render."""

    body: DirectText
    proxy: WireShape
    webserver: WireShape

    def wire(self, request: RequestDetails, webserver: bool) -> Wire:
        return (self.webserver if webserver else self.proxy).wire(self.body.render(request))


@dataclass(frozen=True, slots=True)
class ClosureAnswer:
    """A templated response whose body alone varies, compiled to closures: answered as
    ``render_pair`` answers it, or None when this request needs the general render. Without
    variables only, as ``DirectAnswer``."""

    body: ClosureText
    proxy: WireShape
    webserver: WireShape
    transitions: tuple[tuple[str, str], ...] | None
    """What ``render_pair`` gives as the transitions, as ``StatedAnswer.transitions``."""

    def wire(self, request: RequestDetails, webserver: bool, hoverfly: bool, state: Mapping[str, str]) -> Wire | None:
        text = self.body.render(request, hoverfly, state)
        if text is None:
            return None
        return (self.webserver if webserver else self.proxy).wire(text)


@dataclass(frozen=True, slots=True)
class StatedAnswer:
    """A templated response whose body varies with the request's fields and the state alone, and
    whose transitions are fixed (a stateful journey's step): answered as ``render_pair`` would
    answer it on the same state. Without variables only, as ``DirectAnswer``."""

    body: StateText
    proxy: WireShape
    webserver: WireShape
    transitions: tuple[tuple[str, str], ...] | None
    """What ``render_pair`` gives as the transitions: the stored ones, each as its text renders."""

    def wire(self, request: RequestDetails, state: Mapping[str, str], webserver: bool) -> Wire:
        return (self.webserver if webserver else self.proxy).wire(self.body.render(request, state))


def compile_pair_templates(
    resp: Response, engine: TemplateEngine, where: str, pair: str = "", *, go: bool = False
) -> PairTemplates | None:
    """The templates of a ``templated`` response (``SimulationError`` naming the part that fails);
    ``pair`` names the pair for the metrics; ``go``: its wires in Go's layout (``-compat hoverfly``)."""
    if not resp.templated:
        return None
    body = engine.compile(resp.body.decode("utf-8", "surrogateescape"), f"{where}.body")
    headers = tuple(
        (name, tuple(engine.compile(v, f"{where}.headers.{name}[{i}]") for i, v in enumerate(values)))
        for name, values in resp.headers
    )
    if not any("{{" in value for _, values in resp.headers for value in values):
        headers = ()  # each would render as itself, with no effect: the stored headers are served
    transitions = tuple(
        (key, engine.compile(value, f"{where}.transitionsState.{key}")) for key, value in resp.transitions_state or ()
    )
    templates = (body, *(t for _, ts in headers for t in ts), *(t for _, t in transitions))
    shapes = direct = None
    if not headers:
        if go:
            proxy = webserver = go_shape(resp, where, pair)
        else:
            proxy, webserver = wire_shape(resp, where, pair), wire_shape(resp, where, pair, webserver=True)
        if proxy is not None and webserver is not None:
            shapes = WireShapes(proxy, webserver)
    if shapes is not None and body.direct is not None and not transitions:
        direct = DirectAnswer(body.direct, shapes.proxy, shapes.webserver)
    stated = closed = None
    fixed = [(key, template.constant) for key, template in transitions]
    if shapes is not None and all(value is not None for _, value in fixed):
        steps = tuple((key, value.text) for key, value in fixed if value is not None) if fixed else None
        if body.stated is not None:
            stated = StatedAnswer(body.stated, shapes.proxy, shapes.webserver, steps or resp.transitions_state)
        elif engine.specialise:
            # the body helpers come with the closures: loaded with the first pair that compiles them
            from simproxy.engine.templating.closures import closure_text

            closures = closure_text(body.program, engine)  # None for text and request fields alone
            if closures is not None:
                closed = ClosureAnswer(closures, shapes.proxy, shapes.webserver, steps or resp.transitions_state)
    return PairTemplates(
        body,
        headers,
        transitions,
        uses_state=any(t.uses_state for t in templates),
        uses_csv=any(t.uses_csv for t in templates),
        writes_csv=any(t.writes_csv for t in templates),
        uses_journal=any(t.uses_journal for t in templates),
        direct=direct,
        shapes=shapes,
        stated=stated,
        closed=closed,
    )


@hot_value
class Rendered:
    """One render of a templated response: its body, status and headers, and its transitions."""

    template: Response
    """The pair's response, as stored."""
    text: str
    """The rendered body."""
    status: int
    headers: tuple[tuple[str, tuple[str, ...]], ...]
    """Rendered, ``setStatusCode``/``setHeader`` applied."""
    transitions: tuple[tuple[str, str], ...] | None
    shapes: WireShapes | None
    """The pair's wire shapes, when the status and headers are the pair's own."""

    @property
    def response(self) -> Response:
        """The response to serve."""
        body = self.text.encode("utf-8", "surrogateescape")
        return replace(self.template, status=self.status, body=body, headers=self.headers, templated=False)

    def wire(self, pair: str, *, webserver: bool) -> Wire:
        """The response's wire (``SimulationError`` when a rendered header holds a line break)."""
        if self.shapes is not None:  # the same wire, without a new Response or a walk over its headers
            return self.shapes.wire(self.text, webserver)
        return render_wire(self.response, "a templated response", pair, webserver=webserver)


def render_pair(
    templates: PairTemplates,
    response: Response,
    request: RequestDetails,
    state: Mapping[str, str],
    literals: Mapping[str, Any],
    variables: Variables,
    csv: CsvTables,
    journal: JournalLookup = _NO_JOURNAL,
    *,
    hoverfly: bool = False,
) -> Rendered:
    """Render body, headers and transitions of one response for one request (never raises);
    ``hoverfly``: call helpers as Hoverfly v1.12.10 does (``RenderContext.hoverfly``)."""
    ctx = RenderContext(request, state, literals, variables, csv, journal, hoverfly)
    effects: list[RenderResult] = []

    body = templates.body.render(ctx)
    if body.ok:
        effects.append(body)
    headers = response.headers
    if templates.headers:
        results = [(name, [t.render(ctx) for t in ts]) for name, ts in templates.headers]
        if all(r.ok for _, rs in results for r in rs):
            headers = tuple((name, tuple(r.text for r in rs)) for name, rs in results)
            effects.extend(r for _, rs in results for r in rs)
    transitions = response.transitions_state
    if templates.transitions:
        rendered = [(key, t.render(ctx)) for key, t in templates.transitions]
        if all(r.ok for _, r in rendered):
            transitions = tuple((key, r.text) for key, r in rendered)
            effects.extend(r for _, r in rendered)

    status = response.status
    shapes = templates.shapes
    for effect in effects:
        if effect.status is not None:
            status = effect.status
            shapes = None
        for name, value in effect.headers:
            headers = _set_header(headers, name, value)
            shapes = None
    return Rendered(response, body.text, status, headers, transitions, shapes)


def _set_header(
    headers: tuple[tuple[str, tuple[str, ...]], ...], name: str, value: str
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Go's ``Header.Set``: one value under the canonical name, replacing any spelling of it."""
    if not name:
        return headers
    key = canonical_header(name)
    kept = tuple((n, vs) for n, vs in headers if canonical_header(n) != key)
    return (*kept, (key, (value,)))
