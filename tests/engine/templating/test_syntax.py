"""Handlebars syntax as raymond reads it: escaping, comments, whitespace control, parse errors."""

from __future__ import annotations

import pytest

from simproxy.engine.errors import SimulationError
from tests.engine.templating.conftest import engine, fails, request, text

BODY = request(body='{"name": "O\'Reilly & <Sons> \\"quoted\\""}', method="POST")


def test_double_stash_escapes_the_five_html_characters() -> None:
    assert (
        text("{{ Request.Body 'jsonpath' '$.name' }}", req=BODY)
        == "O&apos;Reilly &amp; &lt;Sons&gt; &quot;quoted&quot;"
    )


@pytest.mark.parametrize(
    "template", ["{{{ Request.Body 'jsonpath' '$.name' }}}", "{{& Request.Body 'jsonpath' '$.name' }}"]
)
def test_triple_stash_and_ampersand_do_not_escape(template: str) -> None:
    assert text(template, req=BODY) == 'O\'Reilly & <Sons> "quoted"'


def test_backtick_and_equals_are_not_escaped() -> None:
    assert text("{{ Literals.x }}", literals={"x": "a=`b`"}) == "a=`b`"


def test_comments_render_nothing_and_may_hold_mustaches() -> None:
    assert text("a{{! a comment }}b{{!-- has {{ mustaches }} --}}c") == "abc"


def test_a_standalone_comment_takes_its_line() -> None:
    assert text("one\n{{! note }}\ntwo") == "one\ntwo"


def test_escaped_mustache_is_literal_text() -> None:
    assert text("\\{{ Request.Method }} {{ Request.Method }}") == "{{ Request.Method }} GET"


def test_double_backslash_keeps_one_and_renders_the_mustache() -> None:
    assert text("\\\\{{ Request.Method }}") == "\\GET"


def test_tilde_strips_whitespace_on_its_side() -> None:
    assert text("a  {{~ Request.Method ~}}  \n b") == "aGETb"


def test_standalone_block_lines_are_removed() -> None:
    template = '[\n  {{#each Request.Path}}\n  "{{this}}",\n  {{/each}}\n]'
    assert text(template, req=request("/a/b")) == '[\n  "a",\n  "b",\n]'


def test_standalone_else_line_is_removed() -> None:
    template = "{{#if Request.Method}}\nyes\n{{else}}\nno\n{{/if}}\n"
    assert text(template) == "yes\n"


def test_raw_block_content_is_not_rendered() -> None:
    # raymond calls the block's expression ("raw", unknown) which is falsy, so nothing is output
    assert text("a{{{{raw}}}}{{ Request.Method }}{{{{/raw}}}}b") == "ab"


def test_subexpressions_and_nested_subexpressions() -> None:
    assert text("{{ length (replace (concat 'ab' 'cd') 'b' 'xyz') }}") == "6"


def test_hash_arguments_are_parsed_and_include_zero_uses_them() -> None:
    assert text("{{#if 0 includeZero=true}}zero{{/if}}") == "zero"


def test_else_if_chain() -> None:
    template = "{{#if Literals.a}}A{{else if Literals.b}}B{{else}}C{{/if}}"
    assert text(template, literals={"a": False, "b": True}) == "B"
    assert text(template, literals={"a": False, "b": False}) == "C"


def test_inverse_section_with_caret() -> None:
    assert text("{{^Literals.none}}empty{{/Literals.none}}") == "empty"


@pytest.mark.parametrize(
    "template",
    [
        "{{ Request.Method",
        "{{#if x}}no close",
        "{{#if x}}{{/each}}",
        "{{ 'unterminated }}",
        "{{ foo.this }}",
        "{{else}}",
        "{{elsewhere}}",
        "{{ 1_000 }}",
        "{{ a/../b }}",
    ],
)
def test_parse_errors_are_refused_at_import(template: str) -> None:
    with pytest.raises(SimulationError) as raised:
        engine().compile(template, "data.pairs[3].response.body")
    assert raised.value.path == "data.pairs[3].response.body"
    assert "parse error" in raised.value.message


def test_a_partial_fails_the_render_because_none_exist() -> None:
    assert fails("{{> header }}")


def test_literal_in_head_position_is_looked_up_as_a_field() -> None:
    # {{'Method'}} is the field "Method" of the current context, not the text
    assert text("{{#with Request}}{{'Method'}}{{/with}}|{{'hello'}}|{{5}}|{{true}}") == "GET|||"


def test_block_close_must_repeat_the_opening_path() -> None:
    assert text("{{#Request.Path}}[{{this}}]{{/Request.Path}}", req=request("/x/y")) == "[x][y]"


def test_line_breaks_and_tabs_inside_mustaches_are_allowed() -> None:
    assert text("{{\n\tRequest.Method\n}}") == "GET"
