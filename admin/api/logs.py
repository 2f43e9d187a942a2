"""``GET /api/v2/logs``: the log records of every worker, as JSON or as logrus text."""

from __future__ import annotations

from typing import Any

import orjson
from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.responses import json_response, services
from simproxy.admin.errors import ServerError
from simproxy.engine.journal.entries import parse_time
from simproxy.engine.journal.logs import MOMENT, text_line

DEFAULT_LIMIT = 500


def _limit(request: Request) -> int:
    raw = request.args.get("limit", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_LIMIT


def _moment(entry: dict[str, Any]) -> float:
    """When the record was made: to the microsecond when stored so, else its ``time`` (whole seconds)."""
    moment = entry.get(MOMENT)
    if isinstance(moment, int | float):
        return float(moment)
    parsed = parse_time(str(entry.get("time", "")))
    return parsed.timestamp() if parsed is not None else 0.0


async def get_logs(request: Request) -> HTTPResponse:
    svc = services(request)
    runtime = svc.runtime
    if not runtime.records.logs_size:
        raise ServerError("Logs disabled")
    await runtime.barrier()  # every worker's buffered records are in the store
    entries = [orjson.loads(raw) for raw in await svc.telemetry.logs_records()]
    if runtime.store.shared:  # the workers' batches as they came: listed by when each was made
        entries.sort(key=_moment)
    since = parse_time(request.args.get("from", ""))
    if since is not None:
        cutoff = since.timestamp()  # Hoverfly: the entry's full time After(from)
        entries = [e for e in entries if _moment(e) > cutoff]
    for entry in entries:
        entry.pop(MOMENT, None)
    entries = entries[-_limit(request) :]
    wanted = f"{request.headers.get('accept', '')} {request.headers.get('content-type', '')}"
    if "text/plain" in wanted:
        return HTTPResponse("".join(text_line(e) for e in entries), content_type="text/plain; charset=utf-8")
    return json_response({"logs": svc.runtime.dialect.listed(entries)})
