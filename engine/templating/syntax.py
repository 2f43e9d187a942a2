"""The parse tree of a template (raymond's ``ast`` package), before it is compiled for rendering.

Nodes are mutable only while the parser and the whitespace pass run; the compiler then turns
them into the immutable render tree of ``engine.templating.render``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

from simproxy.engine.templating.values import go_float


@dataclass(slots=True)
class Strip:
    open: bool = False
    close: bool = False
    open_standalone: bool = False
    close_standalone: bool = False
    inline_standalone: bool = False


def strip_for(open_text: str, close_text: str) -> Strip:
    """``ast.NewStrip``: a ``~`` just inside the opening or closing mustache."""
    return Strip(
        open=len(open_text) > 2 and open_text[2] == "~",
        close=len(close_text) > 2 and close_text[-3] == "~",
    )


@dataclass(slots=True)
class PathExpr:
    data: bool = False
    parts: list[str] = field(default_factory=list)
    original: str = ""
    depth: int = 0
    scoped: bool = False

    def __post_init__(self) -> None:
        if self.data:
            self.original = "@"

    def part(self, text: str) -> None:
        self.original += text
        if text == "..":
            self.depth += 1
            self.scoped = True
        elif text in (".", "this"):
            self.scoped = True
        else:
            self.parts.append(text)

    def is_data_root(self) -> bool:
        return self.data and bool(self.parts) and self.parts[0] == "root"


@dataclass(slots=True)
class StringLit:
    value: str


@dataclass(slots=True)
class NumberLit:
    value: float
    is_int: bool
    original: str

    def canonical(self) -> str:
        return str(int(self.value)) if self.is_int else go_float(self.value)


@dataclass(slots=True)
class BoolLit:
    value: bool


@dataclass(slots=True)
class SubExpr:
    expr: Expression


Param: TypeAlias = "PathExpr | StringLit | NumberLit | BoolLit | SubExpr"


@dataclass(slots=True)
class Expression:
    head: Param
    params: list[Param] = field(default_factory=list)
    hash: list[tuple[str, Param]] | None = None

    def helper_name(self) -> str:
        """``Expression.HelperName``: a plain one-part path, not data, not scoped."""
        head = self.head
        if not isinstance(head, PathExpr) or head.data or len(head.parts) != 1 or head.depth or head.scoped:
            return ""
        return head.parts[0]

    def canonical(self) -> str:
        return name_str(self.head) or ""


def name_str(node: Param) -> str | None:
    """``ast.HelperNameStr``: a path's original text (``[x]`` unwrapped) or a literal's text."""
    if isinstance(node, PathExpr):
        text = node.original
        return text[1:-1] if len(text) >= 2 and text[0] == "[" and text[-1] == "]" else text
    return literal_str(node)


def literal_str(node: Param) -> str | None:
    if isinstance(node, StringLit):
        return node.value
    if isinstance(node, BoolLit):
        return "true" if node.value else "false"
    if isinstance(node, NumberLit):
        return node.canonical()
    return None


@dataclass(slots=True)
class Content:
    value: str
    original: str = ""
    left_stripped: bool = False
    right_stripped: bool = False

    def __post_init__(self) -> None:
        self.original = self.value


@dataclass(slots=True)
class Comment:
    strip: Strip


@dataclass(slots=True)
class Mustache:
    expr: Expression
    unescaped: bool
    strip: Strip


@dataclass(slots=True)
class Partial:
    name: Param
    params: list[Param]
    hash: list[tuple[str, Param]] | None
    strip: Strip
    indent: str = ""


@dataclass(slots=True)
class Program:
    body: list[Statement] = field(default_factory=list)
    block_params: list[str] | None = None
    strip: Strip | None = None
    chained: bool = False


@dataclass(slots=True)
class Block:
    expr: Expression
    program: Program | None = None
    inverse: Program | None = None
    open_strip: Strip | None = None
    close_strip: Strip | None = None
    inverse_strip: Strip | None = None


Statement: TypeAlias = "Content | Comment | Mustache | Block | Partial"
