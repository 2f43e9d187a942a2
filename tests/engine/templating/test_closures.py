"""Templates compiled to closures (engine/templating/closures.py) answer as the general render does.

Each generated template is compiled twice, by two engines seeded alike, and rendered once by the
general render and once by its closures against the same request: when the closures answer, the
bytes are the general render's, random values included (they draw in the same order); when the
general render fails, the closures give up. The examples after it pin the shapes the closures take
(the benchmarks' templated answers among them) and the requests they leave to the general render.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simproxy.engine.errors import SimulationError
from simproxy.engine.simulation.model import Response
from simproxy.engine.templating.closures import ClosureText, closure_text
from simproxy.engine.templating.engine import TemplateEngine
from simproxy.engine.templating.pairs import compile_pair_templates, render_pair
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import render_wire
from tests.engine.templating.conftest import context, engine
from tests.engine.templating.test_specialised import WHERE, bodies, templates

LEAVES = [
    "Request.Path.[1]",
    "Request.Header.X-Client",
    "Request.QueryParam.q",
    "Request.Body 'jsonpath' '$.name'",
    "Request.Body 'jsonpath' '$.qty'",
    "Request.Body 'jsonpath' '$.items'",
    "Request.Body 'jsonpath' '$.nothing'",
    "randomString",
    "randomUuid",
    "randomStringLength 4",
    "randomIntegerRange 1 9",
    "randomIntegerRange 9 1",
    "randomFloatRange 1.5 2",
    "randomBoolean",
    "now '' 'unix'",
    "now '2006-01-02' ''",
    "now '-1d' 'Mon Jan 2'",
    "multiply (Request.Body 'jsonpath' '$.qty') '9.5' ''",
    "add (Request.Body 'jsonpath' '$.qty') '1' '0.00'",
    "divide '1' (Request.Body 'jsonpath' '$.qty') ''",
    "length (Request.Body 'jsonpath' '$.name')",
    "replace (Request.Body 'jsonpath' '$.name') 'a' '<'",
    "substring 'abcdef' '1' '3'",
    "concat 'a' (Request.Body 'jsonpath' '$.name')",
    "isNumeric (Request.Body 'jsonpath' '$.qty')",
    "matchesRegex (Request.Body 'jsonpath' '$.name') '^A'",
    "jsonFromJWT '$.sub' 'x'",
    "State.user",
    "State.[sequence:1]",
    "State.absent",
]
CONDITIONS = [
    "(isGreaterThan (Request.Body 'jsonpath' '$.qty') '10')",
    "(Request.Body 'jsonpath' '$.name')",
    "(isBool 'true')",
    "''",
    "(randomBoolean)",
]
LISTS = [
    "(split 'a,b,,c' ',')",
    "(split (Request.Body 'jsonpath' '$.name') ',')",
    "(Request.Body 'jsonpath' '$.items')",
    "(Request.Body 'jsonpath' '$.name')",
]
ITEM_PARTS = ["{{this}}", "{{{this}}}", "{{@index}}", "{{@first}}", "{{@last}}", "{{name}}", "{{{qty}}}", "-", "&"]


def _mustache(leaf: str, raw: bool) -> str:
    return "{{{" + leaf + "}}}" if raw else "{{" + leaf + "}}"


def closed_template(pick: Callable[[Sequence[Any]], Any]) -> str:
    """A template mostly of the shapes the closures take, with a few they do not; ``pick`` chooses."""
    parts = []
    for _ in range(pick(range(1, 6))):
        kind = pick(["text", "leaf", "leaf", "if", "each"])
        if kind == "text":
            parts.append(pick(['{"a": ', ", ", "<b>", '"', ""]))
        elif kind == "leaf":
            parts.append(_mustache(pick(LEAVES), pick([False, True])))
        elif kind == "if":
            helper = pick(["if", "unless"])
            branch = pick(["yes", "", _mustache(pick(LEAVES), False)])
            inverse = pick(["", "{{else}}no", "{{else}}{{randomString}}"])
            parts.append(f"{{{{#{helper} {pick(CONDITIONS)}}}}}{branch}{inverse}{{{{/{helper}}}}}")
        else:
            items = "".join(pick(ITEM_PARTS) for _ in range(pick(range(1, 5))))
            separator = pick(
                ["", "{{#unless @last}},{{/unless}}", "{{#if @first}}^{{/if}}", "{{#if @index}};{{else}}0{{/if}}"]
            )
            parts.append(f"{{{{#each {pick(LISTS)}}}}}{items}{separator}{{{{/each}}}}")
    return "".join(parts)


@st.composite
def closed_templates(draw: st.DrawFn) -> str:
    return closed_template(lambda options: draw(st.sampled_from(options)))


def _request(body: str) -> RequestDetails:
    return RequestDetails.build(
        "POST", "http", "shop.test", "/orders/42", "q=1", body, {"X-Client": ["web&co"], "Content-Type": ["x"]}
    )


def compiled(eng: TemplateEngine, template: str) -> ClosureText | None:
    """``template`` as closures, as a pair's body compiles it."""
    return closure_text(eng.compile(template, WHERE).program, eng)


def both(template: str, body: str, hoverfly: bool = False) -> tuple[Any, Any, bool]:
    """(the general render's (text, ok), the closures' text or None, whether it compiled to closures)."""
    try:
        general = engine(seed=7).compile(template, WHERE)
    except SimulationError:
        return None, None, False
    closures = compiled(engine(seed=7), template)
    req = _request(body)
    state = {"user": "ada<&>", "sequence:1": "2"}
    result = general.render(context(using=general.engine, req=req, state=state, hoverfly=hoverfly))
    closed = None if closures is None else closures.render(req, hoverfly, state)
    return (result.text, result.ok, result.status, result.headers), closed, closures is not None


def agrees(template: str, body: str, hoverfly: bool = False) -> bool:
    """The closures gave the general render's text, or gave up; True when they answered."""
    general, closed, _ = both(template, body, hoverfly)
    if closed is None:
        return False
    assert general == (closed, True, None, ())
    return True


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(template=closed_templates(), body=bodies, hoverfly=st.booleans())
def test_closures_render_as_the_general_render(template: str, body: str, hoverfly: bool) -> None:
    agrees(template, body, hoverfly)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(template=templates(), body=bodies)
def test_closures_agree_on_the_specialised_nodes_own_templates(template: str, body: str) -> None:
    agrees(template, body)


def test_the_generated_templates_mostly_take_the_closures() -> None:
    """The property tests above compare something: most generated templates are answered by closures."""
    body = json.dumps({"name": "Ada", "qty": 12, "items": [{"name": "x", "qty": 1}, {"name": "y", "qty": 2}]})
    rng = random.Random(3)
    answered = sum(agrees(closed_template(rng.choice), body) for _ in range(200))
    assert answered >= 100


ORDER = (
    "{\"order\": \"{{ Request.Body 'jsonpath' '$.id' }}\", "
    "\"total\": {{ multiply (Request.Body 'jsonpath' '$.qty') '9.5' '' }}, "
    "\"tier\": \"{{#if (isGreaterThan (Request.Body 'jsonpath' '$.qty') '10')}}bulk{{else}}retail{{/if}}\", "
    "\"tags\": [{{#each (split 'a,b,c' ',')}}\"{{this}}\"{{#unless @last}},{{/unless}}{{/each}}], "
    '"via": "{{ Request.Header.X-Client }}"}'
)
LINES = (
    '[{{#each (Request.Body \'jsonpath\' \'$.items\')}}{"line": {{@index}}, "sku": "{{this.sku}}"}'
    "{{#unless @last}},{{/unless}}{{/each}}]"
)


@pytest.mark.parametrize(
    ("template", "body", "expected"),
    [
        (ORDER, '{"id": "o7", "qty": 12}',
         '{"order": "o7", "total": 114, "tier": "bulk", "tags": ["a","b","c"], "via": "web&amp;co"}'),
        (ORDER, '{"id": "o8", "qty": 2}',
         '{"order": "o8", "total": 19, "tier": "retail", "tags": ["a","b","c"], "via": "web&amp;co"}'),
        (LINES, '{"items": [{"sku": "s0"}, {"sku": "s<1>"}]}',
         '[{"line": 0, "sku": "s0"},{"line": 1, "sku": "s&lt;1&gt;"}]'),
        ("{{ Request.Path.[1] }}:{{ now '' 'unix' }}", "", "42:1514764800"),
    ],
)  # fmt: skip
def test_the_benchmarks_templated_answers_take_the_closures(template: str, body: str, expected: str) -> None:
    general, closed, compiled = both(template, body)
    assert compiled and closed == expected
    assert general == (expected, True, None, ())


@pytest.mark.parametrize(
    ("template", "body"),
    [
        ("{{#each (Request.Body 'jsonpath' '$.items')}}{{this}}{{else}}none{{/each}}", '{"items": []}'),  # empty
        ("{{#each (Request.Body 'jsonpath' '$.items')}}<{{this}}>{{/each}}", '{"items": [1, null]}'),  # a nil item
        ("{{#each (Request.Body 'jsonpath' '$.items')}}{{name}}{{/each}}", '{"items": [{"qty": 1}]}'),  # no field
        ("{{#each (Request.Body 'jsonpath' '$.items')}}{{name}}{{/each}}", '{"items": ["a"]}'),  # not a map
        ("{{#each (Request.Body 'jsonpath' '$.m')}}{{@index}}{{/each}}", '{"m": {"k": 1}}'),  # a map
        ("x{{ randomIntegerRange 9 1 }}", ""),  # the helper fails the render
        ("{{ concat 'a' 'b' }}", ""),  # under -compat hoverfly, concat fails as raymond's does
    ],
)
def test_requests_the_closures_cannot_answer_are_left_to_the_general_render(template: str, body: str) -> None:
    general, closed, compiled = both(template, body, hoverfly=True)
    assert compiled
    assert closed is None
    assert general is not None


@pytest.mark.parametrize(
    "template",
    [
        "{{ State }}{{ randomString }}",  # the whole state
        "{{ putValue 'k' 'v' true }}{{ getValue 'k' }}",  # the render's key-value store
        "{{ setStatusCode '201' }}",
        "{{ csv 'pets' 'id' '1' 'name' }}",
        "{{#each (split 'a' ',') as |x|}}{{x}}{{/each}}",  # block parameters
        "{{#each (split 'a' ',')}}{{ randomString }}{{/each}}",  # a helper inside a loop
        "{{#with (Request.Body 'jsonpath' '$.a')}}{{b}}{{/with}}",
        "{{ Request.Path.[1] }}",  # request fields alone: DirectAnswer's
        "no mustache",
    ],
)
def test_other_shapes_do_not_compile_to_closures(template: str) -> None:
    assert compiled(engine(lenient=True), template) is None


@pytest.mark.parametrize(
    ("template", "answer"),
    [
        ("{{ State.user }}{{ Request.Path.[1] }}", "stated"),  # the closures could, StatedAnswer does
        ("{{ Request.Path.[1] }}", "direct"),
        ("{{ State.user }}{{ randomString }}", "closed"),
    ],
)
def test_a_pairs_body_is_answered_by_one_fast_form_the_simplest_that_takes_it(template: str, answer: str) -> None:
    response = Response(status=200, body=template.encode(), templated=True)
    templates = compile_pair_templates(response, engine(), "data.pairs[0].response", "pair-0")
    forms = {"direct": templates.direct, "stated": templates.stated, "closed": templates.closed}
    assert [name for name, form in forms.items() if form is not None] == [answer]


@pytest.mark.parametrize("webserver", [False, True])
def test_a_closure_answer_is_the_wire_of_the_general_render(webserver: bool) -> None:
    response = Response(status=201, body=ORDER.encode(), headers=(("X-Kind", ("order",)),), templated=True)
    templates = compile_pair_templates(response, engine(), "data.pairs[0].response", "pair-0")
    assert templates is not None and templates.closed is not None
    req = _request('{"id": "o7", "qty": 12}')
    ctx = context(req=req)
    general = render_pair(templates, response, req, {}, {}, ctx.variables, ctx.csv)
    expected = render_wire(general.response, "a templated response", "pair-0", webserver=webserver)
    assert templates.closed.wire(req, webserver, False, {}) == expected


def test_a_templated_header_or_transition_keeps_the_general_render() -> None:
    for response in (
        Response(body=b"{{ randomString }}", headers=(("X-A", ("{{ randomString }}",)),), templated=True),
        Response(body=b"{{ randomString }}", templated=True, transitions_state=(("k", "{{ Request.Method }}"),)),
    ):
        templates = compile_pair_templates(response, engine(), "data.pairs[0].response", "pair-0")
        assert templates is not None and templates.closed is None


def test_a_journey_step_with_helpers_is_answered_with_its_fixed_transitions() -> None:
    body = '{"user": "{{ State.user }}", "id": "{{ randomUuid }}", "qty": {{ Request.Body \'jsonpath\' \'$.qty\' }} }'
    response = Response(body=body.encode(), templated=True, transitions_state=(("stage", "paid"), ("n", "")))
    templates = compile_pair_templates(response, engine(seed=3), "data.pairs[0].response", "pair-0")
    assert templates is not None and templates.closed is not None and templates.stated is None
    req, state = _request('{"qty": 2}'), {"user": "ada", "stage": "browsing"}
    reference = compile_pair_templates(response, engine(seed=3), "data.pairs[0].response", "pair-0")
    assert reference is not None
    ctx = context(req=req, state=state)
    general = render_pair(reference, response, req, state, {}, ctx.variables, ctx.csv)
    expected = render_wire(general.response, "a templated response", "pair-0", webserver=False)
    assert templates.closed.wire(req, False, False, state) == expected
    assert templates.closed.transitions == general.transitions == (("stage", "paid"), ("n", ""))
