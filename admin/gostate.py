"""``PUT`` and ``PATCH /api/v2/state`` bodies read as Hoverfly reads them (``-compat hoverfly``).

Hoverfly decodes a ``PUT`` with Go's ``json.Decoder`` (the first JSON value; what follows it is
ignored; an empty body is ``EOF``, a cut one ``unexpected EOF``) and a ``PATCH`` with
``json.Unmarshal`` (the whole body; ``unexpected end of JSON input``, ``invalid character 'x' after
top-level value``). A value of the wrong kind is named as Go's decoder names it, with the struct
path (``StateView.state.a`` for the decoder, ``.state.a`` for ``Unmarshal``); a ``null`` value is
the empty string. Syntax errors inside the document keep simproxy's wording (Go's scanner is not
reproduced past the first character).
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from simproxy.admin.errors import BadRequest

_WHITESPACE = " \t\r\n"
_VALUE_START = frozenset('{["-0123456789tfn')
_LITERALS = ("true", "false", "null")
_ESCAPES = MappingProxyType({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"})


def go_state(body: bytes, *, stream: bool) -> Any:
    """The JSON value Go would decode from ``body``; ``BadRequest`` in Go's words when there is
    none; ``None`` when ``body`` is JSON Go reads but this module does not word (the caller's
    own check then reports it)."""
    text = body.decode("utf-8", "surrogateescape").lstrip(_WHITESPACE)
    if not text:
        raise BadRequest("EOF" if stream else "unexpected end of JSON input")
    if text[0] not in _VALUE_START:
        raise BadRequest(f"invalid character {_quoted(text[0])} looking for beginning of value")
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as exc:
        rest = text[exc.pos :].rstrip(_WHITESPACE)
        if not rest or any(word.startswith(rest) for word in _LITERALS):
            raise BadRequest("unexpected EOF" if stream else "unexpected end of JSON input") from exc
        raise
    after = text[end:].lstrip(_WHITESPACE)
    if after and not stream:
        raise BadRequest(f"invalid character {_quoted(after[0])} after top-level value")
    return value


def state_of_view(value: Any, *, stream: bool) -> dict[str, str] | None:
    """``StateView.State`` of a decoded value, or a ``BadRequest`` with Go's type error."""
    if not isinstance(value, dict):
        raise BadRequest(f"json: cannot unmarshal {_kind(value)} into Go value of type v2.StateView")
    struct = "StateView" if stream else ""
    state = value.get("state")
    if state is None:
        return None
    if not isinstance(state, dict):
        raise BadRequest(
            f"json: cannot unmarshal {_kind(state)} into Go struct field {struct}.state of type map[string]string"
        )
    out: dict[str, str] = {}
    for key, item in state.items():
        if item is not None and not isinstance(item, str):
            raise BadRequest(
                f"json: cannot unmarshal {_kind(item)} into Go struct field {struct}.state.{key} of type string"
            )
        out[str(key)] = item or ""
    return out


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _quoted(char: str) -> str:
    """Go's ``quoteChar``: the character in single quotes, escaped as ``strconv.Quote`` escapes it."""
    if char == "'":
        return "'\\''"
    if char == '"':
        return "'\"'"
    if char.isprintable():
        return f"'{char}'"
    escaped = _ESCAPES.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x80 else f"\\u{ord(char):04x}")
    return f"'{escaped}'"
