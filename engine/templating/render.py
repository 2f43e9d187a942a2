"""The render tree: programs of text and nodes, each node rendering itself against a ``Scope``.

Mustaches print a value (HTML-escaped unless triple-stashed); blocks call their helper or act as
a section; expressions are helper calls, context paths or literal field names. The rules they
follow live in ``engine.templating.evaluate``.
"""

from __future__ import annotations

from typing import Any

from simproxy.engine.templating.evaluate import (
    MAX_DEPTH,
    Call,
    HelperSpec,
    Part,
    Path,
    Scope,
    call_func,
    data_path,
    depth_path,
    eval_field,
    eval_hash,
    eval_path,
    eval_program,
    falls_to_root,
    root_value,
)
from simproxy.engine.templating.values import (
    MISSING,
    GoInt,
    RenderFailure,
    escape_html,
    go_type_name,
    to_str,
    truthy,
)


class Program:
    __slots__ = ("block_params", "parts")

    def __init__(self, parts: tuple[Any, ...], block_params: tuple[str, ...] | None) -> None:
        self.parts = parts
        self.block_params = block_params

    def text_alone(self) -> str | None:
        """What the program renders when it is text alone ("" for none), else None."""
        parts = self.parts
        if not parts:
            return ""
        return parts[0] if len(parts) == 1 and parts[0].__class__ is str else None

    def render(self, scope: Scope) -> str:
        scope.depth += 1
        if scope.depth > MAX_DEPTH:
            raise RenderFailure("blocks are rendered inside each other too deeply")
        text = "".join([part if part.__class__ is str else part.render(scope) for part in self.parts])
        scope.depth -= 1
        return text


class MustacheNode:
    __slots__ = ("escape", "expr")

    def __init__(self, expr: Any, escape: bool) -> None:
        self.expr = expr
        self.escape = escape

    def render(self, scope: Scope) -> str:
        value = self.expr.eval(scope)
        text = value if value.__class__ is str else to_str(value)
        return escape_html(text) if self.escape else text


class PathMustache:
    """``{{path ...}}``: a mustache whose expression is a context path (the common case)."""

    __slots__ = ("escape", "hash", "params", "path")

    def __init__(self, path: Path, params: tuple[Any, ...], hash_: tuple[tuple[str, Any], ...], escape: bool) -> None:
        self.path = path
        self.params = params
        self.hash = hash_
        self.escape = escape

    def render(self, scope: Scope) -> str:
        path = self.path
        if scope.bparams or path.data_root:
            value = eval_path(scope, path, self)
        elif path.data:
            value = data_path(scope, path, self)
            if value is None:
                value = depth_path(scope, path, self)
        elif path.memo >= 0 and (len(scope.ctx) == 1 or falls_to_root(scope.ctx, path.parts[0])):
            key = path.memo + self.escape
            text = scope.memo.get(key)
            if text is None:
                scope.func_expr = None
                value = root_value(scope, path, self)
                text = value if value.__class__ is str else to_str(value)
                if self.escape:
                    text = escape_html(text)
                if scope.func_expr is None:  # a function field's result is not remembered
                    scope.memo[key] = text
            return text
        else:
            value = depth_path(scope, path, self)
        text = value if value.__class__ is str else to_str(value)
        return escape_html(text) if self.escape else text


class BlockNode:
    __slots__ = ("expr", "helper", "inverse", "program")

    def __init__(self, expr: Any, helper: bool, program: Program | None, inverse: Program | None) -> None:
        self.expr = expr
        self.helper = helper
        self.program = program
        self.inverse = inverse

    def render(self, scope: Scope) -> str:
        scope.blocks.append(self)
        result: Any = None
        if self.helper:
            result = self.expr.eval(scope)
        else:
            scope.func_expr = None
            value = self.expr.eval(scope)
            if scope.func_expr is self.expr:
                result = value
            elif truthy(value):
                if self.program is not None and isinstance(value, list):
                    count = len(value)
                    result = "".join(
                        [
                            eval_program(scope, self.program, item, scope.data.iter_frame(count, i, None), GoInt(i))
                            for i, item in enumerate(value)
                        ]
                    )
                elif self.program is not None:
                    result = eval_program(scope, self.program, value, None, None)
            elif self.inverse is not None:
                result = self.inverse.render(scope)
        scope.blocks.pop()
        return to_str(result)


class PartialNode:
    __slots__ = ("name", "sub")

    def __init__(self, name: str, sub: Any) -> None:
        self.name = name
        self.sub = sub

    def render(self, scope: Scope) -> str:
        name = to_str(self.sub.eval(scope)) if self.sub is not None else self.name
        raise RenderFailure(f"Partial not found: {name}" if name else "Unexpected partial name")


class Unparsed:
    """The whole of a template that does not parse, kept as Hoverfly keeps it: every render fails,
    so the template is served as it is written."""

    __slots__ = ("error",)

    def __init__(self, error: str) -> None:
        self.error = error

    def render(self, scope: Scope) -> str:
        raise RenderFailure(f"the template does not parse: {self.error}")


class Const:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def eval(self, scope: Scope) -> Any:
        return self.value


class PathParam:
    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path

    def eval(self, scope: Scope) -> Any:
        return eval_path(scope, self.path, None)


class FieldExpr:
    """An expression whose head is a path (not a helper): params matter only for function fields."""

    __slots__ = ("hash", "params", "path")

    def __init__(self, path: Path, params: tuple[Any, ...], hash_: tuple[tuple[str, Any], ...]) -> None:
        self.path = path
        self.params = params
        self.hash = hash_

    def eval(self, scope: Scope) -> Any:
        return eval_path(scope, self.path, self)


class LiteralExpr:
    """``{{'name'}}``, ``{{5}}``: the literal's text looked up as a field of the current context."""

    __slots__ = ("hash", "params", "part")

    def __init__(self, part: Part, params: tuple[Any, ...], hash_: tuple[tuple[str, Any], ...]) -> None:
        self.part = part
        self.params = params
        self.hash = hash_

    def eval(self, scope: Scope) -> Any:
        value = eval_field(scope, scope.ctx[-1], self.part, self)
        return None if value is MISSING else value


class HelperExpr:
    __slots__ = ("any_types", "hash", "params", "spec")

    def __init__(self, spec: HelperSpec, params: tuple[Any, ...], hash_: tuple[tuple[str, Any], ...]) -> None:
        self.spec = spec
        self.params = params
        self.hash = hash_
        self.any_types = all(kind == "any" for kind in spec.types) and len(params) == len(spec.types)
        """Nothing to convert (the built-in block helpers): call the helper directly."""

    def eval(self, scope: Scope) -> Any:
        spec = self.spec
        params = [param.eval(scope) for param in self.params]
        hash_ = eval_hash(scope, self.hash) if self.hash else {}
        if spec.variadic:
            args = raymond_variadic(spec.name, params) if scope.rt.hoverfly else params
            return spec.run(Call(scope, spec.name, params, hash_), *args)
        if self.any_types:
            return spec.run(Call(scope, spec.name, params, hash_), *params)
        return call_func(scope, spec.name, spec.types, spec.options, spec.run, params, hash_)


def raymond_variadic(name: str, params: list[Any]) -> list[Any]:
    """The arguments Hoverfly v1.12.10 calls a variadic helper (``concat``) with from a template.

    Its raymond sees one ``[]interface {}`` parameter: any other count fails the render, and so
    does one argument that is not an array of any values; nil comes in as an empty array (the
    helper then gives ""), an array as the one argument that the helper flattens.
    """
    if len(params) != 1:
        raise RenderFailure(f"Helper '{name}' called with wrong number of arguments, needed 1 but got {len(params)}")
    value = params[0]
    if value is None:
        return [[]]
    if value.__class__ is not list:
        raise RenderFailure(
            f"Helper {name} called with argument 0 with type {go_type_name(value)} but it should be []interface {{}}"
        )
    return [value]


class RefusedHelper:
    """A helper call where helpers may not run (a request-supplied ``csv`` key)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def eval(self, scope: Scope) -> Any:
        raise RenderFailure(f"helper {self.name} may not run in a csv key value")
