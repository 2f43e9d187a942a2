"""Templates compiled to closures: text and one function per mustache or block, run on the request.

The specialised nodes (``engine.templating.fast``) still render through a root struct, a scope, a
render result and a rendered ``Response`` per request; in the socket path that set-up costs more
than the helpers it calls. A template made only of the shapes below is compiled once, at import,
into plain functions that read the request and call the helpers directly:

- text, request fields (``Request.Path.[1]``, ``Request.Header.X``), state keys (``State.user``),
  ``Request.Body 'jsonpath' 'q'``;
- helper calls whose helper reads nothing of the render but its services (random values, ``now``,
  ``faker``, text and arithmetic helpers, ``jsonFromJWT``), with literal, body-query or such helper
  calls as arguments, and no hash;
- ``#if`` / ``#unless`` on such a value, each branch compiled the same way;
- ``#each`` over such a value, its items printing ``this``, a field of the item, ``@index``,
  ``@first``, ``@last`` and ``#if`` / ``#unless`` on those.

What the general render decides per request on the value at hand (a map to walk, an empty array, an
item that is nil, a helper that fails) the closures do not decide: they give up (``Fallback``, or
any failure) and the caller renders the template the general way, which then answers exactly as it
always does, failure included. The helpers they call have no effect but drawing random values, so
giving up part-way changes nothing. ``tests/engine/templating/test_closures.py`` renders generated
templates both ways and compares the bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from simproxy.engine.templating.context import UNREAD
from simproxy.engine.templating.direct import state_key
from simproxy.engine.templating.evaluate import Call, call_func
from simproxy.engine.templating.fast import (
    NIL,
    BodyQuery,
    BodyQueryMustache,
    ConditionBlock,
    DataMustache,
    DataParam,
    EachBlock,
    LocalMustache,
    RequestMustache,
    TypedCall,
)
from simproxy.engine.templating.helpers_body import query_body_json
from simproxy.engine.templating.render import Const, HelperExpr, MustacheNode, PathMustache, Program, raymond_variadic
from simproxy.engine.templating.values import MISSING, GoFunc, escape_html, to_str, truthy
from simproxy.engine.wire.request import RequestDetails

PURE = frozenset(
    {
        "now",
        "randomString",
        "randomStringLength",
        "randomBoolean",
        "randomInteger",
        "randomIntegerRange",
        "randomFloat",
        "randomFloatRange",
        "randomEmail",
        "randomIPv4",
        "randomIPv6",
        "randomUuid",
        "faker",
        "replace",
        "split",
        "concat",
        "length",
        "substring",
        "rightmostCharacters",
        "isNumeric",
        "isAlphanumeric",
        "isBool",
        "isGreaterThan",
        "isGreaterThanOrEqual",
        "isLessThan",
        "isLessThanOrEqual",
        "isBetween",
        "matchesRegex",
        "add",
        "subtract",
        "multiply",
        "divide",
        "sum",
        "jsonFromJWT",
    }
)
"""Helpers that reach nothing of a render but ``call.rt.services`` (and ``call.rt.hoverfly``):
no key-value store, status, header, CSV table, journal or block of the render."""


class Fallback(Exception):
    """A value the closures leave to the general render (a map to iterate, a nil item...)."""


class Flat:
    """What a closure's helper ``Call`` reaches: both its scope and its render state (``call.rt``),
    holding only what the helpers above read of them."""

    __slots__ = ("body_json", "hoverfly", "request", "services", "state")

    def __init__(self, services: Any, request: RequestDetails, hoverfly: bool, state: Mapping[str, str]) -> None:
        self.services = services
        self.request = request
        self.hoverfly = hoverfly
        self.state = state
        self.body_json: Any = UNREAD
        """The request body as Go's decoder reads it, once a jsonpath query has read it."""

    @property
    def rt(self) -> Flat:
        return self


Value = Callable[[Flat], Any]
Piece = Callable[[Flat], str]
ItemPiece = Callable[[Any, int, int], str]
"""What an ``#each`` item prints, given the item, its index and the array's length."""
P = TypeVar("P")


class ClosureText:
    """A template as text and closures: ``render`` joins them for one request, or gives None when
    this request needs the general render."""

    __slots__ = ("parts", "services")

    def __init__(self, parts: tuple[str | Piece, ...], services: Any) -> None:
        self.parts = parts
        self.services = services

    def render(self, request: RequestDetails, hoverfly: bool, state: Mapping[str, str]) -> str | None:
        flat = Flat(self.services, request, hoverfly, state)
        try:
            return "".join([part if part.__class__ is str else part(flat) for part in self.parts])  # type: ignore[operator]
        except Exception:  # Fallback, or a failure the general render reports as it always does
            return None


def closure_text(program: Program, services: Any) -> ClosureText | None:
    """``program`` as a ``ClosureText`` when every part takes one of the shapes above and some part
    calls a helper or reads the body (request fields alone are ``direct``'s); else None."""
    if all(node.__class__ is str or node.__class__ is RequestMustache for node in program.parts):
        return None
    parts = _pieces(program, _piece)
    return None if parts is None else ClosureText(tuple(parts), services)


def _pieces(program: Program, make: Callable[[Any], P | None]) -> list[str | P] | None:
    """``program``'s text and a piece of each node made by ``make``; None when some node has none."""
    parts: list[str | P] = []
    for node in program.parts:
        if node.__class__ is str:
            parts.append(node)
            continue
        piece = make(node)
        if piece is None:
            return None
        parts.append(piece)
    return parts


def _printed(value: Any, escape: bool) -> str:
    text = value if value.__class__ is str else to_str(value)
    return escape_html(text) if escape else text


def _piece(node: Any) -> Piece | None:
    kind = node.__class__
    if kind is RequestMustache:
        getter = node.getter
        return lambda flat: getter(flat.request)
    if kind is PathMustache and not (node.params or node.hash):
        key = state_key(node.path, node.escape)  # {{ State.user }}: None for any other path
        return None if key is None else lambda flat: key(flat.state)
    if kind is BodyQueryMustache:
        query, escape = node.query, node.escape
        return lambda flat: _printed(query_body_json(flat, query), escape)
    if kind is MustacheNode:
        value = _value(node.expr)
        if value is None:
            return None
        shown, escape = value, node.escape
        return lambda flat: _printed(shown(flat), escape)
    if kind is ConditionBlock:
        return _condition(node)
    if kind is EachBlock:
        return _each(node)
    return None


def _branch(program: Program | None) -> str | Piece | None:
    """A branch as its text, or as one piece joining its parts; None when it has another shape."""
    if program is None:
        return ""
    alone = program.text_alone()
    if alone is not None:
        return alone
    parts = _pieces(program, _piece)
    if parts is None:
        return None
    fixed = tuple(parts)
    return lambda flat: "".join([part if part.__class__ is str else part(flat) for part in fixed])  # type: ignore[operator]


def _condition(node: ConditionBlock) -> Piece | None:
    test = _value(node.param)
    inverse, program = _branch(node.inverse), _branch(node.program)
    if test is None or inverse is None or program is None:
        return None
    negate = node.negate
    branches = (inverse, program)

    def condition(flat: Flat) -> str:
        branch = branches[truthy(test(flat)) is not negate]
        return branch if branch.__class__ is str else branch(flat)  # type: ignore[operator]

    return condition


def _each(node: EachBlock) -> Piece | None:
    items = _value(node.param)
    program = node.program
    if items is None or program is None:
        return None
    parts = _pieces(program, _item_piece)
    if parts is None:
        return None
    fixed = tuple(parts)

    def each(flat: Flat) -> str:
        value = items(flat)
        if not isinstance(value, list) or not value:
            raise Fallback  # no items: the block's helper decides (a map, the inverse)
        count = len(value)
        out: list[str] = []
        add = out.append
        for i, item in enumerate(value):
            if item is None:
                raise Fallback  # a nil item leaves the parent context current
            for part in fixed:
                add(part if part.__class__ is str else part(item, i, count))  # type: ignore[operator]
        return "".join(out)

    return each


def _item_piece(node: Any) -> ItemPiece | None:
    kind = node.__class__
    if kind is DataMustache:  # what to_str prints of DataFrame.get's GoInt and bools, none escaped
        name = node.name
        if name == "index":
            return lambda item, i, count: str(i)
        if name == "first":
            return lambda item, i, count: "true" if i == 0 else "false"
        if name == "last":
            return lambda item, i, count: "true" if i == count - 1 else "false"
        return None
    if kind is LocalMustache:
        return _field(node.name, node.escape)
    if kind is PathMustache:
        path = node.path
        if path.parts or path.depth or path.data or path.data_root or node.params or node.hash:
            return None
        escape = node.escape
        return lambda item, i, count: _printed(item, escape)  # {{this}}
    if kind is ConditionBlock and node.param.__class__ is DataParam:
        return _data_condition(node)
    return None


def _field(name: str, escape: bool) -> ItemPiece:
    """``LocalMustache.render`` on an item that is a map holding ``name``."""

    def field(item: Any, i: int, count: int) -> str:
        if item.__class__ is not dict:
            raise Fallback
        value = item.get(name, MISSING)
        if value.__class__ is str:
            return escape_html(value) if escape else value
        if value is MISSING or value.__class__ is GoFunc:
            raise Fallback
        return _printed(value, escape)

    return field


def _data_condition(node: ConditionBlock) -> ItemPiece | None:
    """``{{#if @first}}``, ``{{#unless @last}}``...: both branches text alone; ``@index`` is true past 0."""
    no, yes = node.texts
    if no is None or yes is None:
        return None
    if node.negate:
        no, yes = yes, no
    name = node.param.name
    if name == "index":
        return lambda item, i, count: yes if i != 0 else no
    if name == "first":
        return lambda item, i, count: yes if i == 0 else no
    if name == "last":
        return lambda item, i, count: yes if i == count - 1 else no
    return None


def _value(expr: Any) -> Value | None:
    """What ``expr.eval`` gives at the root, as a closure; None when it has another shape."""
    kind = expr.__class__
    if kind is Const:
        constant = expr.value
        return lambda flat: constant
    if kind is BodyQuery:
        query = expr.query
        return lambda flat: query_body_json(flat, query)
    if kind is TypedCall:
        return _typed(expr)
    if kind is HelperExpr:
        return _helper(expr)
    return None


def _arguments(params: tuple[Any, ...]) -> tuple[Value, ...] | None:
    values = tuple(_value(param) for param in params)
    return None if any(value is None for value in values) else values  # type: ignore[return-value]


def _typed(expr: TypedCall) -> Value | None:
    """``TypedCall.eval``: the arguments, each converted as its parameter's kind asks."""
    values = _arguments(expr.params)
    if values is None or expr.hash or expr.name not in PURE:
        return None
    name, run, converters = expr.name, expr.run, expr.converters

    def typed(flat: Flat) -> Any:
        params = [value(flat) for value in values]
        args = []
        for convert, param in zip(converters, params, strict=True):
            if convert is not None:
                param = convert(param)
                if param is NIL:
                    return ""
            args.append(param)
        return run(Call(flat, name, params, {}), *args)  # type: ignore[arg-type]

    return typed


def _helper(expr: HelperExpr) -> Value | None:
    """``HelperExpr.eval``: a variadic helper, one of any kinds, or raymond's ``callFunc``."""
    spec = expr.spec
    values = _arguments(expr.params)
    if values is None or expr.hash or spec.name not in PURE:
        return None
    name, run = spec.name, spec.run
    if spec.variadic:

        def variadic(flat: Flat) -> Any:
            params = [value(flat) for value in values]
            args = raymond_variadic(name, params) if flat.hoverfly else params
            return run(Call(flat, name, params, {}), *args)  # type: ignore[arg-type]

        return variadic
    if expr.any_types:  # no parameter to convert (every helper without parameters)

        def direct(flat: Flat) -> Any:
            params = [value(flat) for value in values]
            return run(Call(flat, name, params, {}), *params)  # type: ignore[arg-type]

        return direct
    types, options = spec.types, spec.options

    def called(flat: Flat) -> Any:
        return call_func(flat, name, types, options, run, [value(flat) for value in values], {})  # type: ignore[arg-type]

    return called
