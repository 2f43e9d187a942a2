"""The Handlebars tokenizer of raymond (aymerick/raymond/lexer), token for token.

Content is scanned with ``str.find`` instead of rune by rune, which finds the same tokens: only
the two characters before a ``{{`` can change how it is read (``\\{{`` and ``\\\\{{``).
Go's ``\\s`` is ``[\\t\\n\\f\\r ]``; identifiers may hold ``\\r`` and any non-ASCII character.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from types import MappingProxyType


class T(enum.Enum):
    ERROR = "Error"
    EOF = "EOF"
    OPEN = "Open"
    CLOSE = "Close"
    OPEN_RAW_BLOCK = "OpenRawBlock"
    CLOSE_RAW_BLOCK = "CloseRawBlock"
    OPEN_END_RAW_BLOCK = "OpenEndRawBlock"
    OPEN_UNESCAPED = "OpenUnescaped"
    CLOSE_UNESCAPED = "CloseUnescaped"
    OPEN_BLOCK = "OpenBlock"
    OPEN_END_BLOCK = "OpenEndBlock"
    INVERSE = "Inverse"
    OPEN_INVERSE = "OpenInverse"
    OPEN_INVERSE_CHAIN = "OpenInverseChain"
    OPEN_PARTIAL = "OpenPartial"
    COMMENT = "Comment"
    OPEN_SEXPR = "OpenSexpr"
    CLOSE_SEXPR = "CloseSexpr"
    EQUALS = "Equals"
    DATA = "Data"
    SEP = "Sep"
    OPEN_BLOCK_PARAMS = "OpenBlockParams"
    CLOSE_BLOCK_PARAMS = "CloseBlockParams"
    CONTENT = "Content"
    ID = "ID"
    STRING = "String"
    NUMBER = "Number"
    BOOLEAN = "Boolean"


@dataclass(frozen=True, slots=True)
class Token:
    kind: T
    val: str
    pos: int
    line: int

    def __str__(self) -> str:
        return f"{self.kind.value}{{{self.val!r}}}"


_S = r"[\t\n\f\r ]"
_UNALLOWED_ID = " \n\t!\"#%&'()*+,./;<=>@[\\]^`{|}~"
_ID = re.compile("[^" + re.escape(_UNALLOWED_ID) + "]+")
_DOT_ID = re.compile(r"\.(?=[\t\n\f\r =~}/)|])")
_TRUE = re.compile(r"true(?=[\t\n\f\r ~})])")
_FALSE = re.compile(r"false(?=[\t\n\f\r ~})])")
_OPEN_BLOCK_PARAMS = re.compile(rf"as{_S}+\|")
_OPEN_COMMENT_DASH = re.compile(rf"\{{\{{~?!--{_S}*")
_CLOSE_COMMENT_DASH = re.compile(rf"{_S}*--~?\}}\}}")
_OPEN_COMMENT = re.compile(rf"\{{\{{~?!{_S}*")
_CLOSE_COMMENT = re.compile(rf"{_S}*~?\}}\}}")
_OPENERS = (
    (re.compile(r"\{\{\{\{/"), T.OPEN_END_RAW_BLOCK),
    (re.compile(r"\{\{\{\{"), T.OPEN_RAW_BLOCK),
    (re.compile(r"\{\{~?\{"), T.OPEN_UNESCAPED),
    (re.compile(r"\{\{~?#"), T.OPEN_BLOCK),
    (re.compile(r"\{\{~?/"), T.OPEN_END_BLOCK),
    (re.compile(r"\{\{~?>"), T.OPEN_PARTIAL),
    (re.compile(rf"\{{\{{~?\^{_S}*~?\}}\}}|\{{\{{~?{_S}*else{_S}*~?\}}\}}"), T.INVERSE),
    (re.compile(r"\{\{~?\^"), T.OPEN_INVERSE),
    (re.compile(rf"\{{\{{~?{_S}*else"), T.OPEN_INVERSE_CHAIN),
    (re.compile(r"\{\{~?&?"), T.OPEN),
)
_CLOSERS = (
    (re.compile(r"\}\}\}\}"), T.CLOSE_RAW_BLOCK),
    (re.compile(r"\}~?\}\}"), T.CLOSE_UNESCAPED),
    (re.compile(r"~?\}\}"), T.CLOSE),
)
_SINGLE = MappingProxyType(
    {
        "(": T.OPEN_SEXPR,
        ")": T.CLOSE_SEXPR,
        "=": T.EQUALS,
        "@": T.DATA,
        "/": T.SEP,
        ".": T.SEP,
        "|": T.CLOSE_BLOCK_PARAMS,
    }
)


class LexError(Exception):
    def __init__(self, token: Token) -> None:
        super().__init__(token.val)
        self.token = token


def _alnum(char: str) -> bool:
    return char == "_" or char.isalpha() or char.isdecimal()


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.start = 0
        self.line = 1
        self.tokens: list[Token] = []
        self.raw_block = False

    def emit(self, kind: T, val: str | None = None) -> None:
        value = self.text[self.start : self.pos] if val is None else val
        self.tokens.append(Token(kind, value, self.start, self.line))
        self.start = self.pos
        self.line += value.count("\n")

    def fail(self, message: str) -> None:
        self.tokens.append(Token(T.ERROR, message, self.start, self.line))
        raise LexError(self.tokens[-1])

    def emit_content(self) -> None:
        if self.pos > self.start:
            self.emit(T.CONTENT)

    # -- content ---------------------------------------------------------------------------

    def content(self) -> bool:
        """Scan content up to the next mustache; False once EOF was emitted."""
        text = self.text
        if self.raw_block:
            found = text.find("{{{{/", self.pos)
            if found < 0:
                self.fail("Unclosed raw block")
            self.raw_block = False
            self.pos = found
            self.emit_content()
            self.open_mustache()
            return True
        while True:
            found = text.find("{{", self.pos)
            if found < 0:
                self.pos = len(text)
                self.emit_content()
                self.emit(T.EOF)
                return False
            if found - 2 >= self.pos and text[found - 2 : found] == "\\\\":
                self.pos = found - 1  # keep one backslash, drop the other
                self.emit_content()
                self.pos = found
                self.start = found
                break
            if found - 1 >= self.pos and text[found - 1] == "\\":
                self.pos = found - 1
                self.emit_content()
                self.pos = found
                self.start = found  # the escape character is dropped
                while self.pos < len(text) and text[self.pos] == "{":
                    self.pos += 1
                continue
            self.pos = found
            break
        self.emit_content()
        for opener, closer in ((_OPEN_COMMENT_DASH, _CLOSE_COMMENT_DASH), (_OPEN_COMMENT, _CLOSE_COMMENT)):
            if opener.match(text, self.pos):
                close = closer.search(text, self.pos)
                if close is None:
                    self.fail("Unclosed comment")
                assert close is not None
                self.pos = close.end()
                self.emit(T.COMMENT)
                return True
        self.open_mustache()
        return True

    def open_mustache(self) -> None:
        for pattern, kind in _OPENERS:
            found = pattern.match(self.text, self.pos)
            if found is not None:
                self.pos = found.end()
                if kind is T.OPEN_RAW_BLOCK:
                    self.raw_block = True
                self.emit(kind)
                if kind is not T.INVERSE:
                    self.expression()
                return
        raise AssertionError("not at an opening mustache")  # pragma: no cover

    # -- inside a mustache -----------------------------------------------------------------

    def expression(self) -> None:
        text = self.text
        while True:
            pos = self.pos
            if text.startswith(("}}", "~}}", "}~}}"), pos):
                for pattern, kind in _CLOSERS:
                    found = pattern.match(text, pos)
                    if found is not None:
                        self.pos = found.end()
                        self.emit(kind)
                        return
            found = _OPEN_BLOCK_PARAMS.match(text, pos)
            if found is not None:
                self.pos = found.end()
                self.emit(T.OPEN_BLOCK_PARAMS)
                continue
            if text.startswith("..", pos):
                self.pos += 2
                self.emit(T.ID)
                continue
            if _DOT_ID.match(text, pos):
                self.pos += 1
                self.emit(T.ID)
                continue
            literal = _TRUE.match(text, pos) or _FALSE.match(text, pos)
            if literal is not None:
                self.pos = literal.end()
                self.emit(T.BOOLEAN)
                continue
            if pos >= len(text):
                self.fail("Unclosed expression")
            char = text[pos]
            if char in " \t\n":
                while self.pos < len(text) and text[self.pos] in " \t\n":
                    self.pos += 1
                self.start = self.pos
            elif char in _SINGLE:
                self.pos += 1
                self.emit(_SINGLE[char])
            elif char in "\"'":
                self.string(char)
            elif char in "+-" or "0" <= char <= "9":
                self.number()
            elif char == "[":
                end = pos + 1
                while end < len(text) and text[end] not in "]\n":
                    end += 1
                if end >= len(text) or text[end] == "\n":
                    self.pos = end
                    self.fail("Unterminated path literal")
                self.pos = end + 1
                self.emit(T.ID)
            elif char not in _UNALLOWED_ID:
                found = _ID.match(text, pos)
                assert found is not None
                self.pos = found.end()
                self.emit(T.ID)
            else:
                self.pos += 1
                self.fail(f"Unexpected character in expression: '{char}'")

    def string(self, delim: str) -> None:
        text = self.text
        self.pos += 1
        self.start = self.pos
        prev = ""
        while True:
            if self.pos >= len(text) or text[self.pos] == "\n":
                self.fail("Unterminated string")
            char = text[self.pos]
            self.pos += 1
            if char == delim and prev != "\\":
                break
            prev = char
        self.pos -= 1
        self.emit(T.STRING, text[self.start : self.pos].replace("\\" + delim, delim))
        self.pos += 1
        self.start = self.pos

    def _accept(self, valid: str) -> bool:
        if self.pos < len(self.text) and self.text[self.pos] in valid:
            self.pos += 1
            return True
        return False

    def _accept_run(self, valid: str) -> None:
        while self._accept(valid):
            pass

    def _scan_number(self) -> bool:
        self._accept("+-")
        digits = "0123456789"
        if self._accept("0") and self._accept("xX"):
            digits = "0123456789abcdefABCDEF"
        self._accept_run(digits)
        if self._accept("."):
            self._accept_run(digits)
        if self._accept("eE"):
            self._accept("+-")
            self._accept_run("0123456789")
        self._accept("i")
        if self.pos < len(self.text) and _alnum(self.text[self.pos]):
            self.pos += 1
            return False
        return True

    def number(self) -> None:
        if not self._scan_number():
            self.fail(f"bad number syntax: {self.text[self.start : self.pos]!r}")
        if (self.pos < len(self.text) and self.text[self.pos] in "+-") and (
            not self._scan_number() or self.text[self.pos - 1] != "i"
        ):
            self.fail(f"bad number syntax: {self.text[self.start : self.pos]!r}")
        self.emit(T.NUMBER)


def tokenize(text: str) -> list[Token]:
    """Every token of ``text``, ending with EOF, or with an ERROR token (lexing stops there)."""
    lexer = _Lexer(text)
    try:
        while lexer.content():
            pass
    except LexError:
        pass
    return lexer.tokens
