"""Hoverfly's string, validation, arithmetic, key/value and response-control helpers.

Lengths and slices count UTF-8 bytes, as Go does; numbers parse with ``strconv.ParseFloat``;
FORMAT rounds half away from zero. The key/value store and the status/header changes live in
the render's runtime and are discarded with it.
"""

from __future__ import annotations

import logging
import math
import re
from typing import Any

from simproxy.engine.gocompat.goregex import InvalidPattern, compile_go
from simproxy.engine.templating.evaluate import Call
from simproxy.engine.templating.values import (
    GoInt,
    RenderFailure,
    StrList,
    go_atoi,
    go_fixed,
    go_parse_float,
    to_str,
)

log = logging.getLogger(__name__)

_ALNUM = re.compile(r"[a-zA-Z0-9]+")
_GO_BOOLS = frozenset({"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"})


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _unutf8(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def replace(call: Call, target: str, old: str, new: str) -> str:
    return target.replace(old, new)


def split(call: Call, target: str, separator: str) -> StrList:
    if separator == "":
        return StrList(target)  # Go splits into UTF-8 sequences
    return StrList(target.split(separator))


def concat(call: Call, *args: Any) -> str:
    """Every argument as text, arrays flattened (Hoverfly 1.12 cannot call it from a template)."""
    out: list[str] = []
    for arg in args:
        if isinstance(arg, list):
            out.extend(to_str(item) for item in arg)
        else:
            out.append(to_str(arg))
    return "".join(out)


def length(call: Call, text: str) -> str:
    return str(len(text) if text.isascii() else len(_utf8(text)))


def substring(call: Call, text: str, start_text: str, end_text: str) -> str:
    start, end = go_atoi(start_text), go_atoi(end_text)
    data = _utf8(text)
    if start is None or end is None or start < 0 or end > len(data) or start > end:
        return ""
    return _unutf8(data[start:end])


def rightmost_characters(call: Call, text: str, count_text: str) -> str:
    count = go_atoi(count_text)
    data = _utf8(text)
    if count is None or count < 0 or count > len(data):
        return ""
    return _unutf8(data[len(data) - count :])


def is_numeric(call: Call, text: str) -> bool:
    return go_parse_float(text) is not None


def is_alphanumeric(call: Call, text: str) -> bool:
    return _ALNUM.fullmatch(text) is not None


def is_bool(call: Call, text: str) -> bool:
    return text in _GO_BOOLS


def _compare(left: str, right: str) -> tuple[float, float] | None:
    a, b = go_parse_float(left), go_parse_float(right)
    return None if a is None or b is None else (a, b)


def is_greater_than(left: str, right: str) -> bool:
    pair = _compare(left, right)
    return pair is not None and pair[0] > pair[1]


def is_greater_than_or_equal(left: str, right: str) -> bool:
    pair = _compare(left, right)
    return pair is not None and pair[0] >= pair[1]


def is_less_than(left: str, right: str) -> bool:
    pair = _compare(left, right)
    return pair is not None and pair[0] < pair[1]


def is_less_than_or_equal(left: str, right: str) -> bool:
    pair = _compare(left, right)
    return pair is not None and pair[0] <= pair[1]


def is_between(call: Call, value: str, low: str, high: str) -> bool:
    return is_greater_than(value, low) and is_less_than(value, high)


def matches_regex(call: Call, value: str, pattern: str) -> bool:
    try:
        compiled = call.rt.services.regex(pattern, compile_go)
    except InvalidPattern:
        return False
    return compiled.search(value) is not None


# ---------------------------------------------------------------------------------------------
# arithmetic


def go_round(value: float) -> float:
    """``math.Round``: half away from zero, the sign of zero kept."""
    if math.isnan(value) or math.isinf(value):
        return value
    whole = math.trunc(value)
    if abs(value - whole) >= 0.5:
        whole += 1 if value > 0 else -1
    return math.copysign(float(whole), value)


def format_number(number: float, fmt: str) -> str:
    """Hoverfly's ``formatNumber``: ``""`` trims ``%f``; otherwise the decimals after the one ``.``."""
    if fmt == "":
        return go_fixed(number, 6).rstrip("0").rstrip(".")
    parts = fmt.split(".")
    decimals = len(parts[1]) if len(parts) == 2 else 0
    multiplier = 10.0**decimals
    return go_fixed(go_round(number * multiplier) / multiplier, decimals)


def _operands(left: str, right: str) -> tuple[float, float] | None:
    a, b = go_parse_float(left), go_parse_float(right)
    return None if a is None or b is None else (a, b)


def _divide(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _arithmetic(op: str) -> Any:
    def helper(call: Call, left: str, right: str, fmt: str) -> str:
        pair = _operands(left, right)
        if pair is None:
            return "NaN"
        a, b = pair
        if op == "+":
            return format_number(a + b, fmt)
        if op == "-":
            return format_number(a - b, fmt)
        if op == "*":
            return format_number(a * b, fmt)
        return format_number(_divide(a, b), fmt)

    return helper


add, subtract, multiply, divide = (_arithmetic(op) for op in "+-*/")


def sum_(call: Call, numbers: StrList | None, fmt: str) -> str:
    total = 0.0
    for number in numbers or ():
        value = go_parse_float(number)
        if value is None:
            return "NaN"
        total += value
    return format_number(total, fmt)


# ---------------------------------------------------------------------------------------------
# the per-render key/value store


def _kvs(call: Call) -> dict[str, Any]:
    store: dict[str, Any] = call.rt.kvs
    return store


def put_value(call: Call, key: str, value: str, output: bool) -> str:
    _kvs(call)[key] = value
    return value if output else ""


def get_value(call: Call, key: str) -> str:
    value = _kvs(call).get(key, "")
    if not isinstance(value, str):
        raise RenderFailure(f"getValue {key!r} holds an array (Hoverfly crashes)")
    return value


def _array(call: Call, key: str) -> StrList:
    value = _kvs(call).get(key)
    if value is None:
        return StrList()
    if not isinstance(value, StrList):
        raise RenderFailure(f"{key!r} holds a value, not an array (Hoverfly crashes)")
    return value


def add_to_array(call: Call, key: str, value: str, output: bool) -> str:
    _kvs(call)[key] = StrList([*_array(call, key), value])
    return value if output else ""


def get_array(call: Call, key: str) -> StrList:
    return StrList(_array(call, key))


def init_array(call: Call, key: str) -> str:
    _kvs(call)[key] = StrList()
    return ""


# ---------------------------------------------------------------------------------------------
# response control


def set_status_code(call: Call, code_text: str) -> str:
    code = go_atoi(code_text)
    if code is None or not 100 <= code <= 599:
        log.warning("setStatusCode ignored: %r is not a status code", code_text)
        return ""
    call.rt.internal["statusCode"] = GoInt(code)
    return ""


def set_header(call: Call, name: str, value: str) -> str:
    if name == "":
        log.warning("setHeader ignored: the header name is empty")
        return ""
    call.rt.internal.setdefault("setHeaders", {})[name] = StrList([value])
    call.rt.headers.append((name, value))
    return ""
