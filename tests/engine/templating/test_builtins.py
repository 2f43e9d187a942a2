"""raymond's built-in helpers: if, unless, with, each, first, lookup, log, equal."""

from __future__ import annotations

import logging

import pytest

from simproxy.engine.errors import SimulationError
from tests.engine.templating.conftest import engine, fails, request, text

ITEMS = {"items": ["a", "b", "c"], "map": {"x": 1, "y": 2}, "people": [{"name": "ann"}, {"name": "bob"}]}


def test_if_and_else() -> None:
    assert text("{{#if Literals.items}}yes{{else}}no{{/if}}", literals=ITEMS) == "yes"
    assert text("{{#if Literals.none}}yes{{else}}no{{/if}}", literals=ITEMS) == "no"


def test_if_does_not_change_the_context() -> None:
    assert text("{{#if Literals.items}}{{Request.Method}}{{/if}}", literals=ITEMS) == "GET"


def test_unless() -> None:
    assert text("{{#unless Literals.none}}shown{{else}}hidden{{/unless}}", literals=ITEMS) == "shown"
    assert text("{{#unless 'false'}}shown{{else}}hidden{{/unless}}") == "hidden"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{#if 0 includeZero=true}}T{{else}}F{{/if}}", "T"),
        ("{{#unless 0 includeZero=true}}T{{else}}F{{/unless}}", "F"),
        ("{{#if 0 includeZero=false}}T{{else}}F{{/if}}", "F"),
        ("{{#if 0 includeZero='true'}}T{{else}}F{{/if}}", "F"),  # the option must be the boolean
        ("{{#if 0.0 includeZero=true}}T{{else}}F{{/if}}", "F"),  # only the integer literal 0 counts
        ("{{#if Literals.zero includeZero=true}}T{{else}}F{{/if}}", "F"),  # a JSON number is a float64
    ],
)
def test_include_zero(template: str, expected: str) -> None:
    assert text(template, literals={"zero": 0}) == expected


def test_with_changes_the_context_and_has_an_inverse() -> None:
    assert text("{{#with Literals.people.[1]}}{{name}}{{/with}}", literals=ITEMS) == "bob"
    assert text("{{#with Literals.none}}x{{else}}none{{/with}}", literals=ITEMS) == "none"


def test_each_over_an_array_with_data_variables() -> None:
    template = "{{#each Literals.items}}{{@index}}:{{this}}:{{@first}}:{{@last}}:[{{@key}}] {{/each}}"
    assert text(template, literals=ITEMS) == "0:a:true:false:[] 1:b:false:false:[] 2:c:false:true:[] "


def test_each_over_a_map_gives_keys() -> None:
    assert text("{{#each Literals.map}}{{@key}}={{this}};{{/each}}", literals=ITEMS) == "x=1;y=2;"


def test_each_with_block_params() -> None:
    template = "{{#each Literals.people as |person i|}}{{i}}.{{person.name}} {{/each}}"
    assert text(template, literals=ITEMS) == "0.ann 1.bob "


def test_each_else_on_an_empty_array() -> None:
    assert text("{{#each Literals.empty}}x{{else}}nothing{{/each}}", literals={"empty": []}) == "nothing"


def test_each_over_a_string_renders_nothing() -> None:
    assert text("[{{#each 'abc'}}x{{/each}}]") == "[]"


def test_nested_each_and_parent_data() -> None:
    literals = {"rows": [["a", "b"], ["c"]]}
    template = "{{#each Literals.rows}}{{#each this}}{{@../index}}{{@index}}{{this}} {{/each}}{{/each}}"
    assert text(template, literals=literals) == "00a 01b 10c "


def test_each_over_the_request_struct_iterates_its_exported_fields() -> None:
    assert text("{{#each Request}}{{@key}},{{/each}}") == "QueryParam,Header,Path,Scheme,Body,FormData,Method,Host,"


def test_a_nil_item_keeps_the_enclosing_context() -> None:
    # raymond does not push a nil context, so "this" is still the root's field lookup target
    assert text("{{#each Literals.items}}[{{Request.Method}}]{{/each}}", literals={"items": [None]}) == "[GET]"


def test_first_renders_the_first_element_only() -> None:
    assert text("{{#first Literals.items}}{{this}}{{@index}}{{@last}}{{/first}}", literals=ITEMS) == "a0false"
    assert text("{{#first Literals.map}}{{@key}}{{/first}}", literals=ITEMS) == "x"
    assert text("{{#first Literals.none}}x{{else}}empty{{/first}}", literals=ITEMS) == "empty"


def test_lookup() -> None:
    assert text(
        "{{lookup Literals.map 'y'}}|{{lookup Literals.items 1}}|{{lookup Literals.map 'q'}}", literals=ITEMS
    ) == ("2|b|")
    assert text("{{#each Literals.items}}{{lookup ../Literals.map 'x'}}{{/each}}", literals=ITEMS) == "111"


def test_log_renders_nothing_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        assert text("a{{log 'hello'}}b") == "ab"
    assert "hello" in caplog.text


def test_equal_compares_text_forms() -> None:
    assert text("{{#equal 1 '1'}}same{{else}}different{{/equal}}") == "same"
    assert text("{{#equal Request.Method 'POST'}}post{{else}}other{{/equal}}") == "other"
    assert text("{{#equal (split 'a,b' ',') 'ab'}}joined{{/equal}}") == "joined"


def test_block_helper_used_inline_outside_a_block_renders_empty() -> None:
    assert text("[{{if true}}][{{each Literals.items}}]", literals=ITEMS) == "[][]"


def test_block_helper_used_inline_inside_a_block_re_renders_it_until_it_fails() -> None:
    # raymond renders the enclosing block again, forever: Go overflows its stack; we fail the render
    assert fails("{{#if true}}x{{if true}}{{/if}}")


def test_a_non_helper_section_iterates_arrays() -> None:
    assert text("{{#Literals.items}}<{{this}}>{{/Literals.items}}", literals=ITEMS) == "<a><b><c>"


@pytest.mark.parametrize(
    "template", ["{{#if}}x{{/if}}", "{{#each a b}}x{{/each}}", "{{lookup x}}", "{{#equal a}}{{/equal}}"]
)
def test_wrong_argument_count_for_a_builtin_is_refused_at_import(template: str) -> None:
    with pytest.raises(SimulationError):
        engine().compile(template, "body")


def test_section_on_a_struct_renders_with_it_as_context() -> None:
    assert text("{{#Request}}{{Method}}{{/Request}}", req=request(method="PUT")) == "PUT"
