"""``simproxy.verify``'s comparisons, on journal entries as the admin API lists them (no server)."""

from __future__ import annotations

from typing import Any

import pytest

from simproxy.admin.kit.harness import Expectation


def entry(query: str = "", body: str = "", method: str = "GET", path: str = "/orders") -> dict[str, Any]:
    request = {"method": method, "path": path, "destination": "shop.test", "scheme": "http", "query": query}
    return {"request": {**request, "body": body}, "response": {"status": 200}}


@pytest.mark.parametrize(
    ("query", "matches"),
    [
        ({"id": 7, "tag": ["a", "b"]}, True),
        ({"id": 7.5, "tag": ["a", "b"]}, False),
        ({"id": "7", "tag": ["b", "a"]}, True),
        ({"id": 7, "tag": ("a", "b")}, True),
        ({"id": 7, "tag": ("a", "b"), "gift": True}, False),
        ({"id": 7}, False),  # the whole query is compared: the tags are missing
        ("tag=a&id=7&tag=b", True),
        ({"id": 8, "tag": ["a", "b"]}, False),
    ],
)
def test_query_values_may_be_numbers_booleans_or_lists_of_them(query: Any, matches: bool) -> None:
    assert Expectation.of(query=query).misses(entry("id=7&tag=a&tag=b")) == ([] if matches else ["query"])


def test_a_boolean_query_value_is_written_as_in_a_url() -> None:
    assert Expectation.of(query={"gift": True, "n": 0}).misses(entry("n=0&gift=true")) == []


@pytest.mark.parametrize("body", [{"qty": 2, "sku": "a"}, [1, 2], 3, True])
def test_a_body_given_as_json_is_compared_with_the_request_body_read_as_json(body: Any) -> None:
    import json

    assert Expectation.of(body=body).misses(entry(body=json.dumps(body, indent=2))) == []
    assert Expectation.of(body=body).misses(entry(body="not json")) == ["body"]


def test_a_body_given_as_text_is_compared_exactly() -> None:
    assert Expectation.of(body='{"a":1}').misses(entry(body='{"a": 1}')) == ["body"]
    assert Expectation.of(body='{"a": 1}').misses(entry(body='{"a": 1}')) == []


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"query": {"id": {"nested": 1}}}, r"verify\(query=\.\.\.\) takes a query string or a mapping of names"),
        ({"query": 7}, r"verify\(query=\.\.\.\) takes a query string or a mapping, not int"),
        ({"path": 7}, r"verify\(path=\.\.\.\) takes a string, not int"),
        ({"method": ["GET"]}, r"verify\(method=\.\.\.\) takes a string, not list"),
    ],
)
def test_a_value_of_the_wrong_type_says_what_verify_takes(given: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        Expectation.of(**given)
