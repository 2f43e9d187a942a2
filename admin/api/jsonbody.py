"""Reading the JSON body of an admin request, and saying what is wrong with one that does not read.

Every admin endpoint that takes a JSON body decodes it here. A body that is not JSON is a 400
whose text depends on the dialect: under ``-compat hoverfly`` Hoverfly's own words (``Malformed
JSON``, ``Invalid JSON``, ...), byte for byte; in the spec dialect the same words followed by where
the text stops being JSON and why (``Invalid JSON: line 3, column 5: unexpected character, expected
',' or '}'``). A body that is JSON of the wrong shape (an array where an object is expected) says
what it got instead.
"""

from __future__ import annotations

from typing import Any

import orjson

from simproxy.admin.errors import BadRequest

INVALID_JSON = "Invalid JSON"
"""Hoverfly's words for a simulation that is not JSON; the spec dialect's too at the endpoints whose
Hoverfly words are a Go decoder message (state, diff)."""
_WHITESPACE = b" \t\r\n"


def syntax_detail(raw: bytes, exc: orjson.JSONDecodeError) -> str:
    """Where and why ``raw`` is not JSON: ``line L, column C: <reason>`` (both counted from 1, the
    column in characters), or ``the body is empty``."""
    if not raw.strip(_WHITESPACE):
        return "the body is empty"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        line, column = _position(raw[: bad.start].decode("utf-8"))
        return f"line {line}, column {column}: the byte 0x{raw[bad.start]:02x} is not UTF-8"
    return f"line {exc.lineno}, column {exc.colno}: {exc.msg}"


def _position(before: str) -> tuple[int, int]:
    """The line and column (from 1) of the character that follows ``before``."""
    line = before.count("\n") + 1
    return line, len(before) - (before.rfind("\n") + 1) + 1


def not_json(raw: bytes, exc: orjson.JSONDecodeError, words: str, *, spec_words: str = "") -> BadRequest:
    """The 400 for a body that is not JSON: ``words`` under ``-compat hoverfly``; in the spec dialect
    ``spec_words`` (``words`` when not given), then where and why."""
    return BadRequest(words, detailed=f"{spec_words or words}: {syntax_detail(raw, exc)}")


def decode(raw: bytes, words: str) -> Any:
    """The JSON value of ``raw``; ``not_json`` (with ``words``) when it is not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise not_json(raw, exc, words) from None


def shown(value: Any) -> str:
    """A decoded JSON value in a few words: a scalar as JSON text (cut at 40 characters), a
    container by its kind (``an array``, ``an object``)."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    text = orjson.dumps(value).decode("utf-8")
    return text if len(text) <= 40 else text[:39] + "\u2026"


def wrong_shape(words: str, what: str, value: Any) -> BadRequest:
    """The 400 for JSON of the wrong shape: ``words`` under ``-compat hoverfly``; in the spec dialect
    ``<words>: <what>, not <value shown>`` (``what``: ``the body must be a JSON object``, ...)."""
    return BadRequest(words, detailed=f"{words}: {what}, not {shown(value)}")
