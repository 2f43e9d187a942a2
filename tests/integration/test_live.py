"""``/traffic`` and ``/workers``: the fleet's requests per second and its live workers, from any instance."""

from __future__ import annotations

from typing import Any

from simproxy.admin.process.redisserver import RedisServer
from tests.integration.conftest import Simproxy, pair, simulation, wait_until


def _total(view: dict[str, Any], mode: str, outcome: str) -> int:
    return sum(sum(s["requests"]) for s in view["series"] if (s["mode"], s["outcome"]) == (mode, outcome))


def test_two_instances_show_the_fleets_traffic_per_second_and_its_workers(
    simproxy_factory: Any, redis_server: RedisServer
) -> None:
    flags = ("-workers", "2", "-redis-url", redis_server.url, "-redis-prefix", "live:")
    first: Simproxy = simproxy_factory(*flags)
    second: Simproxy = simproxy_factory(*flags)
    first.admin_json("PUT", "/api/v2/simulation", simulation(pair("/hit", "yes")))
    for i in range(30):
        assert (first if i % 2 else second).proxy("http://svc.test/hit")[0] == 200
    for _ in range(4):
        assert second.proxy("http://svc.test/nothing-here")[0] == 502

    def traffic(sp: Simproxy) -> dict[str, Any]:
        status, view = sp.admin_json("GET", "/api/v2/service/traffic?seconds=120")
        assert status == 200
        return dict(view)

    def counted() -> tuple[int, int]:
        view = traffic(first)
        return _total(view, "simulate", "hit"), _total(view, "simulate", "miss")

    assert wait_until(lambda: counted() == (30, 4), timeout=10), traffic(first)
    for sp in (first, second):
        view = traffic(sp)
        assert view["end"] - view["start"] == 119
        assert all(len(s["requests"]) == 120 for s in view["series"])
        assert (_total(view, "simulate", "hit"), _total(view, "simulate", "miss")) == (30, 4)
    # the hoverfly namespace answers the same
    assert _total(second.admin_json("GET", "/api/v2/hoverfly/traffic?seconds=120")[1], "simulate", "hit") == 30

    status, workers = second.admin_json("GET", "/api/v2/service/workers")
    assert status == 200 and workers["workers"] == 4
    assert [len(instance["workers"]) for instance in workers["instances"]] == [2, 2]
    pids = {w["pid"] for instance in workers["instances"] for w in instance["workers"]}
    assert pids == set(first.proxy_listeners()) | set(second.proxy_listeners())

    for bad in ("0", "901", "ten", "-5"):
        assert first.admin_json("GET", f"/api/v2/service/traffic?seconds={bad}")[0] == 400
    status, error = first.admin_json("GET", "/api/v2/service/traffic?seconds=0")
    assert set(error) == {"error"}


def test_one_process_on_the_in_process_store_shows_its_traffic_and_one_worker(simproxy: Simproxy) -> None:
    simproxy.admin_json("PUT", "/api/v2/simulation", simulation(pair("/one", "1")))
    before = _total(simproxy.admin_json("GET", "/api/v2/service/traffic")[1], "simulate", "hit")
    for _ in range(5):
        assert simproxy.proxy("http://svc.test/one")[0] == 200
    # at once: a lone worker flushes its buffers before it reads the traffic
    assert _total(simproxy.admin_json("GET", "/api/v2/service/traffic")[1], "simulate", "hit") == before + 5
    workers = simproxy.admin_json("GET", "/api/v2/service/workers")[1]
    assert workers["workers"] == 1 and len(workers["instances"]) == 1
