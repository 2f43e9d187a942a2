"""Matcher values that cannot work but that Hoverfly stores: the spec dialect refuses them naming
what is wrong and what ``-compat hoverfly`` would do; a lenient registry (``-compat hoverfly``, and
every stored document) compiles what Hoverfly's matcher does with them at run time, as seen beside
a real Hoverfly v1.12.10."""

from __future__ import annotations

from typing import Any

import pytest

from simproxy.engine.errors import SimulationError
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.simulation.model import Matcher

PATH = "data.pairs[0].request.body[0]"

# (matcher, value, inputs it matches, inputs it does not) under Hoverfly's rules
CASES: list[tuple[str, Any, list[str], list[str]]] = [
    ("exact", 1, [], ["1", "", "x"]),
    ("glob", None, [], ["", "null", "x"]),
    ("regex", r"\d{5}++", [], ["12345", ""]),
    ("json", 7, [], ["7"]),
    ("json", "{bad json", ["{bad json"], ["{}", "{bad json "]),
    ("jsonpartial", "{bad", [], ["{bad", "{}"]),
    ("jsonpath", "test", [], ['{"test": 1}', "test"]),
    ("jsonpath", '$.test[*]?(@.field == "test")', [], ['{"test": [{"field": "test"}]}']),
    ("jwt", "not json", [], ["a.b.c"]),
    ("jwtjsonpath", "", [], ["Bearer a.b.c"]),
    ("xml", "a\x00b", [], ["a\x00b"]),
    ("xmltemplated", "<a><b>", [], ["<a><b></b></a>", ""]),
    ("xpath", 1, [], ["<a/>"]),
    ("xpath", "//a[", [], ["<a/>"]),
    ("array", "not a list", [], ["not a list", ""]),
    ("negate", 1, ["x", "", "1"], []),
]


@pytest.mark.parametrize(("name", "value", "hits", "misses"), CASES)
def test_the_spec_dialect_refuses_with_what_compat_hoverfly_would_do(
    name: str, value: Any, hits: list[str], misses: list[str]
) -> None:
    with pytest.raises(SimulationError) as refused:
        MatcherRegistry().compile(Matcher(name, value), PATH)
    assert refused.value.path.startswith(PATH)
    assert "-compat hoverfly loads it as Hoverfly does: a matcher that " in refused.value.message


@pytest.mark.parametrize(("name", "value", "hits", "misses"), CASES)
def test_a_lenient_registry_compiles_what_hoverflys_matcher_does(
    name: str, value: Any, hits: list[str], misses: list[str]
) -> None:
    compiled = MatcherRegistry(lenient=True).compile(Matcher(name, value), PATH)
    assert [text for text in hits + misses if compiled.matches(text)] == hits


def test_array_items_that_are_no_strings_read_as_go_prints_them() -> None:
    value = ["a", 1, None, True, {"x": 1}, [2]]
    with pytest.raises(SimulationError, match=r"body\[0\]\.value\[1\]: .*reads it as the string '<float64 Value>'"):
        MatcherRegistry().compile(Matcher("array", value), PATH)
    compiled = MatcherRegistry(lenient=True).compile(Matcher("array", value), PATH)
    go = "a;<float64 Value>;<invalid Value>;<bool Value>;<map[string]interface {} Value>;<[]interface {} Value>"
    assert compiled.matches(go)
    assert not compiled.matches('a;1;null;true;{"x": 1};[2]')


def test_an_invalid_value_inside_a_do_match_chain_is_loaded_the_same_way() -> None:
    chained = Matcher("jsonpath", "$.id", do_match=Matcher("negate", 5))
    with pytest.raises(SimulationError, match=r"doMatch\.value: the negate matcher needs a string value"):
        MatcherRegistry().compile(chained, PATH)
    compiled = MatcherRegistry(lenient=True).compile(chained, PATH)
    assert compiled.matches('{"id": "anything"}') and not compiled.matches('{"other": 1}')


def test_what_hoverfly_crashes_on_at_the_first_request_stays_refused_in_both_dialects() -> None:
    for registry in (MatcherRegistry(), MatcherRegistry(lenient=True)):
        with pytest.raises(SimulationError, match="unknown matcher"):
            registry.compile(Matcher("nosuch", "x"), PATH)
        with pytest.raises(SimulationError, match="an empty JSONPath"):
            registry.compile(Matcher("jsonpath", ""), PATH)
