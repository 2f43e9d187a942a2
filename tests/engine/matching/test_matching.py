"""Scoring, strategies and the closest miss (spec §3.2-3.6, §4.2-4.4, §6.2)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simproxy.engine.matching.scoring import (
    CompiledSimulation,
    MatchResult,
    Strategy,
    closest_miss,
    evaluate,
    match,
)
from simproxy.engine.wire.request import RequestDetails
from tests.engine.conftest import closest_index, compiled, exact, glob, hit, m, regex, request, run
from tests.engine.matching.reference import full_scan

ALL_FIELDS = ["body", "destination", "path", "method", "headers", "queries", "state"]


def score(
    matcher_set: dict[str, Any],
    req: RequestDetails,
    state: dict[str, str] | None = None,
    webserver: bool = False,
) -> tuple[int, list[str]]:
    """(points, missed fields) of one pair against one request."""
    return evaluate(compiled(matcher_set).pairs[0], req, state or {}, webserver)


# ---------------------------------------------------------------------------------------------
# points


@pytest.mark.parametrize(
    ("matcher_set", "req", "expected"),
    [
        # an empty request matcher scores 1, from the absent-query bonus
        ({}, request(), 1),
        ({"path": [exact("/a")]}, request("/a"), 3),
        ({"path": [m("Exact", "/a")]}, request("/a"), 2),
        ({"path": [m("", "/a")]}, request("/a"), 2),
        ({"path": [glob("/a*")]}, request("/a"), 2),
        ({"path": [regex("a")]}, request("/a"), 2),
        ({"path": [exact("/a"), glob("/*"), regex("^/")]}, request("/a"), 5),
        ({"path": [], "method": [], "destination": [], "body": []}, request("/a"), 1),
        (
            {"path": [exact("/a")], "method": [exact("GET")], "destination": [exact("example.com")]},
            request("/a"),
            7,
        ),
        ({"body": [exact("hello")]}, request(body="hello"), 3),
        ({"headers": {"X-A": [exact("1")]}}, request(headers={"X-A": ["1"]}), 3),
        ({"headers": {"X-A": [exact("1")], "X-B": [glob("*")]}}, request(headers={"X-A": ["1"], "X-B": ["2"]}), 4),
        # a query map earns its matchers' points but no bonus
        ({"query": {"a": [exact("1")]}}, request(query="a=1"), 2),
        ({"query": {"a": [exact("1")], "b": [glob("*")]}}, request(query="a=1&b=2"), 3),
        ({"query": {}}, request(), 1),
        # one point per satisfied state key
        ({"requiresState": {"a": "1", "b": "2"}}, request(), 3),
        # scheme is never evaluated
        ({"scheme": [exact("https")]}, request(scheme="http"), 1),
        ({"scheme": [exact("http")]}, request(scheme="http"), 1),
    ],
)
def test_points_of_a_hit(matcher_set: dict[str, Any], req: RequestDetails, expected: int) -> None:
    assert score(matcher_set, req, {"a": "1", "b": "2"}) == (expected, [])


@pytest.mark.parametrize(
    ("matcher_set", "req", "expected", "missed"),
    [
        # matchers that match still earn points when the list or another field fails
        ({"path": [exact("/a"), exact("/b")]}, request("/a"), 3, ["path"]),
        ({"path": [exact("/a"), glob("*x")]}, request("/a"), 3, ["path"]),
        ({"path": [exact("/a")], "method": [exact("POST")]}, request("/a"), 3, ["method"]),
        ({"path": [exact("/b")], "method": [exact("GET")]}, request("/a"), 3, ["path"]),
        # a missing header fails the field and earns nothing; the others still count
        (
            {"headers": {"X-A": [exact("1")], "X-Gone": [exact("1")]}},
            request(headers={"X-A": ["1"]}),
            3,
            ["headers"],
        ),
        ({"headers": {"X-A": [exact("2")]}}, request(headers={"X-A": ["1"]}), 1, ["headers"]),
        # `query: {}` with parameters misses without its point
        ({"query": {}}, request(query="a=1"), 0, ["queries"]),
        ({"query": {"a": [exact("1")], "b": [exact("1")]}}, request(query="a=1"), 2, ["queries"]),
        # state: +1 per key that holds, even when another fails
        ({"requiresState": {"a": "1", "b": "x"}}, request(), 2, ["state"]),
        ({"requiresState": {"gone": ""}}, request(), 1, ["state"]),
    ],
)
def test_points_of_a_miss(matcher_set: dict[str, Any], req: RequestDetails, expected: int, missed: list[str]) -> None:
    assert score(matcher_set, req, {"a": "1", "b": "2"}) == (expected, missed)


def test_destination_is_skipped_in_webserver_mode() -> None:
    matcher_set = {"destination": [exact("other.com")], "path": [exact("/a")]}
    assert score(matcher_set, request("/a")) == (3, ["destination"])
    assert score(matcher_set, request("/a"), webserver=True) == (3, [])
    matching = {"destination": [exact("example.com")], "path": [exact("/a")]}
    assert score(matching, request("/a")) == (5, [])
    assert score(matching, request("/a"), webserver=True) == (3, [])


def test_missed_fields_are_reported_in_evaluation_order() -> None:
    everything_wrong = {
        "requiresState": {"k": "v"},
        "query": {"q": [exact("v")]},
        "headers": {"X-H": [exact("v")]},
        "method": [exact("PUT")],
        "path": [exact("/nope")],
        "destination": [exact("nope.com")],
        "body": [exact("nope")],
        "scheme": [exact("nope")],
    }
    assert score(everything_wrong, request()) == (0, ALL_FIELDS)
    assert score(everything_wrong, request(), webserver=True) == (0, [f for f in ALL_FIELDS if f != "destination"])
    sim = compiled(everything_wrong)
    result = run(sim, request())
    assert result.closest is not None
    assert result.closest.missed_fields == tuple(ALL_FIELDS)


# ---------------------------------------------------------------------------------------------
# strongest


def test_the_highest_score_wins_wherever_it_is() -> None:
    sim = compiled(
        {"path": [glob("/a*")]},
        {"path": [exact("/a")], "method": [exact("GET")]},
        {"path": [exact("/a")]},
    )
    assert hit(sim, request("/a")) == 1


def test_ties_go_to_the_later_pair() -> None:
    sim = compiled({"path": [exact("/a")]}, {"path": [exact("/a")]}, {"path": [glob("*")]})
    assert hit(sim, request("/a")) == 1
    sim = compiled({"path": [glob("/a*")]}, {"path": [regex("^/a")]}, {"method": [glob("G*")]})
    assert hit(sim, request("/a")) == 2


def test_ties_between_misses_go_to_the_later_pair() -> None:
    sim = compiled(
        {"path": [exact("/a")], "method": [exact("PUT")]},
        {"path": [exact("/b")], "method": [exact("GET")]},
        {"path": [exact("/c")]},
    )
    result = run(sim, request("/a"))
    assert result.pair is None
    assert closest_index(sim, result) == 1
    assert result.closest is not None
    assert result.closest.missed_fields == ("path",)


def test_the_closest_miss_is_the_best_scoring_miss() -> None:
    sim = compiled(
        {"path": [exact("/x")]},
        {"path": [exact("/a")], "method": [exact("GET")], "destination": [exact("nope.com")]},
        {"path": [exact("/a")], "method": [exact("PUT")]},
    )
    result = run(sim, request("/a"))
    assert closest_index(sim, result) == 1
    assert result.closest is not None
    assert result.closest.missed_fields == ("destination",)


def test_any_hit_beats_every_miss() -> None:
    sim = compiled(
        {
            "path": [exact("/a")],
            "method": [exact("GET")],
            "destination": [exact("example.com")],
            "headers": {"X-Missing": [exact("1")]},
        },
        {"path": [glob("*")], "query": {"x": [glob("*")], "y": [glob("*")]}},
        {"path": [exact("/a")], "method": [exact("GET")], "body": [exact("nope")]},
    )
    result = run(sim, request("/a", query="x=1&y=2"))
    assert result.pair is not None
    assert result.pair.index == 1
    assert result.closest is None


def test_with_no_pairs_there_is_no_closest_miss() -> None:
    result = run(compiled(), request())
    assert result.pair is None
    assert result.closest is None


def test_with_pairs_a_miss_always_has_a_closest_miss() -> None:
    sim = compiled({"path": [exact("/x")], "query": {}}, {"path": [exact("/y")], "query": {}})
    result = run(sim, request("/a", query="q=1"))
    assert closest_index(sim, result) == 1  # both scored 0: the later one
    assert result.closest is not None
    assert result.closest.missed_fields == ("path", "queries")


def test_the_closest_miss_carries_the_state_it_was_matched_against() -> None:
    sim = compiled({"requiresState": {"a": "2"}})
    state = {"a": "1", "b": "x"}
    result = run(sim, request(), state)
    assert result.closest is not None
    assert result.closest.state == state
    assert result.closest.missed_fields == ("state",)


# ---------------------------------------------------------------------------------------------
# first


def test_first_returns_the_first_full_match() -> None:
    sim = compiled(
        {"path": [exact("/b")]},
        {"path": [glob("/a*")]},
        {"path": [exact("/a")], "method": [exact("GET")]},
    )
    assert hit(sim, request("/a"), strategy="first") == 1
    assert hit(sim, request("/a"), strategy="strongest") == 2


def test_first_gives_no_closest_miss() -> None:
    sim = compiled({"path": [exact("/a")], "method": [exact("PUT")]}, {"path": [exact("/b")]})
    result = run(sim, request("/a"), strategy="first")
    assert result.pair is None
    assert result.closest is None


def test_first_visits_pairs_without_path_or_method_in_order_too() -> None:
    sim = compiled({"headers": {"X-A": [glob("*")]}}, {"path": [exact("/a")], "method": [exact("GET")]})
    assert hit(sim, request("/a", headers={"X-A": ["1"]}), strategy="first") == 0
    assert hit(sim, request("/a"), strategy="first") == 1


# ---------------------------------------------------------------------------------------------
# query


def test_an_absent_query_matches_any_query() -> None:
    sim = compiled({"path": [exact("/a")]})
    for raw in ["", "a=1", "a=1&b=2", "x=%zz"]:
        assert hit(sim, request("/a", query=raw)) == 0


@pytest.mark.parametrize(("raw", "matches"), [("", True), ("a=%zz", True), ("&&", True), ("a=1", False), ("a", False)])
def test_an_empty_query_matches_only_a_request_without_parameters(raw: str, matches: bool) -> None:
    sim = compiled({"query": {}})
    assert (hit(sim, request(query=raw)) == 0) is matches


def test_a_query_map_ignores_extra_parameters() -> None:
    sim = compiled({"query": {"a": [exact("1")]}})
    assert hit(sim, request(query="a=1&b=2&c")) == 0
    assert hit(sim, request(query="b=2")) is None


@pytest.mark.parametrize(("key", "raw"), [("a", "A=1"), ("A", "a=1"), ("Ab", "aB=1")])
def test_query_names_are_case_insensitive(key: str, raw: str) -> None:
    sim = compiled({"query": {key: [exact("1")]}})
    assert hit(sim, request(query=raw)) == 0


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("test=test1&test=test2", "test1;test2"),
        ("a=x;y", "x;y"),
        ("a=x&a=y", "x;y"),
        ("a=", ""),
        ("a", ""),
        ("q=a%20b", "a b"),
        ("q=a+b", "a b"),
    ],
)
def test_query_values_are_decoded_and_joined_with_semicolons(raw: str, value: str) -> None:
    name = raw.split("=")[0]
    sim = compiled({"query": {name: [exact(value)]}})
    assert hit(sim, request(query=raw)) == 0


def test_a_repeated_parameter_does_not_match_one_of_its_values() -> None:
    sim = compiled({"query": {"a": [exact("1")]}})
    assert hit(sim, request(query="a=1&a=2")) is None


def test_query_names_are_matched_decoded() -> None:
    sim = compiled({"query": {"my key": [exact("1")]}})
    assert hit(sim, request(query="my%20key=1")) == 0
    assert hit(sim, request(query="my+key=1")) == 0


def test_a_parameter_with_a_bad_escape_is_missing() -> None:
    sim = compiled({"query": {"a": [glob("*")]}})
    result = run(sim, request(query="a=%zz"))
    assert result.pair is None
    assert result.closest is not None
    assert result.closest.missed_fields == ("queries",)


# ---------------------------------------------------------------------------------------------
# headers


@pytest.mark.parametrize("key", ["X-Api-Key", "x-api-key", "X-API-KEY"])
def test_header_names_are_looked_up_case_insensitively(key: str) -> None:
    sim = compiled({"headers": {key: [exact("secret")]}})
    assert hit(sim, request(headers={"X-Api-Key": ["secret"]})) == 0


def test_header_values_are_joined_with_semicolons() -> None:
    req = request(headers={"Accept": ["text/html", "application/json"]})
    assert hit(compiled({"headers": {"Accept": [exact("text/html;application/json")]}}), req) == 0
    assert hit(compiled({"headers": {"Accept": [exact("text/html")]}}), req) is None
    assert hit(compiled({"headers": {"Accept": [glob("*json")]}}), req) == 0


def test_a_single_header_line_with_a_comma_is_one_value() -> None:
    req = request(headers={"Accept": ["a, b"]})
    assert hit(compiled({"headers": {"Accept": [exact("a, b")]}}), req) == 0


def test_a_missing_header_is_a_miss_and_extra_headers_are_ignored() -> None:
    sim = compiled({"headers": {"X-A": [glob("*")]}})
    assert hit(sim, request(headers={"X-A": [""], "X-B": ["2"]})) == 0
    result = run(sim, request(headers={"X-B": ["2"]}))
    assert result.pair is None
    assert result.closest is not None
    assert result.closest.missed_fields == ("headers",)


def test_a_header_with_an_empty_matcher_list_must_only_be_present() -> None:
    sim = compiled({"headers": {"X-A": []}})
    assert hit(sim, request(headers={"X-A": ["anything"]})) == 0
    assert hit(sim, request()) is None


# ---------------------------------------------------------------------------------------------
# scheme, destination, method, body


@pytest.mark.parametrize("scheme_matcher", [exact("https"), glob("*.com"), regex("^ftp$")])
def test_scheme_is_never_matched(scheme_matcher: dict[str, Any]) -> None:
    sim = compiled({"scheme": [scheme_matcher], "path": [exact("/a")]})
    assert hit(sim, request("/a", scheme="http")) == 0
    assert hit(sim, request("/a", scheme="https")) == 0


def test_destination_matches_the_lower_cased_host_with_port() -> None:
    assert hit(compiled({"destination": [exact("api.test:8080")]}), request(destination="API.test:8080")) == 0
    assert hit(compiled({"destination": [exact("API.test")]}), request(destination="API.test")) is None
    assert hit(compiled({"destination": [exact("api.test")]}), request(destination="api.test:8080")) is None


def test_destination_is_ignored_in_webserver_mode() -> None:
    sim = compiled({"destination": [exact("elsewhere.com")], "path": [exact("/a")]})
    assert hit(sim, request("/a"), webserver=False) is None
    assert hit(sim, request("/a"), webserver=True) == 0


def test_method_is_case_sensitive() -> None:
    sim = compiled({"method": [exact("GET")]})
    assert hit(sim, request(method="GET")) == 0
    assert hit(sim, request(method="get")) is None


def test_body_is_matched_as_text() -> None:
    sim = compiled({"body": [exact('{"id":7}')]})
    assert hit(sim, request(method="POST", body='{"id":7}')) == 0
    assert hit(sim, request(method="POST", body='{"id": 7}')) is None  # no JSON semantics
    assert hit(compiled({"body": [glob('{"id":*}')]}), request(method="POST", body='{"id": 7}')) == 0


# ---------------------------------------------------------------------------------------------
# state


def test_requires_state_needs_every_key_with_its_exact_value() -> None:
    sim = compiled({"requiresState": {"a": "1", "b": ""}})
    assert hit(sim, request(), {"a": "1", "b": "", "extra": "x"}) == 0
    assert hit(sim, request(), {"a": "1"}) is None  # an absent key fails even for ""
    assert hit(sim, request(), {"a": "2", "b": ""}) is None
    assert hit(sim, request(), {}) is None


def test_state_points_pick_the_more_specific_pair() -> None:
    sim = compiled({"requiresState": {"a": "1", "b": "2"}}, {"requiresState": {"a": "1"}}, {})
    assert hit(sim, request(), {"a": "1", "b": "2"}) == 0
    assert hit(sim, request(), {"a": "1"}) == 1
    assert hit(sim, request(), {}) == 2


def test_empty_requires_state_always_matches() -> None:
    sim = compiled({"requiresState": {}})
    assert score({"requiresState": {}}, request()) == (1, [])
    assert hit(sim, request(), {"anything": "x"}) == 0


# ---------------------------------------------------------------------------------------------
# the index gives the same answers as Hoverfly's full scan

PATHS = ["/", "/a", "/b", "/a/b", "/a/b/c", "/a/bc/", "/ab/c", "/a//b"]
METHODS = ["GET", "POST", "get"]
DESTINATIONS = ["x.com", "y.com:8080"]
BODIES = ["", "a", "ab"]
NAMES = ["a", "b", "A"]
HEADERS = ["X-A", "X-B"]
VALUES = ["1", "2", ""]
GLOBS = ["*", "", "/*", "*a*", "*b", "/a*", "G*", "*.com", "1*", "*;*", "/a/*", "/a/b*", "/a/b/*", "/a//*"]
REGEXES = ["^/a", "b$", "a", "^$", "^/a/?b?$", "1|2", "(?i)get", "\\.com", "^x", "\\d",
           "^/a/b", "^/a/b/c$", "^/a\\/b", "^/a/b+", "^/a/.b", "^/a/b|^/ab", "^/a/b/c?"]  # fmt: skip
EXACT_NAMES = ["exact", "Exact", "EXACT", ""]


def matchers_from(vocabulary: list[str]) -> st.SearchStrategy[list[dict[str, Any]] | None]:
    exacts = st.builds(m, st.sampled_from(EXACT_NAMES), st.sampled_from(vocabulary))
    globs = st.builds(glob, st.sampled_from(GLOBS + vocabulary))
    regexes = st.builds(regex, st.sampled_from(REGEXES))
    single = st.one_of(exacts, exacts, globs, regexes)
    return st.one_of(st.none(), st.just([]), st.lists(single, min_size=1, max_size=2))


def named_matchers(names: list[str]) -> st.SearchStrategy[dict[str, list[dict[str, Any]]]]:
    lists = matchers_from(VALUES).map(lambda ms: ms or [])
    return st.dictionaries(st.sampled_from(names), lists, max_size=2)


# Built once: strategies made inside a composite are re-validated on every draw, which is slow.
MATCHER_SET_FIELDS = {
    "path": matchers_from(PATHS),
    "method": matchers_from(METHODS),
    "destination": matchers_from(DESTINATIONS),
    "body": st.one_of(st.none(), st.none(), matchers_from(BODIES)),
    "headers": st.one_of(st.none(), named_matchers(HEADERS)),
    "query": st.one_of(st.none(), st.just({}), named_matchers(NAMES)),
    "requiresState": st.one_of(
        st.none(), st.dictionaries(st.sampled_from(["k1", "k2"]), st.sampled_from(VALUES), max_size=2)
    ),
}
MATCHER_SETS = st.fixed_dictionaries(MATCHER_SET_FIELDS).map(
    lambda fields: {name: value for name, value in fields.items() if value is not None}
)
QUERIES = st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(VALUES)), max_size=3).map(
    lambda pairs: "&".join(f"{k}={v}" for k, v in pairs)
)
REQUEST_HEADERS = st.dictionaries(
    st.sampled_from(HEADERS), st.lists(st.sampled_from(VALUES), min_size=1, max_size=2), max_size=2
)
REQUESTS = st.builds(
    request,
    path=st.sampled_from(PATHS),
    method=st.sampled_from(METHODS),
    destination=st.sampled_from(DESTINATIONS),
    query=QUERIES,
    headers=REQUEST_HEADERS,
    body=st.sampled_from(BODIES),
)
STATES = st.dictionaries(st.sampled_from(["k1", "k2"]), st.sampled_from(VALUES), max_size=2)


@st.composite
def simulations(draw: st.DrawFn) -> CompiledSimulation:
    matcher_set_list = draw(st.lists(MATCHER_SETS, max_size=7))
    for _ in range(draw(st.integers(0, 2))):  # duplicate some pairs, anywhere
        if matcher_set_list:
            source = draw(st.sampled_from(matcher_set_list))
            matcher_set_list.insert(draw(st.integers(0, len(matcher_set_list))), source)
    return compiled(*matcher_set_list)


def outcome(sim: CompiledSimulation, result: MatchResult) -> tuple[Any, ...]:
    closest = result.closest
    return (
        None if result.pair is None else result.pair.index,
        closest_index(sim, result),
        None if closest is None else closest.missed_fields,
        None if closest is None else closest.state,
        result.cacheable,
    )


@settings(max_examples=300, deadline=None)
@given(simulations(), REQUESTS, STATES)
def test_match_agrees_with_the_full_scan(sim: CompiledSimulation, req: RequestDetails, state: dict[str, str]) -> None:
    strategies: tuple[Strategy, ...] = ("strongest", "first")
    for strategy in strategies:
        for webserver in (False, True):
            indexed = match(sim, req, state, strategy, webserver)
            reference = full_scan(sim, req, state, strategy, webserver)
            assert outcome(sim, indexed) == outcome(sim, reference), (strategy, webserver)


@st.composite
def larger_simulations(draw: st.DrawFn) -> CompiledSimulation:
    """Up to 40 pairs, most with exact paths (what the closest-miss ranking prunes on), some alike."""
    exact_path = st.builds(
        lambda name, path: {"path": [m(name, path)]}, st.sampled_from(EXACT_NAMES), st.sampled_from(PATHS)
    )
    shapes = st.one_of(
        exact_path, exact_path, MATCHER_SETS, st.builds(lambda a, b: {**a, **b}, exact_path, MATCHER_SETS)
    )
    return compiled(*draw(st.lists(shapes, max_size=40)))


@settings(max_examples=300, deadline=None)
@given(larger_simulations(), REQUESTS, STATES)
def test_the_closest_miss_ranking_gives_the_full_scans_answer(
    sim: CompiledSimulation, req: RequestDetails, state: dict[str, str]
) -> None:
    """Every pair scored, the greatest (points, index) wins: what the ranking must find without scoring them all."""
    for webserver in (False, True):
        scored = [(evaluate(cp, req, state, webserver), cp.index) for cp in sim.pairs]
        found = closest_miss(sim, req, state, webserver)
        if not scored:
            assert found is None
            continue
        (_points, missed), index = max(scored, key=lambda entry: (entry[0][0], entry[1]))
        assert found is not None
        assert (found.index, found.missed_fields) == (index, tuple(missed)), webserver
