"""Reading Go source for the differential harness: string literals, functions and call arguments.

The miners in ``benchmarks/corpus.py`` take their inputs from Hoverfly's Go tests. Go is not parsed
here; a small scanner finds what a test table is made of: string literals (interpreted ``"..."``
with Go's escapes, raw ```...``` with carriage returns dropped, ``+``-joined pieces as one value),
comments (skipped), the functions of a file, and the literal arguments of a call. ``GoFile.code`` is
the source with comments and the insides of literals blanked, offsets kept, so that a regular
expression over it never matches text inside a string or a comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

_SIMPLE_ESCAPES = MappingProxyType(
    {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"'}
)
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)", re.DOTALL)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_FUNC = re.compile(r"^func\s+(?:\([^)]*\)\s*)?(\w+)", re.MULTILINE)
_ASSIGN = re.compile(r"\b([A-Za-z_]\w*)\s*(?::=|=)\s*$")


class GoSyntaxError(ValueError):
    """A literal the scanner cannot read (an unterminated string or comment)."""


def decode_interpreted(body: str) -> str:
    """The value of an interpreted Go string literal's inside: escapes resolved, bytes read as UTF-8."""
    out = bytearray()
    last = 0
    for match in _ESCAPE.finditer(body):
        out += body[last : match.start()].encode()
        code = match[1]
        if code[0] == "x":
            out.append(int(code[1:], 16))
        elif code[0] in "uU":
            out += chr(int(code[1:], 16)).encode()
        elif code[0] in "01234567" and len(code) == 3:
            out.append(int(code, 8) & 0xFF)
        elif code in _SIMPLE_ESCAPES:
            out += _SIMPLE_ESCAPES[code].encode()
        else:
            raise GoSyntaxError(f"unknown escape \\{code}")
        last = match.end()
    out += body[last:].encode()
    return out.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class GoString:
    """One string value of a Go file: where it starts and ends (offsets), its first line, its value."""

    value: str
    start: int
    end: int
    line: int


@dataclass(frozen=True)
class GoFunction:
    """A top-level function: its name and the span of the source it covers (up to the next one)."""

    name: str
    start: int
    end: int


def _scan(text: str) -> tuple[list[GoString], str]:
    """The literals of ``text`` (not yet joined) and the text with comments and literal insides blanked."""
    literals: list[GoString] = []
    code = list(text)
    i, n = 0, len(text)

    def blank(a: int, b: int) -> None:
        for k in range(a, b):
            if code[k] != "\n":
                code[k] = " "

    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise GoSyntaxError("unterminated comment")
            blank(i, end + 2)
            i = end + 2
        elif c == "`":
            end = text.find("`", i + 1)
            if end < 0:
                raise GoSyntaxError("unterminated raw string")
            line = text.count("\n", 0, i) + 1
            literals.append(GoString(text[i + 1 : end].replace("\r", ""), i, end + 1, line))
            blank(i + 1, end)
            i = end + 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\n":
                    raise GoSyntaxError("newline in string")
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise GoSyntaxError("unterminated string")
            if c == '"':
                line = text.count("\n", 0, i) + 1
                literals.append(GoString(decode_interpreted(text[i + 1 : j]), i, j + 1, line))
            blank(i + 1, j)
            i = j + 1
        else:
            i += 1
    return literals, "".join(code)


def _joined(literals: list[GoString], code: str) -> list[GoString]:
    """``"a" + "b"`` (across lines too) as one value ``ab`` spanning both pieces."""
    out: list[GoString] = []
    for lit in literals:
        if out and code[out[-1].end : lit.start].strip() == "+":
            prev = out.pop()
            lit = GoString(prev.value + lit.value, prev.start, lit.end, prev.line)
        out.append(lit)
    return out


class GoFile:
    """One Go source file, scanned once: literals by offset, functions, and name-to-literal bindings."""

    def __init__(self, text: str, path: str = "") -> None:
        self.text = text
        self.path = path
        literals, self.code = _scan(text)
        self.literals = tuple(_joined(literals, self.code))
        self._at = MappingProxyType({lit.start: lit for lit in self.literals})

    @cached_property
    def functions(self) -> tuple[GoFunction, ...]:
        """Every top-level ``func``, each spanning up to the next one (the last one to the end)."""
        found = [(m[1], m.start()) for m in _FUNC.finditer(self.code)]
        ends = [start for _, start in found[1:]] + [len(self.text)]
        return tuple(GoFunction(name, start, end) for (name, start), end in zip(found, ends, strict=True))

    def function_at(self, offset: int) -> GoFunction | None:
        """The function whose span holds ``offset`` (None at the top level before the first one)."""
        for function in self.functions:
            if function.start <= offset < function.end:
                return function
        return None

    def literal_at(self, offset: int) -> GoString | None:
        """The literal starting exactly at ``offset``, whitespace skipped first."""
        while offset < len(self.code) and self.code[offset] in " \t\r\n":
            offset += 1
        return self._at.get(offset)

    def literals_in(self, start: int, end: int) -> tuple[GoString, ...]:
        """The literals lying within ``start``..``end``."""
        return tuple(lit for lit in self.literals if start <= lit.start and lit.end <= end)

    def line_of(self, offset: int) -> int:
        """1-based line number of ``offset``."""
        return self.text.count("\n", 0, offset) + 1

    def bound_value(self, name: str, before: int) -> str | None:
        """The literal last bound to ``name`` (``name := "..."``, ``var name = ...``, ``const name = ...``)
        before ``before`` in the same function, else the last one anywhere in the file."""
        function = self.function_at(before)
        spans = [(function.start, before)] if function else []
        spans.append((0, len(self.text)))
        for start, end in spans:
            found = None
            for lit in self.literals_in(start, end):
                match = _ASSIGN.search(self.code, max(start, lit.start - 200), lit.start)
                if match and match[1] == name:
                    found = lit.value
            if found is not None:
                return found
        return None

    def closing(self, open_at: int) -> int:
        """Offset just after the bracket that closes the one at ``open_at`` (``(``, ``{`` or ``[``)."""
        pairs = {"(": ")", "{": "}", "[": "]"}
        stack: list[str] = []
        for i in range(open_at, len(self.code)):
            c = self.code[i]
            if c in pairs:
                stack.append(pairs[c])
            elif stack and c == stack[-1]:
                stack.pop()
                if not stack:
                    return i + 1
        return len(self.code)

    def string_args(self, open_paren: int, count: int) -> tuple[str, ...] | None:
        """The first ``count`` arguments of the call whose ``(`` is at ``open_paren``, when each is a
        string literal or a name bound to one; None when one is anything else (a number, a struct)."""
        values: list[str] = []
        pos = open_paren + 1
        for k in range(count):
            lit = self.literal_at(pos)
            if lit is not None:
                values.append(lit.value)
                pos = lit.end
            else:
                while pos < len(self.code) and self.code[pos] in " \t\r\n":
                    pos += 1
                ident = _IDENT.match(self.code, pos)
                if ident is None:
                    return None
                after = self.code[ident.end() :].lstrip()
                if not after.startswith("," if k < count - 1 else (",", ")")):
                    return None
                value = self.bound_value(ident[0], pos)
                if value is None:
                    return None
                values.append(value)
                pos = ident.end()
            rest = self.code[pos:]
            stripped = rest.lstrip()
            if k < count - 1:
                if not stripped.startswith(","):
                    return None
                pos += len(rest) - len(stripped) + 1
        return tuple(values)
