"""What a render returns: the text or the unrendered template, status and headers, and what it touches."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simproxy.engine.errors import SimulationError
from simproxy.engine.templating import RenderResult
from tests.engine.templating.conftest import context, engine, fails, render, request, text


def test_a_successful_render() -> None:
    assert render("{{setStatusCode 201}}{{setHeader 'X' 'y'}}{{Request.Method}}") == RenderResult(
        "GET", True, 201, (("X", "y"),)
    )


def test_a_failed_render_serves_the_template_and_applies_nothing() -> None:
    template = "{{setStatusCode 201}}{{setHeader 'X' 'y'}}{{CurrentDateTime 'only one'}}"
    assert render(template) == RenderResult(template, False, None, ())


def test_the_same_template_renders_again_with_a_fresh_context() -> None:
    eng = engine()
    template = eng.compile("{{randomUuid}}", "body")
    ctx = context(using=eng)
    first, second = template.render(ctx), template.render(ctx)
    assert first.ok and second.ok and first.text != second.text


def test_state_and_literals_may_be_any_mapping() -> None:
    result = render(
        "{{State.a}}{{Literals.b}}", state=MappingProxyType({"a": "1"}), literals=MappingProxyType({"b": 2})
    )
    assert result.text == "12"


def test_runaway_nesting_fails_instead_of_overflowing() -> None:
    assert fails("{{#each Literals.x}}{{each ../Literals.x}}{{/each}}", literals={"x": [1]})
    assert fails("{{#with Request}}{{with Method}}{{/with}}")


def test_deeply_nested_template_is_refused_at_import() -> None:
    with pytest.raises(SimulationError):
        engine().compile("{{#if a}}" * 400 + "{{/if}}" * 400, "body")


@pytest.mark.parametrize(
    ("template", "uses_state"),
    [
        ("{{Request.Method}}", False),
        ("{{State.x}}", True),
        ("{{state.x}}", True),
        ("{{#each Literals.a}}{{State.x}}{{/each}}", True),
        ("{{#each this}}{{/each}}", True),
        ("{{@root}}", True),
        ("{{lookup Request 'Method'}}", True),
        ("{{csv 's' 'k' 'literal' 'v'}}", False),
        ("{{csv 's' 'k' 'State.key' 'v'}}", True),
        ("{{csv 's' 'k' Request.Path 'v'}}", True),
    ],
)
def test_uses_state(template: str, uses_state: bool) -> None:
    assert engine().compile(template, "body").uses_state is uses_state


@pytest.mark.parametrize(
    ("template", "journal"),
    [("{{journal 'i' 'k' 'request' 'jsonpath' '$'}}", True), ("{{hasJournalKey 'i' 'k'}}", True), ("x", False)],
)
def test_uses_journal(template: str, journal: bool) -> None:
    assert engine().compile(template, "body").uses_journal is journal


def test_headers_and_transitions_render_like_bodies() -> None:
    assert text("Bearer {{Request.Header.X-Token}}", req=request(headers={"X-Token": ["abc"]})) == "Bearer abc"


_PIECES = st.sampled_from(
    [
        "{{",
        "}}",
        "{{{",
        "}}}",
        "{{#each ",
        "{{#if ",
        "{{/each}}",
        "{{/if}}",
        "{{else}}",
        "{{^}}",
        "Request.Path",
        "Request.Body 'jsonpath' '$.a'",
        "this",
        "../",
        "@index",
        "@root",
        " ",
        "'x'",
        "1",
        "2.5",
        "(",
        ")",
        "~",
        "lookup ",
        "with ",
        "concat ",
        "csv 's' 'a' ",
        "x",
        "\n",
        "\\",
        "{{!",
        "=",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=20).map("".join))
def test_compile_refuses_or_render_answers(template: str) -> None:
    eng = engine()
    try:
        compiled = eng.compile(template, "body")
    except SimulationError:
        return
    result = compiled.render(context(using=eng, req=request("/a/b", body='{"a": [1, 2]}'), literals={"x": 1}))
    assert isinstance(result, RenderResult)
    assert result.ok or result.text == template
