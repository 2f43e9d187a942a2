"""raymond's evaluation rules (SpectoLabs/raymond eval.go and helper.go): scopes, paths, helper calls.

A path tries the current context, then each enclosing one out to the root, until its first part
resolves; an array context maps the path over its items. Helper arguments are converted as
raymond's ``callFunc`` does; block helpers render the innermost enclosing block.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any, Protocol

from simproxy.engine.templating.values import (
    MISSING,
    GoFunc,
    GoInt,
    GoStruct,
    RenderFailure,
    StrList,
    go_type_name,
    to_str,
    truthy,
)

MAX_DEPTH = 64
"""Programs rendered inside each other; past this the render fails (Go would overflow its stack)."""

GO_TYPES = MappingProxyType(
    {
        "str": "string",
        "int": "int",
        "float": "float64",
        "bool": "bool",
        "strlist": "[]string",
        "any": "interface {}",
    }
)


class ProgramNode(Protocol):
    """A program of the render tree (engine/templating/render.py's ``Program``)."""

    @property
    def block_params(self) -> tuple[str, ...] | None: ...

    def render(self, scope: Scope) -> str: ...


class OpenBlock(Protocol):
    """A block being rendered (``BlockNode`` and its specialised kinds): what helpers inside it render."""

    @property
    def program(self) -> ProgramNode | None: ...

    @property
    def inverse(self) -> ProgramNode | None: ...


class DataFrame:
    """raymond's private data frame: ``@index``, ``@key``, ``@first`` and ``@last`` of one iteration.

    raymond copies the parent frame's data into each new one; since only iterations make frames,
    a frame holds exactly its own four values (the root frame holds none).
    """

    __slots__ = ("index", "key", "length", "parent")

    def __init__(self, parent: DataFrame | None, index: int = -1, length: int = 0, key: Any = None) -> None:
        self.parent = parent
        self.index = GoInt(index)
        self.length = length
        self.key = key

    def iter_frame(self, length: int, index: int, key: Any) -> DataFrame:
        return DataFrame(self, index, length, key)

    def get(self, name: str) -> Any:
        """The value of ``@name`` (nil when unset)."""
        index = self.index
        if index < 0:
            return None
        if name == "index":
            return index
        if name == "first":
            return index == 0
        if name == "last":
            return index == self.length - 1
        return self.key if name == "key" else None

    @property
    def data(self) -> dict[str, Any]:
        if self.index < 0:
            return {}
        return {name: self.get(name) for name in ("index", "key", "first", "last")}


class Scope:
    """One evaluation: the context stack, data frame, block parameters and open blocks."""

    __slots__ = ("blocks", "bparams", "ctx", "data", "depth", "func_expr", "memo", "rt")

    def __init__(self, rt: Any, root: Any) -> None:
        self.rt = rt
        self.ctx: list[Any] = [root]
        self.data = DataFrame(None)
        self.bparams: list[dict[str, Any]] = []
        self.blocks: list[OpenBlock] = []
        self.depth = 0
        self.func_expr: Any = None
        self.memo: dict[int, str] = {}
        """Printed values of root-level paths already rendered (see ``Path.memo``)."""


class Part:
    """One path segment: the map key, the struct field name and the array index it stands for."""

    __slots__ = ("index", "name", "title")

    def __init__(self, name: str, title: str, index: int | None) -> None:
        self.name = name
        self.title = title
        self.index = index


class Path:
    """A compiled path. ``memo`` is an even number identifying it when its value at the root cannot
    change during a render (it reads neither ``Kvs``, ``InternalVars`` nor ``@data``), else -1."""

    __slots__ = ("data", "data_root", "depth", "first_raw", "memo", "parts", "root_parts")

    def __init__(
        self, parts: tuple[Part, ...], first_raw: str | None, depth: int, data: bool, data_root: bool, memo: int = -1
    ) -> None:
        self.parts = parts
        self.first_raw = first_raw
        self.depth = depth
        self.data = data
        self.data_root = data_root
        self.root_parts = parts[1:]
        self.memo = memo


class HelperSpec:
    """A registered helper: its Go parameter kinds, whether it takes the options, and the code."""

    __slots__ = ("name", "options", "run", "types", "variadic")

    def __init__(
        self, name: str, types: tuple[str, ...], options: bool, run: Callable[..., Any], variadic: bool = False
    ) -> None:
        self.name = name
        self.types = types
        self.options = options
        self.run = run
        self.variadic = variadic


class Call:
    """The ``*raymond.Options`` a helper receives: its parameters, hash and the block around it."""

    __slots__ = ("hash", "name", "params", "scope")

    def __init__(self, scope: Scope, name: str, params: list[Any], hash_: dict[str, Any]) -> None:
        self.scope = scope
        self.name = name
        self.params = params
        self.hash = hash_

    @property
    def rt(self) -> Any:
        return self.scope.rt

    def eval_block(self, ctx: Any, data: DataFrame | None, key: Any) -> str:
        blocks = self.scope.blocks
        if blocks and blocks[-1].program is not None:
            return eval_program(self.scope, blocks[-1].program, ctx, data, key)
        return ""

    def fn(self) -> str:
        return self.eval_block(None, None, None)

    def inverse(self) -> str:
        blocks = self.scope.blocks
        if blocks and blocks[-1].inverse is not None:
            return blocks[-1].inverse.render(self.scope)
        return ""

    def iter_frame(self, length: int, index: int, key: Any) -> DataFrame:
        return self.scope.data.iter_frame(length, index, key)

    def include_zero(self) -> bool:
        """``isIncludableZero``: ``includeZero=true`` and the first parameter is the integer 0."""
        flag = self.hash.get("includeZero")
        first = self.params[0] if self.params else None
        return flag is True and type(first) is GoInt and first == 0


def eval_hash(scope: Scope, pairs: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    found = {}
    for key, node in pairs:
        value = node.eval(scope)
        if value is not None:
            found[key] = value
    return found


def eval_program(scope: Scope, program: ProgramNode, ctx: Any, data: DataFrame | None, key: Any) -> str:
    """raymond's ``evalProgram``: block params, context and data frame around one program."""
    names = program.block_params
    if names:
        params = {names[0]: ctx}
        if len(names) > 1 and key is not None:
            params[names[1]] = key
        scope.bparams.append(params)
    if ctx is not None:
        scope.ctx.append(ctx)
    saved = scope.data
    if data is not None:
        scope.data = data
    text = program.render(scope)
    scope.data = saved
    if ctx is not None:
        scope.ctx.pop()
    if names:
        scope.bparams.pop()
    return text


# ---------------------------------------------------------------------------------------------
# paths


def eval_path(scope: Scope, path: Path, root_expr: Any) -> Any:
    """raymond's ``evalPathExpression``; ``root_expr`` is the expression when the path is its head."""
    if scope.bparams and path.first_raw is not None:
        value = _block_param(scope, path.first_raw)
        if value is not None:
            scope.ctx.append({path.first_raw: value})
            try:
                if path.data_root:
                    return _ctx_path(scope, scope.ctx[0], path.root_parts, root_expr)[0]
                return depth_path(scope, path, root_expr)
            finally:
                scope.ctx.pop()
    if path.data_root:
        result = _ctx_path(scope, scope.ctx[0], path.root_parts, root_expr)[0]
        return result if result is not None else data_path(scope, path, root_expr)
    if path.data:
        result = data_path(scope, path, root_expr)
        if result is not None:
            return result
    return depth_path(scope, path, root_expr)


def _block_param(scope: Scope, name: str) -> Any:
    for params in reversed(scope.bparams):
        if name in params:
            return params[name]
    return None


def data_path(scope: Scope, path: Path, root_expr: Any) -> Any:
    frame = scope.data
    if path.depth:
        for _ in range(path.depth):
            if frame.parent is None:
                return None
            frame = frame.parent
    if len(path.parts) == 1:
        return frame.get(path.parts[0].name)
    return _ctx_path(scope, frame.data, path.parts, root_expr)[0]


def depth_path(scope: Scope, path: Path, root_expr: Any) -> Any:
    """Try each context from ``depth`` outwards until the path's first part resolves (inlined walk)."""
    ctxs = scope.ctx
    parts = path.parts
    index = len(ctxs) - 1 - path.depth
    while index >= 0:
        value = ctxs[index]
        if isinstance(value, list):
            return _ctx_path(scope, value, parts, root_expr)[0]  # never nil: no further fallback
        resolved = False
        for part in parts:
            kind = value.__class__
            if kind is dict:
                value = value.get(part.name, MISSING)
            elif kind is StrList or kind is list:
                at = part.index
                if at is None or at >= len(value):
                    value = MISSING
                elif at < 0:
                    raise RenderFailure(f"negative index {at} (Hoverfly crashes on it)")
                else:
                    value = value[at]
            elif isinstance(value, GoStruct):
                value = value.fields[part.title]
            else:
                value = _index(value, part)
            if value is MISSING:
                break
            if value.__class__ is GoFunc:
                value = _call_field(scope, part.name, value, root_expr)
            resolved = True
        else:
            return value
        if resolved:
            return None
        index -= 1
    return None


def falls_to_root(ctxs: list[Any], first: Part) -> bool:
    """No context above the root resolves ``first``, so a plain path's lookup ends at the root."""
    for ctx in ctxs[1:]:
        if ctx.__class__ is dict:
            if first.name in ctx:
                return False
        elif isinstance(ctx, list) or (isinstance(ctx, GoStruct) and ctx.fields[first.title] is not MISSING):
            return False  # a list context answers every path
    return True


def root_value(scope: Scope, path: Path, root_expr: Any) -> Any:
    """A plain path's value at the root context."""
    return _ctx_path(scope, scope.ctx[0], path.parts, root_expr)[0]


def _ctx_path(scope: Scope, ctx: Any, parts: tuple[Part, ...], root_expr: Any) -> tuple[Any, bool]:
    if isinstance(ctx, list):
        found = []
        for item in ctx:
            value = _walk(scope, item, parts, root_expr)[0]
            if value is not MISSING:
                found.append(value)
        return found, False
    value, resolved = _walk(scope, ctx, parts, root_expr)
    return (None if value is MISSING else value), resolved


def _walk(scope: Scope, ctx: Any, parts: tuple[Part, ...], root_expr: Any) -> tuple[Any, bool]:
    resolved = False
    for part in parts:
        ctx = eval_field(scope, ctx, part, root_expr)
        if ctx is MISSING:
            return MISSING, resolved
        resolved = True
    return ctx, resolved


def _index(ctx: Any, part: Part) -> Any:
    if not isinstance(ctx, list):
        return MISSING
    index = part.index
    if index is None or index >= len(ctx):
        return MISSING
    if index < 0:
        raise RenderFailure(f"negative index {index} (Hoverfly crashes on it)")
    return ctx[index]


def eval_field(scope: Scope, ctx: Any, part: Part, root_expr: Any) -> Any:
    """raymond's ``evalField``: a map key, a struct field (capitalised) or an array index."""
    if isinstance(ctx, dict):
        value = ctx.get(part.name, MISSING)
    elif isinstance(ctx, GoStruct):
        value = ctx.fields[part.title]
    else:
        value = _index(ctx, part)
    if value.__class__ is GoFunc:
        value = _call_field(scope, part.name, value, root_expr)
    return value


def _call_field(scope: Scope, name: str, func: GoFunc, root_expr: Any) -> Any:
    """A function field: called with the expression's arguments when it heads the expression."""
    params: list[Any] = []
    hash_: dict[str, Any] = {}
    if root_expr is not None:
        params = [param.eval(scope) for param in root_expr.params]
        hash_ = eval_hash(scope, root_expr.hash) if root_expr.hash else {}
        scope.func_expr = root_expr
    return call_func(scope, name, func.params, func.wants_options, func.run, params, hash_)


# ---------------------------------------------------------------------------------------------
# helper calls


def call_func(
    scope: Scope,
    name: str,
    types: tuple[str, ...],
    options: bool,
    run: Callable[..., Any],
    params: Sequence[Any],
    hash_: dict[str, Any],
) -> Any:
    """raymond's ``callFunc``: arity, then each argument converted to the parameter's Go type."""
    count = len(types) + options
    if len(params) != len(types):
        if options and len(params) == count:
            raise RenderFailure(f"Helper '{name}' got an argument where its options go (Hoverfly crashes)")
        raise RenderFailure(
            f"Helper '{name}' called with wrong number of arguments, needed {count} but got {len(params)}"
        )
    args = []
    for i, (kind, value) in enumerate(zip(types, params, strict=True)):
        if kind == "str":
            if value.__class__ is not str:
                value = "" if value is None else to_str(value)
        elif kind == "any":
            pass
        elif value is None:
            if kind != "strlist":
                return ""  # raymond returns an empty string without calling the helper
        elif kind == "bool":
            if value.__class__ is not bool:
                value = truthy(value)
        elif (
            (kind == "int" and value.__class__ is not GoInt)
            or (kind == "float" and value.__class__ is not float and value.__class__ is not int)
            or (kind == "strlist" and not isinstance(value, StrList))
        ):
            raise RenderFailure(
                f"Helper {name} called with argument {i} with type {go_type_name(value)} "
                f"but it should be {GO_TYPES[kind]}"
            )
        elif kind == "float":
            value = float(value)
        args.append(value)
    return run(Call(scope, name, list(params), hash_), *args)
