"""The candidate index: which pairs can possibly hit a request, found without visiting every pair.

A pair can only hit a request whose path equals its exact path matcher, or starts with the
literal prefix of its glob (text before the first ``*``) or of its ``^``-anchored regex; and
whose method equals its exact method matcher. Pairs are bucketed by exact path, or by the whole
path segments of their literal prefix, each split by exact method. A request looks up its exact
path and each of its own segment prefixes: a handful of dict lookups, whatever the pair count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from heapq import merge
from typing import Generic, TypeVar

from simproxy.engine.simulation.model import Matcher, Matchers

_REGEX_SPECIAL = frozenset("\\.[](){}*+?|^$")
_QUANTIFIERS = frozenset("*+?{")
_LITERAL_ESCAPES = frozenset("/.-_~:=@,&%!'\"#<>`;[](){}*+?|^$\\")

T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True, slots=True)
class PairIndex(Generic[T]):
    """Buckets of pair indices (``build``), or of the pairs themselves (``with_items``)."""

    exact: dict[tuple[str, str | None], tuple[T, ...]]
    prefix: dict[tuple[tuple[str, ...], str | None], tuple[T, ...]]
    depth: int
    """The deepest segment prefix any bucket has: requests look no deeper."""
    order: Callable[[T], int]
    """Each item's position in the simulation, to merge buckets in simulation order."""

    @staticmethod
    def build(requests: Iterable[tuple[Matchers | None, Matchers | None]]) -> PairIndex[int]:
        """Index pairs given as (path matchers, method matchers), in simulation order."""
        exact: dict[tuple[str, str | None], list[int]] = {}
        prefix: dict[tuple[tuple[str, ...], str | None], list[int]] = {}
        depth = 0
        for i, (path, method) in enumerate(requests):
            method_key = exact_value(method)
            path_key = exact_value(path)
            if path_key is not None:
                exact.setdefault((path_key, method_key), []).append(i)
                continue
            segments = _full_segments(literal_prefix(path))
            depth = max(depth, len(segments))
            prefix.setdefault((segments, method_key), []).append(i)
        return PairIndex(
            {k: tuple(v) for k, v in exact.items()},
            {k: tuple(v) for k, v in prefix.items()},
            depth,
            _itself,
        )

    def with_items(self: PairIndex[int], items: Sequence[U], order: Callable[[U], int]) -> PairIndex[U]:
        """The same index holding ``items[i]`` for every index ``i`` (``order(items[i]) == i``)."""
        return PairIndex(
            {k: tuple(items[i] for i in v) for k, v in self.exact.items()},
            {k: tuple(items[i] for i in v) for k, v in self.prefix.items()},
            self.depth,
            order,
        )

    def candidates(self, path: str, method: str) -> Iterable[T]:
        """The pairs (or their indices) that may hit, in simulation order."""
        by_method, any_method = self.exact.get((path, method)), self.exact.get((path, None))
        if not self.prefix:  # only exact paths: at most two buckets
            if any_method is None:
                return by_method or ()
            if by_method is None:
                return any_method
            return merge(by_method, any_method, key=self.order)
        found = [b for b in (by_method, any_method) if b]
        if self.prefix:
            segments = tuple(_full_segments(path)[: self.depth])
            lookup = self.prefix.get
            for d in range(len(segments) + 1):
                key = segments[:d]
                for bucket in (lookup((key, method)), lookup((key, None))):
                    if bucket:
                        found.append(bucket)
        if not found:
            return ()
        if len(found) == 1:
            return found[0]
        return merge(*found, key=self.order)


def _itself(position: int) -> int:
    return position


def exact_value(matchers: Matchers | None) -> str | None:
    """The value every hit must equal, when the list holds an exact matcher (else None: any value)."""
    for m in matchers or ():
        if m.name.lower() in ("exact", "") and isinstance(m.value, str):
            return m.value
    return None


def literal_prefix(matchers: Matchers | None) -> str:
    """The longest text every matching path must start with ("" when nothing is known)."""
    best = ""
    for m in matchers or ():
        candidate = _prefix_of(m)
        if len(candidate) > len(best):
            best = candidate
    return best


def _prefix_of(m: Matcher) -> str:
    name = m.name.lower()
    if not isinstance(m.value, str):
        return ""
    if name == "glob":
        return m.value.split("*", 1)[0]
    if name == "regex" and m.value.startswith("^"):
        return _regex_prefix(m.value[1:])
    return ""


def _regex_prefix(pattern: str) -> str:
    """Literal characters at the start of an anchored regex that every match must contain."""
    if "|" in pattern:
        return ""  # an alternation may bypass the anchor or the literal text
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1 : i + 2]
            if not nxt or nxt not in _LITERAL_ESCAPES:
                break  # \d, \w, \b and friends are classes, not literals
            literal, width = nxt, 2
        elif ch in _REGEX_SPECIAL:
            break
        else:
            literal, width = ch, 1
        if pattern[i + width : i + width + 1] in _QUANTIFIERS:
            break  # the character may repeat zero times
        out.append(literal)
        i += width
    return "".join(out)


def _full_segments(path: str) -> tuple[str, ...]:
    """The segments of a path that are followed by a ``/`` (a partial last segment is left out)."""
    if not path.startswith("/"):
        return ()
    return tuple(path[1:].split("/")[:-1])
