"""JSONPath as Hoverfly runs it: Kubernetes client-go ``jsonpath`` templates, parsed by jsonpath-ng.

Each ``{...}`` block is parsed by jsonpath-ng and turned into k8s evaluation steps, so the k8s rules
decide a match: an evaluation error (missing key, index out of range, a filter over an element
without the field) is a miss, an empty result is not. A block jsonpath-ng cannot parse, or that
k8s would never evaluate successfully, is rejected when compiled (``ValueError``).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeAlias

from jsonpath_ng import Child, Descendants, Fields, Index, JSONPath, Root, Slice, This
from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
from jsonpath_ng.ext.filter import Expression, Filter
from jsonpath_ng.ext.parser import parse as parse_jsonpath
from jsonpath_ng.jsonpath import Wildcard

from simproxy.engine.gocompat.gojson import Byte, format_v_float, marshal

Values: TypeAlias = list[Any]


class _NoValue:
    """The whole document is JSON ``null``: Go holds no value at all there (printed ``<no value>``)."""

    __slots__ = ()


NO_VALUE = _NoValue()


class _Fail(Exception):
    """A k8s evaluation error; ``values`` is what the failing step returned along with it."""

    def __init__(self, values: Values) -> None:
        self.values = values


# ---------------------------------------------------------------------------------------------
# evaluation steps (k8s.io/client-go/util/jsonpath/jsonpath.go, one class per eval function)


@dataclass(frozen=True, slots=True)
class _Field:
    name: str

    def apply(self, values: Values) -> Values:
        name = self.name
        found = [v[name] for v in values if isinstance(v, dict) and name in v]
        if values and not found:
            raise _Fail([])  # "<name> is not found"
        return found


@dataclass(frozen=True, slots=True)
class _Slice:
    """``[i]`` (end derived as i+1) and ``[start:end:step]``; None is an omitted bound."""

    start: int | None
    end: int | None
    step: int | None
    derived: bool = False

    def apply(self, values: Values) -> Values:
        found: Values = []
        for value in values:
            if value is None:
                continue
            if not isinstance(value, list):
                raise _Fail(values)  # "is not array or slice"
            n = len(value)
            start = 0 if self.start is None else self.start
            if start < 0:
                start += n
            end = n if self.end is None else self.end
            if end < 0 or (end == 0 and self.derived):
                end += n
            if end == start:
                return found  # k8s stops at the first empty selection
            if not 0 <= start < n or not 0 <= end <= n or start > end:
                raise _Fail(values)  # "array index out of bounds"
            if self.step is not None and self.step <= 0:
                raise _Fail(values)  # "step must be > 0"
            found.extend(value[start : end : self.step or 1])
        return found


@dataclass(frozen=True, slots=True)
class _Union:
    branches: tuple[Steps, ...]

    def apply(self, values: Values) -> Values:
        found: Values = []
        for branch in self.branches:
            try:
                found.extend(run(values, branch))
            except _Fail:
                raise _Fail(values) from None
        return found


def _children(value: Any) -> Values:
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return value
    if isinstance(value, str):  # Go's reflection walks a string's bytes
        return [Byte(b) for b in value.encode("utf-8", "surrogatepass")]
    return []


@dataclass(frozen=True, slots=True)
class _Wildcard:
    def apply(self, values: Values) -> Values:
        return [child for value in values for child in _children(value)]


@dataclass(frozen=True, slots=True)
class _Recursive:
    """``..``: every value with children, depth first, before the step that follows."""

    def apply(self, values: Values) -> Values:
        found: Values = []
        for value in values:
            children = _children(value)
            if children:
                found.append(value)
                found.extend(self.apply(children))
        return found


@dataclass(frozen=True, slots=True)
class _Literal:
    value: Any

    def apply(self, values: Values) -> Values:
        return [self.value] * len(values)


def _kind(value: Any) -> str:
    """Go's basicKind of a value; anything else (null, object, array) cannot be compared."""
    for kind in (bool, Byte, int, float, str):
        if isinstance(value, kind):
            return kind.__name__
    raise _Fail([])  # "invalid type for comparison"


def _equal(left: Any, right: Any) -> bool:
    kinds = {_kind(left), _kind(right)}
    if len(kinds) > 1 and kinds != {"int", "Byte"}:
        raise _Fail([])  # "incompatible types for comparison"
    return bool(left == right)


def _less(left: Any, right: Any) -> bool:
    kinds = {_kind(left), _kind(right)}
    if (len(kinds) > 1 and kinds != {"int", "Byte"}) or kinds == {"bool"}:
        raise _Fail([])
    return bool(left < right)


_COMPARE: Mapping[str, Callable[[Any, Any], bool]] = MappingProxyType(
    {
        "==": _equal,
        "!=": lambda a, b: not _equal(a, b),
        "<": _less,
        "<=": lambda a, b: _less(a, b) or _equal(a, b),
        ">": lambda a, b: not (_less(a, b) or _equal(a, b)),
        ">=": lambda a, b: not _less(a, b),
    }
)


@dataclass(frozen=True, slots=True)
class _Filter:
    """``[?(left op right)]``, or ``[?(left)]`` (op None: the element has the field)."""

    left: Steps
    op: str | None
    right: Steps

    def apply(self, values: Values) -> Values:
        found: Values = []
        for value in values:
            if not isinstance(value, list):
                raise _Fail(values)  # "is not array or slice and cannot be filtered"
            for item in value:
                try:
                    lefts, failed = run([item], self.left), False
                except _Fail as fail:
                    lefts, failed = fail.values, True
                if self.op is None:
                    if lefts:
                        found.append(item)
                    continue
                if failed or len(lefts) > 1:
                    raise _Fail(values)
                if not lefts:
                    continue
                try:
                    rights = run([item], self.right)
                except _Fail:
                    raise _Fail(values) from None
                if len(rights) > 1:
                    raise _Fail(values)
                try:
                    if rights and _COMPARE[self.op](lefts[0], rights[0]):
                        found.append(item)
                except _Fail:
                    raise _Fail(found) from None
        return found


Step: TypeAlias = _Field | _Slice | _Union | _Wildcard | _Recursive | _Literal | _Filter
Steps: TypeAlias = tuple[Step, ...]


def run(values: Values, steps: Steps) -> Values:
    for step in steps:  # k8s evalList
        values = step.apply(values)
    return values


# ---------------------------------------------------------------------------------------------
# compiling


def prepare(query: str) -> str:
    """Hoverfly's ``PrepareJsonPathQuery``: wrap in braces unless it starts with ``{`` or ends with ``}``."""
    if not query.startswith("{") and not query.endswith("}"):
        return "{" + query + "}"
    return query


@dataclass(frozen=True, slots=True)
class JsonPath:
    """A compiled template: literal text and ``{...}`` blocks, and the prepared query it came from."""

    query: str
    parts: tuple[str | Steps, ...]
    simple: tuple[str | int, ...] | None = None
    """The query as a plain walk, when it is one block of field names and indexes from 0
    (``$.customer.name``, ``$.items[0]``): the keys and indexes to follow in turn. Any other step
    fails or finds nothing where the walk fails, so a caller may walk it directly."""

    def results(self, data: Any) -> list[Values] | None:
        """Each part's results; None on a k8s evaluation error or when the output is the query itself."""
        root = [NO_VALUE if data is None else data]
        try:
            found = [[part] if isinstance(part, str) else run(root, part) for part in self.parts]
        except _Fail:
            return None
        return None if _print(found, len(self.query)) == self.query else found

    def matches(self, data: Any) -> bool:
        """Hoverfly's rule: no evaluation error, and the printed output differs from the query."""
        return self.results(data) is not None

    def extract(self, data: Any) -> str | None:
        """The value a chained ``doMatch`` receives, or None when this does not match."""
        found = self.results(data)
        if found is None:
            return None
        flat = [value for result in found for value in result]
        if any(value is NO_VALUE for value in flat):
            return None  # Hoverfly crashes converting Go's "no value"
        if len(flat) == 1 and isinstance(flat[0], str):
            return flat[0]
        return marshal((flat[0] if len(flat) == 1 else flat) if flat else None)


def _text(value: Any, limit: int) -> str | None:
    if isinstance(value, dict | list):
        return marshal(value, limit)
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return format_v_float(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    return "null" if value is None else "<no value>"


def _print(results: Sequence[Values], limit: int) -> str | None:
    """The template's printed output, or None once it is longer than ``limit``."""
    out: list[str] = []
    size = 0
    for result in results:
        for i, value in enumerate(result):
            text = _text(value, limit - size)
            if text is None:
                return None
            out.append(text + (" " if i < len(result) - 1 else ""))
            size += len(out[-1])
            if size > limit:
                return None
    return "".join(out)


def compile_jsonpath(query: str) -> JsonPath:
    """Compile a prepared query, raising ``ValueError`` with the reason when it cannot match."""
    parts: list[str | Steps] = []
    i = 0
    while i < len(query):
        start = query.find("{", i)
        if start < 0:
            parts.append(query[i:])
            break
        if start > i:
            parts.append(query[i:start])
        end = _block_end(query, start + 1)
        parts.append(_block(query[start + 1 : end]))
        i = end + 1
    if all(isinstance(part, str) for part in parts):
        raise ValueError("no {...} block: the output is the query itself, which Hoverfly never matches")
    return JsonPath(query, tuple(parts), _walk(parts))


def _walk(parts: list[str | Steps]) -> tuple[str | int, ...] | None:
    """``JsonPath.simple`` of the compiled parts, or None."""
    if len(parts) != 1 or isinstance(parts[0], str) or not parts[0]:
        return None
    walk: list[str | int] = []
    for step in parts[0]:
        if isinstance(step, _Field):
            walk.append(step.name)
        elif isinstance(step, _Slice) and step.derived and step.start is not None and step.start >= 0:
            walk.append(step.start)
        else:
            return None
    return tuple(walk)


def _block_end(query: str, i: int) -> int:
    quote = ""
    while i < len(query):
        char = query[i]
        if char in "\r\n":
            raise ValueError("a line break inside {...}")
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "}":
            return i
        i += 1
    raise ValueError("unclosed {...}")


def _block(text: str) -> Steps:
    expr = text.strip(" ")
    if not expr:
        return ()  # `{}` prints the whole document
    if expr[0] in ".[":
        expr = "$" + expr
    elif expr[0] not in "$@":
        raise ValueError(f"{{{text}}} does not start with $, @, . or [ (Hoverfly's jsonpath never matches it)")
    try:
        with warnings.catch_warnings(action="ignore"):
            tree = parse_jsonpath(_star_as_slice(expr))
    except (JsonPathLexerError, JsonPathParserError, ValueError, TypeError) as exc:
        raise ValueError(f"{{{text}}}: {exc}") from exc
    return _steps(tree)


_QUOTED_OR_STAR = re.compile(r"""("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')|\[\*\]""")


def _star_as_slice(expr: str) -> str:
    """k8s reads ``[*]`` as the slice ``[:]`` (arrays only), unlike ``.*``; jsonpath-ng merges them."""
    return _QUOTED_OR_STAR.sub(lambda m: m.group(1) or "[:]", expr)


def _steps(node: JSONPath) -> Steps:
    # exact types: jsonpath-ng's extensions (sorting, string functions, ...) subclass these
    if type(node) is Root or type(node) is This:
        return ()  # `$` and `@` are both "the current value" in k8s, even inside a filter
    if type(node) is Child:
        return _steps(node.left) + _steps(node.right)
    if type(node) is Descendants:
        return (*_steps(node.left), _Recursive(), *_steps(node.right))
    if type(node) is Fields:
        names = node.fields
        return (_Field(names[0]),) if len(names) == 1 else (_Union(tuple((_Field(n),) for n in names)),)
    if type(node) is Index:
        picks = tuple(_Slice(i, i + 1, None, derived=True) for i in node.indices)
        return picks if len(picks) == 1 else (_Union(tuple((p,) for p in picks)),)
    if type(node) is Slice:
        return (_Slice(node.start, node.end, node.step),)
    if type(node) is Wildcard:
        return (_Wildcard(),)
    if type(node) is Filter and len(node.expressions) == 1 and type(node.expressions[0]) is Expression:
        return (_filter(node.expressions[0]),)
    raise ValueError(f"{node} is not part of Hoverfly's JSONPath dialect")


def _filter(expr: Expression) -> _Filter:
    left = _steps(expr.target)
    if expr.op is None:
        return _Filter(left, None, ())
    if expr.op not in _COMPARE:
        raise ValueError(f"filter operator {expr.op!r} is not one of {', '.join(_COMPARE)}")
    if isinstance(expr.value, JSONPath):
        return _Filter(left, expr.op, _steps(expr.value))
    if not isinstance(expr.value, str | int | float):
        raise ValueError(f"{expr.value!r} cannot be compared in Hoverfly's JSONPath dialect")
    return _Filter(left, expr.op, (_Literal(expr.value),))
