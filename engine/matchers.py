"""The matcher registry: matcher name -> compiled predicate over the request's field text.

Names are looked up case-insensitively (``""`` means exact), as Hoverfly does. Each kind is one
entry in ``BUILTIN_MATCHERS``; a registry is built per engine, so nothing here is mutable.
Values are compiled once at import time: a bad regex is a 400 then, never a silent miss later.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from engine.errors import SimulationError
from engine.goregex import InvalidPattern, compile_go
from engine.model import JSON, Matcher

Predicate = Callable[[str], bool]
MatcherFactory = Callable[[JSON, str], Predicate]
"""Builds the predicate for one matcher value; ``path`` names the matcher for error messages."""


def _never(_actual: str) -> bool:
    return False


def exact(value: JSON, path: str) -> Predicate:
    if not isinstance(value, str):
        return _never  # Hoverfly: a non-string value never matches
    return value.__eq__


def glob(value: JSON, path: str) -> Predicate:
    """``*`` is the only wildcard (any run, also empty); everything else is literal and case-sensitive."""
    if not isinstance(value, str):
        return _never
    if "*" not in value:
        return value.__eq__
    pattern = ".*".join(re.escape(part) for part in value.split("*"))
    compiled = re.compile(pattern, re.DOTALL)
    return lambda actual: compiled.fullmatch(actual) is not None


def regex(value: JSON, path: str) -> Predicate:
    """Unanchored search with Go's (RE2) syntax and semantics."""
    if not isinstance(value, str):
        return _never
    try:
        compiled = compile_go(value)
    except InvalidPattern as exc:
        raise SimulationError(path, f"invalid regular expression {value!r}: {exc}") from exc
    return lambda actual: compiled.search(actual) is not None


BUILTIN_MATCHERS: Mapping[str, MatcherFactory] = MappingProxyType(
    {
        "exact": exact,
        "": exact,
        "glob": glob,
        "regex": regex,
    }
)


@dataclass(frozen=True, slots=True)
class CompiledMatcher:
    """A matcher ready to run: its predicate, its strongest-match points and its ``doMatch`` chain."""

    predicate: Predicate
    points: int
    then: CompiledMatcher | None = None
    form: tuple[tuple[str, tuple[CompiledMatcher, ...]], ...] | None = None
    """Only for the body's ``form`` matcher: each form field's compiled matcher list."""

    def matches(self, actual: str) -> bool:
        matcher: CompiledMatcher | None = self
        while matcher is not None:
            # exact, glob and regex hand their input unchanged to the chained matcher
            if not matcher.predicate(actual):
                return False
            matcher = matcher.then
        return True


class MatcherRegistry:
    """Compiles ``Matcher`` values with a fixed table of factories."""

    def __init__(self, factories: Mapping[str, MatcherFactory] = BUILTIN_MATCHERS) -> None:
        self._factories = dict(factories)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._factories)

    def compile(self, matcher: Matcher, path: str) -> CompiledMatcher:
        factory = self._factories.get(matcher.name.lower())
        if factory is None:
            supported = ", ".join(sorted(n for n in self._factories if n))
            raise SimulationError(f"{path}.matcher", f"unknown matcher {matcher.name!r} (supported: {supported})")
        if matcher.config is not None:
            raise SimulationError(f"{path}.config", f"matcher {matcher.name!r} takes no config")
        then = None if matcher.do_match is None else self.compile(matcher.do_match, f"{path}.doMatch")
        return CompiledMatcher(factory(matcher.value, path), points_for(matcher), then)


def points_for(matcher: Matcher) -> int:
    """Strongest-match points: 2 for ``exact`` spelled exactly so, or ``array`` without config; else 1."""
    if matcher.name == "exact" or (matcher.name == "array" and matcher.config is None):
        return 2
    return 1
