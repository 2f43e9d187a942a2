"""Data sources changed by templates on one worker are seen by every other, on a real Redis."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, simulation

pytestmark = pytest.mark.slow


def test_rows_added_by_templates_on_two_instances_are_all_kept(simproxy_factory: Any, redis_server: Any) -> None:
    shared = ("-redis-url", redis_server.url, "-redis-prefix", "csv-fleet:", "-workers", "2")
    a: Simproxy = simproxy_factory(*shared)
    b: Simproxy = simproxy_factory(*shared)
    template = "{{ csvAddRow 'guests' (split (Request.QueryParam.row) ',') }}{{ csvCountRows 'guests' }}"
    doc = simulation({
        "request": {"path": [{"matcher": "exact", "value": "/add"}]},
        "response": {"status": 200, "body": template, "templated": True},
    })  # fmt: skip
    assert a.admin_json("PUT", "/api/v2/simulation", doc)[0] == 200
    assert (
        b.admin_json("PUT", "/api/v2/service/templating-data-source/csv", {"name": "guests", "data": "name\nann\n"})[0]
        == 200
    )

    def add(i: int) -> int:
        return int((a, b)[i % 2].proxy(f"http://h/add?row=guest{i}")[2])

    with ThreadPoolExecutor(max_workers=20) as pool:
        counts = sorted(pool.map(add, range(40)))
    assert counts == list(range(2, 42))  # every add saw every earlier one, on whichever worker it ran
    (source,) = a.admin_json("GET", "/api/v2/service/templating-data-source/csv")[1]["csvDataSources"]
    rows = source["data"].splitlines()
    assert rows[:2] == ["name", "ann"] and sorted(rows[2:]) == sorted(f"guest{i}" for i in range(40))
