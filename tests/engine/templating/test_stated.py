"""A stateful journey's answer, text with request fields and state keys and fixed transitions, is
answered straight from the request and the state (``StatedAnswer``): the same wire and the same
transitions as the general render on that state."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simproxy.engine.simulation.model import Response
from simproxy.engine.templating.pairs import compile_pair_templates, render_pair
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import render_wire
from tests.engine.templating.conftest import context, engine
from tests.engine.templating.test_direct import _HEADER_SETS, _PIECES, requests

_KEYS = ("user", "stage", "sequence:1", "User", "absent")
_STATE_PIECES = st.tuples(st.sampled_from(_KEYS), st.booleans(), st.sampled_from(("State", "state"))).map(
    lambda p: "{{{ " + f"{p[2]}.[{p[0]}]" + " }}}" if p[1] else "{{ " + f"{p[2]}.[{p[0]}]" + " }}"
)
_STATES = st.dictionaries(st.sampled_from(_KEYS[:-1]), st.text(alphabet="ab<>&\"'é =", max_size=5), max_size=4)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.one_of(_PIECES, _STATE_PIECES), max_size=6).filter(lambda p: any("tate." in x for x in p)),
    requests(),
    _STATES,
    _HEADER_SETS,
    st.sampled_from((200, 201, 404)),
    st.booleans(),
    st.sampled_from(((), (("stage", "paid"),), (("stage", "paid"), ("n", "")))),
)
def test_a_stated_answer_is_the_wire_and_the_steps_of_the_general_render(
    pieces: list[str],
    req: RequestDetails,
    state: dict[str, str],
    headers: list[tuple[str, tuple[str, ...]]],
    status: int,
    webserver: bool,
    transitions: tuple[tuple[str, str], ...],
) -> None:
    response = Response(
        status=status,
        body="".join(pieces).encode(),
        headers=tuple(headers),
        templated=True,
        transitions_state=transitions or None,
    )
    eng = engine()
    templates = compile_pair_templates(response, eng, "data.pairs[0].response", "pair-0")
    assert templates is not None
    ctx = context(req=req, state=state, using=eng)
    general = render_pair(templates, response, req, state, {}, ctx.variables, ctx.csv)
    if templates.stated is None:  # "{{ state.x }}": Go's field names are capitalised, no State field
        assert templates.body.stated is None or templates.shapes is None
        return
    expected = render_wire(general.response, "a templated response", "pair-0", webserver=webserver)
    assert templates.stated.wire(req, state, webserver) == expected
    assert templates.stated.transitions == general.transitions


@pytest.mark.parametrize(
    ("body", "transition"),
    [
        ("{{ State.user.[0] }}", ""),  # indexes into the value
        ("{{ State }}", ""),  # the whole map
        ("{{ concat State.user 'x' }}", ""),  # a helper
        ("{{ State.user }}", "{{ Request.Method }}"),  # a transition that renders
        ("{{#if State.user}}x{{/if}}", ""),
        ("{{ State.user.x }}", ""),
    ],
)
def test_stateful_answers_that_need_more_are_left_to_the_general_render(body: str, transition: str) -> None:
    response = Response(
        body=body.encode(), templated=True, transitions_state=(("k", transition),) if transition else None
    )
    templates = compile_pair_templates(response, engine(), "data.pairs[0].response", "pair-0")
    assert templates is not None and templates.stated is None


def test_the_journey_step_of_the_benchmarks_is_answered_on_the_state() -> None:
    body = '{"user": "{{ State.user }}", "stage": "{{ State.stage }}", "item": "{{ Request.QueryParam.sku }}"}'
    response = Response(body=body.encode(), templated=True, transitions_state=(("stage", "browsing"),))
    templates = compile_pair_templates(response, engine(), "data.pairs[0].response", "pair-0")
    assert templates is not None and templates.stated is not None
    req = RequestDetails.build("GET", "http", "shop.test", "/basket", "sku=a7", "", {})
    wire = templates.stated.wire(req, {"user": "ada<", "stage": "browsing"}, False)
    assert wire.body == b'{"user": "ada&lt;", "stage": "browsing", "item": "a7"}'
    assert templates.stated.transitions == (("stage", "browsing"),)
