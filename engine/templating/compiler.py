"""From the parse tree to the render tree, checking helper calls and noting what a template touches.

Strict compilation refuses what raymond would only find when rendering: a known helper called
with the wrong number of arguments, or a literal of the wrong kind for an int, float or
``[]string`` parameter (the render fails), and an unknown helper called with arguments (it gives
nothing). Lenient compilation keeps them, to run as Hoverfly runs them. Comments vanish and
neighbouring text is merged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from simproxy.engine.templating import blocks, evaluate, fast, render, syntax
from simproxy.engine.templating.direct import request_getter
from simproxy.engine.templating.evaluate import HelperSpec
from simproxy.engine.templating.registry import CSV_HELPERS, CSV_WRITERS, JOURNAL_HELPERS
from simproxy.engine.templating.values import GoInt, go_atoi, go_title


class CompileError(ValueError):
    """A helper call that cannot do what it says; ``behaviour`` is what Hoverfly does with it."""

    def __init__(self, message: str, behaviour: str) -> None:
        super().__init__(message)
        self.behaviour = behaviour


FAILS_THE_RENDER = "the render fails and the template is served as it is written"
GIVES_NOTHING = "the call gives nothing, which prints as an empty text"


@dataclass(slots=True)
class Usage:
    """What a template (or a variable) reads and writes, for the caller's store access."""

    state: bool = False
    csv: bool = False
    writes_csv: bool = False
    journal: bool = False


_LITERAL_TYPES = MappingProxyType({syntax.StringLit: "string", syntax.BoolLit: "bool"})


def _literal_type(node: syntax.Param) -> str | None:
    if isinstance(node, syntax.NumberLit):
        return "int" if node.is_int else "float64"
    return _LITERAL_TYPES.get(type(node))


class Compiler:
    def __init__(
        self, helpers: Mapping[str, HelperSpec], strict: bool, allow_helpers: bool = True, specialise: bool = True
    ) -> None:
        self.helpers = helpers
        self.strict = strict
        self.allow_helpers = allow_helpers
        self.specialise = specialise
        """Use ``engine.templating.fast``'s nodes where a node has their shape (off: the general ones)."""
        self.usage = Usage()
        self.paths: dict[tuple[object, ...], evaluate.Path] = {}
        self.printed: dict[int, int] = {}
        """How often each path is printed (inside a block counts as often): remembering pays from two."""
        self.in_blocks = 0

    def finish(self) -> None:
        """Stop remembering the values of paths printed only once."""
        for path in self.paths.values():
            if self.printed.get(id(path), 0) < 2:
                path.memo = -1

    def program(self, program: syntax.Program | None) -> render.Program | None:
        if program is None:
            return None
        parts: list[object] = []
        for statement in program.body:
            node = self.statement(statement)
            if node is None or node == "":
                continue
            if isinstance(node, str) and parts and isinstance(parts[-1], str):
                parts[-1] += node
            else:
                parts.append(node)
        params = tuple(program.block_params) if program.block_params else None
        return render.Program(tuple(parts), params)

    def statement(self, node: syntax.Statement) -> object:
        if isinstance(node, syntax.Content):
            return node.value
        if isinstance(node, syntax.Comment):
            return None
        if isinstance(node, syntax.Mustache):
            expr = self.expression(node.expr)
            if isinstance(expr, render.FieldExpr):
                key = id(expr.path)
                self.printed[key] = self.printed.get(key, 0) + (2 if self.in_blocks else 1)
                return self.path_mustache(expr, not node.unescaped)
            return render.MustacheNode(expr, not node.unescaped)
        if isinstance(node, syntax.Block):
            helper = bool(node.expr.helper_name()) and node.expr.helper_name() in self.helpers
            expr = self.expression(node.expr)
            self.in_blocks += 1
            program, inverse = self.program(node.program), self.program(node.inverse)
            self.in_blocks -= 1
            return self.block(expr, helper, program, inverse)
        sub = self.param(node.name) if isinstance(node.name, syntax.SubExpr) else None
        for param in node.params:
            self.param(param)
        return render.PartialNode(syntax.name_str(node.name) or "", sub)

    def path_mustache(self, expr: render.FieldExpr, escape: bool) -> render.PathMustache:
        path = expr.path
        query = fast.body_query(expr) if self.specialise else None
        if query is not None:
            return fast.BodyQueryMustache(expr, query, escape)
        if self.specialise and not expr.params and not expr.hash:
            getter = request_getter(path, escape)
            if getter is not None:
                return fast.RequestMustache(path, escape, getter)
        if self.specialise and not expr.params and not expr.hash and _one_name(path):
            if path.data:
                return fast.DataMustache(path, escape)
            if self.in_blocks and path.first_raw is not None and not path.data_root:
                return fast.LocalMustache(path, escape)
        return render.PathMustache(path, expr.params, expr.hash, escape)

    def block(
        self, expr: object, helper: bool, program: render.Program | None, inverse: render.Program | None
    ) -> render.BlockNode:
        if (
            self.specialise
            and isinstance(expr, render.HelperExpr)
            and len(expr.params) == 1
            and not expr.hash
            and (program is None or program.block_params is None)
        ):
            run = expr.spec.run
            if run is blocks.if_ or run is blocks.unless:
                return fast.ConditionBlock(run is blocks.unless, expr.params[0], program, inverse)
            if run is blocks.each:
                return fast.EachBlock(expr.params[0], program, inverse)
        return render.BlockNode(expr, helper, program, inverse)

    def expression(self, expr: syntax.Expression) -> object:
        params = tuple(self.param(param) for param in expr.params)
        hash_ = tuple((key, self.param(value)) for key, value in expr.hash or ())
        name = expr.helper_name()
        spec = self.helpers.get(name) if name else None
        if spec is not None:
            if not self.allow_helpers:
                return render.RefusedHelper(name)
            if self.strict:
                self.check(spec, expr)
            self.note(spec, expr)
            typed = fast.TypedCall.of(spec, params, hash_) if self.specialise else None
            if typed is not None:
                return typed
            return render.HelperExpr(spec, params, hash_)
        head = expr.head
        if isinstance(head, syntax.PathExpr):
            if self.strict and (params or hash_) and _names_a_helper(head):
                raise CompileError(f"unknown helper {head.parts[0]!r}", GIVES_NOTHING)
            field = render.FieldExpr(self.path(head), params, hash_)
            query = fast.body_query(field) if self.specialise else None
            return field if query is None else fast.BodyQuery(field, query)
        text = syntax.literal_str(head) or ""
        return render.LiteralExpr(evaluate.Part(text, go_title(text), go_atoi(text)), params, hash_)

    def param(self, node: syntax.Param) -> object:
        if isinstance(node, syntax.SubExpr):
            return self.expression(node.expr)
        if isinstance(node, syntax.PathExpr):
            path = self.path(node)
            if self.specialise and path.data and _one_name(path):
                return fast.DataParam(path)
            return render.PathParam(path)
        if isinstance(node, syntax.StringLit):
            return render.Const(node.value)
        if isinstance(node, syntax.BoolLit):
            return render.Const(node.value)
        return render.Const(GoInt(int(node.value)) if node.is_int else node.value)

    def path(self, node: syntax.PathExpr) -> evaluate.Path:
        """The compiled path, one object per distinct path so that renders can remember its value."""
        key = (tuple(node.parts), node.depth, node.data, node.scoped)
        known = self.paths.get(key)
        if known is not None:
            return known
        parts = []
        for raw in node.parts:
            name = raw[1:-1] if len(raw) >= 2 and raw[0] == "[" and raw[-1] == "]" else raw
            parts.append(evaluate.Part(name, go_title(name), go_atoi(name)))
            self.usage.state = self.usage.state or go_title(name) == "State"
        data_root = node.is_data_root()
        if not parts or (data_root and len(parts) == 1):
            self.usage.state = True  # `this` or `@root` alone can reach the whole root
        stable = bool(parts) and not node.data and not node.depth and parts[0].title not in ("Kvs", "InternalVars")
        memo = 2 * len(self.paths) if stable else -1
        first = node.parts[0] if node.parts else None
        compiled = evaluate.Path(tuple(parts), first, node.depth, node.data, data_root, memo)
        self.paths[key] = compiled
        return compiled

    def check(self, spec: HelperSpec, expr: syntax.Expression) -> None:
        if spec.variadic:
            return
        if len(expr.params) != len(spec.types):
            raise CompileError(
                f"helper {spec.name} takes {len(spec.types)} argument(s), got {len(expr.params)}", FAILS_THE_RENDER
            )
        for i, (kind, param) in enumerate(zip(spec.types, expr.params, strict=True)):
            given = _literal_type(param)
            wanted = {"int": "int", "float": "float64", "strlist": "[]string"}.get(kind)
            if given is not None and wanted is not None and given != wanted:
                raise CompileError(
                    f"helper {spec.name} argument {i + 1} is {_article(given)} {given} literal but must be {wanted}"
                    + (" (a number written with a decimal point)" if wanted == "float64" else ""),
                    FAILS_THE_RENDER,
                )

    def note(self, spec: HelperSpec, expr: syntax.Expression) -> None:
        usage = self.usage
        name = spec.name
        if name in CSV_HELPERS:
            usage.csv = True
        if name in CSV_WRITERS:
            first = expr.params[0] if expr.params else None
            select_only = isinstance(first, syntax.StringLit) and first.value.strip().upper().startswith("SELECT")
            usage.writes_csv = usage.writes_csv or not (name == "csvSqlCommand" and select_only)
        if name in JOURNAL_HELPERS:
            usage.journal = True
        if name == "lookup":
            usage.state = True
        if name == "csv":
            key = expr.params[2] if len(expr.params) > 2 else None
            usage.state = usage.state or not (isinstance(key, syntax.StringLit) and "state" not in key.value.lower())


# Root fields a template may call with arguments (Hoverfly's leftover ``CurrentDateTime`` function).
_ROOT_FUNCTIONS = frozenset({"CurrentDateTime"})


def _names_a_helper(head: syntax.PathExpr) -> bool:
    """A bare name called with arguments can only be a helper (``Request.Body 'x' 'y'`` is a field)."""
    return (
        len(head.parts) == 1
        and not head.data
        and not head.depth
        and not head.scoped
        and go_title(head.parts[0]) not in _ROOT_FUNCTIONS
    )


def _one_name(path: evaluate.Path) -> bool:
    """A path of one name at the current depth (``@index``, ``name``), not ``@root``."""
    return len(path.parts) == 1 and not path.depth and not path.data_root


def _article(noun: str) -> str:
    return "an" if noun[0] in "aeiou" else "a"
