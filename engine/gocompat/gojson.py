"""Go's encoding/json as Hoverfly's matchers use it, for Python values.

``decode_literal`` reads the first JSON value of a text as a ``json.Decoder`` with ``UseNumber``
does (numbers keep their literal text, trailing text is ignored); ``decode_float`` reads a whole
text as ``json.Unmarshal`` into ``interface{}`` does (numbers are float64); ``marshal`` writes
``json.Marshal``'s compact form. The float formatters reproduce Go's ``%v`` and ``'f'`` forms.
"""

from __future__ import annotations

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
