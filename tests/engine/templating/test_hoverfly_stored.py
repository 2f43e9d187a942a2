"""Templates Hoverfly v1.12.10 stores though they cannot run as written (issue 38): the spec dialect
refuses them naming what is wrong and what ``-compat hoverfly`` would do; a lenient engine
(``-compat hoverfly``'s writes, and every stored document) loads them and serves what Hoverfly
serves. And ``concat``, which Hoverfly's raymond cannot call from a template, under
``-compat hoverfly``. Every expected text below was seen beside a real Hoverfly v1.12.10."""

from __future__ import annotations

import pytest

from simproxy.engine.errors import SimulationError
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.matching.scoring import compile_simulation
from simproxy.engine.simulation.model import Response
from simproxy.engine.templating.pairs import compile_pair_templates, render_pair
from tests.engine.conftest import exact, pair, simulation
from tests.engine.templating.conftest import context, engine, render, request

WHERE = "data.pairs[0].response.body"
COMPAT = "-compat hoverfly loads it as Hoverfly does: "
AS_WRITTEN = "every render fails and the template is served as it is written"

UNPARSABLE = [
    "{{#if Request.Method}}yes",  # a block never closed
    "a {{/if}} b",  # a block closed that was never opened
    "{{ Literals.<literal name> }}",  # the docs' placeholders
    "{{ Vars.<variable name> }}",
    '{{journal "Request.QueryParam.id" "1"',  # a mustache never closed
    "{{isGreater (Request.Body 'jsonpath' '$.age') 25}",  # one closing brace
    '{"n": {{ Request.Method }}}',  # JSON's closing brace read as a triple stash
]

UNWORKABLE_CALLS = [
    "{{ randomIntegerRange 1 }}",  # wrong argument counts
    "{{ replace 'a' 'b' }}x",
    "{{ faker }}",
    "[{{ now 'a' }}]",
    "[{{ randomStringLength 'x' }}]",  # literals of the wrong kind
    "[{{ randomFloatRange 1 2 }}]",
]

UNKNOWN_HELPERS = [
    ('{{ nosuchhelper "x" }} rest {{Request.Method}}', " rest GET"),
    ("[{{ nosuchhelper }}|{{ nosuchhelper 'x' }}|{{#nosuch 'x'}}in{{else}}out{{/nosuch}}|{{ Request.Method 'x' }}]",
     "[||out|GET]"),
    ("[{{ length (parseJson 'x') }}]", "[0]"),
    # Hoverfly's own test: the unknown helper gives nothing, so the block iterates over nothing
    ("{{#each (csvSQL \"SELECT foo FROM bar WHERE id == '1'\")}} {{/each}}", ""),
]  # fmt: skip


@pytest.mark.parametrize("template", UNPARSABLE)
def test_the_spec_refuses_a_template_that_does_not_parse_saying_what_compat_does(template: str) -> None:
    with pytest.raises(SimulationError) as refused:
        engine().compile(template, WHERE)
    assert refused.value.path == WHERE
    assert refused.value.message.startswith("template parse error: Parse error on line 1:\n")
    assert refused.value.message.endswith(f" ({COMPAT}{AS_WRITTEN})")


def test_the_refusal_of_an_unclosed_block_reads_in_full() -> None:
    with pytest.raises(SimulationError) as refused:
        engine().compile("{{#if Request.Method}}yes", WHERE)
    assert str(refused.value) == (
        "data.pairs[0].response.body: template parse error: Parse error on line 1:\n"
        "Expecting OpenEndBlock, got: 'EOF{''}' "
        "(-compat hoverfly loads it as Hoverfly does: every render fails and the template is served as it is written)"
    )


@pytest.mark.parametrize("template", UNPARSABLE + UNWORKABLE_CALLS)
def test_a_lenient_engine_serves_them_as_written(template: str) -> None:
    eng = engine(lenient=True)
    result = render(template, using=eng, req=request("/orders/42", body='{"age": 30}'))
    assert (result.ok, result.text, result.status, result.headers) == (False, template, None, ())


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{{ replace 'a' 'b' }}x", "helper replace takes 3 argument(s), got 2"),
        ("[{{ randomStringLength 'x' }}]", "helper randomStringLength argument 1 is a string literal but must be int"),
        ("[{{ randomFloatRange 1 2 }}]", "helper randomFloatRange argument 1 is an int literal but must be float64"
         " (a number written with a decimal point)"),
    ],
)  # fmt: skip
def test_the_spec_refuses_a_call_that_cannot_work_saying_what_compat_does(template: str, message: str) -> None:
    with pytest.raises(SimulationError) as refused:
        engine().compile(template, WHERE)
    assert refused.value.message == (
        f"template error: {message} ({COMPAT}the render fails and the template is served as it is written)"
    )


@pytest.mark.parametrize(("template", "expected"), UNKNOWN_HELPERS)
def test_an_unknown_helper_gives_nothing_in_a_lenient_engine(template: str, expected: str) -> None:
    with pytest.raises(SimulationError) as refused:
        engine().compile(template, WHERE)
    assert refused.value.message.endswith(f" ({COMPAT}the call gives nothing, which prints as an empty text)")
    result = render(template, using=engine(lenient=True))
    assert (result.ok, result.text) == (True, expected)


def test_the_refusal_names_the_unknown_helper() -> None:
    with pytest.raises(SimulationError) as refused:
        engine().compile(UNKNOWN_HELPERS[-1][0], WHERE)
    assert refused.value.message == (
        f"template error: unknown helper 'csvSQL' ({COMPAT}the call gives nothing, which prints as an empty text)"
    )


def test_a_template_nested_deeper_than_the_stack_is_refused_in_both_dialects() -> None:
    for lenient in (False, True):
        with pytest.raises(SimulationError, match="nested too deeply"):
            engine(lenient=lenient).compile("{{#if a}}" * 400 + "{{/if}}" * 400, WHERE)


def test_headers_and_transitions_that_do_not_parse_stay_as_written_and_the_body_still_applies() -> None:
    response = Response(
        body=b"ok {{ setStatusCode 201 }}",
        headers=(("X-A", ("{{ nosuchhelper 'q' }}h",)), ("X-B", ("{{#if}}",))),
        templated=True,
        transitions_state=(("s", "{{#if x}}"), ("t", "{{ Request.Method }}")),
    )
    eng = engine(lenient=True)
    templates = compile_pair_templates(response, eng, "data.pairs[0].response")
    assert templates is not None
    req = request("/x")
    ctx = context(using=eng, req=req)
    rendered = render_pair(templates, response, req, {}, {}, ctx.variables, ctx.csv)
    # one header fails, so every header is served as written (the other renders as "h" alone)
    assert (rendered.text, rendered.status, rendered.headers) == ("ok ", 201, response.headers)
    assert rendered.transitions == response.transitions_state


def test_a_simulation_compiles_its_templates_as_leniently_as_its_matchers() -> None:
    sim = simulation(pair({"path": [exact("/a")]}, body="{{#if Request.Method}}yes", templated=True))
    with pytest.raises(SimulationError) as refused:
        compile_simulation(sim, MatcherRegistry())
    assert refused.value.path == "data.pairs[0].response.body"
    loaded = compile_simulation(sim, MatcherRegistry(lenient=True))
    templates = loaded.pairs[0].templates
    assert templates is not None
    assert templates.body.render(context()).text == "{{#if Request.Method}}yes"


CONCAT = [
    ("{{ concat 'bee' 'hive' 'buzz' }}", "beehivebuzz", "{{ concat 'bee' 'hive' 'buzz' }}"),
    ("{{ concat 'ORD-' Request.Path.[1] }}", "ORD-42", "{{ concat 'ORD-' Request.Path.[1] }}"),
    ("{{ concat 'one' }}", "one", "{{ concat 'one' }}"),
    ("[{{concat}}]", "[]", "[{{concat}}]"),
    ("[{{concat 5}}]", "[5]", "[{{concat 5}}]"),
    ("[{{concat Request.Path}}]", "[orders42]", "[{{concat Request.Path}}]"),  # a []string is no []interface {}
    ("[{{concat (split 'a,b' ',')}}]", "[ab]", "[{{concat (split 'a,b' ',')}}]"),
    ("[{{#if (concat 'a' 'b')}}y{{/if}}]", "[y]", "[{{#if (concat 'a' 'b')}}y{{/if}}]"),
    ("{{ concat 'a' 'b' }} {{ setStatusCode '201' }}", "ab ", "{{ concat 'a' 'b' }} {{ setStatusCode '201' }}"),
    # the one argument raymond can pass: nil (an empty array) or an array of any values
    ("[{{concat Request.Nope}}]", "[]", "[]"),
    ("[{{concat (Request.Body 'jsonpath' '$.ids')}}]", "[12]", "[12]"),
]


@pytest.mark.parametrize(("template", "spec", "hoverfly"), CONCAT)
def test_concat_works_in_the_spec_dialect_and_as_hoverflys_raymond_calls_it_under_compat(
    template: str, spec: str, hoverfly: str
) -> None:
    req = request("/orders/42", body='{"ids": [1, 2]}')
    assert render(template, req=req).text == spec
    assert render(template, req=req, hoverfly=True).text == hoverfly
