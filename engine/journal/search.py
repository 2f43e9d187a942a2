"""``POST /api/v2/journal``: compiling a search body and filtering journal entries with it. Pure.

The search uses the simulation's matchers and, unlike simulate matching, honours ``scheme``; it takes
v5 matcher lists and legacy ``{"exactMatch": ...}`` objects (admin-api.md §9.3).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simproxy.engine.errors import SimulationError
from simproxy.engine.journal.entries import CompiledList, JournalEntry, Named
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.simulation.codec import go_json
from simproxy.engine.simulation.model import Matcher
from simproxy.engine.wire.request import query_string, sort_query_string

MALFORMED = "Malformed JSON"
NO_REQUEST = 'No "request" object in search parameters'

_FIELDS = ("path", "method", "destination", "scheme", "body")
_REQUEST_KEYS = (*_FIELDS, "query", "headers", "requiresState")
# legacy field-matcher keys -> v5 names, in the order Hoverfly's upgrade emits them
_LEGACY = tuple((f"{n}Match", n.lower()) for n in ("exact", "glob", "json", "jsonPath", "regex", "xml", "xpath"))
_LEGACY_KEYS = frozenset(key.lower() for key, _ in _LEGACY)


def _fold(raw: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """Go's struct decoding: keys match field names case-insensitively, the last wins, others are ignored."""
    canonical = {name.lower(): name for name in names}
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = canonical.get(str(key).lower())
        if name is not None:
            out[name] = value
    return out


def _matcher(raw: Any) -> Matcher:
    if not isinstance(raw, Mapping):
        raise ValueError(MALFORMED)
    fields = _fold(raw, ("matcher", "value", "config", "doMatch"))
    name, config, then = fields.get("matcher"), fields.get("config"), fields.get("doMatch")
    if not isinstance(name, str | None) or not isinstance(config, Mapping | None):
        raise ValueError(MALFORMED)
    return Matcher(
        name=name or "",
        value=go_json(fields.get("value")),
        config=None if config is None else go_json(dict(config)),
        do_match=None if then is None else _matcher(then),
    )


def _legacy(raw: Mapping[str, Any]) -> tuple[Matcher, ...]:
    """A v2-v4 field-matcher object -> v5 matchers, in Hoverfly's order."""
    fields = _fold(raw, (key for key, _ in _LEGACY))
    if not all(isinstance(v, str | None) for v in fields.values()):
        raise ValueError(MALFORMED)
    return tuple(Matcher(name, fields[key]) for key, name in _LEGACY if fields.get(key) is not None)


def _matchers(raw: Any) -> tuple[Matcher, ...] | None:
    if raw is None:
        return None
    if isinstance(raw, list):
        return tuple(_matcher(item) for item in raw)
    if isinstance(raw, Mapping):
        return _legacy(raw)
    raise ValueError(MALFORMED)


def _named(raw: Any, *, legacy_values: bool) -> dict[str, list[Matcher]]:
    """A header or query map -> name: v5 matchers; with ``legacy_values`` plain strings become one glob
    over them joined with ``;`` (Hoverfly's upgrade of plain headers)."""
    if not isinstance(raw, Mapping):
        raise ValueError(MALFORMED)
    out: dict[str, list[Matcher]] = {}
    for name, value in raw.items():
        if legacy_values and isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            out[str(name)] = [Matcher("glob", ";".join(value))]
        elif value is None or isinstance(value, list):
            out[str(name)] = list(_matchers(value) or ())
        else:
            raise ValueError(MALFORMED)
    return out


@dataclass(frozen=True, slots=True)
class Search:
    """A compiled search; ``matches`` is true when every field given matches (none given: never)."""

    path: CompiledList | None = None
    method: CompiledList | None = None
    destination: CompiledList | None = None
    scheme: CompiledList | None = None
    body: CompiledList | None = None
    body_form: Named | None = None
    """The fields of the body's ``form`` matchers; when set, the body's other matchers are ignored."""
    query: Named | None = None
    """Lower-cased parameter name -> matchers; ``()`` matches only a request without parameters."""
    query_string: CompiledList | None = None
    """Legacy matchers on the whole canonical query string."""
    headers: Named = ()

    @property
    def usable(self) -> bool:
        lists = (self.path, self.method, self.destination, self.scheme, self.body, self.query, self.query_string)
        return any(item is not None for item in lists) or bool(self.headers)

    def matches(self, entry: JournalEntry) -> bool:
        if not self.usable:
            return False
        req = entry.request
        if self.body_form is not None:
            for name, matchers in self.body_form:
                values = req.form.get(name)
                if not values or not _all(matchers, values[0]):
                    return False
        elif self.body and not _all(self.body, req.body):
            return False
        for checks, actual in (
            (self.destination, req.destination),
            (self.method, req.method),
            (self.path, req.path),
            (self.scheme, req.scheme),
        ):
            if checks and not _all(checks, actual):
                return False
        if self.query is not None and not (_named_all(self.query, req.query_lower) if self.query else not req.query):
            return False
        if self.query_string and not _all(self.query_string, query_string(req.query)):
            return False
        return _named_all(self.headers, req.headers_lower)

    def filter(self, entries: Iterable[JournalEntry]) -> list[JournalEntry]:
        return [entry for entry in entries if self.matches(entry)]


def _all(matchers: CompiledList, actual: str) -> bool:
    return all(m.matches(actual) for m in matchers)


def _named_all(entries: Named, actual: Mapping[str, list[str]]) -> bool:
    for name, matchers in entries:
        values = actual.get(name)
        if values is None or not _all(matchers, ";".join(values)):
            return False
    return True


def compile_search(body: Any, registry: MatcherRegistry) -> Search:
    """Compile ``{"request": {...}}``. ``ValueError``: ``NO_REQUEST`` (absent or null), ``MALFORMED`` (a
    wrong JSON type), or the matcher's own message with its path (an unknown name, a bad regex...)."""
    if not isinstance(body, Mapping):
        raise ValueError(MALFORMED)
    raw = _fold(body, ("request",)).get("request")
    if raw is None:
        raise ValueError(NO_REQUEST)
    if not isinstance(raw, Mapping):
        raise ValueError(MALFORMED)
    fields = _fold(raw, _REQUEST_KEYS)
    state = fields.get("requiresState")
    if state is not None and not (isinstance(state, Mapping) and all(isinstance(v, str) for v in state.values())):
        raise ValueError(MALFORMED)  # decoded by Hoverfly, then ignored by the search

    lists = {name: _matchers(fields.get(name)) for name in _FIELDS}
    raw_query = fields.get("query")
    query: dict[str, list[Matcher]] | None = None
    legacy_query: tuple[Matcher, ...] | None = None
    # ``{"exactMatch": "a=1"}`` is a matcher on the whole query string, not a parameter map
    if (
        isinstance(raw_query, Mapping)
        and raw_query
        and all(str(k).lower() in _LEGACY_KEYS and isinstance(v, str | None) for k, v in raw_query.items())
    ):
        legacy_query = tuple(
            Matcher(m.name, sort_query_string(m.value)) if m.name == "exact" else m for m in _legacy(raw_query)
        )
    elif raw_query is not None:
        query = _named(raw_query, legacy_values=False)
    raw_headers = fields.get("headers")
    headers = {} if raw_headers is None else _named(raw_headers, legacy_values=True)

    def compiled(matchers: Sequence[Matcher] | None, path: str) -> CompiledList | None:
        if matchers is None:
            return None
        try:
            return tuple(registry.compile(m, f"search.request.{path}[{i}]") for i, m in enumerate(matchers))
        except SimulationError as exc:
            raise ValueError(str(exc).removeprefix("search.")) from exc

    def named(entries: Mapping[str, list[Matcher]], path: str) -> Named:
        return tuple((name.lower(), compiled(ms, f"{path}.{name}") or ()) for name, ms in entries.items())

    body_list = compiled(lists["body"], "body")
    forms = [m.form for m in body_list or () if m.form is not None]
    return Search(
        path=compiled(lists["path"], "path"),
        method=compiled(lists["method"], "method"),
        destination=compiled(lists["destination"], "destination"),
        scheme=compiled(lists["scheme"], "scheme"),
        body=body_list,
        body_form=tuple(field for form in forms for field in form) if forms else None,
        query=None if query is None else named(query, "query"),
        query_string=compiled(legacy_query, "query"),
        headers=named(headers, "headers"),
    )
