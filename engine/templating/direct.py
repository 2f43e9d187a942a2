"""Templates that only print request fields, rendered straight from the request.

Most templated responses in load tests echo parts of the request: ``{{ Request.Path.[1] }}``,
``{{ Request.QueryParam.id }}``, ``{{ Request.Header.X-Trace }}``, ``{{ Request.Method }}``. The
general render builds the root struct, a scope and a request view for every render; a template
made of text and such paths alone is compiled here into text and one small function per path,
each reading the request directly and printing what the general render prints (``to_str``'s
text and the same HTML escaping). A property test renders both ways and compares them.

Only paths whose every step is known to succeed or to print "" qualify: ``Request`` then
``Method``, ``Scheme``, ``Host``; ``Path`` with an optional index; ``QueryParam``, ``Header`` or
``FormData`` with a name and an optional index. Anything else (helpers, blocks, ``Body``,
variables, a negative index) leaves the template to the general render.

A stateful journey's answer prints state too (``{{ State.user }}``): ``StateText`` adds getters of
one state key each, read from the state the render is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import attrgetter

from simproxy.engine.templating.context import REQUEST_MAPS, REQUEST_TEXTS
from simproxy.engine.templating.evaluate import Part, Path
from simproxy.engine.templating.render import PathMustache, Program
from simproxy.engine.templating.values import escape_html
from simproxy.engine.wire.request import RequestDetails

Getter = Callable[[RequestDetails], str]
StateGetter = Callable[[Mapping[str, str]], str]


@dataclass(frozen=True, slots=True)
class DirectText:
    """A template as text and getters: ``render`` joins them for one request."""

    parts: tuple[str | Getter, ...]

    def render(self, request: RequestDetails) -> str:
        return "".join([part if part.__class__ is str else part(request) for part in self.parts])  # type: ignore[operator]


def direct_text(program: Program) -> DirectText | None:
    """``program`` as a ``DirectText``, or None when some part needs the general render."""
    parts = _text_parts(program, state=False)
    return None if parts is None else DirectText(tuple(parts))  # type: ignore[arg-type]  # no StateKey


def _text_parts(program: Program, *, state: bool) -> list[str | Getter | StateKey] | None:
    """``program``'s text and a getter for each mustache (``state``: state keys too); None when
    some part needs the general render."""
    parts: list[str | Getter | StateKey] = []
    for part in program.parts:
        if part.__class__ is str:
            parts.append(part)
            continue
        if not isinstance(part, PathMustache) or part.params or part.hash:  # the specialised kinds too
            return None
        getter: Getter | StateKey | None = request_getter(part.path, part.escape)
        if getter is None and state:
            getter = state_key(part.path, part.escape)
        if getter is None:
            return None
        parts.append(getter)
    return parts


@dataclass(frozen=True, slots=True)
class StateKey:
    """What ``{{ State.<name> }}`` prints: the key's value (escaped unless triple-stashed), "" without it."""

    name: str
    escape: bool

    def __call__(self, state: Mapping[str, str]) -> str:
        value = state.get(self.name)
        if value is None:
            return ""
        return escape_html(value) if self.escape else value


@dataclass(frozen=True, slots=True)
class StateText:
    """A template as text, request getters and state keys: ``render`` joins them for one request
    and the state it is answered on."""

    parts: tuple[str | Getter | StateKey, ...]

    def render(self, request: RequestDetails, state: Mapping[str, str]) -> str:
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, StateKey):
                out.append(part(state))
            else:
                out.append(part(request))
        return "".join(out)


def state_text(program: Program) -> StateText | None:
    """``program`` as a ``StateText`` when it prints state keys beside text and request fields;
    None when some part needs the general render, or when no part reads the state."""
    parts = _text_parts(program, state=True)
    if parts is None or not any(part.__class__ is StateKey for part in parts):
        return None
    return StateText(tuple(parts))


def state_key(path: Path, escape: bool) -> StateKey | None:
    """``State.<name>``: a key of the state map (its name as written; only ``State`` is a field)."""
    parts = path.parts
    if path.data or path.data_root or path.depth or len(parts) != 2 or parts[0].title != "State":
        return None
    if parts[1].index is not None:
        return None
    return StateKey(parts[1].name, escape)


def request_getter(path: Path, escape: bool) -> Getter | None:
    """What a mustache printing ``path`` prints, read straight from the request; None when the path
    is not one of the request fields above."""
    parts = path.parts
    if path.data or path.data_root or path.depth or len(parts) < 2 or parts[0].title != "Request":
        return None
    field, rest = parts[1].title, parts[2:]
    text: Getter | None = None
    if field in REQUEST_TEXTS and not rest:
        text = attrgetter(REQUEST_TEXTS[field])
    elif field == "Path" and len(rest) <= 1:
        text = _path_text(rest)
    elif field in REQUEST_MAPS and 1 <= len(rest) <= 2:
        text = _map_text(attrgetter(REQUEST_MAPS[field]), rest)
    if text is None or not escape:
        return text
    unescaped = text
    return lambda request: escape_html(unescaped(request))


# What ``to_str`` prints for each value: a string as it is, a ``[]string`` concatenated, nothing
# found (or an index past the end) as "". The fields are the request view's (REQUEST_TEXTS, REQUEST_MAPS).


def _index(part: Part) -> int | None:
    """The index a path step reads from a ``[]string``; None when it is not a usable one."""
    return part.index if part.index is not None and part.index >= 0 else None


def _path_text(rest: tuple[Part, ...]) -> Getter | None:
    if not rest:
        return lambda request: "".join(request.path.split("/")[1:])
    at = _index(rest[0])
    if at is None:
        return None
    after = at + 1

    def segment(request: RequestDetails) -> str:
        segments = request.path.split("/", after + 1)
        return segments[after] if after < len(segments) else ""

    return segment


def _map_text(source: Callable[[RequestDetails], dict[str, list[str]]], rest: tuple[Part, ...]) -> Getter | None:
    name = rest[0].name
    if len(rest) == 1:
        return lambda request: "".join(source(request).get(name) or ())
    at = _index(rest[1])
    if at is None:
        return None

    def item(request: RequestDetails) -> str:
        values = source(request).get(name)
        return values[at] if values is not None and at < len(values) else ""

    return item
