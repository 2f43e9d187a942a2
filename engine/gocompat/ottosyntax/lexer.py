"""otto's scanner, quirks included, and the token-level services the parser shares.

Positions are indexes into the Python string; they become otto's byte-based line:column only when
the first error is formatted. Characters U+DC80..U+DCFF stand for bytes that were not UTF-8 (Python's
``surrogateescape``): otto reports each one as it reads it and otherwise treats it as U+FFFD.

What otto does that a careful ES5 scanner would not, and which this scanner keeps:

* keywords other than ``this break throw return continue debugger`` leave the "a newline here ends
  the statement" flag as the token before set it;
* a multi-line comment never counts as a line break;
* after ``\\r`` it peeks one byte too far: ``\\r`` + one byte + ``\\n`` treats that middle byte as
  the character following a line break (or skips it when no semicolon may be inserted);
* ``&^`` and ``&^=`` are operators (Go's);
* an escape ``\\u`` in an identifier accepts any character whose low byte is a hex digit while
  scanning, and is only rejected when the identifier is decoded;
* an unterminated string is an ILLEGAL token (no error of its own); an unterminated regular
  expression is an error, except inside a character class, where the end of the line silently
  ends it and the end of the input closes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from simproxy.engine.gocompat.ottosyntax import _unicode
from simproxy.engine.gocompat.ottosyntax.literals import decode_identifier, is_bad_byte

EOF = "EOF"
ILLEGAL = "ILLEGAL"
KEYWORD = "KEYWORD"
STRING = "STRING"
BOOLEAN = "BOOLEAN"
NULL = "NULL"
NUMBER = "NUMBER"
IDENTIFIER = "IDENTIFIER"

_RESERVED = (
    *("if", "in", "do", "var", "for", "new", "try", "this", "else", "case", "void", "with", "while", "break"),
    *("catch", "throw", "return", "typeof", "delete", "switch", "default", "finally", "function", "continue"),
    *("debugger", "instanceof"),
)
# Reserved words and the token each scans as; ES5's future reserved words are one KEYWORD token.
# The strict-mode-only future words (let, static, ...) are plain identifiers to otto.
KEYWORDS: Mapping[str, str] = MappingProxyType(
    {
        **{word: word for word in _RESERVED},
        **dict.fromkeys(("const", "class", "enum", "export", "extends", "import", "super"), KEYWORD),
        "true": BOOLEAN,
        "false": BOOLEAN,
        "null": NULL,
    }
)
# tokens after which a line break may end the statement
_ENDS_STATEMENT = frozenset(("this", "break", "throw", "return", "continue", "debugger", BOOLEAN, NULL))

_SINGLE = MappingProxyType({":": ":", ",": ",", ";": ";", "(": "(", "[": "[", "{": "{", "?": "?", "~": "~"})
_CLOSERS = frozenset(")]}")
# otto's white space: these, and above ASCII what Go's unicode.IsSpace says (bar the line terminators)
_SPACES = (
    " \t\f\v\xa0\ufeff"
    + "\x85\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
)
_SPACE_RUN = re.compile(f"[{_SPACES}]*")
_SPACE_OR_BREAK = frozenset(_SPACES + "\n\r\u2028\u2029")
_LINE_BREAKS = frozenset("\n\r\u2028\u2029")
_PLAIN_ID_START = frozenset("$_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_ASCII_ID_START = _PLAIN_ID_START | {"\\"}
_DIGITS = frozenset("0123456789")
_HEX = MappingProxyType({c: int(c, 16) for c in "0123456789abcdefABCDEF"})

_ID_RUN = re.compile(r"[A-Za-z0-9_$]*")
_DIGIT_RUN = re.compile(r"[0-9]*")
_OCTAL_RUN = re.compile(r"[0-7]*")
_HEX_RUN = re.compile(r"[0-9A-Fa-f]*")
_LINE_BREAK = re.compile("[\n\r\u2028\u2029]")
_BAD_BYTE = re.compile("[\udc80-\udcff]")
_PLAIN_STRING = MappingProxyType(
    {'"': re.compile(r'[^"\\\n\r\u2028\u2029]*'), "'": re.compile(r"[^'\\\n\r\u2028\u2029]*")}
)

UNEXPECTED_END = "Unexpected end of input"


def _single_byte(char: str) -> bool:
    return char < "\x80" or is_bad_byte(char)


def id_start_code(code: int) -> bool:
    if code < 0x80:
        return chr(code) in _ASCII_ID_START
    return _unicode.id_start(code)


def id_part_code(code: int) -> bool:
    if code < 0x80:
        return chr(code) in _ASCII_ID_START or chr(code) in _DIGITS
    return _unicode.id_continue(code)


def _low_byte_hex(char: str) -> int:
    """otto truncates the character to a byte before testing for a hex digit."""
    return _HEX.get(chr(ord(char) & 0xFF), -1) if char else -1


class TooDeep(Exception):
    """Nesting beyond what this checker follows; carries the index where it stopped."""

    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


class Scanner:
    """Scanning state plus error bookkeeping (otto keeps every error; the text shows the first and a count)."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.n = len(src)
        self.pos = 0  # otto's current character (chrOffset)
        self.ins = False  # a line break before the next token ends the statement
        self.implicit = False  # ... and one did
        self.tok = EOF
        self.lit = ""
        self.idx = 0
        self.error_count = 0
        self.first_error: tuple[int, str] | None = None
        self._bad = [found.start() for found in _BAD_BYTE.finditer(src)]
        self._bad_seen = 0
        self.recover_idx = -1
        self.recover_count = 0

    # -- errors

    def error(self, pos: int, message: str) -> None:
        self._report_bad()
        self.error_count += 1
        if self.first_error is None:
            self.first_error = (pos, message)

    def _report_bad(self) -> None:
        bad = self._bad
        while self._bad_seen < len(bad) and bad[self._bad_seen] <= self.pos:
            self._bad_seen += 1
            self.error_count += 1
            if self.first_error is None:
                self.first_error = (bad[self._bad_seen - 1], "Invalid UTF-8 character")

    # -- tokens

    def next(self) -> None:
        """Scan the next token into ``tok``, ``lit`` (identifiers, keywords, strings, numbers) and ``idx``."""
        self.tok = self._scan()
        if self._bad:
            self._report_bad()

    def _scan(self) -> str:
        self.implicit = False
        src, n = self.src, self.n
        while True:
            pos = self.pos
            if pos < n and src[pos] in _SPACE_OR_BREAK:
                self._skip_space()
                pos = self.pos
            self.idx = pos
            if pos >= n:
                self.lit = ""
                if self.ins:
                    self.ins = False
                    self.implicit = True
                return EOF
            c = src[pos]
            if c in _PLAIN_ID_START:
                end = _ID_RUN.match(src, pos).end()  # type: ignore[union-attr]  # matches the empty string
                if end >= n or (src[end] != "\\" and src[end] < "\x80"):
                    self.pos = end
                    literal = self.lit = src[pos:end]
                    tok = KEYWORDS.get(literal, IDENTIFIER)
                    if tok == IDENTIFIER or tok in _ENDS_STATEMENT:
                        self.ins = True
                    return tok
            if c in _ASCII_ID_START or (c >= "\x80" and _unicode.id_start(ord(c))):
                decoded = self._scan_identifier()
                if decoded is None:
                    self.lit = ""
                    self.ins = False
                    return ILLEGAL
                self.lit = decoded
                tok = KEYWORDS.get(decoded, IDENTIFIER)
                if tok == IDENTIFIER or tok in _ENDS_STATEMENT:
                    self.ins = True
                return tok
            if c in _DIGITS:
                self.ins = True
                return self._scan_number(False)
            self.pos = pos + 1
            self.lit = ""
            if c in _LINE_BREAKS:
                self.ins = False
                self.implicit = True
                continue
            single = _SINGLE.get(c)
            if single is not None:
                self.ins = False
                return single
            if c in _CLOSERS:
                self.ins = True
                return c
            nxt = src[pos + 1] if pos + 1 < n else ""
            if c == "/":
                if nxt == "/":
                    found = _LINE_BREAK.search(src, pos + 2)
                    self.pos = found.start() if found else n
                    continue
                if nxt == "*":
                    end = src.find("*/", pos + 2)
                    if end < 0:
                        self.pos = n
                        self.error(n, UNEXPECTED_END)
                    else:
                        self.pos = end + 2
                    continue
                self.ins = True
                return self._operator(nxt, ("/", "/="))
            if c in "\"'":
                self.ins = True
                if self._scan_string(pos):
                    self.lit = src[pos : self.pos]
                    return STRING
                return ILLEGAL
            if c == "." and nxt in _DIGITS:
                self.ins = True
                return self._scan_number(True)
            self.ins = False
            tok = self._punctuator(c, nxt)
            if tok == "++" or tok == "--":
                self.ins = True
            elif tok == ILLEGAL:
                self.error(pos, "Unexpected token ILLEGAL")
            return tok

    def _operator(self, nxt: str, forms: tuple[str, str]) -> str:
        """The plain operator, or its assignment form if ``=`` follows."""
        if nxt == "=":
            self.pos += 1
            return forms[1]
        return forms[0]

    def _punctuator(self, c: str, nxt: str) -> str:
        src, n = self.src, self.n
        if c in "*%^":
            return self._operator(nxt, (c, c + "="))
        if c in "+-|":
            if nxt == c:
                self.pos += 1
                return c + c
            return self._operator(nxt, (c, c + "="))
        if c == "&":
            if nxt == "^":
                self.pos += 1
                after = src[self.pos] if self.pos < n else ""
                return self._operator(after, ("&^", "&^="))
            if nxt == "&":
                self.pos += 1
                return "&&"
            return self._operator(nxt, ("&", "&="))
        if c in "=!":
            if nxt != "=":
                return c
            self.pos += 1
            if self.pos < n and src[self.pos] == "=":
                self.pos += 1
                return c + "=="
            return c + "="
        if c == "<":
            if nxt == "<":
                self.pos += 1
                after = src[self.pos] if self.pos < n else ""
                return self._operator(after, ("<<", "<<="))
            return self._operator(nxt, ("<", "<="))
        if c == ">":
            if nxt != ">":
                return self._operator(nxt, (">", ">="))
            self.pos += 1
            after = src[self.pos] if self.pos < n else ""
            if after != ">":
                return self._operator(after, (">>", ">>="))
            self.pos += 1
            after = src[self.pos] if self.pos < n else ""
            return self._operator(after, (">>>", ">>>="))
        if c == ".":
            return "."
        return ILLEGAL

    def _skip_space(self) -> None:
        src, n = self.src, self.n
        pos = self.pos
        while True:
            pos = _SPACE_RUN.match(src, pos).end()  # type: ignore[union-attr]  # matches the empty string
            if pos >= n:
                break
            c = src[pos]
            if c == "\r":
                if pos + 2 < n and src[pos + 2] == "\n" and _single_byte(src[pos + 1]):
                    pos += 1  # otto's peek looks two bytes ahead
                if self.ins:
                    break
                pos += 1
            elif c in _LINE_BREAKS and not self.ins:
                pos += 1
            else:
                break
        self.pos = pos

    def _scan_identifier(self) -> str | None:
        src, n = self.src, self.n
        start = pos = self.pos
        escaped = False
        while True:
            pos = _ID_RUN.match(src, pos).end()  # type: ignore[union-attr]  # matches the empty string
            if pos >= n:
                break
            c = src[pos]
            if c == "\\":
                at_start = pos == start
                pos += 1
                if pos >= n or src[pos] != "u":
                    self.pos = pos
                    return None
                escaped = True
                value = 0
                for _ in range(4):
                    pos += 1
                    digit = _low_byte_hex(src[pos] if pos < n else "")
                    if digit < 0:
                        self.pos = pos
                        return None
                    value = value << 4 | digit
                if value == 0x5C or not (id_start_code(value) if at_start else id_part_code(value)):
                    self.pos = pos
                    return None
                pos += 1
            elif c >= "\x80" and _unicode.id_continue(ord(c)):
                pos += 1
            else:
                break
        self.pos = pos
        literal = src[start:pos]
        return decode_identifier(literal) if escaped else literal

    def _scan_number(self, after_point: bool) -> str:
        src, n = self.src, self.n
        pos = self.pos
        ok = True
        if after_point:
            pos = _DIGIT_RUN.match(src, pos).end()  # type: ignore[union-attr]
            pos, ok = self._exponent(pos)
        elif src[pos] == "0" and pos + 1 < n and src[pos + 1] in "xX":
            pos += 2
            if pos < n and src[pos] in _HEX:
                pos = _HEX_RUN.match(src, pos).end()  # type: ignore[union-attr]
            else:
                ok = False
        elif src[pos] == "0" and not (pos + 1 < n and src[pos + 1] == "."):
            pos += 1
            if pos < n and src[pos] in "eE":
                pos, ok = self._exponent(pos)
            else:
                pos = _OCTAL_RUN.match(src, pos).end()  # type: ignore[union-attr]
                ok = not (pos < n and src[pos] in "89")
        else:
            pos = _DIGIT_RUN.match(src, pos).end()  # type: ignore[union-attr]
            if pos < n and src[pos] == ".":
                pos = _DIGIT_RUN.match(src, pos + 1).end()  # type: ignore[union-attr]
            pos, ok = self._exponent(pos)
        self.pos = pos
        if ok and pos < n:
            c = src[pos]
            ok = not (c in _ASCII_ID_START or c in _DIGITS or (c >= "\x80" and _unicode.id_start(ord(c))))
        self.lit = src[self.idx : pos]
        return NUMBER if ok else ILLEGAL

    def _exponent(self, pos: int) -> tuple[int, bool]:
        src, n = self.src, self.n
        if pos < n and src[pos] in "eE":
            pos += 1
            if pos < n and src[pos] in "+-":
                pos += 1
            if pos < n and src[pos] in _DIGITS:
                return _DIGIT_RUN.match(src, pos).end(), True  # type: ignore[union-attr]
            return pos, False
        return pos, True

    def _scan_string(self, start: int) -> bool:
        """A string literal after its opening quote; False (and the line break eaten) if unterminated."""
        src, n = self.src, self.n
        quote = src[start]
        plain = _PLAIN_STRING[quote]
        pos = start + 1
        while True:
            pos = plain.match(src, pos).end()  # type: ignore[union-attr]
            if pos >= n or src[pos] in _LINE_BREAKS:
                self.pos = _after_line_break(src, pos)
                return False
            if src[pos] == quote:
                self.pos = pos + 1
                return True
            pos = _skip_escape(src, pos + 1, quote)

    def scan_regexp_body(self, start: int) -> str | None:
        """The rest of a regular expression literal whose ``/`` is at ``start``; None if unterminated."""
        src, n = self.src, self.n
        pos = self.pos
        in_class = False
        while True:
            if pos >= n and in_class:
                break  # otto's "quote" is -1 inside a class, which the end of input equals
            c = src[pos] if pos < n else ""
            if c == "/" and not in_class:
                pos += 1
                break
            if pos >= n or c in _LINE_BREAKS:
                self._unterminated_regexp(pos, start, in_class)
                return None
            pos += 1
            if c == "\\":
                if in_class:
                    pos = _skip_escape(src, pos, "")
                elif pos >= n or src[pos] in _LINE_BREAKS:
                    self._unterminated_regexp(pos, start, in_class)
                    return None
                else:
                    pos += 1
            elif c == "[":
                in_class = True
            elif c == "]":
                in_class = False
        self.pos = pos
        return src[start:pos]

    def _unterminated_regexp(self, pos: int, start: int, in_class: bool) -> None:
        self.pos = _after_line_break(self.src, pos)
        if not in_class:
            self.error(start, "Invalid regular expression: missing /")

    # -- parser services

    def expect(self, tok: str) -> int:
        idx = self.idx
        if self.tok != tok:
            self.unexpected()
        self.next()
        return idx

    def unexpected(self) -> None:
        """otto's message for the current token where it does not fit."""
        tok = self.tok
        if tok == EOF:
            self.error(self.pos, UNEXPECTED_END)
        elif tok in (BOOLEAN, NULL):
            self.error(self.idx, "Unexpected token " + self.lit)
        elif tok == IDENTIFIER:
            self.error(self.idx, "Unexpected identifier")
        elif tok == KEYWORD:
            self.error(self.idx, "Unexpected reserved word")
        elif tok == NUMBER:
            self.error(self.idx, "Unexpected number")
        elif tok == STRING:
            self.error(self.idx, "Unexpected string")
        else:
            self.error(self.idx, "Unexpected token " + tok)

    def skip_to_statement(self) -> None:
        """otto's error recovery: on to the next statement keyword, giving up on one after ten stays."""
        while True:
            tok = self.tok
            if tok == EOF:
                return
            if tok in RECOVERY_TOKENS:
                if self.idx == self.recover_idx and self.recover_count < 10:
                    self.recover_count += 1
                    return
                if self.idx > self.recover_idx:
                    self.recover_idx = self.idx
                    self.recover_count = 0
                    return
            self.next()

    def optional_semicolon(self) -> None:
        if self.tok == ";":
            self.next()
        elif self.implicit:
            self.implicit = False
        elif self.tok != EOF and self.tok != "}":
            self.expect(";")

    def semicolon(self) -> None:
        if self.tok != ")" and self.tok != "}":
            if self.implicit:
                self.implicit = False
            else:
                self.expect(";")


RECOVERY_TOKENS = frozenset(
    ("break", "continue", "for", "if", "return", "switch", "var", "do", "try", "with", "while", "throw")
) | {"catch", "finally"}


def _after_line_break(src: str, pos: int) -> int:
    """otto's scanNewline: past ``\\r\\n`` or one character (nothing at the end of input)."""
    if pos < len(src) and src[pos] == "\r":
        pos += 1
        if pos >= len(src) or src[pos] != "\n":
            return pos
    return min(pos + 1, len(src))


def _skip_escape(src: str, pos: int, quote: str) -> int:
    """Past the escape whose backslash is just before ``pos`` (``quote`` stops ``\\x``/``\\u`` digits)."""
    if pos >= len(src):
        return pos
    c = src[pos]
    if c in _LINE_BREAKS:
        return _after_line_break(src, pos)
    if c != "x" and c != "u":
        return pos + 1
    pos += 1
    for _ in range(2 if c == "x" else 4):
        if pos >= len(src) or src[pos] == quote or src[pos] not in _HEX:
            break
        pos += 1
    return pos
