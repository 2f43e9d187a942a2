"""Go values as raymond sees them, in Python: the types, text, truthiness and parsing rules.

A template integer literal is a ``GoInt``; every other Python ``int`` (from JSON) is a Go float64.
``StrList`` is a Go ``[]string`` (request values, ``split``, ``getArray``); a plain list is a
``[]interface{}``. ``MISSING`` is an invalid ``reflect.Value``: nothing found, unlike ``None`` (nil).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from simproxy.engine.gocompat.gojson import format_v_float

# Go's unicode.IsSpace (strings.TrimSpace and friends)
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"


class RenderFailure(Exception):
    """The render cannot finish: Hoverfly reports a template error (or crashes) here."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class GoInt(int):
    """A Go ``int``: an integer literal in a template, ``@index``, a status code."""

    __slots__ = ()


class StrList(list[str]):
    """A Go ``[]string``."""

    __slots__ = ()


class GoStruct:
    """A Go struct: ``fields`` maps each capitalised field name to its value (``MISSING`` for others)."""

    __slots__ = ("fields",)
    FIELDS: tuple[str, ...] = ()

    def __init__(self, fields: StructFields) -> None:
        self.fields = fields

    def field(self, name: str) -> Any:
        return self.fields[name]

    def debug_fields(self) -> list[Any]:
        """Every field (exported or not) in declaration order, as ``%s`` prints them."""
        return [self.fields[name] for name in self.FIELDS]


class StructFields(dict[str, Any]):
    """A struct's fields by name: an unknown name gives ``MISSING``. Made like any dict (no
    ``__init__`` of its own: one is made per struct per render)."""

    __slots__ = ()

    def __missing__(self, name: str) -> Any:
        return MISSING


class GoFunc:
    """A function-valued field (``CurrentDateTime``, ``Request.Body``): called like a helper."""

    __slots__ = ("go_type", "params", "run", "wants_options")

    def __init__(self, params: tuple[str, ...], wants_options: bool, run: Callable[..., Any], go_type: str) -> None:
        self.params = params
        self.wants_options = wants_options
        self.run = run
        self.go_type = go_type


# ---------------------------------------------------------------------------------------------
# text


def go_float(value: float) -> str:
    """``strconv.FormatFloat(v, 'f', -1, 64)``: shortest digits, never an exponent."""
    if value.is_integer() and -1e15 < value < 1e15 and (value or math.copysign(1, value) > 0):
        return str(int(value))
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "+Inf" if value > 0 else "-Inf"
    text = repr(value)
    if "e" in text:
        return format(Decimal(text), "f")
    return text[:-2] if text.endswith(".0") else text


def go_fixed(value: float, decimals: int) -> str:
    """Go's ``%.Nf``: NaN and the infinities as Go names them."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "+Inf" if value > 0 else "-Inf"
    return f"{value:.{decimals}f}"


def _json_int(value: int) -> str:
    """A JSON integer held as a Go float64."""
    return str(value) if -(2**53) <= value <= 2**53 else go_float(float(value))


def to_str(value: Any) -> str:
    """raymond's ``Str``: arrays concatenated, floats without exponent, nil as ""."""
    kind = type(value)
    if kind is str:
        return value  # type: ignore[no-any-return]
    if value is None:
        return ""
    if kind is bool:
        return "true" if value else "false"
    if kind is GoInt:
        return int.__str__(value)
    if kind is int:
        return _json_int(value)
    if kind is float:
        return go_float(value)
    if isinstance(value, list):
        return "".join([to_str(item) for item in value])
    if isinstance(value, GoFunc):
        raise RenderFailure("Can't print value: a function")
    if isinstance(value, str):
        return str(value)
    return go_format(value, "s")


def go_format(value: Any, verb: str) -> str:
    """``fmt.Sprintf("%s")`` or ``fmt.Sprint`` (verb ``v``) of a value, for maps and structs."""
    if value is None:
        return "%!s(<nil>)" if verb == "s" else "<nil>"
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool):
        text = "true" if value else "false"
        return text if verb == "v" else f"%!s(bool={text})"
    if isinstance(value, GoInt):
        return str(int(value)) if verb == "v" else f"%!s(int={int(value)})"
    if isinstance(value, int | float):
        text = format_v_float(float(value))
        return text if verb == "v" else f"%!s(float64={text})"
    if isinstance(value, list):
        return "[" + " ".join(go_format(item, verb) for item in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: str(kv[0]))
        return "map[" + " ".join(f"{go_format(k, verb)}:{go_format(v, verb)}" for k, v in items) + "]"
    if isinstance(value, GoFunc):
        return f"%!{verb}({value.go_type}=0xc000010000)"
    if isinstance(value, GoStruct):
        return "{" + " ".join(go_format(item, verb) for item in value.debug_fields()) + "}"
    return str(value)


def escape_html(text: str) -> str:
    """raymond's ``Escape``: ``& ' < > "`` only."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "'" in text:
        text = text.replace("'", "&apos;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    if '"' in text:
        text = text.replace('"', "&quot;")
    return text


def truthy(value: Any) -> bool:
    """raymond's ``IsTrue``: empty strings, arrays and maps, zero numbers, false and nil are false."""
    if value is None:
        return False
    kind = type(value)
    if kind is str or isinstance(value, list | dict | str):
        return len(value) > 0
    if kind is bool:
        return bool(value)
    if isinstance(value, int | float):
        return value != 0
    return True  # structs and functions


def go_type_name(value: Any) -> str:
    """The Go type a value stands for, as raymond's error messages name it."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, GoInt):
        return "int"
    if isinstance(value, int | float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, StrList):
        return "[]string"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, GoFunc):
        return value.go_type
    return "struct"


# ---------------------------------------------------------------------------------------------
# Go's strconv


_ATOI = re.compile(r"[+-]?[0-9]+\Z")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_HEX = re.compile(r"([+-]?)0[xX]((?:_?[0-9a-fA-F])*\.?(?:[0-9a-fA-F]_?)*)[pP]([+-]?[0-9]+(?:_[0-9]+)*)\Z")
_SPECIAL = re.compile(r"([+-]?)(?:inf|infinity)\Z|nan\Z", re.IGNORECASE)


def go_atoi(text: str) -> int | None:
    """``strconv.Atoi``: an optionally signed decimal that fits an int64; None otherwise."""
    if not _ATOI.match(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def go_parse_float(text: str) -> float | None:
    """``strconv.ParseFloat(s, 64)``: None on a syntax error or when the value overflows."""
    start = text[1:2] if text[:1] in ("+", "-") else text[:1]
    if start and start in "0123456789." and text.isascii() and "_" not in text and text == text.strip():
        try:  # a plain decimal: Python reads exactly what Go reads (hex goes on to the slow path)
            value = float(text)
        except ValueError:
            pass
        else:
            return None if math.isinf(value) else value
    special = _SPECIAL.match(text)
    if special is not None:
        if special.group(1) is None:
            return math.nan
        return -math.inf if special.group(1) == "-" else math.inf
    if _DECIMAL.match(text):
        value = float(text)
    else:
        found = _HEX.match(text)
        if found is None or not any(c in "0123456789abcdefABCDEF" for c in found.group(2)):
            return None
        mantissa = found.group(2).replace("_", "")
        try:
            value = float.fromhex(f"{found.group(1)}0x{mantissa or '0'}p{found.group(3).replace('_', '')}")
        except (OverflowError, ValueError):
            return None
    return None if math.isinf(value) else value


def go_trim_space(text: str) -> str:
    return text.strip(GO_SPACE)


def go_title(name: str) -> str:
    """``strings.Title`` as raymond uses it on a field name (a single word): first letter upper."""
    return name[:1].upper() + name[1:] if name else name
