"""The specialised render nodes (engine/templating/fast.py) give what the general nodes give.

A property test renders generated templates (paths, `@data`, helpers with literal and computed
arguments, body queries, `#if`/`#unless`/`#each`/`#with` with `else` and block parameters, nested)
against generated requests, once compiled with the specialised nodes and once without, and
compares every result: text, success, status and headers. The examples after it pin the shapes
the specialised nodes take, so a change that stops them being used is seen.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simproxy.engine.errors import SimulationError
from simproxy.engine.templating import fast
from simproxy.engine.templating.render import Program
from tests.engine.templating.conftest import context, engine, request

WHERE = "data.pairs[0].response.body"

VALUES = [
    "name",
    "this",
    "this.name",
    "this.qty",
    ".",
    "@index",
    "@first",
    "@last",
    "@key",
    "@../index",
    "../name",
    "@root.Request.Method",
    "Request.Method",
    "Request.Path.[0]",
    "Request.QueryParam.q",
    "State.user",
    "item",
    "i",
    "Request.Body 'jsonpath' '$.name'",
    "Request.Body 'JSONPATH' '$.items[0].name'",
    "Request.Body 'jsonpath' '$.items'",
    "Request.Body 'jsonpath' '$.qty'",
    "Request.Body 'xpath' '/a'",
    "Request.Body 'jsonpath' ''",
]
HELPER_CALLS = [
    "multiply {a} '2' ''",
    "add {a} {b} ''",
    "isGreaterThan {a} '2'",
    "toUpper {a}",
    "length {a}",
    "split {a} ','",
    "replace {a} 'a' 'b'",
    "randomStringLength 3",
    "randomStringLength {a}",
    "now '' 'unix'",
    "substring {a} 0 1",
    "equal {a} {b}",
    "concat {a} {b}",
    "lookup {a} 'name'",
    "sum {a} ''",
    "putValue 'k' {a} {b}",
    "getValue 'k'",
    "randomStringLength {a}",
    "randomFloatRange {a} {b}",
    "randomIntegerRange {a} 9",
]
SUBJECTS = [
    *VALUES,
    "(split 'a,b,,c' ',')",
    "(Request.Body 'jsonpath' '$.items')",
    "(isGreaterThan (Request.Body 'jsonpath' '$.qty') '10')",
    "true",
    "0",
    "''",
]

names = st.sampled_from(VALUES)
texts = st.sampled_from(["", "x", ",", " & ", "<b>", '"q"', "{"])


@st.composite
def calls(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from(HELPER_CALLS))
    args = {
        key: draw(st.sampled_from([*VALUES, "'abc'", "'3'", "5", "2.5", "true", "(split 'x,y' ',')", "(getValue 'k')"]))
        for key in "ab"
    }
    return shape.format(**{key: f"({value})" if " " in value else value for key, value in args.items()})


@st.composite
def blocks(draw: st.DrawFn, inner: st.SearchStrategy[str]) -> str:
    helper = draw(st.sampled_from(["if", "unless", "each", "with"]))
    subject = draw(st.sampled_from(SUBJECTS))
    if " " in subject and not subject.startswith("("):
        subject = f"({subject})"
    params = draw(st.sampled_from(["", "", " as |item i|", " as |item|"]))
    program = draw(inner)
    inverse = draw(st.one_of(st.just(""), inner.map(lambda text: "{{else}}" + text)))
    return f"{{{{#{helper} {subject}{params}}}}}{program}{inverse}{{{{/{helper}}}}}"


def templates() -> st.SearchStrategy[str]:
    leaves = st.one_of(
        texts,
        names.map(lambda name: f"{{{{{name}}}}}"),
        names.map(lambda name: f"{{{{{{{name}}}}}}}"),
        calls().map(lambda call: f"{{{{{call}}}}}"),
    )
    return st.recursive(
        st.lists(leaves, max_size=4).map("".join),
        lambda inner: st.lists(st.one_of(leaves, blocks(inner)), min_size=1, max_size=4).map("".join),
        max_leaves=10,
    )


bodies = st.one_of(
    st.just(""),
    st.just("<a>x</a>"),
    st.fixed_dictionaries(
        {
            "name": st.sampled_from(["Ada", "a,b", "<i>"]),
            "qty": st.sampled_from([0, 3, 12, 2.5]),
            "items": st.lists(
                st.one_of(
                    st.none(),
                    st.integers(0, 3),
                    st.fixed_dictionaries({"name": st.sampled_from(["x", "y&z"]), "qty": st.integers(0, 20)}),
                ),
                max_size=4,
            ),
        }
    ).map(json.dumps),
)


def outcome(template: str, body: str, specialise: bool) -> Any:
    eng = engine(seed=7)
    eng.specialise = specialise
    try:
        compiled = eng.compile(template, WHERE)
    except SimulationError as exc:
        return ("refused", str(exc))
    ctx = context(using=eng, req=request("/orders/42", query="q=1", body=body), state={"user": "ada"})
    result = compiled.render(ctx)
    return (result.text, result.ok, result.status, result.headers)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(template=templates(), body=bodies)
def test_the_specialised_nodes_render_as_the_general_ones(template: str, body: str) -> None:
    assert outcome(template, body, True) == outcome(template, body, False)


def node_types(template: str) -> set[str]:
    found: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, Program):
            for part in node.parts:
                visit(part)
            return
        if isinstance(node, str) or node is None:
            return
        found.add(type(node).__name__)
        for slot in ("program", "inverse", "param", "expr"):
            visit(getattr(node, slot, None))
        for param in getattr(node, "params", ()):
            visit(param)

    visit(engine().compile(template, WHERE).program)
    return found


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{#each items}}{{@index}}:{{name}}{{#unless @last}},{{/unless}}{{/each}}",
         {"EachBlock", "DataMustache", "LocalMustache", "ConditionBlock", "DataParam"}),
        ("{{#if (isGreaterThan (Request.Body 'jsonpath' '$.qty') '10')}}bulk{{/if}}",
         {"ConditionBlock", "TypedCall", "BodyQuery"}),
        ("{{ Request.Body 'jsonpath' '$.id' }}", {"BodyQueryMustache"}),
        ("{{ multiply '3' '9.5' '' }}", {"TypedCall"}),
        ("{{ Request.Path.[1] }}{{ randomString }}", {"RequestMustache"}),
        ("{{#each (split 'a' ',')}}{{ Request.Header.X-A }}{{/each}}", {"EachBlock", "RequestMustache", "TypedCall"}),
        ("{{#each items as |item|}}{{item.name}}{{/each}}{{#if a includeZero=true}}z{{/if}}", set()),
    ],
)  # fmt: skip
def test_common_shapes_compile_to_the_specialised_nodes(template: str, expected: set[str]) -> None:
    specialised = {
        name for name in node_types(template) if getattr(getattr(fast, name, None), "__module__", "") == fast.__name__
    }
    assert specialised == expected


def test_an_each_over_a_body_array_prints_every_item_as_before() -> None:
    body = json.dumps({"items": [{"sku": "a"}, None, {"sku": "c&d"}]})
    template = (
        "[{{#each (Request.Body 'jsonpath' '$.items')}}{{@index}}={{this.sku}}{{#unless @last}},{{/unless}}{{/each}}]"
    )
    for specialise in (True, False):
        assert outcome(template, body, specialise)[:2] == ("[0=a,1=,2=c&amp;d]", True)


BODY = json.dumps({"name": "Ada", "qty": 3, "items": [None, {"name": "x", "index": "i"}, {"name": "y"}]})
AT_EDGES = [
    # a null item is no context: `this` then reaches the one around it
    ("{{#each (Request.Body 'jsonpath' '$.items')}}[{{@index}}|{{../name}}|{{name}}]{{/each}}", "[0||][1||x][2||y]"),
    ("{{#each (Request.Body 'jsonpath' '$.items')}}{{#if this}}{{this.name}}{{else}}-{{/if}}{{/each}}", "xy"),
    # `@index` outside a loop, and over a map (the general each)
    # a data name the frame does not hold is looked up in the contexts
    ("{{#with Request.QueryParam}}[{{@q}}]{{/with}}", "[1]"),
    ("[{{@index}}|{{#each Request.QueryParam}}{{@key}}={{@index}}{{@first}};{{/each}}]", "[|q=0true;]"),
    # a block parameter named as a field of the item wins over the field
    ("{{#each (Request.Body 'jsonpath' '$.items') as |name|}}<{{name}}>{{/each}}",
     "<><map[index:i name:x]><map[name:y]>"),
    # a body query inside a block whose context is not the root fails the render, as in Hoverfly
    ("{{#each (split 'a,b' ',')}}{{isNumeric (Request.Body 'jsonpath' '$.name')}}{{/each}}", None),
    ("{{#with Request.QueryParam}}{{Request.Body 'jsonpath' '$.name'}}{{/with}}", None),
    ("{{#if true}}{{isNumeric (Request.Body 'jsonpath' '$.name')}}{{/if}}", "false"),
    # a request field printed inside a block whose context is not the root: looked up as raymond does
    ("{{#each (Request.Body 'jsonpath' '$.items')}}[{{Request.Method}}]{{/each}}", "[GET][GET][GET]"),
    ("{{#with Request.QueryParam}}{{Request.QueryParam.q}}|{{q}}{{/with}}", "1|1"),
    # nil for a bool argument: the helper is not called at all
    ("{{putValue 'k' 'v' State.nope}}[{{getValue 'k'}}]", "[]"),
    ("{{#unless (Request.Body 'jsonpath' '$.nope')}}none{{/unless}}", "none"),
]  # fmt: skip


@pytest.mark.parametrize(("template", "expected"), AT_EDGES)
def test_the_specialised_nodes_at_the_edges_of_their_shapes(template: str, expected: str | None) -> None:
    specialised, general = outcome(template, BODY, True), outcome(template, BODY, False)
    assert specialised == general
    assert specialised[:2] == ((template, False) if expected is None else (expected, True))


def test_a_template_of_text_alone_is_given_as_its_text_and_variables_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    eng = engine()
    template = eng.compile("browsing", WHERE)
    assert template.constant is not None
    assert template.render(context(using=eng)) == template.constant
    assert (template.constant.text, template.constant.ok) == ("browsing", True)
    # a variable is computed at every render, whatever the template prints (this one fails, and says so)
    failing = [{"name": "v", "function": "requestBody", "arguments": ["jsonpath", ""]}]
    with caplog.at_level("WARNING"):
        result = template.render(context(using=eng, variables=failing))
    assert (result.text, result.ok) == ("browsing", True)
    assert "variable v left unset" in caplog.text


def test_a_request_field_inside_a_block_is_looked_up_in_the_blocks_context_first() -> None:
    body = json.dumps({"items": [{"Request": {"Method": "PUT"}}, {"name": "x"}]})
    template = "{{#each (Request.Body 'jsonpath' '$.items')}}[{{Request.Method}}]{{/each}}{{Request.Method}}"
    for specialise in (True, False):
        assert outcome(template, body, specialise)[:2] == ("[PUT][GET]GET", True)
