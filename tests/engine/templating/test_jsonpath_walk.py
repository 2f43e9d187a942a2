"""A JSONPath of field names and indexes is walked directly; a property test holds the walk to the
Kubernetes evaluator the rest of the queries run on, output for output."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from simproxy.engine.gocompat.jsonpath_k8s import compile_jsonpath, prepare
from simproxy.engine.templating.helpers_body import json_query
from tests.engine.templating.conftest import engine

KEYS = ("a", "b", "items", "x_1")
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
    | st.sampled_from(["[1, 2]", "1e30", " ['x']", '["y"]']),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    max_leaves=12,
)
steps = st.lists(st.sampled_from(KEYS) | st.integers(min_value=0, max_value=3), min_size=1, max_size=4)


def _query(path: list[str | int]) -> str:
    return "$" + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)


class _Generic:
    """The engine's JSONPath cache, with the walk taken away: every query runs on the k8s evaluator."""

    def __init__(self) -> None:
        self.services = engine()

    def jsonpath(self, query: str) -> Any:
        from dataclasses import replace

        compiled = self.services.jsonpath(query)
        return None if compiled is None else replace(compiled, simple=None)


@settings(max_examples=400)
@given(data=json_values, path=steps)
def test_the_walk_answers_what_the_evaluator_answers(data: Any, path: list[str | int]) -> None:
    query = _query(path)
    assert compile_jsonpath(prepare(query)).simple == tuple(path)
    assert json_query(engine(), query, data) == json_query(_Generic(), query, data)


def test_only_plain_walks_are_walked() -> None:
    for query in ("$.items[-1]", "$.items[*]", "$..a", "$.items[0:2]", '$.a[?(@.b=="x")]', "{.a} {.b}", "$"):
        assert compile_jsonpath(prepare(query)).simple is None, query
