"""``PUT`` and ``PATCH /api/v2/state`` bodies read as Hoverfly reads them (``-compat hoverfly``).

Hoverfly decodes a ``PUT`` with Go's ``json.Decoder`` (the first JSON value; what follows it is
ignored; an empty body is ``EOF``, a cut one ``unexpected EOF``) and a ``PATCH`` with
``json.Unmarshal`` (the whole body; ``unexpected end of JSON input``, ``invalid character 'x' after
top-level value``). A value of the wrong kind is named as Go's decoder names it, with the struct
path (``StateView.state.a`` for the decoder, ``.state.a`` for ``Unmarshal``); a ``null`` value is
the empty string. A body that is not JSON is named in Go's words wherever it goes wrong
(``invalid character '}' in literal true (expecting 'e')``; engine/gocompat/gojson.py).
"""

from __future__ import annotations

import json
from typing import Any

from simproxy.admin.errors import BadRequest
from simproxy.engine.gocompat.gojson import InvalidJSON, decoder_value_end, unmarshal_error, unmarshal_kind


def go_state(body: bytes, *, stream: bool) -> Any:
    """The JSON value Go would decode from ``body`` (``stream``: the first value, as a
    ``json.Decoder`` reads it; else the whole body, as ``json.Unmarshal``); ``BadRequest`` in Go's
    words when there is none."""
    if stream:
        try:
            body = body[: decoder_value_end(body)]
        except InvalidJSON as exc:
            raise BadRequest(str(exc)) from None
    else:
        error = unmarshal_error(body)
        if error is not None:
            raise BadRequest(error)
    return json.loads(body.decode("utf-8", "surrogateescape"))


def state_of_view(value: Any, *, stream: bool) -> dict[str, str] | None:
    """``StateView.State`` of a decoded value, or a ``BadRequest`` with Go's type error."""
    if not isinstance(value, dict):
        raise BadRequest(f"json: cannot unmarshal {unmarshal_kind(value)} into Go value of type v2.StateView")
    struct = "StateView" if stream else ""
    state = value.get("state")
    if state is None:
        return None
    if not isinstance(state, dict):
        raise BadRequest(
            f"json: cannot unmarshal {unmarshal_kind(state)} into Go struct field {struct}.state"
            " of type map[string]string"
        )
    out: dict[str, str] = {}
    for key, item in state.items():
        if item is not None and not isinstance(item, str):
            raise BadRequest(
                f"json: cannot unmarshal {unmarshal_kind(item)} into Go struct field {struct}.state.{key}"
                " of type string"
            )
        out[str(key)] = item or ""
    return out
