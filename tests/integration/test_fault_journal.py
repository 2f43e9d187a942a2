"""A faulted request's journal entry, read through the admin API of real processes: the response the
simulation chose, and next to its status the fault the client got instead (``response.fault``), in
the listing, a search, an index and the ``journal`` template helper; on a Redis-shared fleet read
through another instance, one in Hoverfly's dialect included (what the faults do on the wire:
tests/integration/test_faults.py)."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from simproxy.admin.process.redisserver import RedisServer
from tests.integration.conftest import Simproxy, emptied, simulation, wait_until
from tests.integration.test_fault_imports import serving_worker
from tests.integration.test_faults import ask, connect, faulty, get, put, until_closed, with_faults

RESET = {"type": "connectionReset"}


@pytest.fixture
def sp(simproxy: Simproxy) -> Simproxy:
    return emptied(simproxy)


def reset_by(sp: Simproxy, url: str) -> int | None:
    """Ask for ``url`` on a new connection that the proxy resets; the worker (its pid) that did."""
    with connect(sp.proxy_port) as sock:
        worker = serving_worker(sp, sock)
        ask(sock, url)
        with pytest.raises(ConnectionResetError):
            until_closed(sock)
    return worker


def journal(sp: Simproxy, query: str = "") -> list[dict[str, Any]]:
    status, body = sp.admin_json("GET", f"/api/v2/journal{query}")
    assert status == 200, body
    return list(body["journal"])


def faults(entries: list[dict[str, Any]]) -> list[tuple[str, int, Any]]:
    """(path, status, fault or None) of each entry."""
    return [(e["request"]["path"], e["response"]["status"], e["response"].get("fault")) for e in entries]


def test_the_journal_shows_the_fault_each_request_got_next_to_the_status_the_simulation_chose(sp: Simproxy) -> None:
    dribble = {"type": "dribble", "chunks": 2, "durationMs": 50, "fraction": 1}
    doc = simulation(faulty("/reset", RESET), faulty("/dribble", dribble), faulty("/spared", None, status=201))
    put(
        sp,
        with_faults(doc, {"urlPattern": "spared", "httpMethod": "", "fault": {"type": "emptyResponse", "fraction": 0}}),
    )
    reset_by(sp, "http://faults.test/reset")
    assert get(sp, "http://faults.test/dribble").text == "ok"
    assert get(sp, "http://faults.test/spared").status_code == 201  # the roll spared it: no fault

    expected = [
        ("/reset", 200, {"type": "connectionReset"}),
        ("/dribble", 200, {"type": "dribble", "chunks": 2, "durationMs": 50}),  # what it got: no fraction
        ("/spared", 201, None),
    ]
    listed = journal(sp)
    assert faults(listed) == expected
    assert listed[0]["response"] == {
        "status": 200,
        "fault": {"type": "connectionReset"},
        "body": "ok",
        "encodedBody": False,
    }
    assert "fault" not in listed[2]["response"]
    assert sorted(faults(journal(sp, "?sort=latency:desc"))) == sorted(expected)  # every entry decoded, sorted
    status, found = sp.admin_json(
        "POST", "/api/v2/journal", {"request": {"path": [{"matcher": "exact", "value": "/reset"}]}}
    )
    assert status == 200 and faults(found["journal"]) == expected[:1]


def test_an_indexed_faulted_entry_keeps_its_fault_and_its_body_for_the_journal_helper(sp: Simproxy) -> None:
    reading = {
        "request": {"path": [{"matcher": "exact", "value": "/read"}]},
        "response": {
            "status": 200,
            "body": "{{ journal 'Request.QueryParam.id' '7' 'response' 'jsonpath' '$.x' }}",
            "templated": True,
        },
    }
    put(sp, simulation(faulty("/reset", RESET, body='{"x": "chosen"}'), reading))
    assert sp.admin_json("POST", "/api/v2/journal/index", {"name": "Request.QueryParam.id"})[0] == 200
    reset_by(sp, "http://faults.test/reset?id=7")
    assert get(sp, "http://faults.test/read").text == "chosen"
    status, body = sp.admin_json("GET", "/api/v2/journal")
    assert status == 200
    assert faults(body["journal"]) == [("/reset", 200, RESET), ("/read", 200, None)]
    (index,) = body["indexes"]
    assert {"key": "7", "journalEntryId": body["journal"][0]["id"]} in index["entries"]


def test_a_fleet_shows_each_workers_faults_to_every_instance_hoverflys_dialect_too(
    simproxy_factory: Any, redis_server: RedisServer
) -> None:
    """Hoverfly has no faults and its dialect refuses them at import; but an instance in it that
    shares a store with one in the spec's serves the faults of the simulation stored there (as
    its export shows them), and its journal says so too. An entry without a fault has no fault field."""
    shared = ("-redis-url", redis_server.url, "-redis-prefix", "fault-journal:")
    spec: Simproxy = simproxy_factory(*shared, "-workers", "2")
    hoverfly: Simproxy = simproxy_factory(*shared, "-compat", "hoverfly")
    put(spec, simulation(faulty("/reset", RESET), faulty("/plain", None)))
    wait_until(lambda: hoverfly.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"][0]["response"].get("fault"))

    workers, resetting = set(spec.proxy_listeners()), set()
    for _ in range(200):  # new connections, until each of the spec instance's workers reset one
        resetting.add(reset_by(spec, "http://faults.test/reset"))
        if resetting == workers:
            break
    assert resetting == workers and len(workers) == 2
    reset_by(hoverfly, "http://faults.test/reset")
    assert requests.get("http://faults.test/plain", proxies={"http": f"http://127.0.0.1:{hoverfly.proxy_port}"}).ok

    for reader in (spec, hoverfly):
        entries = journal(reader)
        assert faults(entries) == [("/reset", 200, RESET)] * (len(entries) - 1) + [("/plain", 200, None)]
        # no fault field; the Content-Length Hoverfly's handler sets is journaled, as Hoverfly journals it
        plain = entries[-1]["response"]
        assert list(plain) == ["status", "body", "encodedBody", "headers"]
        assert plain["headers"] == {"Content-Length": ["2"]}
