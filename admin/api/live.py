"""What the fleet is doing now, which Hoverfly's API has no view of: traffic per second and live workers.

``GET /api/v2/service/traffic?seconds=N``: the fleet's proxied requests per second, by mode and
outcome, over the last N seconds (60 by default, at most the 900 the store keeps); every worker of
every instance adds its counts to the same per-second buckets when it flushes its metrics.

``GET /api/v2/service/workers``: the live workers (a heartbeat within the last seconds), grouped
by instance (a simproxy process or pod).
"""

from __future__ import annotations

import datetime

from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.responses import json_response, services
from simproxy.admin.errors import BadRequest
from simproxy.store import TRAFFIC_KEEP_S

DEFAULT_SECONDS = 60


async def get_traffic(request: Request) -> HTTPResponse:
    raw = request.args.get("seconds", str(DEFAULT_SECONDS))
    if not raw.isdigit() or not 1 <= int(raw) <= TRAFFIC_KEEP_S:
        raise BadRequest(f"seconds must be a whole number from 1 to {TRAFFIC_KEEP_S}, got {raw!r}")
    seconds = int(raw)
    last, buckets = await services(request).runtime.traffic(seconds)
    first = last - seconds + 1
    series: dict[tuple[str, str], list[int]] = {}
    for second, counts in buckets.items():
        for name, count in counts.items():
            mode, _, outcome = name.partition("|")
            series.setdefault((mode, outcome), [0] * seconds)[second - first] += round(count)
    return json_response(
        {
            "start": first,
            "end": last,
            "series": [
                {"mode": mode, "outcome": outcome, "requests": counts}
                for (mode, outcome), counts in sorted(series.items())
            ],
        }
    )


async def get_workers(request: Request) -> HTTPResponse:
    seen = await services(request).runtime.workers()
    instances: dict[str, list[dict[str, object]]] = {}
    for worker, last_ms in sorted(seen.items()):
        instance, _, pid = worker.rpartition("/")
        instances.setdefault(instance or worker, []).append(
            {
                "id": worker,
                "pid": int(pid) if pid.isdigit() else None,
                "lastSeen": datetime.datetime.fromtimestamp(last_ms / 1000, datetime.UTC).isoformat(
                    timespec="milliseconds"
                ),
            }
        )
    return json_response(
        {
            "instances": [{"id": name, "workers": workers} for name, workers in sorted(instances.items())],
            "workers": len(seen),
        }
    )
