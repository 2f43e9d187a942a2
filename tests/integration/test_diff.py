"""Diff reports through the admin API: one fleet-wide list, read, filtered and cleared from any instance.

Diff mode itself (which writes the reports) arrives with the traffic modes; until then the test writes
reports through the store the way that mode will, and checks what users read back over HTTP.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from simproxy.engine.modes.diff_report import DiffEntry, DiffReport, DiffRequest, encode_report, encode_request
from simproxy.store.redis import RedisStore
from tests.integration.conftest import Simproxy

pytestmark = pytest.mark.slow

PREFIX = "diff-fleet:"


def _seed(url: str, reports: list[tuple[DiffRequest, DiffReport]]) -> None:
    async def run() -> None:
        store = RedisStore.from_url(url, PREFIX)
        try:
            for request, report in reports:
                await store.diff_add(encode_request(request), encode_report(report))
        finally:
            await store.aclose()

    asyncio.run(run())


def _diff(sp: Simproxy, method: str = "GET", body: Any = None) -> tuple[int, Any]:
    return sp.admin_json(method, "/api/v2/diff", body)


def test_reports_are_shared_filtered_and_cleared_across_instances(simproxy_factory: Any, redis_server: Any) -> None:
    shared = ("-redis-url", redis_server.url, "-redis-prefix", PREFIX, "-workers", "2")
    a: Simproxy = simproxy_factory(*shared)
    b: Simproxy = simproxy_factory(*shared)
    assert _diff(a) == (200, {"diff": []})

    users = DiffRequest("GET", "api.test", "/users", "page=1")
    orders = DiffRequest("POST", "api.test", "/orders", "")
    _seed(
        redis_server.url,
        [
            (users, DiffReport("2026-11-21T10:00:00Z", (DiffEntry("header/X-Id", "[1]", "[2]"),))),
            (orders, DiffReport("2026-11-21T10:00:01Z", (DiffEntry("status", "201", "500"),))),
            (users, DiffReport("2026-11-21T10:00:02Z", (DiffEntry("body/name", "ann", "bob"),))),
        ],
    )

    status, body = _diff(b)
    assert status == 200
    groups = body["diff"]
    assert [g["request"] for g in groups] == [
        {"method": "GET", "host": "api.test", "path": "/users", "query": "page=1"},
        {"method": "POST", "host": "api.test", "path": "/orders", "query": ""},
    ]
    assert [r["timestamp"] for r in groups[0]["diffReports"]] == ["2026-11-21T10:00:00Z", "2026-11-21T10:00:02Z"]
    assert groups[1]["diffReports"][0]["diffEntries"] == [{"field": "status", "expected": "201", "actual": "500"}]
    for _ in range(6):  # every worker of both instances answers the same
        assert _diff(a) == (200, body) and _diff(b) == (200, body)

    status, filtered = _diff(a, "POST", {"excludedHeaders": ["X-Id"], "excludedResponseFields": ["$.name"]})
    assert status == 200
    assert [g["request"]["path"] for g in filtered["diff"]] == ["/orders"]  # /users had nothing else left
    assert _diff(b) == (200, body)  # a filter only shapes the answer; nothing stored changes

    assert _diff(a, "POST", [1]) == (
        400,
        {"error": "json: cannot unmarshal array into Go value of type v2.DiffFilterView"},
    )
    assert a.admin("DELETE", "/api/v2/diff")[0] == 200
    assert _diff(b) == (200, {"diff": []})
