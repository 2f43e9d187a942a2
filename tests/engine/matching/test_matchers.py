"""The matcher registry (names, values, config, points, doMatch) and exact/glob/regex (spec §2.1-2.3).

Each family's own rules are tested in test_matchers_json.py, test_matchers_xml.py and
test_matchers_list.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simproxy.engine.errors import SimulationError
from simproxy.engine.matching.registry import CompiledMatcher
from simproxy.engine.matching.scoring import compile_simulation
from simproxy.engine.simulation.model import Matcher
from tests.engine.conftest import REGISTRY, compiled, exact, glob, hit, m, matcher, pair, regex, request, simulation

WHERE = "data.pairs[0].request.path[0]"


def compile_one(name: str, value: Any, **kwargs: Any) -> CompiledMatcher:
    return REGISTRY.compile(matcher(name, value, **kwargs), WHERE)


def matches(name: str, value: Any, actual: str) -> bool:
    return compile_one(name, value).matches(actual)


# ---------------------------------------------------------------------------------------------
# exact


def test_exact_is_byte_for_byte_and_case_sensitive() -> None:
    assert matches("exact", "/Orders", "/Orders")
    assert not matches("exact", "/Orders", "/orders")
    assert not matches("exact", "/Orders", "/Orders/")
    assert not matches("exact", "/Orders", " /Orders")


@pytest.mark.parametrize("name", ["exact", "glob", "regex", "Exact", ""])
@pytest.mark.parametrize("value", [1, 1.5, True, None, ["a"], {"a": "b"}])
def test_a_value_that_is_not_a_string_is_rejected_at_import(name: str, value: Any) -> None:
    """Hoverfly imports such a matcher and it never matches; simproxy answers 400 naming the value."""
    with pytest.raises(SimulationError) as caught:
        compile_one(name, value)
    assert caught.value.path == f"{WHERE}.value"


@pytest.mark.parametrize("name", ["exact", "EXACT", "Exact", "eXaCt", ""])
def test_exact_names_are_case_insensitive_and_empty_means_exact(name: str) -> None:
    assert matches(name, "/a", "/a")
    assert not matches(name, "/a", "/b")
    assert not matches(name, "/a*", "/ab")  # exact, not glob


@pytest.mark.parametrize("name", ["glob", "GLOB", "Glob"])
def test_glob_names_are_case_insensitive(name: str) -> None:
    assert matches(name, "/a*", "/abc")


@pytest.mark.parametrize("name", ["regex", "REGEX", "Regex"])
def test_regex_names_are_case_insensitive(name: str) -> None:
    assert matches(name, "^/a.c$", "/abc")


def test_a_matcher_without_a_name_is_exact() -> None:
    sim = compiled({"path": [{"value": "/a"}]})
    decoded = sim.pairs[0].pair.request.path
    assert decoded == (Matcher("", "/a"),)
    assert sim.pairs[0].path[0].matches("/a")
    assert not sim.pairs[0].path[0].matches("/ab")


# ---------------------------------------------------------------------------------------------
# glob


@pytest.mark.parametrize(
    ("pattern", "actual", "expected"),
    [
        # the spec's verified examples
        ("a*a", "a", False),
        ("h*verfly.*", "hooverfly.com", True),
        ("a?c", "abc", False),
        ("A*", "abc", False),
        # empty pattern and lone star
        ("", "", True),
        ("", "a", False),
        ("*", "", True),
        ("*", "anything at all", True),
        ("**", "x", True),
        # no star: plain equality
        ("abc", "abc", True),
        ("abc", "abcd", False),
        ("abc", "ABC", False),
        # star matches any run, including the empty one and line breaks
        ("a*", "a", True),
        ("*a", "ba", True),
        ("*a", "ab", False),
        ("a*b", "ab", True),
        ("a*b", "a\nb", True),
        ("a*b*c", "a-b-b-c", True),
        ("a*b*c", "a-c-b", False),
        ("*bc*", "xxbcxx", True),
        ("a*aa", "aa", False),
        ("a*aa", "aaa", True),
        # everything but * is literal: no ?, [...], escapes or regex
        ("a?c", "a?c", True),
        ("[ab]", "a", False),
        ("[ab]", "[ab]", True),
        ("a.c", "abc", False),
        ("a+", "aa", False),
        ("a\\*", "a\\bc", True),
        ("a\\*", "a*", False),
        ("é*", "été", True),
    ],
)
def test_glob(pattern: str, actual: str, expected: bool) -> None:
    assert matches("glob", pattern, actual) is expected


def go_glob(pattern: str, subject: str) -> bool:
    """github.com/ryanuber/go-glob, line for line: the library Hoverfly's glob matcher calls."""
    if pattern == "":
        return subject == pattern
    if pattern == "*":
        return True
    parts = pattern.split("*")
    if len(parts) == 1:
        return subject == pattern
    leading, trailing = pattern.startswith("*"), pattern.endswith("*")
    end = len(parts) - 1
    for i in range(end):
        idx = subject.find(parts[i])
        if i == 0:
            if not leading and idx != 0:
                return False
        elif idx < 0:
            return False
        subject = subject[idx + len(parts[i]) :]
    return trailing or subject.endswith(parts[end])


@settings(max_examples=500, deadline=None)
@given(st.text("ab*?.", max_size=7), st.text("ab?.", max_size=7))
def test_glob_agrees_with_go_glob(pattern: str, actual: str) -> None:
    assert matches("glob", pattern, actual) is go_glob(pattern, actual)


# ---------------------------------------------------------------------------------------------
# regex


@pytest.mark.parametrize(
    ("pattern", "actual", "expected"),
    [
        # unanchored search
        ("b", "abc", True),
        ("^b", "abc", False),
        ("^abc$", "abc", True),
        ("", "anything", True),
        ("^$", "", True),
        # `$` is the very end of the text unless (?m) is set
        ("^a$", "a\n", False),
        ("a$", "a\n", False),
        ("a$", "a", True),
        ("a$|x", "a\n", False),
        ("(?m)^a$", "a\n", True),
        ("(?m)^b$", "a\nb\nc", True),
        ("[$]", "$", True),
        ("\\$", "cost: $", True),
        ("[a$]", "$", True),
        # `.` stops at a line break unless (?s)
        ("^.$", "\n", False),
        ("(?s)^.$", "\n", True),
        # \d \w \b are ASCII only
        ("\\d", "7", True),
        ("\\d", "\u0663", False),  # ARABIC-INDIC DIGIT THREE
        ("\\d", "\uff17", False),  # FULLWIDTH DIGIT SEVEN
        ("^\\w+$", "abc_1", True),
        ("\\w", "é", False),
        ("\\bcat\\b", "a cat!", True),
        ("\\s", " ", True),
        ("\\s", "\u00a0", False),  # NO-BREAK SPACE
        # flags
        ("(?i)^abc$", "ABC", True),
        ("^abc$", "ABC", False),
    ],
)
def test_regex(pattern: str, actual: str, expected: bool) -> None:
    assert matches("regex", pattern, actual) is expected


@pytest.mark.parametrize(
    ("pattern", "actual", "expected"),
    [
        pytest.param("a\\z", "a", True, id="backslash-z-is-end-of-text"),
        pytest.param("a\\z", "a\n", False, id="backslash-z-not-before-newline"),
        pytest.param("^\\pL+$", "été", True, id="unicode-class-pL"),
        pytest.param("^\\p{Greek}$", "λ", True, id="unicode-script-class"),
        pytest.param("^[[:alpha:]]+$", "abc", True, id="posix-class"),
        pytest.param("^[[:digit:]]+$", "123", True, id="posix-digit-class"),
        pytest.param("(?U)^a+$", "aaa", True, id="ungreedy-flag"),
        pytest.param("(?i)é", "É", True, id="case-folding-beyond-ascii"),
        pytest.param("\\s", "\x0b", False, id="vertical-tab-is-not-space"),
        pytest.param("^a{,2}$", "a{,2}", True, id="brace-without-min-is-literal"),
        pytest.param("^a{,2}$", "a", False, id="brace-without-min-is-not-a-repeat"),
        pytest.param("^[^]$]$", "a", True, id="bracket-first-in-negated-class"),
        pytest.param("^[]a]$", "]", True, id="bracket-first-in-class"),
    ],
)
def test_regex_follows_re2_where_python_differs(pattern: str, actual: str, expected: bool) -> None:
    """Patterns Go's regexp (RE2) accepts and how they match (spec §2.2.3 "RE2 vs Python re pitfalls")."""
    assert matches("regex", pattern, actual) is expected


@pytest.mark.parametrize(
    ("pattern", "actual"),
    [
        pytest.param("(a)\\1", "aa", id="backreference"),
        pytest.param("a(?=b)", "ab", id="lookahead"),
        pytest.param("(?<!x)a", "a", id="lookbehind"),
        pytest.param("a\\Z", "a", id="backslash-Z"),
    ],
)
def test_patterns_re2_rejects_never_match(pattern: str, actual: str) -> None:
    """RE2 has no backreferences, lookaround or ``\\Z``: Hoverfly's regex matcher never matches them.

    simproxy may instead reject such a pattern when the simulation is compiled.
    """
    try:
        compiled_matcher = compile_one("regex", pattern)
    except SimulationError as exc:
        assert exc.path == WHERE
        return
    assert not compiled_matcher.matches(actual)


@pytest.mark.parametrize("pattern", ["(", "a)", "[a", "*a", "a**", "(?P<x", "a{2,1}"])
def test_an_invalid_regex_is_rejected_when_compiled_naming_its_path(pattern: str) -> None:
    with pytest.raises(SimulationError) as caught:
        compile_one("regex", pattern)
    assert caught.value.path == WHERE
    assert WHERE in str(caught.value)


def test_an_invalid_regex_in_a_simulation_names_pair_field_and_position() -> None:
    sim = simulation(
        pair({"path": [exact("/ok")]}),
        pair({"path": [exact("/ok")], "query": {"q": [glob("*"), regex("(")]}}),
    )
    with pytest.raises(SimulationError) as caught:
        compile_simulation(sim, REGISTRY)
    assert caught.value.path == "data.pairs[1].request.query.q[1]"


def test_an_invalid_regex_in_a_header_matcher_names_the_header() -> None:
    sim = simulation(pair({"headers": {"X-Api-Key": [regex("[")]}}))
    with pytest.raises(SimulationError) as caught:
        compile_simulation(sim, REGISTRY)
    assert caught.value.path == "data.pairs[0].request.headers.X-Api-Key[0]"


# ---------------------------------------------------------------------------------------------
# rejected matchers


@pytest.mark.parametrize("name", ["notamatcher", "exactly", "globs", " exact", "form2"])
def test_an_unknown_matcher_name_is_rejected(name: str) -> None:
    with pytest.raises(SimulationError) as caught:
        compile_one(name, "x")
    assert caught.value.path.startswith(WHERE)
    assert repr(name) in str(caught.value)


# a valid value for every kind, and an input it matches
KINDS: dict[str, tuple[Any, str]] = {
    "exact": ("a", "a"),
    "glob": ("a*", "ab"),
    "regex": ("^a", "ab"),
    "json": ('{"a":1}', '{"a": 1}'),
    "jsonpartial": ('{"a":1}', '{"x":{"a":1}}'),
    "jsonpath": ("$.a", '{"a":1}'),
    "xml": ("<a><b/></a>", "<a> <b></b> </a>"),
    "xmltemplated": ("<a>{{ignore}}</a>", "<a>x</a>"),
    "xpath": ("/a/b", "<a><b/></a>"),
    "jwt": ('{"payload":{"sub":"1"}}', "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.x"),
    "jwtjsonpath": ("$.sub", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.x"),
    "negate": ("a", "b"),
    "array": (["a", "b"], "a;b"),
}
IDENTITY_KINDS = ["exact", "glob", "regex", "json", "jsonpartial", "xml", "xmltemplated", "negate", "array"]


def case_variants(name: str) -> list[str]:
    return [name, name.upper(), name.capitalize(), name.swapcase().capitalize().swapcase()]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_matcher_name_is_case_insensitive(kind: str) -> None:
    value, actual = KINDS[kind]
    for name in case_variants(kind):
        compiled_matcher = compile_one(name, value)
        assert compiled_matcher.matches(actual), name
        assert compiled_matcher.points == (2 if name in ("exact", "array") else 1)


def test_the_registry_knows_every_kind() -> None:
    assert REGISTRY.names == {*KINDS, "", "form"}


@pytest.mark.parametrize("kind", sorted(set(KINDS) - {"array"}))
@pytest.mark.parametrize("config", [{}, {"ignoreOrder": True}])
def test_config_on_a_matcher_other_than_array_is_rejected(kind: str, config: dict[str, Any]) -> None:
    with pytest.raises(SimulationError) as caught:
        compile_one(kind, KINDS[kind][0], config=config)
    assert caught.value.path == f"{WHERE}.config"


@pytest.mark.parametrize("kind", sorted(set(KINDS) - {"array"}))
@pytest.mark.parametrize("value", [1, 2.5, False, None, ["a"], {"a": "b"}])
def test_every_string_valued_matcher_rejects_another_value_type(kind: str, value: Any) -> None:
    with pytest.raises(SimulationError) as caught:
        compile_one(kind, value)
    assert caught.value.path == f"{WHERE}.value"
    assert "string" in caught.value.message


@pytest.mark.parametrize("kind", IDENTITY_KINDS)
def test_identity_kinds_hand_do_match_their_own_input(kind: str) -> None:
    value, actual = KINDS[kind]
    assert compile_one(kind, value, then=Matcher("exact", actual)).matches(actual)
    assert not compile_one(kind, value, then=Matcher("exact", actual + "x")).matches(actual)
    assert compile_one(kind, value).extract is None


@pytest.mark.parametrize(
    ("kind", "derived"),
    [
        ("jsonpath", "1"),
        ("xpath", ""),
        ("jwt", '{"header":{"alg":"none"},"payload":{"sub":"1"}}'),
        ("jwtjsonpath", "1"),
    ],
)
def test_deriving_kinds_hand_do_match_their_result(kind: str, derived: str) -> None:
    value, actual = KINDS[kind]
    assert compile_one(kind, value, then=Matcher("exact", derived)).matches(actual)
    assert not compile_one(kind, value, then=Matcher("exact", actual)).matches(actual)


def test_a_failing_link_stops_the_chain_whatever_follows() -> None:
    chain = compile_one("jsonpath", "$.missing", then=Matcher("negate", "anything"))
    assert not chain.matches('{"a":1}')
    chain = compile_one("glob", "x*", then=Matcher("jsonpath", "$.a"))
    assert not chain.matches('{"a":1}')
    assert compile_one("glob", "{*", then=Matcher("jsonpath", "$.a")).matches('{"a":1}')


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("jsonpath", "$" + ".a" * 5000),
        ("xmltemplated", "<a>" * 5000 + "</a>" * 5000),
        ("json", "[" * 5000 + "]" * 5000),
    ],
)
def test_a_value_nested_too_deeply_is_a_400_not_a_crash(kind: str, value: str) -> None:
    with pytest.raises(SimulationError) as caught:
        compile_one(kind, value)
    assert caught.value.path == f"{WHERE}.value"


@pytest.mark.parametrize(
    ("then", "path"),
    [
        (Matcher("jsonpath", "$.a["), f"{WHERE}.doMatch.value"),
        (Matcher("json", "{"), f"{WHERE}.doMatch.value"),
        (Matcher("xpath", "/a["), f"{WHERE}.doMatch.value"),
        (Matcher("exact", 1), f"{WHERE}.doMatch.value"),
        (Matcher("array", ["a"], {"ignoreOrder": "yes"}), f"{WHERE}.doMatch.config.ignoreOrder"),
        (Matcher("glob", "*", do_match=Matcher("Form", {})), f"{WHERE}.doMatch.doMatch.matcher"),
    ],
)
def test_each_link_of_a_chain_is_checked_at_import(then: Matcher, path: str) -> None:
    with pytest.raises(SimulationError) as caught:
        compile_one("exact", "x", then=then)
    assert caught.value.path == path


def test_a_bad_chained_matcher_is_rejected_with_the_chain_in_its_path() -> None:
    with pytest.raises(SimulationError) as caught:
        compile_one("exact", "x", then=Matcher("regex", "("))
    assert caught.value.path.startswith(f"{WHERE}.doMatch")
    with pytest.raises(SimulationError) as caught:
        compile_one("glob", "*", then=Matcher("exact", "x", do_match=Matcher("nope", "x")))
    assert caught.value.path.startswith(f"{WHERE}.doMatch.doMatch")
    with pytest.raises(SimulationError):
        compile_one("glob", "*", then=Matcher("exact", "x", config={}))


# ---------------------------------------------------------------------------------------------
# points


@pytest.mark.parametrize(
    ("name", "value", "points"),
    [
        ("exact", "/a", 2),
        ("Exact", "/a", 1),
        ("EXACT", "/a", 1),
        ("", "/a", 1),
        ("glob", "/a", 1),
        ("glob", "*", 1),
        ("regex", "^/a$", 1),
        ("Regex", "a", 1),
    ],
)
def test_points_earned_by_a_matching_matcher(name: str, value: str, points: int) -> None:
    compiled_matcher = compile_one(name, value)
    assert compiled_matcher.matches("/a")
    assert compiled_matcher.points == points


def test_only_the_top_level_name_decides_the_points() -> None:
    assert compile_one("glob", "*", then=Matcher("exact", "/a")).points == 1
    assert compile_one("exact", "/a", then=Matcher("glob", "*")).points == 2
    assert compile_one("jsonpath", "$.a", then=Matcher("array", ["1"])).points == 1


def test_a_simulation_with_every_kind_compiles_and_scores_hoverflys_way() -> None:
    sim = compiled({"body": [m(kind, *KINDS[kind][:1]) for kind in ("json", "jsonpartial", "jsonpath")]})
    assert [matcher.points for matcher in sim.pairs[0].body] == [1, 1, 1]
    assert hit(sim, request(body='{"a": 1}')) == 0
    assert hit(sim, request(body='{"a": 2}')) is None


# ---------------------------------------------------------------------------------------------
# doMatch chaining


@pytest.mark.parametrize(
    ("chain", "actual", "expected"),
    [
        ([glob("/a*"), exact("/abc")], "/abc", True),
        ([glob("/a*"), exact("/abc")], "/abd", False),
        ([glob("/x*"), exact("/abc")], "/abc", False),
        ([regex("^/a"), glob("*c"), exact("/abc")], "/abc", True),
        ([regex("^/a"), glob("*c"), exact("/abc")], "/axc", False),
        ([exact("/abc"), regex("b")], "/abc", True),
        ([exact("/abc"), regex("z")], "/abc", False),
        ([glob("*"), glob("*"), glob("*"), exact("deep")], "deep", True),
        ([glob("*"), glob("*"), glob("*"), exact("deep")], "shallow", False),
    ],
)
def test_do_match_chains_are_anded_on_the_same_input(chain: list[dict[str, Any]], actual: str, expected: bool) -> None:
    top: dict[str, Any] = chain[-1]
    for link in reversed(chain[:-1]):
        top = m(link["matcher"], link["value"], doMatch=top)
    sim = compiled({"path": [top]})
    assert sim.pairs[0].path[0].matches(actual) is expected
