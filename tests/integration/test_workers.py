"""Several real worker processes, and several simproxy instances on one Redis, share one view."""

from __future__ import annotations

import contextlib
import http.client
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, pair, simulation

pytestmark = pytest.mark.slow


def _burst(sp: Simproxy, path: str, total: int = 1000, per_connection: int = 10) -> Counter[tuple[int, bytes]]:
    """``total`` proxied GETs, ``per_connection`` per fresh keep-alive connection, from 16 threads.

    Fresh connections are spread over the workers by the kernel (SO_REUSEPORT).
    """

    def one_connection(_: int) -> list[tuple[int, bytes]]:
        out = []
        with contextlib.closing(http.client.HTTPConnection("127.0.0.1", sp.proxy_port, timeout=30)) as conn:
            for _ in range(per_connection):
                conn.request("GET", f"http://svc.example.com{path}")
                resp = conn.getresponse()
                out.append((resp.status, resp.read()))
        return out

    results: Counter[tuple[int, bytes]] = Counter()
    with ThreadPoolExecutor(max_workers=16) as pool:
        for batch in pool.map(one_connection, range(total // per_connection)):
            results.update(batch)
    return results


def _version(n: int) -> dict[str, Any]:
    return simulation(pair("/v", f"version {n}"), pair(f"/only-in-{n}", "yes"))


def _counter(sp: Simproxy) -> int:
    return int(sp.admin_json("GET", "/api/v2/service/usage")[1]["usage"]["counters"]["simulate"])


def test_four_workers_serve_a_new_simulation_right_after_the_put(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-workers", "4")
    assert len(sp.proxy_listeners()) == 4
    sent = 0
    for n in (1, 2, 3):
        assert sp.admin_json("PUT", "/api/v2/simulation", _version(n))[0] == 200
        results = _burst(sp, "/v")
        sent += 1000
        assert results == Counter({(200, f"version {n}".encode()): 1000})

    # a rejected PUT leaves version 3 served by every worker
    status, body = sp.admin_json(
        "PUT", "/api/v2/simulation", raw=b'{"data": {"pairs": "nope"}, "meta": {"schemaVersion": "v5"}}'
    )
    assert status == 400 and body["error"].startswith("Invalid v5 simulation")
    assert _burst(sp, "/only-in-3", total=400) == Counter({(200, b"yes"): 400})
    sent += 400
    # and every worker's count is in the fleet-wide usage
    assert _counter(sp) == sent


def test_configuration_writes_are_seen_by_every_worker(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-workers", "3")
    sp.admin_json(
        "PUT",
        "/api/v2/simulation",
        simulation(
            {"request": {"path": [{"matcher": "glob", "value": "/s/*"}]}, "response": {"status": 200, "body": "glob"}},
            pair("/s/1", "exact"),
        ),
    )
    assert _burst(sp, "/s/1", total=200) == Counter({(200, b"exact"): 200})
    assert (
        sp.admin_json("PUT", "/api/v2/service/mode", {"mode": "simulate", "arguments": {"matchingStrategy": "first"}})[
            0
        ]
        == 200
    )
    # every worker cached the strongest answer; a fleet-wide flush lets the new strategy show
    assert _burst(sp, "/s/1", total=200) == Counter({(200, b"exact"): 200})
    assert sp.admin_json("DELETE", "/api/v2/cache") == (200, {"cache": []})
    assert _burst(sp, "/s/1", total=600) == Counter({(200, b"glob"): 600})
    assert sp.admin_json("PUT", "/api/v2/service/destination", {"destination": "example"})[0] == 200
    views = {sp.admin("GET", "/api/v2/hoverfly/destination")[2] for _ in range(30)}
    assert views == {b'{"destination":"example"}'}


def test_two_instances_on_one_redis_share_one_view(simproxy_factory: Any, redis_server: Any) -> None:
    shared = ("-redis-url", redis_server.url, "-redis-prefix", "two-instances:", "-workers", "2")
    a: Simproxy = simproxy_factory(*shared)
    b: Simproxy = simproxy_factory(*shared)
    other: Simproxy = simproxy_factory("-redis-url", redis_server.url, "-redis-prefix", "elsewhere:")
    assert a.admin_json("PUT", "/api/v2/simulation", _version(7))[0] == 200
    assert _burst(b, "/v") == Counter({(200, b"version 7"): 1000})
    assert b.admin_json("PUT", "/api/v2/simulation", _version(8))[0] == 200
    assert _burst(a, "/v") == Counter({(200, b"version 8"): 1000})
    # both instances count into one fleet-wide usage; another prefix is another simulation
    assert _counter(a) == _counter(b) == 2000
    assert other.proxy("http://svc.example.com/v")[0] == 502
    assert other.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"] == []
    assert b.admin_json("PUT", "/api/v2/service/mode", {"mode": "capture"})[0] == 200
    assert a.admin_json("GET", "/api/v2/service/mode")[1] == {"mode": "capture", "arguments": {}}


def test_the_journal_of_several_workers_lists_requests_in_the_order_they_were_answered(simproxy_factory: Any) -> None:
    """Each request on a new connection, so the kernel spreads them over both workers, each of which
    flushes its entries on its own: the journal still lists them in the order they were sent."""
    sp: Simproxy = simproxy_factory("-workers", "2")
    assert sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/seq", "ok")))[0] == 200
    sent = [f"n={n}" for n in range(60)]
    for query in sent:
        assert sp.proxy(f"http://svc.example.com/seq?{query}")[0] == 200
    status, journal = sp.admin_json("GET", "/api/v2/journal?limit=100")
    assert status == 200
    assert [entry["request"]["query"] for entry in journal["journal"]] == sent
    assert len({entry["id"][:8] for entry in journal["journal"]}) == 2  # each worker's ids have their prefix


def test_the_logs_of_several_workers_are_listed_in_the_order_they_were_written(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-workers", "2")
    sent = [f"/miss/{n}" for n in range(60)]
    for path in sent:
        assert sp.proxy(f"http://svc.example.com{path}")[0] == 502  # each miss logs a warning
    status, body = sp.admin_json("GET", "/api/v2/logs?limit=1000")
    assert status == 200
    misses = [e for e in body["logs"] if e.get("msg") == "Failed to find matching request from simulation"]
    assert [e["path"] for e in misses] == sent
