"""The list family as Hoverfly runs it: array, negate and the body's form matcher (spec §2.2.12-2.2.14)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest

from simproxy.engine.errors import SimulationError
from simproxy.engine.matching.registry import CompiledMatcher
from simproxy.engine.matching.scoring import compile_simulation, evaluate
from simproxy.engine.simulation.model import Matcher
from tests.engine.conftest import REGISTRY, compiled, exact, hit, m, pair, request, simulation

WHERE = "data.pairs[0].request.headers.X-A[0]"
BODY = "data.pairs[0].request.body[0]"
FORM_HEADERS = {"Content-Type": ["application/x-www-form-urlencoded"]}


def compile_one(name: str, value: Any, config: dict[str, Any] | None = None, where: str = WHERE) -> CompiledMatcher:
    return REGISTRY.compile(Matcher(name, value, config), where)


def rejection(name: str, value: Any, config: dict[str, Any] | None = None, where: str = WHERE) -> SimulationError:
    with pytest.raises(SimulationError) as caught:
        compile_one(name, value, config, where)
    return caught.value


def post_form(fields: dict[str, str] | list[tuple[str, str]], query: str = "") -> Any:
    return request("/test", "POST", "test.com", query, FORM_HEADERS, urlencode(fields))


# ---------------------------------------------------------------------------------------------
# array

ABC = ["a", "b", "c"]
ORDER = {"ignoreOrder": True}
UNKNOWN = {"ignoreUnknown": True}
OCCURRENCES = {"ignoreOccurrences": True}


@pytest.mark.parametrize(
    ("expected", "config", "actual", "result"),
    [
        # no config: exact list equality [verified]
        (ABC, None, "a;b;c", True),
        (ABC, None, "a;c;b", False),
        (ABC, None, "a;b", False),
        (ABC, None, "a;b;c;c", False),
        (ABC, None, "a;b;c;", False),
        (ABC, {}, "a;b;c", True),
        # one flag each [verified]
        (ABC, ORDER, "c;b;a", True),
        (ABC, ORDER, "c;b", False),
        (ABC, UNKNOWN, "a;x;b;c", True),
        (ABC, UNKNOWN, "a;x;c", False),
        (ABC, OCCURRENCES, "a;b;b;c", True),
        (ABC, OCCURRENCES, "a;c;b", False),
        # all three: nothing is checked, anything matches [verified]
        (ABC, {**ORDER, **UNKNOWN, **OCCURRENCES}, "x", True),
        (ABC, {**ORDER, **UNKNOWN, **OCCURRENCES}, "", True),
        # ignoreOrder + ignoreOccurrences: only "every item is expected" remains [verified]
        (ABC, {**ORDER, **OCCURRENCES}, "b", True),
        (ABC, {**ORDER, **OCCURRENCES}, "c;c;a", True),
        (ABC, {**ORDER, **OCCURRENCES}, "c;x", False),
        # false flags are the defaults
        (ABC, {"ignoreOrder": False, "ignoreUnknown": False, "ignoreOccurrences": False}, "a;b;c", True),
        # an empty expected array never matches without ignoreUnknown, since actual is [""] [verified]
        ([], None, "", False),
        ([], None, "a", False),
        ([], UNKNOWN, "anything", True),
        # an empty element is a value like any other
        (["", "a"], None, ";a", True),
        # Hoverfly's array tests, with their getConfiguration(ignoreUnknown, ignoreOccurrences, ignoreOrder)
        (["q1", "q2", "q3"], {"ignoreUnknown": False, **OCCURRENCES, **ORDER}, "q1;q3;q2;q1;q3", True),
        (["q1", "q2", "q3"], {"ignoreUnknown": False, **OCCURRENCES, **ORDER}, "q1;q4;q3;q2", False),
        (["q1", "q2", "q3"], {**UNKNOWN, **OCCURRENCES, "ignoreOrder": False}, "q1;q2;q3;q2;q4", True),
        (["q1", "q2", "q3"], {**UNKNOWN, **OCCURRENCES, "ignoreOrder": False}, "q1;q3;q3;q2;q4", False),
        (["q1", "q2", "q3"], {**UNKNOWN, "ignoreOccurrences": False, **ORDER}, "q1;q3;q0;q2;q4", True),
        (["q1", "q2", "q3"], {**UNKNOWN, "ignoreOccurrences": False, **ORDER}, "q1;q3;q3;q2;q4", False),
        (
            ["q1", "q2", "q3"],
            {"ignoreUnknown": False, "ignoreOccurrences": False, "ignoreOrder": False},
            "q1;q2;q3",
            True,
        ),
    ],
)
def test_array(expected: list[str], config: dict[str, bool] | None, actual: str, result: bool) -> None:
    assert compile_one("array", expected, config).matches(actual) is result


@pytest.mark.parametrize(("config", "points"), [(None, 2), ({}, 1), (ORDER, 1)])
def test_array_points_depend_on_config(config: dict[str, bool] | None, points: int) -> None:
    assert compile_one("array", ABC, config).points == points
    assert compile_one("Array", ABC, config).points == 1  # the raw name must be exactly "array"


def test_array_on_headers_and_query_end_to_end() -> None:
    """Hoverfly's array_match fixture: a header joined with ``;`` and a query with ignoreOrder."""
    sim = compiled(
        {
            "headers": {"X-Multi": [m("array", ["a", "b", "c"])]},
            "query": {"q": [m("array", ["1", "2"], config=ORDER)]},
        }
    )
    assert hit(sim, request(headers={"X-Multi": ["a", "b", "c"]}, query="q=2&q=1")) == 0
    assert hit(sim, request(headers={"X-Multi": ["a;b;c"]}, query="q=1&q=2")) == 0
    assert hit(sim, request(headers={"X-Multi": ["a", "c", "b"]}, query="q=1&q=2")) is None
    assert hit(sim, request(headers={"X-Multi": ["a", "b", "c"]}, query="q=1&q=3")) is None


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ("a;b", f"{WHERE}.value"),
        ({"a": 1}, f"{WHERE}.value"),
        (None, f"{WHERE}.value"),
        (["a", 1], f"{WHERE}.value[1]"),
        (["a", None], f"{WHERE}.value[1]"),
        ([["a"]], f"{WHERE}.value[0]"),
    ],
)
def test_array_value_that_is_not_an_array_of_strings_is_rejected(value: Any, path: str) -> None:
    assert rejection("array", value).path == path


@pytest.mark.parametrize(
    ("config", "path"),
    [
        ({"ignoreOrder": "true"}, f"{WHERE}.config.ignoreOrder"),
        ({"ignoreUnknown": 1}, f"{WHERE}.config.ignoreUnknown"),
        ({"ignoreOccurrences": None}, f"{WHERE}.config.ignoreOccurrences"),
        ({"ignoreorder": True}, f"{WHERE}.config.ignoreorder"),
        ({"caseInsensitive": True}, f"{WHERE}.config.caseInsensitive"),
    ],
)
def test_array_config_other_than_three_boolean_flags_is_rejected(config: dict[str, Any], path: str) -> None:
    assert rejection("array", ABC, config).path == path


# ---------------------------------------------------------------------------------------------
# negate


@pytest.mark.parametrize(
    ("value", "actual", "expected"),
    [
        ("yes", "yes", False),
        ("yes", "no", True),
        ("yes", "Yes", True),
        ("", "", False),
        ("", "x", True),
    ],
)
def test_negate_is_the_opposite_of_exact(value: str, actual: str, expected: bool) -> None:
    assert compile_one("negate", value).matches(actual) is expected
    assert compile_one("NEGATE", value).matches(actual) is expected


def test_negate_scores_one_point() -> None:
    assert compile_one("negate", "x").points == 1


@pytest.mark.parametrize("value", [1, None, ["yes"], {"a": "b"}, True])
def test_negate_with_a_value_that_is_not_a_string_is_rejected(value: Any) -> None:
    """Hoverfly returns true for any such value; an always-true negate is a mistake worth a 400."""
    assert rejection("negate", value).path == f"{WHERE}.value"


def test_negate_fixture_end_to_end() -> None:
    """Hoverfly's negation fixture: a path that is not /path1 (even the bare "/") matches."""
    sim = compiled({"destination": [exact("test.com")], "path": [m("negate", "/path1")]})
    assert hit(sim, request("/path2", destination="test.com")) == 0
    assert hit(sim, request("/", destination="test.com")) == 0
    assert hit(sim, request("/path1", destination="test.com")) is None


# ---------------------------------------------------------------------------------------------
# form: Hoverfly's form_data_match fixture and its functional tests

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


def form_pair(fields: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"method": [exact("POST")], "body": [m("form", fields)]}


FORM_FIXTURE = [
    form_pair({"grant_type": [exact("authorization_code")]}),
    form_pair(
        {
            "grant_type": [exact("authorization_code")],
            "client_assertion": [exact("fake-client-assertion")],
            "code": [exact("fake-auth-code-1")],
        }
    ),
    form_pair(
        {
            "code": [exact("fake-auth-code-2")],
            "client_assertion": [
                m("jwt", '{"header":{"alg":"HS256"},"payload":{"sub":"1234567890","name":"John Doe"}}')
            ],
        }
    ),
    form_pair(
        {
            "code": [exact("fake-auth-code-3")],
            "client_assertion": [
                m(
                    "jwt",
                    '{"header":{"alg":"HS256"},"payload":{}}',
                    doMatch=m("jsonpath", "$.payload", doMatch=m("jsonpath", "$.name", doMatch=exact("John Doe"))),
                )
            ],
        }
    ),
]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"client_assertion": "some-client-assertion", "grant_type": "authorization_code", "code": "x"}, 0),
        (
            {
                "client_assertion": "fake-client-assertion",
                "grant_type": "authorization_code",
                "code": "fake-auth-code-1",
            },
            1,
        ),
        ({"client_assertion": JWT, "grant_type": "authorization_code", "code": "fake-auth-code-2"}, 2),
        ({"client_assertion": JWT, "grant_type": "authorization_code", "code": "fake-auth-code-3"}, 3),
        ({"grant_type": "client_credentials"}, None),
    ],
)
def test_form_fixture(fields: dict[str, str], expected: int | None) -> None:
    assert hit(compiled(*FORM_FIXTURE), post_form(fields)) == expected


def test_form_fields_score_their_matchers_and_other_body_matchers_are_ignored() -> None:
    sim = compiled(
        {"body": [exact("never the body"), m("form", {"a": [exact("1"), glob_m("*")], "b": [m("regex", "x")]})]}
    )
    score, missed = evaluate(sim.pairs[0], post_form({"a": "1", "b": "xyz"}), {}, False)
    assert (score, missed) == (2 + 1 + 1 + 1, [])  # exact 2, glob 1, regex 1, absent query 1
    score, missed = evaluate(sim.pairs[0], post_form({"a": "2", "b": "xyz"}), {}, False)
    assert (score, missed) == (1 + 1 + 1, ["body"])


def glob_m(value: str) -> dict[str, Any]:
    return m("glob", value)


def test_form_uses_the_first_value_of_a_field_and_only_body_fields() -> None:
    sim = compiled({"body": [m("form", {"a": [exact("1")]})]})
    assert hit(sim, post_form([("a", "1"), ("a", "2")])) == 0
    assert hit(sim, post_form([("a", "2"), ("a", "1")])) is None
    assert hit(sim, post_form({"b": "1"}, query="a=1")) is None  # query parameters are not form data
    assert hit(sim, request("/test", "GET", "test.com", "", FORM_HEADERS, "a=1")) is None  # not a form method


def test_form_field_names_are_case_sensitive_and_every_field_is_required() -> None:
    sim = compiled({"body": [m("form", {"Name": [exact("x")], "other": []})]})
    assert hit(sim, post_form({"Name": "x", "other": "anything"})) == 0
    assert hit(sim, post_form({"name": "x", "other": "anything"})) is None
    assert hit(sim, post_form({"Name": "x"})) is None


def test_several_form_matchers_all_count() -> None:
    sim = compiled({"body": [m("form", {"a": [exact("1")]}), m("form", {"b": [exact("2")]})]})
    assert hit(sim, post_form({"a": "1", "b": "2"})) == 0
    assert hit(sim, post_form({"a": "1", "b": "3"})) is None


def test_a_null_field_list_requires_only_the_field() -> None:
    sim = compiled({"body": [m("form", {"a": None})]})
    assert hit(sim, post_form({"a": "whatever"})) == 0
    assert hit(sim, post_form({"b": "whatever"})) is None


@pytest.mark.parametrize(
    ("request_matchers", "path"),
    [
        # only in a request body's own list
        ({"path": [m("form", {"a": []})]}, "data.pairs[0].request.path[0].matcher"),
        ({"headers": {"X": [m("form", {"a": []})]}}, "data.pairs[0].request.headers.X[0].matcher"),
        ({"body": [m("exact", "x", doMatch=m("form", {}))]}, "data.pairs[0].request.body[0].doMatch.matcher"),
        ({"body": [m("form", {"a": [m("form", {})]})]}, "data.pairs[0].request.body[0].value.a[0].matcher"),
        # only spelled in lower case
        ({"body": [m("Form", {"a": []})]}, "data.pairs[0].request.body[0].matcher"),
        ({"body": [m("FORM", {"a": []})]}, "data.pairs[0].request.body[0].matcher"),
        # an object of matcher lists
        ({"body": [m("form", "a=1")]}, "data.pairs[0].request.body[0].value"),
        ({"body": [m("form", ["a"])]}, "data.pairs[0].request.body[0].value"),
        ({"body": [m("form", {"a": exact("1")})]}, "data.pairs[0].request.body[0].value.a"),
        ({"body": [m("form", {"a": ["exact"]})]}, "data.pairs[0].request.body[0].value.a[0]"),
        (
            {"body": [m("form", {"a": [{"matcher": 1, "value": "x"}]})]},
            "data.pairs[0].request.body[0].value.a[0].matcher",
        ),
        # the field matchers are checked like any other
        ({"body": [m("form", {"a": [m("nope", "x")]})]}, "data.pairs[0].request.body[0].value.a[0].matcher"),
        ({"body": [m("form", {"a": [m("regex", "(")]})]}, "data.pairs[0].request.body[0].value.a[0]"),
        ({"body": [m("form", {"a": [m("exact", 1)]})]}, "data.pairs[0].request.body[0].value.a[0].value"),
        (
            {"body": [m("form", {"a": [m("exact", "1", doMatch=m("json", "{"))]})]},
            "data.pairs[0].request.body[0].value.a[0].doMatch.value",
        ),
        # a config or a doMatch on form itself, which Hoverfly ignores
        ({"body": [m("form", {"a": []}, config={})]}, "data.pairs[0].request.body[0].config"),
        ({"body": [m("form", {"a": []}, doMatch=exact("x"))]}, "data.pairs[0].request.body[0].doMatch"),
    ],
)
def test_misplaced_or_malformed_form_is_rejected(request_matchers: dict[str, Any], path: str) -> None:
    with pytest.raises(SimulationError) as caught:
        compile_simulation(simulation(pair(request_matchers)), REGISTRY)
    assert caught.value.path == path


def test_the_compiled_form_lists_fields_in_the_value_order() -> None:
    sim = compiled({"body": [m("form", {"b": [exact("2")], "a": [exact("1"), glob_m("*")]})]})
    form = sim.pairs[0].body[0].form
    assert form is not None
    assert [(name, len(matchers)) for name, matchers in form] == [("a", 2), ("b", 1)]  # keys sorted, as Go holds them
    assert [matcher.points for matcher in form[0][1]] == [2, 1]
