"""The candidate index: literal prefixes, segment buckets, and that no possible hit is left out."""

from __future__ import annotations

import pytest

from simproxy.engine.matching.candidates import PairIndex, literal_prefix
from simproxy.engine.simulation.model import Matcher
from tests.engine.conftest import compiled, exact, glob, regex, request


def _prefix(name: str, value: str) -> str:
    return literal_prefix((Matcher(name, value),))


@pytest.mark.parametrize(
    ("name", "value", "prefix"),
    [
        ("glob", "/a/b*c", "/a/b"),
        ("glob", "*/a", ""),
        ("glob", "/a/b", "/a/b"),
        ("regex", "^/a/b", "/a/b"),
        ("regex", "^/a/?b", "/a"),  # the / may be absent
        ("regex", "^/a/b+", "/a/"),  # conservative: stops before a quantified character
        ("regex", "^/a\\/b\\.json", "/a/b.json"),
        ("regex", "^/a.b", "/a"),
        ("regex", "^/a[0-9]", "/a"),
        ("regex", "^/a/\\d+", "/a/"),
        ("regex", "^/a|^/b", ""),  # an alternation may bypass the literal text
        ("regex", "/a/b", ""),  # unanchored
        ("regex", "(?i)^/a", ""),
        ("exact", "/a", ""),  # exact paths have their own buckets
    ],
)
def test_literal_prefix(name: str, value: str, prefix: str) -> None:
    assert _prefix(name, value) == prefix


def test_the_longest_prefix_of_a_list_is_used() -> None:
    assert literal_prefix((Matcher("glob", "/a*"), Matcher("regex", "^/a/b/c"))) == "/a/b/c"


def _candidates(sim_requests: list[dict[str, object]], path: str, method: str = "GET") -> list[int]:
    sim = compiled(*sim_requests)
    return [cp.index for cp in sim.candidates(path, method)]


def test_candidates_come_from_the_exact_path_and_the_segment_prefixes() -> None:
    pairs: list[dict[str, object]] = [
        {"path": [exact("/a/b")]},
        {"path": [glob("/a/*")]},
        {"path": [glob("/b/*")]},
        {"path": [regex("^/a/?b")]},
        {"path": [regex("b$")]},
        {},
        {"path": [exact("/a/b")], "method": [exact("POST")]},
        {"path": [glob("/a/x/*")], "method": [exact("GET")]},
    ]
    assert _candidates(pairs, "/a/b") == [0, 1, 3, 4, 5]
    assert _candidates(pairs, "/a/b", "POST") == [0, 1, 3, 4, 5, 6]
    assert _candidates(pairs, "/a/x/y") == [1, 3, 4, 5, 7]
    assert _candidates(pairs, "/ab/c") == [3, 4, 5]  # ^/a/?b matches /ab/c: its bucket is the root
    assert _candidates(pairs, "/b/c") == [2, 3, 4, 5]  # a prefix without a whole segment: the root bucket
    assert _candidates(pairs, "relative") == [3, 4, 5]


def test_every_pair_that_can_hit_is_a_candidate() -> None:
    sim = compiled(
        {"path": [glob("/api/v1/users/*")]},
        {"path": [regex("^/api/v1/users/[0-9]+$")]},
        {"path": [exact("/api/v1/users/42")]},
        {"path": [glob("/api/*/users/*")]},
    )
    hits = [cp.index for cp in sim.candidates("/api/v1/users/42", "GET")]
    assert hits == [0, 1, 2, 3]
    assert [cp.index for cp in sim.candidates("/api/v2/users/1", "GET")] == [3]


def test_an_index_without_prefix_buckets_only_looks_up_exact_paths() -> None:
    index = PairIndex.build([((Matcher("exact", "/a"),), None)])
    assert index.prefix == {} and list(index.candidates("/a", "GET")) == [0]
    assert list(index.candidates("/b", "GET")) == []


def test_matching_through_the_index_finds_glob_and_regex_hits() -> None:
    sim = compiled({"path": [glob("/a/*")]}, {"path": [regex("^/a/[0-9]+$")]})
    from simproxy.engine.matching.scoring import match

    result = match(sim, request("/a/12"), {})
    assert result.pair is not None and result.pair.index == 1  # regex 1 point, glob 1 point: later wins
