"""The matcher registry: matcher name -> compiled predicate over the request's field text.

Names are looked up case-insensitively (``""`` means exact), as Hoverfly does; ``form`` only as
spelled and only in a body list. Everything is compiled once, at import: a bad name, a value of the
wrong type, a config on a matcher that takes none, bad JSON/XML/regex/JSONPath/XPath are a 400 with
the JSON path of the offending part, never a silent miss (or a crash) later.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from simproxy.engine.errors import InvalidValue, SimulationError
from simproxy.engine.gocompat.goregex import InvalidPattern, compile_go
from simproxy.engine.matching.base import Built, Extract, Predicate, never, require_str
from simproxy.engine.matching.json_family import json_equal, json_partial, json_path, jwt, jwt_json_path
from simproxy.engine.matching.list_family import array, form_fields, negate
from simproxy.engine.matching.xml_family import xml_equal, xml_templated, xpath
from simproxy.engine.simulation.model import JSON, Matcher

MatcherFactory = Callable[[JSON, str], Built]
"""Builds one matcher value; ``path`` names the matcher for error messages."""
ConfigMatcherFactory = Callable[[JSON, "Mapping[str, JSON] | None", str], Built]


def exact(value: JSON, path: str) -> Built:
    return Built(require_str(value, path, "exact").__eq__)


def glob(value: JSON, path: str) -> Built:
    """``*`` is the only wildcard (any run, also empty); everything else is literal and case-sensitive.

    go-glob's algorithm: the first part is a prefix, middle parts are found left to right, the
    last part is a suffix of what remains. Linear, with no backtracking to exploit.
    """
    pattern = require_str(value, path, "glob")
    if "*" not in pattern:
        return Built(pattern.__eq__)
    first, *middle, last = pattern.split("*")
    shortest = len(pattern) - pattern.count("*")
    if not middle:
        return Built(lambda a: len(a) >= shortest and a.startswith(first) and a.endswith(last))
    parts = tuple(part for part in middle if part)

    def predicate(actual: str) -> bool:
        if len(actual) < shortest or not actual.startswith(first):
            return False
        pos = len(first)
        for part in parts:
            pos = actual.find(part, pos)
            if pos < 0:
                return False
            pos += len(part)
        return len(actual) - len(last) >= pos and actual.endswith(last)

    return Built(predicate)


def regex(value: JSON, path: str) -> Built:
    """Unanchored search with Go's (RE2) syntax and semantics."""
    pattern = require_str(value, path, "regex")
    try:
        compiled = compile_go(pattern)
    except InvalidPattern as exc:
        raise InvalidValue(path, f"invalid regular expression {pattern!r}: {exc}") from exc
    return Built(lambda actual: compiled.search(actual) is not None)


BUILTIN_MATCHERS: Mapping[str, MatcherFactory] = MappingProxyType(
    {
        "exact": exact,
        "": exact,
        "glob": glob,
        "regex": regex,
        "json": json_equal,
        "jsonpartial": json_partial,
        "jsonpath": json_path,
        "xml": xml_equal,
        "xmltemplated": xml_templated,
        "xpath": xpath,
        "jwt": jwt,
        "jwtjsonpath": jwt_json_path,
        "negate": negate,
        "array": lambda value, path: array(value, None, path),
    }
)
"""Matchers without ``config`` (Hoverfly's ``Matchers`` table)."""

CONFIG_MATCHERS: Mapping[str, ConfigMatcherFactory] = MappingProxyType({"array": array})
"""Matchers with a ``config`` object, even ``{}`` (Hoverfly's ``MatchersWithConfig``)."""

_BODY_ENTRY = re.compile(r"\.request\.body\[\d+\]\Z")


@dataclass(frozen=True, slots=True)
class CompiledMatcher:
    """A matcher ready to run: its predicate, its strongest-match points and its ``doMatch`` chain."""

    predicate: Predicate
    points: int
    then: CompiledMatcher | None = None
    form: tuple[tuple[str, tuple[CompiledMatcher, ...]], ...] | None = None
    """Only for the body's ``form`` matcher: each form field's compiled matcher list."""
    extract: Extract | None = None
    """Matches and derives what ``then`` receives (jsonpath, xpath, jwt...); None passes the input on."""

    def matches(self, actual: str) -> bool:
        if self.then is None:
            return self.predicate(actual)
        matcher = self
        while matcher.then is not None:
            if matcher.extract is None:
                if not matcher.predicate(actual):
                    return False
            else:
                derived = matcher.extract(actual)
                if derived is None:
                    return False
                actual = derived
            matcher = matcher.then
        return matcher.predicate(actual)


class MatcherRegistry:
    """Compiles ``Matcher`` values with fixed tables of factories."""

    def __init__(
        self,
        factories: Mapping[str, MatcherFactory] = BUILTIN_MATCHERS,
        config_factories: Mapping[str, ConfigMatcherFactory] = CONFIG_MATCHERS,
        *,
        lenient: bool = False,
    ) -> None:
        self._factories = dict(factories)
        self._config_factories = dict(config_factories)
        self.lenient = lenient
        """Whether a value Hoverfly accepts though it cannot work (``InvalidValue``) compiles to what
        Hoverfly's matcher then does (``-compat hoverfly``, and any stored document), or is a 400."""

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._factories) | {"form"}

    def compile(self, matcher: Matcher, path: str) -> CompiledMatcher:
        """Compile one matcher and its ``doMatch`` chain; ``path`` is its JSON path in the simulation."""
        if matcher.name == "form":
            return self._form(matcher, path)
        name = matcher.name.lower()
        if name not in self._factories:
            supported = ", ".join(sorted(n for n in self.names if n))
            hint = " ('form' is spelled in lower case)" if name == "form" else ""
            raise SimulationError(f"{path}.matcher", f"unknown matcher {matcher.name!r}{hint} (supported: {supported})")
        if matcher.config is not None and name not in self._config_factories:
            raise SimulationError(f"{path}.config", f"matcher {matcher.name!r} takes no config")
        try:
            if matcher.config is None:
                built = self._factories[name](matcher.value, path)
            else:
                built = self._config_factories[name](matcher.value, matcher.config, path)
        except RecursionError as exc:  # a value nested deeper than Python's stack allows
            raise SimulationError(f"{path}.value", "the value is nested too deeply") from exc
        except InvalidValue as invalid:
            if not self.lenient:
                raise invalid.refusal() from invalid
            built = Built(invalid.runtime)
        then = None if matcher.do_match is None else self.compile(matcher.do_match, f"{path}.doMatch")
        return CompiledMatcher(built.predicate, points_for(matcher), then, extract=built.extract)

    def _form(self, matcher: Matcher, path: str) -> CompiledMatcher:
        if not _BODY_ENTRY.search(path):
            raise SimulationError(f"{path}.matcher", "the form matcher belongs only in a request body's matcher list")
        if matcher.config is not None:
            raise SimulationError(f"{path}.config", "the form matcher takes no config")
        if matcher.do_match is not None:
            raise SimulationError(f"{path}.doMatch", "the form matcher takes no doMatch (Hoverfly ignores it)")
        # matching scores the fields (engine.matching.scoring); the form matcher itself never matches text
        return CompiledMatcher(never, points_for(matcher), form=form_fields(matcher.value, path, self.compile))


def points_for(matcher: Matcher) -> int:
    """Strongest-match points: 2 for ``exact`` spelled exactly so, or ``array`` without config; else 1."""
    if matcher.name == "exact" or (matcher.name == "array" and matcher.config is None):
        return 2
    return 1
