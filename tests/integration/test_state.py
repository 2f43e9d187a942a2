"""State through the admin API and through proxied requests, and sequences taken exactly once."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, sequence_pairs, simulation

STATE_REQUIRED = "Key: 'StateView.State' Error:Field validation for 'State' failed on the 'required' tag"


def _pair(path: str, body: str, requires: dict[str, str] | None = None, **response: Any) -> dict[str, Any]:
    request: dict[str, Any] = {"path": [{"matcher": "exact", "value": path}]}
    if requires is not None:
        request["requiresState"] = requires
    return {"request": request, "response": {"status": 200, "body": body, **response}}


def test_state_endpoints(simproxy: Simproxy) -> None:
    sp = simproxy
    assert sp.admin("DELETE", "/api/v2/state")[::2] == (200, b"")
    assert sp.admin_json("GET", "/api/v2/state") == (200, {"state": {}})
    assert sp.admin_json("PUT", "/api/v2/state", {"state": {"b": "2", "a": "1"}}) == (
        200,
        {"state": {"a": "1", "b": "2"}},
    )
    assert sp.admin("GET", "/api/v2/state")[2] == b'{"state":{"a":"1","b":"2"}}'
    assert sp.admin_json("PATCH", "/api/v2/state", {"state": {"b": "3", "c": "4"}}) == (
        200,
        {"state": {"a": "1", "b": "3", "c": "4"}},
    )
    assert sp.admin_json("PUT", "/api/v2/state", {"state": {"only": "this"}}) == (200, {"state": {"only": "this"}})
    for raw, _ in [
        (b"{nope", "invalid"),
        (b"{}", STATE_REQUIRED),
        (b'{"state": null}', STATE_REQUIRED),
        (b'{"state": {"a": 1}}', "string"),
    ]:
        status, body = sp.admin_json("PUT", "/api/v2/state", raw=raw)
        assert status == 400 and body["error"]
    assert sp.admin_json("PUT", "/api/v2/state", raw=b"{}")[1] == {"error": STATE_REQUIRED}
    assert sp.admin_json("PATCH", "/api/v2/state", raw=b"{}") == (200, {"state": {"only": "this"}})
    assert sp.admin_json("GET", "/api/v2/state") == (200, {"state": {"only": "this"}})
    sp.admin("DELETE", "/api/v2/state")


def test_requires_transitions_and_removes_state_through_the_proxy(simproxy: Simproxy) -> None:
    sp = simproxy
    sp.admin("DELETE", "/api/v2/state")
    sp.admin_json(
        "PUT",
        "/api/v2/simulation",
        simulation(
            _pair("/basket", "empty", transitionsState={"basket": "full", "visits": "1"}),
            _pair("/basket", "full", {"basket": "full"}, removesState=["basket"]),
        ),
    )
    assert sp.proxy("http://shop/basket")[2] == b"empty"
    assert sp.admin_json("GET", "/api/v2/state")[1] == {"state": {"basket": "full", "visits": "1"}}
    assert sp.proxy("http://shop/basket")[2] == b"full"  # requiresState scores higher than the plain pair
    assert sp.admin_json("GET", "/api/v2/state")[1] == {"state": {"visits": "1"}}
    assert sp.proxy("http://shop/basket")[2] == b"empty"
    sp.admin_json("PUT", "/api/v2/state", {"state": {"basket": "other"}})
    assert sp.proxy("http://shop/basket")[2] == b"empty"
    sp.admin("DELETE", "/api/v2/state")


def test_a_state_miss_names_the_state_in_the_502(simproxy: Simproxy) -> None:
    sp = simproxy
    sp.admin_json("PUT", "/api/v2/state", {"state": {"stage": "1"}})
    sp.admin_json("PUT", "/api/v2/simulation", simulation(_pair("/gated", "open", {"stage": "2"})))
    status, _, body = sp.proxy("http://h/gated")
    text = body.decode()
    assert status == 502
    assert 'Whilst simproxy has the following state:\n\n{\n    "stage": "1"\n}' in text
    assert "But it did not match on the following fields:\n\n[state]" in text
    sp.admin("DELETE", "/api/v2/state")


def test_importing_a_sequence_starts_it_at_step_1(simproxy: Simproxy) -> None:
    sp = simproxy
    sp.admin_json("PUT", "/api/v2/state", {"state": {"sequence:1": "3", "other": "kept"}})
    sp.admin_json("PUT", "/api/v2/simulation", simulation(*sequence_pairs(3)))
    assert sp.admin_json("GET", "/api/v2/state")[1] == {"state": {"other": "kept", "sequence:1": "1"}}
    assert [sp.proxy("http://h/next")[2] for _ in range(4)] == [b"step 1", b"step 2", b"step 3", b"step 3"]
    sp.admin("DELETE", "/api/v2/state")


@pytest.mark.slow
def test_concurrent_requests_take_each_step_of_a_sequence_exactly_once(
    simproxy_factory: Any, redis_server: Any
) -> None:
    shared = ("-redis-url", redis_server.url, "-redis-prefix", "sequence-race:", "-workers", "4")
    instances: list[Simproxy] = [simproxy_factory(*shared), simproxy_factory(*shared)]
    steps = 60
    assert instances[0].admin_json("PUT", "/api/v2/simulation", simulation(*sequence_pairs(steps)))[0] == 200
    assert instances[1].admin_json("GET", "/api/v2/state")[1] == {"state": {"sequence:1": "1"}}

    def one(i: int) -> bytes:
        return instances[i % 2].proxy("http://svc/next")[2]

    with ThreadPoolExecutor(max_workers=steps) as pool:
        bodies = Counter(pool.map(one, range(steps)))
    assert bodies == Counter({f"step {i}".encode(): 1 for i in range(1, steps + 1)})
    assert instances[1].admin_json("GET", "/api/v2/state")[1] == {"state": {"sequence:1": str(steps)}}


@pytest.mark.slow
def test_a_state_value_redis_cannot_hold_leaves_the_fleet_s_state_as_it_was(
    simproxy_factory: Any, redis_server: Any
) -> None:
    sp = simproxy_factory("-compat", "hoverfly", "-redis-url", redis_server.url, "-redis-prefix", "surrogate:")
    flip = [_pair("/flip", side, {"side": side}, transitionsState={"side": other}) for side, other in ("ab", "ba")]
    assert sp.admin_json("PUT", "/api/v2/simulation", simulation(*flip))[0] == 200
    sp.admin("PUT", "/api/v2/state", {"state": {"side": "a"}})
    assert sp.proxy("http://svc.test/flip")[2] == b"a"
    assert sp.admin("PUT", "/api/v2/state", raw=b'{"state": {"side": "\\ud800"}}')[0] == 500  # as before the eras
    assert sp.admin_json("GET", "/api/v2/state") == (200, {"state": {"side": "b"}})  # nothing changed
    assert sp.proxy("http://svc.test/flip")[2] == b"b"
    assert sp.admin("DELETE", "/api/v2/state")[0] == 200
    assert sp.admin_json("GET", "/api/v2/state") == (200, {"state": {}})
