"""Render nodes specialised at compile time for the shapes templates use most.

Each class here renders exactly as the general node it stands for (``engine.templating.render``),
with what the general node decides per request decided once, at import:

- ``TypedCall``: a helper of fixed Go parameter kinds, its converters chosen per argument and its
  literal arguments converted already (raymond's ``callFunc`` without the lookups);
- ``ConditionBlock``: ``{{#if x}}`` / ``{{#unless x}}`` without a hash or block parameters;
- ``EachBlock``: ``{{#each x}}`` without block parameters, an array iterated in a plain loop;
- ``DataMustache`` / ``DataParam``: ``@index``, ``@first``, ``@last``, ``@key`` read off the frame;
- ``LocalMustache``: a one-name path printed inside a block, found in the innermost context;
- ``BodyQuery`` / ``BodyQueryMustache``: ``Request.Body 'jsonpath' '<query>'`` read at the root;
- ``RequestMustache``: a request field (``Request.Path.[1]``, ``Request.Header.X``) printed at the
  root, read straight from the request as engine/templating/direct.py reads it.

Anything outside those shapes at render time (block parameters in scope, a context that is not a
map) takes the general code. ``tests/engine/templating/test_specialised.py`` renders generated
templates both ways and compares the results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simproxy.engine.templating import blocks
from simproxy.engine.templating.direct import Getter
from simproxy.engine.templating.evaluate import (
    GO_TYPES,
    MAX_DEPTH,
    Call,
    DataFrame,
    HelperSpec,
    Path,
    Scope,
    depth_path,
    eval_hash,
    eval_path,
)
from simproxy.engine.templating.helpers_body import query_body_json
from simproxy.engine.templating.render import BlockNode, Const, FieldExpr, PathMustache, PathParam, Program
from simproxy.engine.templating.values import (
    MISSING,
    GoFunc,
    GoInt,
    RenderFailure,
    StrList,
    escape_html,
    go_type_name,
    to_str,
    truthy,
)

NIL = object()
"""A converter's answer for nil where raymond returns "" without calling the helper."""

Converter = Callable[[Any], Any]


def converter(kind: str, index: int, name: str) -> Converter | None:
    """raymond's conversion of argument ``index`` to Go kind ``kind``; None when none is needed."""
    if kind == "any":
        return None
    if kind == "str":
        return _to_text

    def fail(value: Any) -> RenderFailure:
        return RenderFailure(
            f"Helper {name} called with argument {index} with type {go_type_name(value)} "
            f"but it should be {GO_TYPES[kind]}"
        )

    if kind == "bool":

        def to_bool(value: Any) -> Any:
            if value is None:
                return NIL
            return value if value.__class__ is bool else truthy(value)

        return to_bool
    if kind == "int":

        def to_int(value: Any) -> Any:
            if value.__class__ is GoInt:
                return value
            if value is None:
                return NIL
            raise fail(value)

        return to_int
    if kind == "float":

        def to_float(value: Any) -> Any:
            kind_of = value.__class__
            if kind_of is float:
                return value
            if kind_of is int:
                return float(value)
            if value is None:
                return NIL
            raise fail(value)

        return to_float

    def to_strlist(value: Any) -> Any:
        if value is None or isinstance(value, StrList):
            return value
        raise fail(value)

    return to_strlist


def _to_text(value: Any) -> Any:
    if value.__class__ is str:
        return value
    return "" if value is None else to_str(value)


class TypedCall:
    """A helper call whose argument count matches the helper's fixed parameter kinds."""

    __slots__ = ("converters", "hash", "name", "params", "run", "spec")

    def __init__(
        self,
        spec: HelperSpec,
        params: tuple[Any, ...],
        hash_: tuple[tuple[str, Any], ...],
        converters: tuple[Converter | None, ...],
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.run = spec.run
        self.params = params
        self.hash = hash_
        self.converters = converters

    @classmethod
    def of(cls, spec: HelperSpec, params: tuple[Any, ...], hash_: tuple[tuple[str, Any], ...]) -> TypedCall | None:
        """The call with one converter per argument (a literal's converted already), or None when it
        does not have this shape: a variadic helper, one of any kinds only, another argument count,
        or a literal that does not convert (the general node fails the render for it)."""
        if spec.variadic or len(params) != len(spec.types) or all(kind == "any" for kind in spec.types):
            return None
        converters: list[Converter | None] = []
        for i, (kind, param) in enumerate(zip(spec.types, params, strict=True)):
            convert = converter(kind, i, spec.name)
            if convert is not None and param.__class__ is Const:
                try:
                    fixed = convert(param.value)
                except RenderFailure:
                    return None
                if fixed is NIL:
                    return None
                convert = None if fixed is param.value else _constant(fixed)
            converters.append(convert)
        return cls(spec, params, hash_, tuple(converters))

    def eval(self, scope: Scope) -> Any:
        params = [param.eval(scope) for param in self.params]
        hash_ = eval_hash(scope, self.hash) if self.hash else {}
        args = []
        for convert, value in zip(self.converters, params, strict=True):
            if convert is not None:
                value = convert(value)
                if value is NIL:
                    return ""
            args.append(value)
        return self.run(Call(scope, self.name, params, hash_), *args)


def _constant(value: Any) -> Converter:
    return lambda _: value


class ConditionBlock(BlockNode):
    """``{{#if x}}`` or ``{{#unless x}}``: one argument, no hash, no block parameters."""

    __slots__ = ("negate", "param", "texts")

    def __init__(self, negate: bool, param: Any, program: Program | None, inverse: Program | None) -> None:
        super().__init__(None, True, program, inverse)
        self.negate = negate
        self.param = param
        self.texts = tuple("" if branch is None else branch.text_alone() for branch in (inverse, program))
        """Each branch's text when it is text alone (the inverse first), else None."""

    def render(self, scope: Scope) -> str:
        scope.blocks.append(self)  # inline block helpers inside render this block again
        value = self.param.eval(scope)
        chosen = truthy(value) is not self.negate
        text = self.texts[chosen]
        if text is None or scope.depth >= MAX_DEPTH:
            branch = self.program if chosen else self.inverse
            text = branch.render(scope) if branch is not None else ""
        scope.blocks.pop()
        return text


class EachBlock(BlockNode):
    """``{{#each x}}`` without block parameters: an array's items rendered in a plain loop."""

    __slots__ = ("param",)

    def __init__(self, param: Any, program: Program | None, inverse: Program | None) -> None:
        super().__init__(None, True, program, inverse)
        self.param = param

    def render(self, scope: Scope) -> str:
        scope.blocks.append(self)
        value = self.param.eval(scope)
        program = self.program
        if not isinstance(value, list) or not value or program is None:
            text = to_str(blocks.each(Call(scope, "each", [value], {}), value))
            scope.blocks.pop()
            return text
        scope.depth += 1  # each item's program, as Program.render counts it
        if scope.depth > MAX_DEPTH:
            raise RenderFailure("blocks are rendered inside each other too deeply")
        ctxs = scope.ctx
        parent = scope.data
        count = len(value)
        parts = program.parts
        out: list[str] = []
        add = out.append
        for i, item in enumerate(value):
            scope.data = DataFrame(parent, i, count, None)
            if item is not None:
                ctxs.append(item)
            for part in parts:
                add(part if part.__class__ is str else part.render(scope))
            if item is not None:
                ctxs.pop()
        scope.data = parent
        scope.depth -= 1
        scope.blocks.pop()
        return "".join(out)


class DataMustache(PathMustache):
    """``{{@index}}`` and its kin: one name, read off the current frame."""

    __slots__ = ("name",)

    def __init__(self, path: Path, escape: bool) -> None:
        super().__init__(path, (), (), escape)
        self.name = path.parts[0].name

    def render(self, scope: Scope) -> str:
        if scope.bparams:
            return PathMustache.render(self, scope)
        value = scope.data.get(self.name)
        if value is None:
            value = depth_path(scope, self.path, self)
        text = value if value.__class__ is str else to_str(value)
        return escape_html(text) if self.escape else text


class DataParam(PathParam):
    """``@last`` and its kin as an argument."""

    __slots__ = ("name",)

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.name = path.parts[0].name

    def eval(self, scope: Scope) -> Any:
        if scope.bparams:
            return eval_path(scope, self.path, None)
        value = scope.data.get(self.name)
        return depth_path(scope, self.path, None) if value is None else value


class LocalMustache(PathMustache):
    """A one-name path printed inside a block: the innermost context, when it is a map holding it."""

    __slots__ = ("name",)

    def __init__(self, path: Path, escape: bool) -> None:
        super().__init__(path, (), (), escape)
        self.name = path.parts[0].name

    def render(self, scope: Scope) -> str:
        ctxs = scope.ctx
        if not scope.bparams and len(ctxs) > 1:
            ctx = ctxs[-1]
            if ctx.__class__ is dict:
                value = ctx.get(self.name, MISSING)
                if value is not MISSING and value.__class__ is not GoFunc:
                    text = value if value.__class__ is str else to_str(value)
                    return escape_html(text) if self.escape else text
        return PathMustache.render(self, scope)


def body_query(expr: FieldExpr) -> str | None:
    """The JSONPath of ``Request.Body 'jsonpath' '<query>'`` (two literal strings, no hash), else None."""
    path, params = expr.path, expr.params
    if (
        expr.hash
        or path.depth
        or path.data
        or path.data_root
        or [part.name for part in path.parts] != ["Request", "Body"]
        or len(params) != 2
        or not all(param.__class__ is Const and param.value.__class__ is str for param in params)
    ):
        return None
    kind, query = params[0].value, params[1].value
    return query if kind.lower() == "jsonpath" and query != "" else None


class BodyQuery(FieldExpr):
    """``Request.Body 'jsonpath' '<query>'`` as an argument or a block's subject."""

    __slots__ = ("query",)

    def __init__(self, expr: FieldExpr, query: str) -> None:
        super().__init__(expr.path, expr.params, expr.hash)
        self.query = query

    def eval(self, scope: Scope) -> Any:
        if len(scope.ctx) != 1 or scope.bparams:
            return eval_path(scope, self.path, self)
        scope.func_expr = self  # a function field's value, as the general lookup marks it
        return query_body_json(scope.rt, self.query)


class BodyQueryMustache(PathMustache):
    """``{{ Request.Body 'jsonpath' '<query>' }}`` printed."""

    __slots__ = ("query",)

    def __init__(self, expr: FieldExpr, query: str, escape: bool) -> None:
        super().__init__(expr.path, expr.params, expr.hash, escape)
        self.query = query

    def render(self, scope: Scope) -> str:
        if len(scope.ctx) != 1 or scope.bparams:
            return PathMustache.render(self, scope)
        scope.func_expr = self
        value = query_body_json(scope.rt, self.query)
        text = value if value.__class__ is str else to_str(value)
        return escape_html(text) if self.escape else text


class RequestMustache(PathMustache):
    """A request field printed: read from the request when the root is the only context."""

    __slots__ = ("getter",)

    def __init__(self, path: Path, escape: bool, getter: Getter) -> None:
        super().__init__(path, (), (), escape)
        self.getter = getter

    def render(self, scope: Scope) -> str:
        if len(scope.ctx) != 1 or scope.bparams:
            return PathMustache.render(self, scope)
        memo = self.path.memo
        if memo < 0:  # printed once: nothing to remember
            return self.getter(scope.rt.request)
        key = memo + self.escape  # as PathMustache remembers it
        text = scope.memo.get(key)
        if text is None:
            text = scope.memo[key] = self.getter(scope.rt.request)
        return text
