"""What every matcher family builds: a predicate over the field text and, for the kinds that hand
``doMatch`` something other than their input, an extractor that matches and derives in one pass.

A predicate or extractor never raises: ``guarded`` turns an unexpected exception into "no match".
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from simproxy.engine.errors import InvalidValue
from simproxy.engine.simulation.model import JSON

Predicate = Callable[[str], bool]
Extract = Callable[[str], "str | None"]
"""Matches and derives the value for ``doMatch`` in one pass: None means no match."""

_log = logging.getLogger("simproxy.engine.matchers")
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Built:
    """One compiled matcher value: its predicate, and its extractor when it is not the identity."""

    predicate: Predicate
    extract: Extract | None = None


def never(_actual: str) -> bool:
    return False


def always(_actual: str) -> bool:
    return True


def require_str(value: JSON, path: str, kind: str) -> str:
    """The matcher value, which must be a string: another JSON value is ``InvalidValue`` at
    ``path.value`` (Hoverfly's matchers then never match; ``negate`` always does)."""
    if not isinstance(value, str):
        message = f"the {kind} matcher needs a string value, not {json_type(value)}"
        if kind == "negate":
            raise InvalidValue(f"{path}.value", message, always, "always matches")
        raise InvalidValue(f"{path}.value", message)
    return value


REMEMBERED_INPUT = 8_192
"""The longest input whose answer a matcher keeps for the next request (see ``guarded``): each
matcher may hold one, so a simulation of many body matchers holds at most this much per matcher."""


def guarded(fn: Callable[[str], _T], fallback: _T, kind: str) -> Callable[[str], _T]:
    """``fn`` made total: an exception (a pathological body) is logged and counts as ``fallback``.

    Only the costly families are guarded (JSON, JWT, XML, XPath), so the guard also keeps the last
    answer: load tests send the same body again and again to pairs Hoverfly never caches (a header
    matcher beside a ``jsonpartial``), and a string comparison is far cheaper than a parse.
    """
    return _Guarded(fn, fallback, kind)


class _Guarded(Generic[_T]):
    __slots__ = ("fallback", "fn", "kind", "last")

    def __init__(self, fn: Callable[[str], _T], fallback: _T, kind: str) -> None:
        self.fn = fn
        self.fallback = fallback
        self.kind = kind
        self.last: tuple[str, _T] | None = None
        """The last input and its answer, replaced as one value (a reader never sees half)."""

    def __call__(self, actual: str) -> _T:
        last = self.last
        if last is not None and last[0] == actual:
            return last[1]
        try:
            answer = self.fn(actual)
        except Exception:  # a matcher must never fail a request
            _log.warning("%s matcher failed on a %d-character input; treated as no match", self.kind, len(actual))
            answer = self.fallback
        if len(actual) <= REMEMBERED_INPUT:
            self.last = (actual, answer)
        return answer


def json_type(value: JSON) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
