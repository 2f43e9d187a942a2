"""Literals and variables (spec §8.5): variables are computed again at every render."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from simproxy.engine.errors import SimulationError
from tests.engine.templating.conftest import context, engine, request, tables, text


def test_literal_and_request_body_variable_from_hoverfly_functional_tests() -> None:
    variables = [{"name": "getCityFromJsonBody", "function": "requestBody", "arguments": ["jsonpath", "$.city"]}]
    out = text(
        '{"{{ Literals.fieldName }}":"{{ Vars.getCityFromJsonBody }}"}',
        req=request(body='{"city":"London"}'),
        literals={"fieldName": "destination"},
        variables=variables,
    )
    assert out == '{"destination":"London"}'


def test_string_arguments_are_evaluated_against_the_request() -> None:
    variables = [{"name": "splitRequestPath", "function": "split", "arguments": ["Request.Path.[1]", ","]}]
    template = "{{#each Vars.splitRequestPath}}{{@index}}:{{this}} {{/each}}"
    assert text(template, req=request("/part1/foo,bar"), variables=variables) == "0:foo 1:bar "


def test_an_argument_that_evaluates_to_empty_is_used_empty() -> None:
    # "Name" renders as {{Name}}: nothing, so faker gets "" and produces nothing (inferred in the spec)
    assert text("[{{Vars.person}}]", variables=[{"name": "person", "function": "faker", "arguments": ["Name"]}]) == "[]"


def test_argument_text_is_html_escaped_like_any_double_stash() -> None:
    variables = [
        {"name": "v", "function": "replace", "arguments": ["Request.QueryParam.q", "Request.QueryParam.old", "-"]}
    ]
    assert text("{{{Vars.v}}}", req=request(query="q=a%26x&old=x"), variables=variables) == "a&amp;-"


def test_a_literal_that_parses_as_a_template_becomes_empty() -> None:
    # "2006" renders as {{2006}}, which is empty: now gets an empty layout (RFC 3339)
    variables = [{"name": "v", "function": "now", "arguments": ["", "2006"]}]
    assert text("{{Vars.v}}", variables=variables) == "2018-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("variable", "expected"),
    [
        ({"name": "v", "function": "randomIntegerRange", "arguments": [1.9, 2]}, "1"),  # int arguments truncate
        ({"name": "v", "function": "randomFloatRange", "arguments": [2, 2]}, "2.000000"),
        ({"name": "v", "function": "now", "arguments": ["", "2006-01-02"]}, "2018-01-01"),  # does not parse
        ({"name": "v", "function": "concat", "arguments": ["a,", "Request.Method", ",c"]}, "a,GET,c"),
        ({"name": "v", "function": "concat", "arguments": ["a", "Request.Method", "c"]}, "GET"),
        ({"name": "v", "function": "length", "arguments": [",,"]}, "2"),  # "{{,,}}" does not parse: the text
        ({"name": "v", "function": "add", "arguments": ["Request.QueryParam.n", "Request.QueryParam.n", ""]}, "24"),
        ({"name": "v", "function": "isNumeric", "arguments": ["Request.QueryParam.n"]}, "true"),
        ({"name": "v", "function": "length", "arguments": [",,,", "extra"]}, "3"),  # extra arguments ignored
    ],
)
def test_helper_variables(variable: dict[str, object], expected: str) -> None:
    assert text("{{Vars.v}}", req=request(query="n=12"), variables=[variable]) == expected


@pytest.mark.parametrize(
    "variable",
    [
        {"name": "v", "function": "faker"},  # missing argument
        {"name": "v", "function": "randomIntegerRange", "arguments": ["1", "2"]},  # not numbers
        {"name": "v", "function": "randomIntegerRange", "arguments": [5, 5]},  # Hoverfly panics, recovers
        {"name": "v", "function": "putValue", "arguments": ["k", "v", True]},  # takes the options
        {"name": "v", "function": "csvAddRow", "arguments": ["s", ["a"]]},  # a []string parameter
        {"name": "v", "function": "setStatusCode", "arguments": ["201"]},
    ],
)
def test_a_variable_that_cannot_be_called_is_left_unset(variable: dict[str, object]) -> None:
    result = engine().compile("[{{Vars.v}}]{{#if Vars.v}}set{{/if}}", "body").render(context(variables=[variable]))
    assert (result.ok, result.text, result.status) == (True, "[]", None)


def test_request_body_variable_type_is_not_lower_cased() -> None:
    variables = [{"name": "v", "function": "requestBody", "arguments": ["JSONPATH", "$.a"]}]
    assert text("[{{Vars.v}}]", req=request(body='{"a": 1}'), variables=variables) == "[]"


def test_request_body_variable_arguments_are_not_templates() -> None:
    variables = [{"name": "v", "function": "requestBody", "arguments": ["jsonpath", "$.a"]}]
    assert text("{{Vars.v}}", req=request(body='{"a": [1, 2]}'), variables=variables) == "12"


def test_variables_are_computed_at_every_render() -> None:
    ticks = iter([datetime(2020, 1, 1, tzinfo=UTC), datetime(2021, 1, 1, tzinfo=UTC)])
    eng = engine()
    eng.now = lambda: next(ticks)
    variables = [{"name": "year", "function": "now", "arguments": ["", "2006-01"]}]
    template = eng.compile("{{Vars.year}}", "body")
    ctx = context(using=eng, variables=variables)
    assert [template.render(ctx).text for _ in range(2)] == ["2020-01", "2021-01"]


def test_variables_run_even_when_the_template_does_not_use_them() -> None:
    csv = tables(s="id\n1\n2\n")
    # the ";" keeps the argument from parsing as a template, so it is used as written
    variables = [{"name": "v", "function": "csvSqlCommand", "arguments": ["DELETE FROM s WHERE id = '1';"]}]
    assert text("body", csv=csv, variables=variables) == "body"
    assert csv.tables["s"] == [["id"], ["2"]]


@pytest.mark.parametrize("function", ["nope", "if", "each", "Now", ""])
def test_unknown_function_is_refused_at_import(function: str) -> None:
    with pytest.raises(SimulationError) as raised:
        engine().compile_variables([{"name": "myVar", "function": function, "arguments": []}], "data.variables")
    assert raised.value.path == "data.variables"
    assert raised.value.message == f"function {function} not supported for custom variable myVar"


def test_variable_flags() -> None:
    eng = engine()
    plain = eng.compile_variables([{"name": "a", "function": "now", "arguments": ["", ""]}], "v")
    reads = eng.compile_variables([{"name": "a", "function": "csvCountRows", "arguments": ["s"]}], "v")
    writes = eng.compile_variables([{"name": "a", "function": "csvSqlCommand", "arguments": ["DELETE FROM s"]}], "v")
    journal = eng.compile_variables([{"name": "a", "function": "hasJournalKey", "arguments": ["i", "k"]}], "v")
    assert (plain.uses_csv, plain.writes_csv, plain.uses_journal) == (False, False, False)
    assert (reads.uses_csv, reads.writes_csv) == (True, False)
    assert (writes.uses_csv, writes.writes_csv) == (True, True)
    assert journal.uses_journal
