"""The XML minifier Hoverfly's ``xml`` matcher compares with: tdewolff/minify v2 (parse v2.8 lexer).

A port of its lexer and of ``xml.Minify``: a lexer, not a parser, so malformed XML is minified too.
Comments go, whitespace between tags goes, whitespace runs collapse, ``<a></a>`` becomes ``<a/>``,
short CDATA becomes text, safe character references are decoded. Works on UTF-8 bytes, as Go does.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, auto
from types import MappingProxyType

_WS = b" \t\n\r\f"
_NAME_END = re.compile(rb"[ >\t\n\r\x00]|[/?]>")
_TEXT_END = re.compile(rb"[<\x00]")
_ENTITIES = MappingProxyType({b"apos": b"'", b"quot": b'"'})
_TEXT_REV = MappingProxyType({ord("<"): b"&lt;", ord(">"): b"&gt;", ord("&"): b"&amp;"})
_ALNUM = frozenset(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


class T(Enum):
    ERROR = auto()
    COMMENT = auto()
    DOCTYPE = auto()
    CDATA = auto()
    START = auto()
    START_PI = auto()
    CLOSE = auto()
    CLOSE_VOID = auto()
    CLOSE_PI = auto()
    END = auto()
    ATTR = auto()
    TEXT = auto()


@dataclass(slots=True)
class _Token:
    kind: T
    data: bytes
    text: bytes = b""
    attr_val: bytes | None = None


class _Lexer:
    """tdewolff/parse/v2/xml.Lexer over ``buf`` (the input plus Go's NUL terminator)."""

    def __init__(self, data: bytes) -> None:
        self.buf = data + b"\x00"
        self.pos = self.start = 0
        self.in_tag = False
        self.failed = False  # a NUL byte before the end: Go's "unexpected NULL character"

    def peek(self, i: int = 0) -> int:
        j = self.pos + i
        return self.buf[j] if j < len(self.buf) else 0

    def shift(self) -> bytes:
        out = self.buf[self.start : self.pos]
        self.start = self.pos
        return out

    def at(self, word: bytes) -> bool:
        return self.buf.startswith(word, self.pos)

    def _error(self) -> _Token:
        if self.pos < len(self.buf) - 1:
            self.failed = True
        return _Token(T.ERROR, b"")

    def next(self) -> _Token:
        if self.in_tag:
            while self.peek() in b" \t\n\r":
                self.pos += 1
            c = self.peek()
            if c == 0:
                return self._error()
            if c != ord(">") and (c not in b"/?" or self.peek(1) != ord(">")):
                return self._attribute()
            self.start = self.pos
            self.in_tag = False
            if c == ord(">"):
                self.pos += 1
                return _Token(T.CLOSE, self.shift())
            self.pos += 2
            return _Token(T.CLOSE_VOID if c == ord("/") else T.CLOSE_PI, self.shift())
        while True:
            found = _TEXT_END.search(self.buf, self.pos)
            assert found is not None  # the terminator is a NUL
            self.pos = found.start()
            if self.pos > self.start:
                text = self.shift()
                return _Token(T.TEXT, text, text)
            if self.peek() == 0:
                return self._error()
            c = self.peek(1)
            if c == ord("/"):
                self.pos += 2
                return self._end_tag()
            if c == ord("!"):
                self.pos += 2
                if self.at(b"--"):
                    self.pos += 2
                    return self._until(T.COMMENT, b"-->", 4)
                if self.at(b"[CDATA["):
                    self.pos += 7
                    return self._until(T.CDATA, b"]]>", 9)
                if self.at(b"DOCTYPE"):
                    self.pos += 7
                    return self._doctype()
                self.pos -= 2
            elif c == ord("?"):
                self.pos += 2
                return self._start_tag(T.START_PI)
            self.pos += 1
            return self._start_tag(T.START)

    def _until(self, kind: T, close: bytes, skip: int) -> _Token:
        end = self.buf.find(close, self.pos)
        nul = self.buf.find(b"\x00", self.pos)
        if end < 0 or nul < end:
            self.pos = nul
            return _Token(kind, self.shift(), self.buf[self.start + skip : nul] if kind is T.CDATA else b"")
        text = self.buf[self.start + skip : end]
        self.pos = end + len(close)
        return _Token(kind, self.shift(), text)

    def _doctype(self) -> _Token:
        in_string = in_brackets = False
        while True:
            c = self.peek()
            if c == ord('"'):
                in_string = not in_string
            elif c in b"[]" and not in_string:
                in_brackets = c == ord("[")
            elif c == ord(">") and not in_string and not in_brackets:
                self.pos += 1
                return _Token(T.DOCTYPE, self.shift())
            elif c == 0:
                return _Token(T.DOCTYPE, self.shift())
            self.pos += 1

    def _start_tag(self, kind: T) -> _Token:
        self.in_tag = True
        name_start = self.pos
        self.pos = _name_end(self.buf, self.pos)
        return _Token(kind, self.shift(), self.buf[name_start : self.pos])

    def _attribute(self) -> _Token:
        name_start = self.pos
        self.pos = _name_end(self.buf, self.pos, b"=")
        name_end = self.pos
        while self.peek() in b" \t\n\r":
            self.pos += 1
        if self.peek() != ord("="):
            self.pos = name_end
            return _Token(T.ATTR, self.shift(), self.buf[name_start:name_end], None)
        self.pos += 1
        while self.peek() in b" \t\n\r":
            self.pos += 1
        value_start = self.pos
        delim = self.peek()
        if delim in b"\"'":
            close = self.buf.find(bytes([delim]), self.pos + 1)
            nul = self.buf.find(b"\x00", self.pos + 1)
            self.pos = nul if close < 0 or nul < close else close + 1
            # the lexer turns tabs and line breaks inside a quoted value into spaces
            value = self.buf[value_start : self.pos].translate(_BREAKS_TO_SPACE)
        else:
            self.pos = _name_end(self.buf, self.pos)
            value = self.buf[value_start : self.pos]
        return _Token(T.ATTR, self.shift(), self.buf[name_start:name_end], value)

    def _end_tag(self) -> _Token:
        end = self.buf.find(b">", self.pos)
        nul = self.buf.find(b"\x00", self.pos)
        stop = nul if end < 0 or nul < end else end
        text = self.buf[self.start + 2 : stop].rstrip(b" \t\n\r")
        self.pos = stop + (1 if stop == end else 0)
        return _Token(T.END, self.shift(), text)


_BREAKS_TO_SPACE = bytes.maketrans(b"\t\n\r", b"   ")


def _name_end(buf: bytes, pos: int, extra: bytes = b"") -> int:
    while True:
        found = _NAME_END.search(buf, pos)
        assert found is not None
        stop = found.start()
        if extra:
            eq = buf.find(extra, pos, stop)
            if eq >= 0:
                return eq
        return stop


def _replace_entity(b: bytearray, i: int, rev: MappingProxyType[int, bytes] | None) -> int:
    """parse.replaceEntities at ``b[i] == '&'``: rewrites ``b`` in place, returns the last index handled."""
    j = i + 1
    if b[j] == ord("#"):
        j += 1
        if b[j] == ord("x"):
            j += 1
            c = 0
            while j < len(b) and chr(b[j]) in "0123456789abcdefABCDEF":
                c = c * 16 + int(chr(b[j]), 16)
                j += 1
            if j <= i + 3 or c >= 10000:
                return j - 1
            r = bytes([c]) if c < 128 else b"&#%d;" % c
        else:
            c = 0
            while j < len(b) and c < 128 and 48 <= b[j] <= 57:
                c = c * 10 + b[j] - 48
                j += 1
            if j <= i + 2 or c >= 128:
                return j - 1
            r = bytes([c])
    else:
        while j < len(b) and j - i - 1 <= 31 and b[j] != ord(";"):
            if b[j] not in _ALNUM:
                break
            j += 1
        if len(b) <= j or j == i + 1 or b[j] != ord(";"):
            return i
        named = _ENTITIES.get(bytes(b[i + 1 : j]))
        if named is None:
            return j
        r = named
    n = j + 1 - i
    if j < len(b) and b[j] == ord(";") and n > 2:
        if len(r) == 1:
            escaped = rev.get(r[0]) if rev is not None else None
            if escaped is not None:
                if escaped == b[i : j + 1]:
                    return j
                r = escaped
            elif r == b"&":
                k = j + 1
                if k < len(b) and (b[k] in _ALNUM or b[k] == ord("#")):
                    return k
        b[i : j + 1] = r
        return i + len(r) - 1
    return i


def _replace_entities(data: bytes) -> bytes:
    b = bytearray(data)
    i = 0
    while i < len(b):
        if b[i] == ord("&") and i + 3 < len(b):
            i = _replace_entity(b, i, None)
        i += 1
    return bytes(b)


def _collapse_text(data: bytes) -> bytes:
    """parse.ReplaceMultipleWhitespaceAndEntities with the XML text entity tables."""
    b = bytearray(data)
    out = bytearray()
    i = 0
    while i < len(b):
        if b[i] in _WS:
            newline = False
            while i < len(b) and b[i] in _WS:
                newline = newline or b[i] in b"\n\r"
                i += 1
            out.append(ord("\n") if newline else ord(" "))
            continue
        if b[i] == ord("&") and i + 3 < len(b):
            end = _replace_entity(b, i, _TEXT_REV)
            out += b[i : end + 1]
            i = end + 1
            continue
        out.append(b[i])
        i += 1
    return bytes(out)


def _escape_cdata(text: bytes) -> bytes | None:
    """xml.EscapeCDATAVal: the escaped text, or None when the escapes would outgrow the CDATA markup."""
    if text.count(b"<") * 3 + text.count(b"&") * 4 > len(b"<![CDATA[]]>"):
        return None
    return text.replace(b"&", b"&amp;").replace(b"<", b"&lt;")


def _escape_attr(value: bytes) -> bytes:
    """xml.EscapeAttrVal: quote with whichever quote needs fewer escapes (double on a tie)."""
    if value.count(b'"') > value.count(b"'"):
        return b"'" + value.replace(b"'", b"&#39;") + b"'"
    return b'"' + value.replace(b'"', b"&#34;") + b'"'


def minify(data: bytes) -> bytes | None:
    """``xml.Minify`` of ``data``; None where Go returns an error (a NUL byte before the end)."""
    lexer = _Lexer(data)
    ahead: deque[_Token] = deque()

    def shift() -> _Token:
        return ahead.popleft() if ahead else lexer.next()

    def peek(i: int) -> _Token:
        while len(ahead) <= i:
            if ahead and ahead[-1].kind is T.ERROR:
                return ahead[-1]
            ahead.append(lexer.next())
        return ahead[i]

    out = bytearray()
    omit_space = True  # the next text must not start with a space
    while True:
        t = shift()
        kind, chunk = t.kind, t.data
        if kind is T.ERROR:
            return None if lexer.failed else bytes(out)
        if kind is T.CDATA:
            if not t.text:
                continue
            chunk = _escape_cdata(t.text) or chunk
            if t.text[-1] in _WS:
                omit_space = True
        elif kind is T.TEXT:
            chunk, omit_space = _text(_collapse_text(chunk), omit_space, peek)
        elif kind is T.ATTR:
            value = t.attr_val or b""
            if len(value) >= 2 and value[0] == value[-1] == ord('"'):
                value = _escape_attr(_replace_entities(value[1:-1]))
            chunk = b" " + t.text + b"=" + value
        elif kind is T.CLOSE:
            nxt, skip = peek(0), 1
            if nxt.kind is T.TEXT and not nxt.data.strip(_WS):
                nxt, skip = peek(1), 2
            if nxt.kind is T.END:  # <a></a> and <a> </a> become <a/>
                for _ in range(skip):
                    shift()
                chunk = b"/>"
        elif kind is T.END and len(chunk) > 3 + len(t.text):
            chunk = chunk[: 2 + len(t.text)] + b">"
        elif kind is T.COMMENT:
            continue
        out += chunk


def _text(chunk: bytes, omit_space: bool, peek: Callable[[int], _Token]) -> tuple[bytes, bool]:
    """A collapsed text token trimmed as the minifier trims it, and the new omit-space flag."""
    if omit_space and chunk[0] in _WS:
        chunk = chunk[1:]
    if not chunk:
        return chunk, True
    if chunk[-1] not in _WS:
        return chunk, False
    i = 0
    while True:
        nxt = peek(i)
        if nxt.kind is T.ERROR or nxt.kind is T.START or nxt.kind is T.END:
            return chunk[:-1], False
        if nxt.kind is T.TEXT or nxt.kind is T.CDATA:
            following = nxt.data if nxt.kind is T.TEXT else nxt.text
            if following[:1] and following[0] in _WS:
                return chunk[:-1], False
            return chunk, True
        i += 1
