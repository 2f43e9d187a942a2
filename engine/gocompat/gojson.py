"""Go's encoding/json as Hoverfly's matchers use it, for Python values.

``decode_literal`` reads the first JSON value of a text as a ``json.Decoder`` with ``UseNumber``
does (numbers keep their literal text, trailing text is ignored); ``decode_float`` reads a whole
text as ``json.Unmarshal`` into ``interface{}`` does (numbers are float64); ``marshal`` writes
``json.Marshal``'s compact form. The float formatters reproduce Go's ``%v`` and ``'f'`` forms.
``unmarshal_error`` and ``decoder_value_end`` say why a text is not JSON in the words of the Go that
built Hoverfly v1.12.10 (go1.27, whose ``encoding/json`` runs on ``encoding/json/jsontext``: runes,
not bytes, are quoted; ``invalid escape sequence `\\x` in string``).
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Any, TypeAlias

JSON: TypeAlias = Any
"""A decoded JSON value (dicts, lists, strings, numbers, booleans, None)."""


_GO_SPACE = " \t\n\r"  # the only whitespace Go's JSON scanner skips


@dataclass(frozen=True, slots=True)
class Number:
    """A JSON number kept as its literal text (Go's ``json.Number``): ``1`` and ``1.0`` differ."""

    text: str


class Byte(int):
    """One byte of a string, as Go's reflection yields it when a JSONPath wildcard walks a string."""

    __slots__ = ()


class InvalidJSON(ValueError):
    """The text is not what Go's decoder accepts."""


def _reject_constant(name: str) -> JSON:
    raise InvalidJSON(f"{name} is not JSON")


def _float64(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise InvalidJSON(f"number {text} does not fit a float64")
    return value


_LITERAL = json.JSONDecoder(parse_int=Number, parse_float=Number, parse_constant=_reject_constant)
_FLOAT = json.JSONDecoder(parse_int=_float64, parse_float=_float64, parse_constant=_reject_constant)


def decode_literal(text: str) -> JSON:
    """The first JSON value of ``text``, numbers as ``Number``; what follows it is ignored."""
    start = len(text) - len(text.lstrip(_GO_SPACE))
    try:
        return _LITERAL.raw_decode(text, start)[0]
    except (ValueError, RecursionError) as exc:
        raise InvalidJSON(str(exc)) from exc


def decode_float(text: str) -> JSON:
    """The single JSON value ``text`` holds (only whitespace may follow), numbers as float; every
    string as Go's decoder makes it (``go_text``: a byte that was not UTF-8, or a lone surrogate
    escape such as ``\\ud800``, is U+FFFD)."""
    try:
        value = _FLOAT.decode(text)
    except (ValueError, RecursionError) as exc:
        raise InvalidJSON(str(exc)) from exc
    if _SURROGATES.search(text) or _SURROGATE_ESCAPE.search(text):  # rare: the walk only then
        return _go_strings(value)
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _go_strings(value: JSON) -> JSON:
    if isinstance(value, str):
        return go_text(value)
    if isinstance(value, list):
        return [_go_strings(item) for item in value]
    if isinstance(value, dict):
        return {go_text(key): _go_strings(item) for key, item in value.items()}
    return value


# ---------------------------------------------------------------------------------------------
# encoding

_ESCAPES = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]')
_SHORT = MappingProxyType({'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT:
        return _SHORT[char]
    if "\ud800" <= char <= "\udfff":
        return "\\ufffd"  # not valid UTF-8: Go writes the replacement character
    return f"\\u{ord(char):04x}"


_SURROGATES = re.compile("[\ud800-\udfff]")


def go_text(text: str) -> str:
    """Text as Go holds and writes it: each surrogate (a byte that was not UTF-8, kept by
    ``surrogateescape``, or a lone one from a JSON escape) is U+FFFD, so the text encodes as UTF-8."""
    return _SURROGATES.sub("\ufffd", text)


def go_string(text: str) -> str:
    """A JSON string as Go writes it: HTML characters and U+2028/U+2029 escaped."""
    return '"' + _ESCAPES.sub(_escape, text) + '"'


_HTML = re.compile("[<>&\u2028\u2029]")


def unmarshal_kind(value: JSON) -> str:
    """The kind Go's ``UnmarshalTypeError`` names for a decoded JSON value: ``bool``, ``number``,
    ``string``, ``array`` or ``object``."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def go_html_escape(encoded: str) -> str:
    """JSON text another encoder wrote, with what Go's encoder escapes besides: ``<``, ``>``, ``&``
    and U+2028/U+2029 as ``\\u`` escapes (outside strings none of them can occur)."""
    return _HTML.sub(lambda match: f"\\u{ord(match.group()):04x}", encoded)


class _TooLong(Exception):
    pass


def marshal(value: JSON, limit: int | None = None) -> str | None:
    """``json.Marshal`` of a decoded value (keys sorted); None once the text exceeds ``limit``."""
    parts: list[str] = []
    size = 0

    def put(text: str) -> None:
        nonlocal size
        size += len(text)
        if limit is not None and size > limit:
            raise _TooLong
        parts.append(text)

    def write(v: JSON) -> None:
        if v is None:
            put("null")
        elif v is True:
            put("true")
        elif v is False:
            put("false")
        elif isinstance(v, str):
            put(go_string(v))
        elif isinstance(v, float):
            put(format_json_float(v))
        elif isinstance(v, int):
            put(str(int(v)))
        elif isinstance(v, Number):
            put(v.text)
        elif isinstance(v, dict):
            put("{")
            for i, key in enumerate(sorted(v)):
                put("," if i else "")
                put(go_string(key) + ":")
                write(v[key])
            put("}")
        else:
            put("[")
            for i, item in enumerate(v):
                put("," if i else "")
                write(item)
            put("]")

    try:
        write(value)
    except _TooLong:
        return None
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# floats


def _shortest(value: float) -> tuple[str, int]:
    """The shortest round-trip digits of ``abs(value)`` (non-zero) and the decimal point position."""
    _sign, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    text = "".join(map(str, digits))
    assert isinstance(exponent, int)
    return text, len(text) + exponent


def _fixed(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * -point + digits
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def _exponent(digits: str, point: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    exp = point - 1
    return f"{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"


def _finite(value: float, body: Callable[[str, int], str]) -> str:
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    digits, point = _shortest(value)
    return ("-" if value < 0 else "") + body(digits, point)


def format_json_float(value: float) -> str:
    """A float64 as ``json.Marshal`` writes it: plain decimals, exponents below 1e-6 and from 1e21."""
    if value != 0 and not 1e-6 <= abs(value) < 1e21:
        text = _finite(value, _exponent)
        return re.sub(r"e-0(\d)$", r"e-\1", text)
    return _finite(value, _fixed)


def format_v_float(value: float) -> str:
    """A float64 as Go's ``%v`` prints it (``%g``, shortest): ``1.234567e+06``, ``100000``, ``1e-05``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return _finite(value, lambda d, p: _exponent(d, p) if not -4 <= p - 1 < 6 else _fixed(d, p))


def format_f_float(value: float) -> str:
    """A float64 as ``strconv.FormatFloat(v, 'f', -1, 64)``, with XPath's names for the infinities."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return _finite(value, _fixed)


# ---------------------------------------------------------------------------------------------
# syntax errors, in the words Hoverfly's build of Go uses (go1.27: encoding/json v1 on jsontext)

_SPACE_BYTES = b" \t\r\n"
_DIGIT_BYTES = frozenset(b"0123456789")
_HEX_BYTES = frozenset(b"0123456789abcdefABCDEF")
_SIMPLE_ESCAPES = frozenset(b'"\\/bfnrt')
_LITERAL_BYTES = MappingProxyType({ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"})
_MAX_DEPTH = 10000
_QUOTE_ESCAPES = MappingProxyType(
    {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
)


class _Truncated(Exception):
    """The text ends inside a value."""


class _Bad(Exception):
    """A byte that does not fit; the argument is Go's text."""


def _rune_at(data: bytes, pos: int) -> tuple[int | None, int]:
    """The code point UTF-8 encodes at ``pos`` and its length; ``(None, 1)`` for a byte that starts
    no valid encoding (Go's ``utf8.DecodeRune`` gives ``RuneError`` then)."""
    lead = data[pos]
    if lead < 0x80:
        return lead, 1
    size = 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF else 4 if 0xF0 <= lead <= 0xF4 else 0
    try:
        return ord(data[pos : pos + size].decode("utf-8")), size
    except (UnicodeDecodeError, TypeError):
        return None, 1


def _cut_rune(data: bytes, pos: int) -> bool:
    """The bytes from ``pos`` to the end are the start of a valid UTF-8 encoding that the end cuts
    (Go's ``utf8.FullRune`` is false)."""
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data[pos : pos + 3], final=False) == ""
    except UnicodeDecodeError:
        return False


def _escape_rune(code: int, quote: str) -> str:
    char = chr(code)
    if char in (quote, "\\"):
        return "\\" + char
    if char.isprintable():
        return char
    if char in _QUOTE_ESCAPES:
        return _QUOTE_ESCAPES[char]
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _runes(data: bytes) -> list[tuple[int | None, int]]:
    """Each code point of ``data`` with the byte it starts with (None for an invalid byte)."""
    out: list[tuple[int | None, int]] = []
    pos = 0
    while pos < len(data):
        code, size = _rune_at(data, pos)
        out.append((code, data[pos]))
        pos += size
    return out


def quote_rune(data: bytes) -> str:
    """The first character of ``data`` as Go's error texts show it (``strconv.QuoteRune``):
    ``'x'``, ``'\\''``, ``'"'``, ``'\\n'``, ``'\\x00'``, ``'é'``, ``'\\u00a0'``; a byte that begins no
    valid UTF-8 as ``'\\xNN'``."""
    code, _size = _rune_at(data, 0)
    if code is None:
        return f"'\\x{data[0]:x}'"
    return "'" + _escape_rune(code, "'") + "'"


def _shown(data: bytes) -> str:
    """Invalid text as Go's ``InvalidTextError`` shows it: one character quoted as a rune; in
    backquotes when every character is printable and none is a backquote, space or U+FFFD; else
    as ``strconv.Quote`` writes it."""
    runes = _runes(data)
    if len(runes) == 1:
        return quote_rune(data)
    if all(code is not None and code not in (0x60, 0x20, 0xFFFD) and chr(code).isprintable() for code, _ in runes):
        return "`" + data.decode("utf-8") + "`"
    return '"' + "".join(f"\\x{lead:02x}" if code is None else _escape_rune(code, '"') for code, lead in runes) + '"'


def _bad_character(data: bytes, pos: int, where: str) -> _Bad:
    return _Bad(f"invalid character {quote_rune(data[pos:])} {where}")


def _skip_space(data: bytes, pos: int) -> int:
    """The position of the next byte that is not JSON whitespace; ``_Truncated`` at the end."""
    while pos < len(data) and data[pos] in _SPACE_BYTES:
        pos += 1
    if pos == len(data):
        raise _Truncated
    return pos


def _string_end(data: bytes, pos: int) -> int:
    """The end of the string that starts (with its quote) at ``pos``; invalid UTF-8 passes."""
    pos += 1
    while pos < len(data):
        byte = data[pos]
        if byte == 0x22:
            return pos + 1
        if byte == 0x5C:
            if pos + 2 > len(data):
                raise _Truncated
            if data[pos + 1] in _SIMPLE_ESCAPES:
                pos += 2
                continue
            if data[pos + 1] != 0x75:  # u
                raise _Bad(f"invalid escape sequence {_shown(data[pos : pos + 2])} in string")
            digits = data[pos + 2 : pos + 6]
            if all(c in _HEX_BYTES for c in digits) and len(digits) < 4:
                raise _Truncated
            if len(digits) < 4 or not all(c in _HEX_BYTES for c in digits):
                raise _Bad(f"invalid escape sequence {_shown(data[pos : pos + 6])} in string")
            pos += 6
        elif byte < 0x20:
            raise _bad_character(data, pos, "in string")
        elif byte < 0x80:
            pos += 1
        else:
            code, size = _rune_at(data, pos)
            if code is None and _cut_rune(data, pos):
                raise _Truncated
            pos += size
    raise _Truncated


def _digits_end(data: bytes, pos: int) -> int:
    """Past one digit at ``pos`` (``in numeric literal`` when there is none) and those after it."""
    if pos == len(data):
        raise _Truncated
    if data[pos] not in _DIGIT_BYTES:
        raise _bad_character(data, pos, "in numeric literal")
    pos += 1
    while pos < len(data) and data[pos] in _DIGIT_BYTES:
        pos += 1
    return pos


def _number_end(data: bytes, pos: int) -> int:
    """The end of the number at ``pos``: ``-``, ``0`` or digits, then a fraction and an exponent."""
    if data[pos] == 0x2D:
        pos += 1
    if pos < len(data) and data[pos] == 0x30:
        pos += 1
    else:
        pos = _digits_end(data, pos)
    if pos < len(data) and data[pos] == 0x2E:
        pos = _digits_end(data, pos + 1)
    if pos < len(data) and data[pos] in b"eE":
        pos += 1
        if pos < len(data) and data[pos] in b"+-":
            pos += 1
        pos = _digits_end(data, pos)
    return pos


def _literal_end(data: bytes, pos: int) -> int:
    word = _LITERAL_BYTES[data[pos]]
    for i, expected in enumerate(word):
        if pos + i == len(data):
            raise _Truncated
        if data[pos + i] != expected:
            where = f"in literal {word.decode()} (expecting '{chr(expected)}')"
            raise _bad_character(data, pos + i, where)
    return pos + len(word)


def _value_end(data: bytes, pos: int) -> int:
    """The end of the JSON value that starts (after whitespace) at ``pos``; ``_Bad`` in Go's words
    where a byte does not fit, ``_Truncated`` where the text ends first."""
    open_: list[int] = []  # the closing byte of each open object or array
    pos = _skip_space(data, pos)
    while True:
        byte = data[pos]
        if byte in (0x7B, 0x5B):  # { [
            if len(open_) == _MAX_DEPTH:
                raise _Bad("exceeded max depth")
            closer = byte + 2
            pos = _skip_space(data, pos + 1)
            if data[pos] != closer:
                open_.append(closer)
                if closer == 0x7D:
                    pos = _key_end(data, pos)
                continue
            pos += 1
        elif byte == 0x22:
            pos = _string_end(data, pos)
        elif byte in _LITERAL_BYTES:
            pos = _literal_end(data, pos)
        elif byte == 0x2D or byte in _DIGIT_BYTES:
            pos = _number_end(data, pos)
        else:
            raise _bad_character(data, pos, "looking for beginning of value")
        while open_:  # after a value inside an object or array: a comma or the closer
            pos = _skip_space(data, pos)
            if data[pos] == open_[-1]:
                open_.pop()
                pos += 1
                continue
            if data[pos] != 0x2C:
                where = "after object key:value pair" if open_[-1] == 0x7D else "after array element"
                raise _bad_character(data, pos, where)
            pos = _skip_space(data, pos + 1)
            if open_[-1] == 0x7D:
                pos = _key_end(data, pos)
            break
        else:
            return pos


def _key_end(data: bytes, pos: int) -> int:
    """Past an object's key at ``pos``, its colon and the whitespace before its value."""
    if data[pos] != 0x22:
        raise _bad_character(data, pos, "looking for beginning of object key string")
    pos = _skip_space(data, _string_end(data, pos))
    if data[pos] != 0x3A:
        raise _bad_character(data, pos, "after object key")
    return _skip_space(data, pos + 1)


def _as_bytes(data: bytes | str) -> bytes:
    return data if isinstance(data, bytes) else data.encode("utf-8", "surrogateescape")


def unmarshal_error(data: bytes | str) -> str | None:
    """The syntax error ``json.Unmarshal`` reports for ``data`` (the whole text must be one JSON
    value) in the words of Hoverfly's Go: ``invalid character 'x' looking for beginning of value``,
    ``unexpected end of JSON input``, ...; None when it is JSON to Go (types are not looked at)."""
    raw = _as_bytes(data)
    try:
        end = _value_end(raw, 0)
    except _Truncated:
        return "unexpected end of JSON input"
    except _Bad as bad:
        return str(bad)
    rest = len(raw) - len(raw[end:].lstrip(_SPACE_BYTES))
    return None if rest == len(raw) else str(_bad_character(raw, rest, "after top-level value"))


def decoder_value_end(data: bytes | str) -> int:
    """Where the first JSON value of ``data`` ends (what follows is left unread), as
    ``json.Decoder.Decode`` reads it; ``InvalidJSON`` in Go's words when there is none: an
    ``invalid character ...`` text, ``EOF`` (nothing but whitespace) or ``unexpected EOF``."""
    raw = _as_bytes(data)
    if not raw.strip(_SPACE_BYTES):
        raise InvalidJSON("EOF")
    try:
        return _value_end(raw, 0)
    except _Truncated:
        raise InvalidJSON("unexpected EOF") from None
    except _Bad as bad:
        raise InvalidJSON(str(bad)) from None
