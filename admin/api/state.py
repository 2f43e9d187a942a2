"""``/api/v2/state``: the flat string map behind ``requiresState`` and ``transitionsState``.

State lives only in the store (every worker reads it per stateful request), so a write here needs
no barrier: the next request on any worker sees it.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.gostate import go_state, state_of_view
from simproxy.admin.api.jsonbody import INVALID_JSON, not_json
from simproxy.admin.api.responses import empty_response, json_response, services
from simproxy.admin.api.views import get_field
from simproxy.admin.errors import BadRequest
from simproxy.engine.gocompat.dialect import SPEC, Dialect

# Hoverfly's validator message for a missing or null "state" (core/handlers/v2/state_handler.go)
STATE_REQUIRED = "Key: 'StateView.State' Error:Field validation for 'State' failed on the 'required' tag"


NOT_AN_OBJECT = "json: cannot unmarshal a non-object into the state view"


def _state_of(body: bytes, *, required: bool, dialect: Dialect = SPEC) -> dict[str, str] | None:
    if dialect.is_hoverfly:
        return _go_state_of(body, required=required)
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise not_json(body, exc, f"invalid JSON: {exc}", spec_words=INVALID_JSON) from exc
    if not isinstance(doc, dict):
        raise BadRequest(NOT_AN_OBJECT)
    state: Any = get_field(doc, "state")
    if state is None:
        if required:
            raise BadRequest(STATE_REQUIRED)
        return None
    if not isinstance(state, dict) or not all(isinstance(v, str) for v in state.values()):
        raise BadRequest("json: state must be an object of string values")
    return {str(k): v for k, v in state.items()}


def _go_state_of(body: bytes, *, required: bool) -> dict[str, str] | None:
    """Hoverfly's reading: a PUT (``required``) decodes the first JSON value as ``json.Decoder`` does,
    a PATCH the whole body as ``json.Unmarshal`` does; both name what is wrong in Go's words."""
    try:
        value = go_state(body, stream=required)
    except json.JSONDecodeError:  # JSON to Go that Python does not read (none known): simproxy's words
        return _state_of(body, required=required)
    if value is None and not required:
        raise BadRequest(NOT_AN_OBJECT)  # Hoverfly's handler panics on a null PATCH
    state = state_of_view(value, stream=required) if value is not None else None
    if state is None and required:
        raise BadRequest(STATE_REQUIRED)
    return state


async def _view(request: Request) -> HTTPResponse:
    state = await services(request).state.state_get()
    return json_response({"state": dict(sorted(state.items()))})


async def get_state(request: Request) -> HTTPResponse:
    return await _view(request)


async def put_state(request: Request) -> HTTPResponse:
    state = _state_of(request.body, required=True, dialect=services(request).runtime.dialect)
    assert state is not None
    await services(request).state.state_replace(state)
    return await _view(request)


async def patch_state(request: Request) -> HTTPResponse:
    state = _state_of(request.body, required=False, dialect=services(request).runtime.dialect)
    if state:
        await services(request).state.state_update(state)
    return await _view(request)


async def delete_state(request: Request) -> HTTPResponse:
    await services(request).state.state_replace({})
    return empty_response()
