"""String, validation, arithmetic, key/value and response-control helpers; argument conversion."""

from __future__ import annotations

import pytest

from simproxy.engine.errors import SimulationError
from tests.engine.templating.conftest import context, engine, fails, render, request, text


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{replace 'oink, oink' 'oink' 'moo'}}", "moo, moo"),
        ("{{replace 'abc' '' '-'}}", "-a-b-c-"),
        ("{{split 'one,two,three' ','}}", "onetwothree"),
        ("{{#each (split 'one,two' ',')}}[{{this}}]{{/each}}", "[one][two]"),
        ("{{#each (split 'héllo' '')}}[{{this}}]{{/each}}", "[h][é][l][l][o]"),
        ("{{#each (split '' ',')}}[{{this}}]{{/each}}", "[]"),
        ("{{length 'onelongstring'}}", "13"),
        ("{{length 'é€'}}", "5"),
        ("{{substring 'onelongstring' 3 7}}", "long"),
        ("{{substring 'onelongstring' '-3' '6'}}", ""),
        ("{{substring 'abc' 1 9}}", ""),
        ("{{substring 'abc' 2 1}}", ""),
        ("{{substring 'abc' 'x' 1}}", ""),
        ("{{rightmostCharacters 'onelongstring' 3}}", "ing"),
        ("{{rightmostCharacters 'abc' 30}}", ""),
        ("{{rightmostCharacters 'abc' -1}}", ""),
    ],
)
def test_strings(template: str, expected: str) -> None:
    assert text(template) == expected


def test_byte_slices_of_multibyte_text_keep_the_bytes() -> None:
    assert text("{{substring 'é' 0 2}}") == "é"
    assert text("{{rightmostCharacters 'aé' 1}}") == "\udca9"  # Go would emit the lone byte 0xA9


@pytest.mark.parametrize(
    ("value", "numeric"),
    [
        ("123", True),
        ("-5", True),
        ("45.67", True),
        ("1e10", True),
        (".5", True),
        ("5.", True),
        ("Inf", True),
        ("-infinity", True),
        ("NaN", True),
        ("0x1p-2", True),
        ("1_000", False),
        ("0x10", False),
        ("1e400", False),
        (" 1", False),
        ("hello", False),
        ("", False),
    ],
)
def test_is_numeric_follows_go_parse_float(value: str, numeric: bool) -> None:
    assert text("{{isNumeric Literals.v}}", literals={"v": value}) == str(numeric).lower()


@pytest.mark.parametrize(
    ("value", "expected"), [("ABC123", "true"), ("123", "true"), ("ABC!@123", "false"), ("é", "false"), ("", "false")]
)
def test_is_alphanumeric(value: str, expected: str) -> None:
    assert text("{{isAlphanumeric Literals.v}}", literals={"v": value}) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", "true"),
        ("T", "true"),
        ("0", "true"),
        ("False", "true"),
        ("maybe", "false"),
        ("yes", "false"),
        ("tRUE", "false"),
    ],
)
def test_is_bool_follows_go_parse_bool(value: str, expected: str) -> None:
    assert text("{{isBool Literals.v}}", literals={"v": value}) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{isGreaterThan '11' '10'}}", "true"),
        ("{{isGreaterThan 10 11}}", "false"),
        ("{{isGreaterThan 'abc' '1'}}", "false"),
        ("{{isGreaterThanOrEqual 2 2.0}}", "true"),
        ("{{isLessThan 1 2}}", "true"),
        ("{{isLessThanOrEqual 3 2}}", "false"),
        ("{{isBetween 5 3 7}}", "true"),
        ("{{isBetween 3 3 7}}", "false"),
        ("{{isBetween 'e' 6 7}}", "false"),
    ],
)
def test_comparisons(template: str, expected: str) -> None:
    assert text(template) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{matchesRegex 'abc123' '[0-9]+'}}", "true"),
        ("{{matchesRegex 'abc' '^b'}}", "false"),
        ("{{matchesRegex Literals.lines 'a$'}}", "false"),  # RE2: $ is the end of text only
        ("{{matchesRegex Literals.lines '(?m)a$'}}", "true"),
        ("{{matchesRegex 'abc' '(?=a)'}}", "false"),  # lookahead is not RE2: invalid, so false
        ("{{matchesRegex 'x' '&^%$£!@:<>+_!¬'}}", "false"),
    ],
)
def test_matches_regex(template: str, expected: str) -> None:
    assert text(template, literals={"lines": "a\nb"}) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{add 1 2 '0'}}", "3"),
        ("{{add 0.1 1.34 '0.00'}}", "1.44"),
        ("{{add 0.1 1.34 '0.0'}}", "1.4"),
        ("{{add 0.1 1.56 '0.0'}}", "1.7"),
        ("{{add 10 3.333 '0.00'}}", "13.33"),
        ("{{add 0.1 1.34 ''}}", "1.44"),
        ("{{add 1 2 ''}}", "3"),
        ("{{add 0 0 ''}}", "0"),
        ("{{add 'a' 'b' '0.00'}}", "NaN"),
        ("{{subtract 10 0.99 ''}}", "9.01"),
        ("{{multiply 10 0.99 ''}}", "9.9"),
        ("{{divide 10 2.5 ''}}", "4"),
        ("{{divide 10 3 ''}}", "3.333333"),
        ("{{divide 7 1 ''}}", "7"),
        ("{{divide 1 0 ''}}", "+Inf"),
        ("{{divide -1 0 '0.00'}}", "-Inf"),
        ("{{divide 0 0 ''}}", "NaN"),
        ("{{add 2.5 0 '0'}}", "3"),  # half away from zero
        ("{{add -2.5 0 '0'}}", "-3"),
        ("{{add 1.005 0 '0.00'}}", "1.00"),  # 1.005 is 1.00499... in binary
        ("{{add 1 0 '0.000'}}", "1.000"),
        ("{{add 1.26 0 '#.#.#'}}", "1"),  # more than one point: no decimals
        ("{{add -0.0000001 0 ''}}", "-0"),
    ],
)
def test_arithmetic_and_format(template: str, expected: str) -> None:
    assert text(template) == expected


def test_sum_adds_a_string_array() -> None:
    template = "{{addToArray 'n' '1.5'}}{{addToArray 'n' '2'}}{{sum (getArray 'n') '0.0'}}"
    assert text(template.replace("'}}", "' false}}", 2)) == "3.5"
    assert text("{{addToArray 'n' 'x' false}}{{sum (getArray 'n') ''}}") == "NaN"
    assert text("{{sum (getArray 'empty') ''}}") == "0"


def test_sum_of_a_non_string_array_fails() -> None:
    assert fails("{{sum (Request.Body 'jsonpath' '$.a') ''}}", req=request(body='{"a": [1, 2]}'))


def test_put_and_get_value() -> None:
    assert text("{{putValue 'id' 'x1' true}} then {{getValue 'id'}}") == "x1 then x1"
    assert text("{{putValue 'id' 'x1' false}}[{{getValue 'id'}}][{{getValue 'other'}}]") == "[x1][]"


def test_arrays() -> None:
    template = "{{addToArray 'a' 'one' true}}{{addToArray 'a' 'two' false}}|{{getArray 'a'}}|"
    template += "{{initArray 'a'}}{{getArray 'a'}}|"
    assert text(template) == "one|onetwo||"


def test_store_starts_empty_at_every_render() -> None:
    eng = engine()
    template = eng.compile(
        "{{addToArray 'a' 'x' false}}{{putValue 'v' (concat (getValue 'v') 'y') true}}{{getArray 'a'}}", "b"
    )
    assert template.render(context(using=eng)).text == "yx"
    assert template.render(context(using=eng)).text == "yx"


def test_mixing_a_value_and_an_array_under_one_key_fails_as_hoverfly_crashes() -> None:
    assert fails("{{addToArray 'k' 'x' false}}{{getValue 'k'}}")
    assert fails("{{putValue 'k' 'x' false}}{{getArray 'k'}}")


def test_set_status_code_last_valid_call_wins() -> None:
    result = render("{{setStatusCode 201}}{{setStatusCode '404'}}{{setStatusCode 600}}{{setStatusCode 'x'}}body")
    assert (result.ok, result.text, result.status) == (True, "body", 404)


def test_no_status_without_a_valid_call() -> None:
    assert render("{{setStatusCode 99}}").status is None


def test_set_header_calls_in_order_and_empty_names_ignored() -> None:
    result = render(
        "{{setHeader 'X-A' '1'}}{{setHeader '' 'v'}}{{setHeader 'X-B' (concat 'a' 'b')}}{{setHeader 'X-A' '2'}}"
    )
    assert result.headers == (("X-A", "1"), ("X-B", "ab"), ("X-A", "2"))


def test_status_and_headers_are_dropped_when_the_render_fails() -> None:
    assert fails("{{setStatusCode 201}}{{setHeader 'X-A' '1'}}{{randomIntegerRange 2 1}}")


def test_concat_works_unlike_hoverfly_1_12() -> None:
    assert text("{{concat 'a' 'b' 3 true}}") == "ab3true"
    assert text("{{concat (split 'x,y' ',') '-' Request.Path}}", req=request("/p/q")) == "xy-pq"
    assert text("[{{concat}}]") == "[]"


# -- argument conversion ------------------------------------------------------------------------


def test_string_parameters_stringify_numbers_booleans_and_arrays() -> None:
    assert text("{{length 12345}}|{{length 2.50}}|{{length true}}|{{length Request.Path}}", req=request("/ab/cd")) == (
        "5|3|4|4"
    )


def test_a_missing_string_argument_becomes_empty() -> None:
    assert text("[{{replace Request.Nope 'a' 'b'}}]") == "[]"


def test_bool_parameters_use_truthiness() -> None:
    assert text("{{putValue 'k' 'v' 'false'}}") == "v"
    assert text("[{{putValue 'k' 'v' 0}}]") == "[]"


def test_a_missing_int_float_or_bool_argument_skips_the_helper_and_renders_empty() -> None:
    assert text("[{{randomIntegerRange Literals.none 5}}][{{randomFloatRange 1.0 Literals.none}}]") == "[][]"
    assert text("[{{putValue 'k' 'v' Literals.none}}][{{getValue 'k'}}]") == "[][]"


def test_an_int_parameter_rejects_a_non_integer_value_at_render() -> None:
    assert fails("{{randomStringLength Literals.n}}", literals={"n": 5})  # JSON numbers are float64


def test_a_float_parameter_accepts_json_numbers() -> None:
    assert text("{{randomFloatRange Literals.a Literals.b}}", literals={"a": 2, "b": 2}) == "2.000000"


@pytest.mark.parametrize(
    "template",
    [
        "{{randomStringLength '5'}}",
        "{{randomStringLength 5.0}}",
        "{{randomIntegerRange 1 true}}",
        "{{randomFloatRange 1 10}}",
        "{{randomFloatRange 1.0 '2.0'}}",
        "{{csvAddRow 'x' 'a,b'}}",
        "{{now ''}}",
        "{{now '' '' ''}}",
        "{{replace 'a' 'b'}}",
        "{{setStatusCode}}",
        "{{getValue 'a' 'b'}}",
        "{{#if (randomIntegerRange 1 '2')}}{{/if}}",
    ],
)
def test_literal_type_and_arity_errors_are_refused_at_import(template: str) -> None:
    with pytest.raises(SimulationError) as raised:
        engine().compile(template, "data.pairs[0].response.headers.X[0]")
    assert raised.value.path == "data.pairs[0].response.headers.X[0]"


def test_float_literals_need_a_decimal_point() -> None:
    assert text("{{randomFloatRange 1.0 1.0}}") == "1.000000"
