"""``GET /api/v2/logs``: the log records of every worker, as JSON or as logrus text."""

from __future__ import annotations

import orjson
from sanic import Request
from sanic.response import HTTPResponse

from admin.errors import ServerError
from admin.responses import json_response, services
from engine.journal.entries import parse_time
from engine.journal.logs import text_line

DEFAULT_LIMIT = 500


def _limit(request: Request) -> int:
    raw = request.args.get("limit", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_LIMIT


async def get_logs(request: Request) -> HTTPResponse:
    svc = services(request)
    runtime = svc.runtime
    if not runtime.records.logs_size:
        raise ServerError("Logs disabled")
    await runtime.barrier()  # every worker's buffered records are in the store
    entries = [orjson.loads(raw) for raw in await svc.telemetry.logs_records()]
    since = parse_time(request.args.get("from", ""))
    if since is not None:
        cutoff = since.timestamp()
        entries = [
            e for e in entries if (t := parse_time(str(e.get("time", "")))) is not None and t.timestamp() > cutoff
        ]
    entries = entries[-_limit(request) :]
    wanted = f"{request.headers.get('accept', '')} {request.headers.get('content-type', '')}"
    if "text/plain" in wanted:
        return HTTPResponse("".join(text_line(e) for e in entries), content_type="text/plain; charset=utf-8")
    return json_response({"logs": entries})
