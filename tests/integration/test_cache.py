"""The match cache as a user sees it through the API, on one worker and across several."""

from __future__ import annotations

import contextlib
import hashlib
import http.client
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import redis

from simproxy.admin.process.redisserver import RedisServer, free_port
from tests.integration.conftest import Simproxy, pair, simulation
from tests.integration.test_workers import _burst

FULL_EXACT = {
    "path": [{"matcher": "exact", "value": "/preloaded"}],
    "method": [{"matcher": "exact", "value": "GET"}],
    "destination": [{"matcher": "exact", "value": "svc.example.com"}],
    "scheme": [{"matcher": "exact", "value": "http"}],
    "body": [{"matcher": "exact", "value": ""}],
}


def _cache(sp: Simproxy) -> list[dict[str, Any]]:
    status, body = sp.admin_json("GET", "/api/v2/cache")
    assert status == 200
    return list(body["cache"])


def test_hits_and_misses_are_listed_with_hoverflys_shape(simproxy: Simproxy) -> None:
    sp = simproxy
    sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/hit", "yes")))
    assert _cache(sp) == []
    sp.proxy("http://unknown-destination.com")
    sp.proxy("http://svc.example.com/hit")
    entries = {e["key"]: e for e in _cache(sp)}
    miss = entries["0dd6716f7e5f5f06067de145a2933b2d"]  # Hoverfly's own test key for this request
    assert "matchingPair" not in miss and miss["headerMatch"] is False
    assert miss["closestMiss"]["missedFields"] == ["path"]
    assert miss["closestMiss"]["requestMatcher"] == {"path": [{"matcher": "exact", "value": "/hit"}]}
    (hit,) = [e for k, e in entries.items() if k != miss["key"]]
    assert hit["matchingPair"]["response"]["body"] == "yes" and hit["closestMiss"] is None
    metrics = sp.admin("GET", "/metrics")[2].decode().splitlines()
    assert "simproxy_cache_entries 2.0" in metrics


def test_a_cached_miss_is_served_again_word_for_word_and_survives_an_append(simproxy: Simproxy) -> None:
    sp = simproxy
    sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/a", "A")))
    first = sp.proxy("http://h/late", headers={"X-First": "1"})
    assert first[0] == 502
    sp.admin_json("POST", "/api/v2/simulation", simulation(pair("/late", "added")))
    again = sp.proxy("http://h/late", headers={"X-Second": "2"})
    assert again[::2] == first[::2]  # Hoverfly: POST does not flush, the request of the first miss is kept
    sp.admin_json("DELETE", "/api/v2/cache")
    assert sp.proxy("http://h/late")[2] == b"added"


def test_a_put_flushes_and_switching_to_simulate_preloads(simproxy: Simproxy) -> None:
    sp = simproxy
    sp.admin_json(
        "PUT", "/api/v2/simulation", simulation({"request": FULL_EXACT, "response": {"status": 200, "body": "p"}})
    )
    assert _cache(sp) == []  # an admin import does not preload
    sp.admin_json("PUT", "/api/v2/service/mode", {"mode": "simulate"})
    (entry,) = _cache(sp)
    assert entry["matchingPair"]["response"]["body"] == "p"
    assert sp.proxy("http://svc.example.com/preloaded")[2] == b"p"
    sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/other", "o")))
    assert _cache(sp) == []
    sp.admin_json("PUT", "/api/v2/service/mode", {"mode": "capture"})
    sp.admin_json("PUT", "/api/v2/service/mode", {"mode": "simulate"})


def test_disabled_cache(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-disable-cache")
    assert sp.admin_json("GET", "/api/v2/cache") == (500, {"error": "No cache set"})
    assert sp.admin_json("DELETE", "/api/v2/cache") == (500, {"error": "No cache set"})
    sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/a", "A")))
    assert sp.proxy("http://h/missing")[0] == 502
    sp.admin_json("POST", "/api/v2/simulation", simulation(pair("/missing", "now")))
    assert sp.proxy("http://h/missing")[2] == b"now"  # nothing was cached


@pytest.mark.slow
def test_the_cache_is_one_view_across_workers(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-workers", "3", "-cache-size", "50")
    sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/v", "v")))
    assert sp.proxy("http://svc.example.com/missing")[0] == 502  # one worker caches this miss
    listed = _cache(sp)
    assert len([e for e in listed if "matchingPair" not in e]) == 1
    # an append keeps the cached miss (Hoverfly), and on every worker, not just the one that made it
    sp.admin_json("POST", "/api/v2/simulation", simulation(pair("/missing", "appended")))
    assert {status for status, _ in _burst(sp, "/missing", total=300)} == {502}
    assert sp.admin_json("DELETE", "/api/v2/cache") == (200, {"cache": []})
    assert _burst(sp, "/missing", total=300) == Counter({(200, b"appended"): 300})
    # the bound holds fleet-wide
    for i in range(80):
        sp.proxy(f"http://svc.example.com/v?n={i}")
    assert len(_cache(sp)) == 50


BIG = 2_000_000
"""A response body far larger than anything the shared cache should carry per entry."""


def _send(sp: Simproxy, method: str, url: str, body: str | None = None) -> tuple[int, bytes]:
    with contextlib.closing(http.client.HTTPConnection("127.0.0.1", sp.proxy_port, timeout=30)) as conn:
        conn.request(method, url, body=body)
        resp = conn.getresponse()
        return resp.status, resp.read()


def test_a_large_pair_is_not_copied_into_redis_for_each_request_it_answers(simproxy_factory: Any) -> None:
    with RedisServer(port=free_port()) as server:
        sp: Simproxy = simproxy_factory("-workers", "2", "-redis-url", server.url)
        big = "b" * BIG
        get_only = [{"matcher": "exact", "value": "GET"}]
        assert sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/big", big, method=get_only)))[0] == 200
        hosts = [f"http://h{i}.example.com/big" for i in range(20)]  # 20 distinct requests (and cache keys)
        with ThreadPoolExecutor(max_workers=8) as pool:
            hits = list(pool.map(lambda url: _send(sp, "GET", url), hosts))
            # POSTs miss on the method only: each 502 quotes the whole large response, as Hoverfly's does
            misses = list(pool.map(lambda n: _send(sp, "POST", "http://svc.example.com/big", f"n={n}"), range(4)))
        assert hits == [(200, big.encode())] * 20
        assert all(status == 502 and big.encode() in body for status, body in misses)

        listed = _cache(sp)
        assert (
            sorted(e["matchingPair"]["response"]["body"] == big for e in listed if "matchingPair" in e) == [True] * 20
        )
        closest = [e["closestMiss"] for e in listed if "matchingPair" not in e]
        assert [(c["missedFields"], c["response"]["body"] == big) for c in closest] == [(["method"], True)] * 4

        client = redis.Redis.from_url(server.url)
        (cache_key,) = [k for k in client.scan_iter(match="*cache") if client.type(k) == b"hash"]
        mirrored = sum(client.hstrlen(cache_key, field) for field in client.hkeys(cache_key))
        assert mirrored < BIG // 20, mirrored  # 24 entries, and not one copy of the pair among them
        client.close()

        # a miss whose text was too long to mirror is worked out again by any worker, word for word
        again = Counter(_send(sp, "POST", "http://svc.example.com/big", "n=0") for _ in range(20))
        assert again == Counter({misses[0]: 20})


def test_a_request_repeated_byte_for_byte_follows_a_new_strategy_and_a_new_simulation(simproxy: Simproxy) -> None:
    """A header matcher keeps the result out of the match cache, and a request that comes again in the
    same bytes is matched as one the worker has seen: a new strategy or simulation must still count."""
    sp = simproxy
    key = {"X-Key": [{"matcher": "exact", "value": "v"}]}
    weaker = pair("/x", "first declared", headers=key)
    stronger = pair("/x", "strongest", headers=key, method=[{"matcher": "exact", "value": "GET"}])
    assert sp.admin("PUT", "/api/v2/simulation", simulation(weaker, stronger))[0] == 200

    def answers(count: int = 4) -> list[str]:
        conn = http.client.HTTPConnection("127.0.0.1", sp.proxy_port, timeout=10)
        bodies = []
        for _ in range(count):  # one connection, the same bytes each time
            conn.request("GET", "http://api.test/x", headers={"X-Key": "v"})
            bodies.append(conn.getresponse().read().decode())
        conn.close()
        return bodies

    assert answers() == ["strongest"] * 4
    first = {"mode": "simulate", "arguments": {"matchingStrategy": "first"}}
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", first)[0] == 200
    assert answers() == ["first declared"] * 4
    assert sp.admin("PUT", "/api/v2/simulation", simulation(pair("/x", "replaced", headers=key)))[0] == 200
    assert answers() == ["replaced"] * 4
    assert _cache(sp) == []  # none of it was the match cache's doing


def test_a_request_repeated_byte_for_byte_is_cached_again_after_the_cache_is_flushed(simproxy: Simproxy) -> None:
    """The worker answers the same bytes again without a lookup; a flushed cache must still see the
    next such request, match it, and list it again, as Hoverfly's does."""
    sp = simproxy
    globbed = {"request": {"path": [{"matcher": "glob", "value": "/g*"}]}, "response": {"status": 200, "body": "g"}}
    assert sp.admin("PUT", "/api/v2/simulation", simulation(globbed))[0] == 200
    strongest = {"mode": "simulate", "arguments": {"matchingStrategy": "strongest"}}  # the one that caches
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", strongest)[0] == 200
    conn = http.client.HTTPConnection("127.0.0.1", sp.proxy_port, timeout=10)

    def answers(count: int) -> list[bytes]:
        bodies = []
        for _ in range(count):  # one connection, the same bytes each time
            conn.request("GET", "http://api.test/go")
            bodies.append(conn.getresponse().read())
        return bodies

    assert answers(4) == [b"g"] * 4
    (entry,) = _cache(sp)
    assert sp.admin("DELETE", "/api/v2/cache")[0] == 200
    assert _cache(sp) == []
    assert answers(3) == [b"g"] * 3
    assert [e["key"] for e in _cache(sp)] == [entry["key"]]
    conn.close()


def test_requests_that_differ_only_in_their_query_order_are_one_entry(simproxy: Simproxy) -> None:
    sp = simproxy
    sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/p", "P")))
    for query in ("b=2&a=1", "a=1&b=2", "b=2&a=1"):
        assert sp.proxy(f"http://svc.example.com/p?{query}")[2] == b"P"
    hoverflys_key = hashlib.md5(b"svc.example.com/pGETa=1&b=2").hexdigest()  # destination, path, method, query
    assert [e["key"] for e in _cache(sp)] == [hoverflys_key]
    assert "simproxy_cache_entries 1.0" in sp.admin("GET", "/metrics")[2].decode().splitlines()


def test_an_answer_given_again_keeps_its_entry_the_most_recently_used(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-cache-size", "2")
    sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/a", "A"), pair("/b", "B"), pair("/c", "C")))
    # the same bytes a third time are answered again without a lookup, until an entry is added:
    # the last /b is such an answer, after /a looked up its entry again
    for path in ("/a", "/a", "/a", "/b", "/b", "/b", "/a", "/b", "/c"):
        assert sp.proxy(f"http://svc.example.com{path}")[2] == path[1:].upper().encode()
    listed = {e["matchingPair"]["response"]["body"] for e in _cache(sp)}
    assert listed == {"B", "C"}  # /a was the least recently used


def test_a_query_in_another_order_is_answered_from_the_entry_of_the_first(simproxy: Simproxy) -> None:
    """Hoverfly's cache key sorts a query's values: the second request is answered with the pair
    the first matched, though matching it alone finds none (its values joined in its own order)."""
    sp = simproxy
    query = {"a": [{"matcher": "exact", "value": "1;2"}]}
    sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/p", "P", query=query)))
    assert sp.proxy("http://svc.example.com/p?a=1&a=2")[::2] == (200, b"P")
    assert sp.proxy("http://svc.example.com/p?a=2&a=1")[::2] == (200, b"P")
    sp.admin_json("DELETE", "/api/v2/cache")
    assert sp.proxy("http://svc.example.com/p?a=2&a=1")[0] == 502


def test_switching_to_simulate_preloads_over_a_miss_kept_for_the_same_request(simproxy: Simproxy) -> None:
    sp = simproxy
    sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/other", "o")))
    assert sp.proxy("http://svc.example.com/preloaded")[0] == 502  # kept as a miss
    exact_pair = {"request": FULL_EXACT, "response": {"status": 200, "body": "p"}}
    sp.admin_json("POST", "/api/v2/simulation", simulation(exact_pair))  # an append keeps the cache
    assert sp.proxy("http://svc.example.com/preloaded")[0] == 502  # as in Hoverfly: the miss kept
    sp.admin_json("PUT", "/api/v2/service/mode", {"mode": "simulate"})  # preloads the exact pair
    assert sp.proxy("http://svc.example.com/preloaded")[::2] == (200, b"p")
    bodies = [e["matchingPair"]["response"]["body"] for e in _cache(sp) if "matchingPair" in e]
    assert bodies == ["p"] and len(_cache(sp)) == 1
