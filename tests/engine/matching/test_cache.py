"""The match cache: Hoverfly's key, what is cacheable, eager preloading, and the LRU."""

from __future__ import annotations

import hashlib

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simproxy.engine.matching.cache import (
    MIRRORED_MISS_LIMIT,
    CacheEntry,
    MatchCache,
    cache_key,
    canonical_query,
    dump_entry,
    fast_key,
    key_of,
    listing,
    load_entry,
    plain,
    preload_entries,
)
from simproxy.engine.matching.scoring import compile_simulation, match
from simproxy.engine.modes.failures import miss_text
from simproxy.engine.simulation.codec import encode_pair, encode_response
from simproxy.engine.wire.parse import Arrival, build_request
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import plain_error
from tests.engine.conftest import REGISTRY, compiled, exact, glob, m, pair, request, simulation


def test_key_of_hoverflys_functional_test() -> None:
    # GET http://unknown-destination.com -> md5("unknown-destination.com" + "/" + "GET")
    assert cache_key(request("/", destination="unknown-destination.com"), False) == "0dd6716f7e5f5f06067de145a2933b2d"


def test_key_parts_and_webserver_mode() -> None:
    req = request("/p", "POST", "Host.com:80", query="b=2&a=1&a=0", body="x")
    expected = hashlib.md5(b"host.com:80/pPOSTa=0&a=1&b=2x").hexdigest()
    assert cache_key(req, False) == expected
    assert cache_key(req, True) == hashlib.md5(b"/pPOSTa=0&a=1&b=2x").hexdigest()


def test_headers_and_scheme_are_not_part_of_the_key() -> None:
    a = request("/p", headers={"X-A": ["1"]}, scheme="http")
    b = request("/p", headers={"X-A": ["2"]}, scheme="https")
    assert cache_key(a, False) == cache_key(b, False)


def test_form_data_is_part_of_the_key() -> None:
    form = request("/f", "POST", headers={"Content-Type": ["application/x-www-form-urlencoded"]}, body="b=2&a=1")
    expected = hashlib.md5(b'example.com{"a":["1"],"b":["2"]}/fPOSTb=2&a=1').hexdigest()
    assert cache_key(form, False) == expected


@pytest.mark.parametrize(
    ("body", "hoverflys_key"),
    [  # keys Hoverfly v1.12.10 listed for POST http://example.com/f with these form bodies
        ("b=2&a=1", "dfd0177a7e5db9650beb784c309d4f7b"),
        ("a=%3C", "a86f958a160713cd7876d0e7d6880af7"),  # Go's json.Marshal escapes < > &
        ("a=%F2", "28c2a88d2099ab9a6e32a4613a4c5e52"),  # a byte that is not UTF-8: U+FFFD
        ("a=%3C%26%F2&b=x", "a21b0ec8c16cb79b7d8698887df27ef4"),
        ("%F2x=1&%E2%80%A8=%3E", "c9bdf7f2492f3bcc1405a3d1295b5d3d"),
    ],
)
def test_the_key_of_a_form_is_hoverflys(body: str, hoverflys_key: str) -> None:
    headers = [(b"Host", b"example.com"), (b"Content-Type", b"application/x-www-form-urlencoded")]
    req = build_request("POST", b"http://example.com/f", headers, body.encode(), Arrival())
    assert cache_key(req, False) == hoverflys_key


def test_canonical_query_sorts_names_then_values() -> None:
    assert canonical_query({"b": ["2"], "a": ["z", "y"]}) == "a=y&a=z&b=2"
    assert canonical_query({}) == ""


def test_hits_are_cacheable_unless_headers_or_state_decide() -> None:
    sim = compiled({"path": [exact("/a")]}, {"path": [exact("/b")], "headers": {"X": [exact("1")]}})
    assert match(sim, request("/a"), {}).cacheable
    # the winner has header matchers
    assert not match(sim, request("/b", headers={"X": ["1"]}), {}).cacheable
    # a pair with headers matched all but its headers: the outcome depends on them
    both = compiled({"path": [exact("/a")]}, {"path": [exact("/a")], "headers": {"X": [exact("1")]}})
    assert match(both, request("/a"), {}).pair is not None
    assert not match(both, request("/a"), {}).cacheable
    stateful = compiled({"path": [exact("/a")]}, {"path": [exact("/a")], "requiresState": {"s": "1"}})
    assert not match(stateful, request("/a"), {}).cacheable


def test_misses_are_cacheable_unless_a_pair_missed_only_on_headers_or_state() -> None:
    sim = compiled({"path": [exact("/a")], "headers": {"X": [exact("1")]}}, {"path": [exact("/b")]})
    assert match(sim, request("/c"), {}).cacheable
    assert not match(sim, request("/a", headers={"X": ["2"]}), {}).cacheable
    state = compiled({"path": [exact("/a")], "requiresState": {"s": "1"}})
    assert not match(state, request("/a"), {"s": "2"}).cacheable


def test_first_strategy_hits_are_never_cacheable() -> None:
    sim = compiled({"path": [exact("/a")]})
    assert not match(sim, request("/a"), {}, "first").cacheable
    assert match(sim, request("/b"), {}, "first").cacheable


def test_preload_takes_only_fully_exact_pairs() -> None:
    full = {"body": [exact("")], "destination": [exact("d.com")], "method": [exact("GET")], "path": [exact("/p")],
            "scheme": [exact("http")]}  # fmt: skip
    sim = compiled(
        full,
        {**full, "query": {"q": [exact("1")], "r": [m("array", ["a", "b"])]}},
        {**full, "path": [glob("/p*")]},
        {**full, "headers": {"X": [exact("1")]}},
        {**full, "requiresState": {"s": "1"}},
        {key: value for key, value in full.items() if key != "scheme"},
        {**full, "query": {"q": [glob("1")]}},
    )
    entries = preload_entries(sim, webserver=False)
    assert [e.pair.index for e in entries if e.pair] == [0, 1]
    assert entries[0].key == cache_key(request("/p", destination="d.com"), False)
    assert entries[1].key == cache_key(request("/p", destination="d.com", query="q=1&r=a&r=b"), False)


def test_lru_keeps_the_most_recently_used() -> None:
    cache = MatchCache(2)
    sim = compiled({"path": [exact("/a")]})
    for key in ("k1", "k2"):
        cache.put(CacheEntry(key, sim.pairs[0]))
    assert cache.get("k1") is not None
    cache.put(CacheEntry("k3", sim.pairs[0]))
    assert (cache.get("k1") is not None, cache.get("k2"), cache.get("k3") is not None) == (True, None, True)
    assert set(cache.take_pending()) == {"k1", "k2", "k3"}
    assert cache.take_pending() == {}
    cache.reset(("lineage", 1))
    assert len(cache) == 0 and cache.generation == ("lineage", 1)


def test_a_disabled_cache_keeps_nothing() -> None:
    cache = MatchCache(10, enabled=False)
    cache.put(CacheEntry("k", None))
    assert cache.get("k") is None and not cache.pending


def test_mirrored_entries_load_only_into_their_generation() -> None:
    from simproxy.engine.matching.scoring import compile_simulation

    sim = compile_simulation(simulation(pair({"path": [exact("/a")]}, body="A")), REGISTRY)
    raw = dump_entry(CacheEntry("k", sim.pairs[0]), ("L", 0))
    loaded = load_entry(raw, sim, ("L", 0))
    assert loaded is not None and loaded.pair is sim.pairs[0]
    assert load_entry(raw, sim, ("L", 1)) is None
    assert load_entry(raw, sim, ("other", 0)) is None


def test_lookup_finds_entries_by_fast_key_and_by_md5_for_other_workers_entries() -> None:
    sim = compiled({"path": [exact("/p")]})
    cache = MatchCache(10)
    first = request("/p", query="b=2&a=1")
    fast, key, entry = cache.lookup(first, False)
    assert (key, entry) == (cache_key(first, False), None)
    cache.put(CacheEntry(key, sim.pairs[0]), fast=fast)
    assert cache.lookup(first, False) == (fast, "", cache.get(key))  # found without hashing
    reordered = request("/p", query="a=1&b=2")  # another fast key, the same md5 key
    _, md5, found = cache.lookup(reordered, False)
    assert md5 == key and found is not None and found.pair is sim.pairs[0]
    other_workers = request("/q")
    cache.put(CacheEntry(cache_key(other_workers, False), None), mirror=False)  # loaded from the store
    assert cache.lookup(other_workers, False)[2] is not None
    assert cache.lookup(request("/q", headers={"Content-Type": ["text/plain"]}), False)[2] is not None
    form = request("/q", "POST", headers={"Content-Type": ["application/x-www-form-urlencoded"]}, body="a=1")
    plain = request("/q", "POST", headers={"Content-Type": ["text/plain"]}, body="a=1")
    assert fast_key(form, False) != fast_key(plain, False)  # their md5 keys differ too (form data)
    assert cache_key(form, False) != cache_key(plain, False)


def test_a_lone_workers_cache_holds_plain_requests_entries_by_fast_key_and_lists_them_by_md5() -> None:
    sim = compiled({"path": [exact("/p")]})
    cache = MatchCache(2, mirrored=False)
    first, second, other = request("/p", query="a=1"), request("/p", query="a=2"), request("/q")
    assert all(plain(r) for r in (first, second, other))
    fast, key, entry = cache.lookup(first, False)
    assert (key, entry) == ("", None)  # nothing is held by md5 key: no md5 worked out
    cache.put(CacheEntry("", sim.pairs[0]), fast=fast)
    found = cache.lookup(first, False)[2]
    assert found is not None and found.pair is sim.pairs[0] and cache.recent == fast
    assert cache.lookup(second, False)[1:] == ("", None)
    cache.put(CacheEntry("", sim.pairs[0]), fast=fast_key(second, False))
    assert [e.key for e in cache.entries()] == [cache_key(first, False), cache_key(second, False)]
    assert not cache.pending  # nothing to mirror
    cache.touch(fast)  # as an answer given again does: the first is the most recently used
    cache.put(CacheEntry("", None), fast=fast_key(other, False))  # the capacity is 2: the second goes
    assert cache.lookup(second, False)[2] is None and cache.lookup(first, False)[2] is not None
    assert [e.key for e in cache.entries()] == [cache_key(other, False), cache_key(first, False)]
    cache.reset(("lineage", 1))
    assert cache.entries() == [] and cache.lookup(first, False)[1:] == ("", None)


@pytest.mark.parametrize(
    ("held", "other"),
    [
        ("a=1", "%61=1"),  # an escaped name
        ("a=", "a"),  # a bare name
        ("a=1", "./a=1"),  # Hoverfly's legacy ./ prefix
        ("a=1&a=2", "a=2&a=1"),  # values in another order (Hoverfly's md5 sorts them)
        ("a=1&b=2", "b=2&a=1"),
    ],
)
def test_a_request_with_another_fast_key_but_the_same_md5_shares_the_entry(held: str, other: str) -> None:
    """As in Hoverfly, whose cache is keyed by md5 alone: the result kept for one is the other's,
    even where matching the other would have given another (values in another order)."""
    sim = compiled({"path": [exact("/p")]})
    cache = MatchCache(10, mirrored=False)
    first, second = request("/p", query=held), request("/p", query=other)
    assert cache_key(first, False) == cache_key(second, False) and fast_key(first, False) != fast_key(second, False)
    fast, key, _ = cache.lookup(first, False)
    cache.put(CacheEntry(key, sim.pairs[0]), fast=fast)
    cache.put(CacheEntry("", None), fast=fast_key(request("/z"), False))  # another, plain, after it
    second_fast, md5, found = cache.lookup(second, False)
    assert md5 == cache_key(second, False) and found is not None and found.pair is sim.pairs[0]
    assert cache.lookup(second, False) == (second_fast, "", found)  # then by its fast key
    assert len(cache.entries()) == 2


def test_plain_entries_held_after_a_look_by_md5_are_found_by_the_next() -> None:
    sim = compiled({"path": [exact("/p")]})
    cache = MatchCache(3, mirrored=False)
    for value in range(1, 10):  # more plain entries than the capacity, between two looks by md5
        cache.put(CacheEntry("", sim.pairs[0]), fast=fast_key(request("/p", query=f"a={value}"), False))
        escaped = request("/p", query=f"%61={value}")
        assert cache.lookup(escaped, False)[2] is not None  # the entry of a={value}
        assert cache.lookup(request("/p", query=f"%61={value - 3}"), False)[2] is None  # evicted
    assert [e.key for e in cache.entries()] == [cache_key(request("/p", query=f"a={v}"), False) for v in (7, 8, 9)]


_TEXT_PLAIN = {"Content-Type": ["text/plain"]}


@pytest.mark.parametrize(
    ("first", "second"),
    [  # Hoverfly's md5 runs destination, path, method, query and body together
        (request("/p", "POST", query="x=1"), request("/p", "POST", headers=_TEXT_PLAIN, body="x=1")),
        (request("/p", query="x=GET"), request("/pGETx=")),
        (request("/x", "UNLOCK"), request("/xUN", "LOCK")),
        (request("/x", "PROPPATCH"), request("/xPROP", "PATCH")),
        (request("a://b", destination="h"), request("//b", destination="ha:")),  # a target httptools takes
    ],
)
def test_requests_whose_fields_run_together_into_one_md5_share_the_entry(
    first: RequestDetails, second: RequestDetails
) -> None:
    """The cache holds a request's entry by fast key only where no other fast key has its md5."""
    assert cache_key(first, False) == cache_key(second, False) and fast_key(first, False) != fast_key(second, False)
    for one, other in ((first, second), (second, first)):
        cache = MatchCache(10, mirrored=False)
        fast, key, _ = cache.lookup(one, False)
        cache.put(CacheEntry("" if plain(one) else key or cache_key(one, False), None), fast=fast)  # as _remember
        assert cache.lookup(other, False)[2] is not None
        assert len(cache.entries()) == 1


def test_what_a_plain_request_is() -> None:
    assert all(plain(r) for r in (request("/item/1", query="u=1.2"), request("/"), request("/a", "DELETE", query="=")))
    not_plain = (
        request("/p", "POST", body="x"),  # a body
        request("/Item"),  # a capital in the path
        request("/p", "LOCK"),  # a method another ends with
        request("/p", destination="h/x"),  # a destination with /
        request("*x"),  # a path without /
        request("/p", query="a=1&b=2"),
        request("/p", query="a"),
        request("/p", query="a=%41"),
        request("/p", query="a=b+c"),
        request("/p", query="./a=1"),
    )
    assert not any(plain(r) for r in not_plain)


def test_a_preloaded_entry_takes_the_place_of_a_plain_one_with_its_md5() -> None:
    """Hoverfly's preload overwrites what its cache held under the pair's md5 key."""
    sim = compiled({"path": [exact("/x")]})
    cache = MatchCache(10, mirrored=False)
    req = request("/x")
    fast, _, _ = cache.lookup(req, False)
    cache.put(CacheEntry("", None), fast=fast)  # a miss, kept before the pair came
    cache.put(CacheEntry("", None), fast=fast_key(request("/y"), False))
    cache.put(CacheEntry(cache_key(req, False), sim.pairs[0]))  # as preload_entries makes it
    found = cache.lookup(req, False)[2]
    assert found is not None and found.pair is sim.pairs[0]
    assert [(e.key, e.pair) for e in cache.entries()] == [
        (cache_key(request("/y"), False), None),
        (cache_key(req, False), sim.pairs[0]),
    ]


def test_of_two_entries_with_one_md5_key_the_most_recently_used_is_listed_in_its_place() -> None:
    sim = compiled({"path": [exact("/p")]}, {"path": [exact("/q")]})
    cache = MatchCache(3, mirrored=False)
    first, reordered, other = request("/p", query="b=2&a=1"), request("/p", query="a=1&b=2"), request("/q")
    cache.put(CacheEntry("", sim.pairs[0]), fast=fast_key(first, False))
    cache.put(CacheEntry("", sim.pairs[1]), fast=fast_key(other, False))
    cache.put(CacheEntry("", None), fast=fast_key(reordered, False))
    assert [(e.key, e.pair) for e in cache.entries()] == [
        (cache_key(other, False), sim.pairs[1]),
        (cache_key(first, False), None),
    ]


def test_a_lone_workers_cache_finds_entries_held_by_md5_while_it_holds_any() -> None:
    """A preloaded pair's entry has no request, only its md5 key: a request finds it by md5 once,
    then by its fast key; once no entry is held by md5 key, a request that finds nothing by its
    fast key is not hashed."""
    sim = compiled({"path": [exact("/p")]})
    cache = MatchCache(2, mirrored=False)
    preloaded = request("/p")
    cache.put(CacheEntry(cache_key(preloaded, False), sim.pairs[0]))  # as preload_entries makes it
    fast, key, found = cache.lookup(preloaded, False)
    assert key == cache_key(preloaded, False) and found is not None and found.pair is sim.pairs[0]
    assert cache.lookup(preloaded, False) == (fast, "", found)  # found again by its fast key
    assert cache.lookup(request("/x"), False)[1] == cache_key(request("/x"), False)  # looked for by md5
    for path in ("/x", "/y"):
        cache.put(CacheEntry("", None), fast=fast_key(request(path), False))
    assert cache.lookup(preloaded, False) == (fast, "", None)  # evicted, and nothing held by md5
    assert [e.key for e in cache.entries()] == [cache_key(request("/x"), False), cache_key(request("/y"), False)]


_CONTENT_TYPES = (
    None,
    "application/x-www-form-urlencoded",
    "Application/X-WWW-Form-Urlencoded; charset=utf-8",
    "text/plain",
)
_TEXT = st.text(alphabet="ab=&%2F+./é?#", max_size=12)


@given(
    method=st.sampled_from(("GET", "POST", "PUT", "PATCH", "DELETE")),
    path=_TEXT,
    query=_TEXT,
    body=_TEXT,
    content_type=st.sampled_from(_CONTENT_TYPES),
    host=st.sampled_from(("svc.example.com", "Svc.Example.com:8080")),
    webserver=st.booleans(),
)
def test_the_md5_key_is_a_function_of_the_fast_key(
    method: str, path: str, query: str, body: str, content_type: str | None, host: str, webserver: bool
) -> None:
    """What lets a lone worker's cache list by md5 the entries it holds by fast key; and, for a
    plain request, the fast key holds exactly what its md5 is made of (so no other plain request,
    one with a method as HTTP spells them, has its md5 under another fast key)."""
    headers = [(b"Host", host.encode())] + ([(b"Content-Type", content_type.encode())] if content_type else [])
    url = f"/{path}?{query}".encode()
    req = build_request(method, url, headers, body.encode(), Arrival(webserver=webserver))
    fast = fast_key(req, webserver)
    assert key_of(fast) == cache_key(req, webserver)
    if plain(req):
        assert fast[3] == (canonical_query(req.query) if req.query else "") and fast[4:] == ("", None)


def test_a_request_whose_result_was_not_kept_skips_the_md5_until_an_entry_is_added() -> None:
    """Hoverfly does not cache a result that depends on headers; such a request's next lookup can
    only find nothing, until any entry is added (it may sit under the same md5 key)."""
    sim = compiled({"path": [exact("/p")]})
    cache = MatchCache(10)
    first = request("/p", query="b=2&a=1")
    fast, key, _ = cache.lookup(first, False)
    cache.unkept(fast)
    assert cache.lookup(first, False) == (fast, "", None)  # decided by the fast key: no md5
    reordered = request("/p", query="a=1&b=2")  # another fast key, the same md5 key
    _, md5, _ = cache.lookup(reordered, False)
    assert md5 == key
    cache.put(CacheEntry(md5, sim.pairs[0]), fast=fast_key(reordered, False))
    _, md5_again, found = cache.lookup(first, False)
    assert md5_again == key and found is not None and found.pair is sim.pairs[0]
    cache.unkept(fast_key(request("/other"), False))
    cache.put(CacheEntry(cache_key(request("/other"), False), None), mirror=False)  # another worker's
    assert cache.lookup(request("/other"), False)[2] is not None
    cache.unkept(fast)
    cache.reset(("lineage", 1))
    assert cache.lookup(first, False)[1] == key  # a new generation forgets what was not kept


def test_a_dump_encodes_each_pair_view_once_and_loads_back() -> None:
    sim = compiled({"path": [exact("/p")]})
    cache = MatchCache(10)
    cache.reset(("lineage", 1))
    entry = CacheEntry("k", sim.pairs[0])
    assert cache.dump(entry) == dump_entry(entry, ("lineage", 1))
    loaded = load_entry(cache.dump(entry), sim, ("lineage", 1))
    assert loaded is not None and loaded.pair is sim.pairs[0]


def test_the_mirrored_form_names_pairs_by_index_and_the_listing_rebuilds_them() -> None:
    big = "b" * 1_000_000
    big_pair = pair({"path": [exact("/big")], "method": [exact("GET")]}, body=big)
    sim = compile_simulation(simulation(pair({"path": [exact("/small")]}), big_pair), REGISTRY)
    hit = CacheEntry("hit", sim.pairs[1])
    missed = request("/big", "POST")
    result = match(sim, missed, {}, "strongest", False)
    assert result.closest is not None and result.closest.index == 1
    miss = CacheEntry("miss", None, plain_error(502, miss_text(missed, result.closest), outcome="miss"), result.closest)
    assert miss.miss is not None and len(miss.miss.body) > MIRRORED_MISS_LIMIT  # it quotes the big response
    raws = [dump_entry(hit, ("L", 0)), dump_entry(miss, ("L", 0))]
    assert all(len(raw) < 1_000 for raw in raws)  # not a copy of the pair each
    # another generation's entry is left out
    views = orjson.loads(orjson.dumps(listing([*raws, dump_entry(hit, ("L", 1))], sim, ("L", 0))))
    assert views == [
        {"key": "hit", "matchingPair": encode_pair(sim.pairs[1].pair), "headerMatch": False, "closestMiss": None},
        {
            "key": "miss",
            "headerMatch": False,
            "closestMiss": {
                "response": encode_response(sim.pairs[1].pair.response),
                "requestMatcher": {"path": [{"matcher": "exact", "value": "/big"}],
                                   "method": [{"matcher": "exact", "value": "GET"}]},
                "missedFields": ["method"],
            },
        },
    ]  # fmt: skip
    loaded = load_entry(raws[0], sim, ("L", 0))
    assert loaded is not None and loaded.pair is sim.pairs[1]
    assert load_entry(raws[1], sim, ("L", 0)) is None  # this worker works the long miss out itself


def test_a_short_miss_is_mirrored_word_for_word_and_served_as_a_miss() -> None:
    sim = compiled({"path": [exact("/a")]})
    missed = request("/b")
    result = match(sim, missed, {}, "strongest", False)
    wire = plain_error(502, miss_text(missed, result.closest), outcome="miss")
    loaded = load_entry(dump_entry(CacheEntry("k", None, wire, result.closest), ("L", 0)), sim, ("L", 0))
    assert loaded is not None and loaded.miss is not None and loaded.closest == result.closest
    assert (loaded.miss.body, loaded.miss.outcome) == (wire.body, "miss")


def test_an_entry_naming_a_pair_the_simulation_lacks_is_ignored() -> None:
    two = compiled({"path": [exact("/a")]}, {"path": [exact("/b")]})
    one = compiled({"path": [exact("/a")]})
    raw = dump_entry(CacheEntry("k", two.pairs[1]), ("L", 0))
    assert load_entry(raw, one, ("L", 0)) is None and listing([raw], one, ("L", 0)) == []


_LISTED_REQUESTS = (
    request("/p"),
    request("/p", query="a=1"),
    request("/p", query="b=2&a=1"),
    request("/p", query="a=1&b=2"),
    request("/P"),
    request("/q", method="POST", body="x=1"),
    request("/q", method="POST", query="x=1"),
)


@given(
    st.lists(st.tuples(st.sampled_from(_LISTED_REQUESTS), st.sampled_from(("fast", "md5", "lookup"))), max_size=30),
    st.integers(1, 4),
)
def test_the_count_of_a_lone_workers_cache_is_the_length_of_its_listing(
    steps: list[tuple[RequestDetails, str]], capacity: int
) -> None:
    """``/metrics`` counts the entries ``GET /api/v2/cache`` lists, however they are held: by fast
    key, by md5 key (a preload's, a request that is not plain), or both for one md5 key."""
    cache = MatchCache(capacity, mirrored=False)
    for req, how in steps:
        if how == "lookup":
            cache.lookup(req, False)  # touches what it finds, as a request does
        elif how == "md5" or not plain(req):
            cache.put(CacheEntry(cache_key(req, False), None), fast=None if how == "md5" else fast_key(req, False))
        else:
            cache.put(CacheEntry("", None), fast=fast_key(req, False))
        assert cache.listed() == len(cache.entries())
