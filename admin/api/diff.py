"""``/api/v2/diff``: the reports diff mode wrote on any worker, read, filtered or cleared through any of them.

Reads and the clear start with a barrier, so a report buffered by any worker is in the store first.
``engine.diff`` is imported by the first read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.jsonbody import INVALID_JSON, not_json
from simproxy.admin.api.responses import empty_response, json_response, services
from simproxy.admin.api.services import Services
from simproxy.admin.api.views import get_field
from simproxy.admin.errors import BadRequest
from simproxy.engine.gocompat.gojson import unmarshal_error, unmarshal_kind

if TYPE_CHECKING:
    from simproxy.engine.modes.diff_report import DiffGroup

_FILTER = "v2.DiffFilterView"
_FIELDS = ("excludedHeaders", "excludedResponseFields")


async def _groups(svc: Services) -> list[DiffGroup]:
    from simproxy.engine.modes.diff_report import decode_groups

    await svc.runtime.barrier()  # every worker's buffered reports are in the store
    return decode_groups(await svc.diffs.diff_reports())


async def get_diff(request: Request) -> HTTPResponse:
    from simproxy.engine.modes.diff_report import diff_view

    svc = services(request)
    return json_response(diff_view(await _groups(svc), svc.runtime.dialect))


async def post_diff(request: Request) -> HTTPResponse:
    from simproxy.engine.modes.diff_report import diff_view, filter_reports

    excluded_headers, excluded_fields = parse_filter(request.body)
    svc = services(request)
    groups = await _groups(svc)
    return json_response(diff_view(filter_reports(groups, excluded_headers, excluded_fields), svc.runtime.dialect))


async def delete_diff(request: Request) -> HTTPResponse:
    svc = services(request)
    await svc.runtime.barrier()
    await svc.diffs.diff_clear()
    return empty_response()


def parse_filter(body: bytes) -> tuple[list[str], list[str]]:
    """A ``POST /diff`` body read as Go reads it into ``DiffFilterView``; errors carry Go's wording
    (a body that is not JSON: the spec dialect says where and why instead)."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        go_words = unmarshal_error(body) or f"invalid JSON: {exc}"  # the latter: JSON to Go, not to orjson
        raise not_json(body, exc, go_words, spec_words=INVALID_JSON) from exc
    if doc is None:
        return [], []
    if not isinstance(doc, dict):
        raise BadRequest(f"json: cannot unmarshal {unmarshal_kind(doc)} into Go value of type {_FILTER}")
    headers, fields = (_strings(get_field(doc, name), name) for name in _FIELDS)
    return headers, fields


def _strings(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    where = f"Go struct field {_FILTER.split('.')[1]}.{name}"
    if not isinstance(value, list):
        raise BadRequest(f"json: cannot unmarshal {unmarshal_kind(value)} into {where} of type []string")
    for item in value:
        if item is not None and not isinstance(item, str):
            raise BadRequest(f"json: cannot unmarshal {unmarshal_kind(item)} into {where} of type string")
    return ["" if item is None else item for item in value]  # null leaves Go's zero value
