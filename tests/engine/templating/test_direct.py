"""Templates that print only request fields are answered straight from the request
(engine/templating/direct.py), and other renders that keep the pair's status and headers through
the pair's wire shape: the same text and the same wire as the general render."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simproxy.engine.errors import SimulationError
from simproxy.engine.simulation.model import Response
from simproxy.engine.templating.pairs import compile_pair_templates, render_pair
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import render_wire
from tests.engine.templating.conftest import context, engine

# text that HTML escaping changes, non-ASCII, separators of paths and queries
_TEXT = st.text(alphabet="ab<>&\"'é/ =;", max_size=6)
_RAW = st.text(alphabet="a\udcc3\udca9", max_size=3)
"""Text as the proxy decodes it: bytes that were not UTF-8 kept as surrogates (``surrogateescape``);
two fields printed side by side may join into UTF-8 again (``\\xc3`` then ``\\xa9`` is é)."""
_NAMES = ("id", "name", "q")
_HEADERS = ("X-Trace", "Accept", "X-Empty", "X-Raw")


def _fields(draw: st.DrawFn, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """Each name with none, one or several values (Go's ``[]string``), interleaved."""
    fields = [(name, value) for name in names for value in draw(st.lists(_TEXT, max_size=3))]
    return draw(st.permutations(fields))


@st.composite
def requests(draw: st.DrawFn) -> RequestDetails:
    method = draw(st.sampled_from(("GET", "POST", "PUT", "DELETE", "get")))
    segments = st.one_of(_TEXT, _RAW)
    path = draw(st.one_of(st.just(""), st.lists(segments, max_size=4).map(lambda parts: "/" + "/".join(parts))))
    query = "&".join(f"{name}={quote(value)}" for name, value in _fields(draw, _NAMES))
    headers: dict[str, list[str]] = {}
    for name, value in _fields(draw, _HEADERS):
        headers.setdefault(name, []).append(value)
    for value in draw(st.lists(_RAW, max_size=2)):
        headers.setdefault("X-Raw", []).append(value)
    body = ""
    if draw(st.booleans()):
        headers["Content-Type"] = ["application/x-www-form-urlencoded"]
        body = "&".join(f"{name}={quote(value)}" for name, value in _fields(draw, _NAMES))
    scheme = draw(st.sampled_from(("http", "https")))
    return RequestDetails.build(method, scheme, "Example.com:8080", path, query, body, headers)


_INDEXES = ("[0]", "[1]", "[2]", "[5]")
_PATHS = st.one_of(
    st.sampled_from(("Request.Method", "request.method", "Request.Scheme", "Request.Host", "Request.Path")),
    st.sampled_from(_INDEXES).map(lambda at: f"Request.Path.{at}"),
    st.tuples(
        st.sampled_from(("QueryParam", "Header", "FormData", "queryParam")),
        st.sampled_from((*_NAMES, *_HEADERS, "[id]", "absent")),
        st.sampled_from(("", *(f".{at}" for at in _INDEXES))),
    ).map(lambda p: f"Request.{p[0]}.{p[1]}{p[2]}"),
)
_PIECES = st.one_of(
    st.text(alphabet='ab {"}:,\n<&', max_size=5).filter(lambda t: "{{" not in t and "}" not in t and "{" not in t),
    st.tuples(_PATHS, st.booleans()).map(lambda p: "{{{ " + p[0] + " }}}" if p[1] else "{{ " + p[0] + " }}"),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=6), requests())
def test_a_direct_template_prints_what_the_general_render_prints(pieces: list[str], req: RequestDetails) -> None:
    template = engine().compile("".join(pieces), "data.pairs[0].response.body")
    assert template.direct is not None
    rendered = template.render(context(req=req))
    assert rendered.ok
    assert template.direct.render(req) == rendered.text


_HEADER_SETS = st.lists(
    st.tuples(
        st.sampled_from(("Content-Type", "content-type", "X-Id", "Date", "Content-Encoding")),
        st.lists(st.sampled_from(("application/json", "a b", "é", "1")), min_size=1, max_size=2).map(tuple),
    ),
    max_size=3,
    unique_by=lambda h: h[0].lower(),
)


_JOINED = RequestDetails.build("GET", "http", "a.test", "/\udcc3/\udca9", "", "", {"X-Raw": ["\udcc3", "\udca9"]})
"""Bytes that are not UTF-8 alone but are together (``\\xc3\\xa9``, é) once two fields are printed."""


@settings(max_examples=300, deadline=None)
@example(["{{ Request.Header.X-Raw }}"], _JOINED, [], 200, False)
@example(["{{ Request.Path.[0] }}{{ Request.Path.[1] }}"], _JOINED, [], 200, True)
@given(
    st.lists(_PIECES, max_size=5),
    requests(),
    _HEADER_SETS,
    st.sampled_from((200, 201, 404, 500, 299, 599)),
    st.booleans(),
)
def test_a_direct_answer_is_the_wire_of_the_rendered_response(
    pieces: list[str],
    req: RequestDetails,
    headers: list[tuple[str, tuple[str, ...]]],
    status: int,
    webserver: bool,
) -> None:
    """Head (sniffed type, length), body, journal parts and every other field of the wire."""
    response = Response(status=status, body="".join(pieces).encode(), headers=tuple(headers), templated=True)
    eng = engine()
    templates = compile_pair_templates(response, eng, "data.pairs[0].response", "pair-0")
    assert templates is not None and templates.direct is not None
    ctx = context(req=req, using=eng)
    general = render_pair(templates, response, req, {}, {}, ctx.variables, ctx.csv)
    expected = render_wire(general.response, "a templated response", "pair-0", webserver=webserver)
    assert templates.direct.wire(req, webserver) == expected


@pytest.mark.parametrize(
    "body",
    [
        "{{ Request.Body 'jsonpath' '$.id' }}",  # a function field
        "{{ Request.Path.[-1] }}",  # Hoverfly crashes on it: the general render fails it
        "{{ Request.Path.x }}",
        "{{ Request.Method.x }}",
        "{{ Request.QueryParam }}",  # the whole map
        "{{ Request.QueryParam.id.[0].x }}",
        "{{ State.x }}",
        "{{ Vars.x }}",
        "{{ first Request.Path }}",
        "{{#if Request.Method}}x{{/if}}",
        "{{ this }}",
        "{{ @root.Request.Method }}",
        "{{ ../Request.Method }}",
    ],
)
def test_templates_that_need_more_than_request_fields_are_left_to_the_general_render(body: str) -> None:
    assert engine().compile(body, "data.pairs[0].response.body").direct is None


_ECHO = b"{{ Request.Method }}"


@pytest.mark.parametrize(
    ("response", "why"),
    [
        (Response(body=_ECHO, templated=True, headers=(("X", ("{{ Request.Method }}",)),)), "a templated header"),
        (Response(body=_ECHO, templated=True, transitions_state=(("k", "v"),)), "a state step"),
        (Response(status=204, body=_ECHO, templated=True), "a status without a body"),
        (Response(body=_ECHO, templated=True, headers=(("Content-Length", ("3",)),)), "a declared length"),
        (Response(body=_ECHO, templated=True, headers=(("Transfer-Encoding", ("chunked",)),)), "chunked framing"),
    ],
)
def test_answers_whose_wire_depends_on_more_than_the_body_are_rendered_in_full(response: Response, why: str) -> None:
    templates = compile_pair_templates(response, engine(), "data.pairs[0].response")
    assert templates is not None
    assert templates.body.direct is not None
    assert templates.direct is None, why


_GENERAL = st.sampled_from(
    (
        "{{ State.x }}",
        "{{ concat Request.Method '<é>' }}",
        "{{ setStatusCode 201 }}",
        "{{ setStatusCode 'x' }}",
        "{{ setHeader 'X-Id' 'set' }}",
        "{{ setHeader 'content-type' 'text/csv' }}",
        "{{ Request.Path.x }}",
        "{{#if Request.Method}}m{{/if}}",
        "{{ nothing ",  # does not compile as a template: served as it is
    )
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(_PIECES, _GENERAL), max_size=5),
    requests(),
    _HEADER_SETS,
    st.sampled_from((200, 201, 404, 500, 204, 304)),
    st.booleans(),
    st.sampled_from(("", "{{ Request.Method }}", "plain")),
)
def test_any_render_is_served_as_the_wire_of_the_rendered_response(
    pieces: list[str],
    req: RequestDetails,
    headers: list[tuple[str, tuple[str, ...]]],
    status: int,
    webserver: bool,
    transition: str,
) -> None:
    """A render that keeps the pair's status and headers is served through the pair's wire shape,
    any other as its rendered response: both the same wire."""
    response = Response(
        status=status,
        body="".join(pieces).encode(),
        headers=tuple(headers),
        templated=True,
        transitions_state=(("step", transition),) if transition else None,
    )
    eng = engine()
    try:
        templates = compile_pair_templates(response, eng, "data.pairs[0].response", "pair-0")
    except SimulationError:
        return  # refused when the simulation is loaded: never served
    assert templates is not None
    ctx = context(req=req, using=eng)
    rendered = render_pair(templates, response, req, {"x": "é<"}, {}, ctx.variables, ctx.csv)
    expected = render_wire(rendered.response, "a templated response", "pair-0", webserver=webserver)
    assert rendered.wire("pair-0", webserver=webserver) == expected


def test_a_render_that_changes_the_status_or_a_header_is_not_served_through_the_shape() -> None:
    eng = engine()
    ctx = context(req=_JOINED, using=eng)
    shaped = []
    for body in ("{{ State.x }}", "{{ setStatusCode 201 }}a", "{{ setHeader 'X-Id' 'v' }}a"):
        response = Response(body=body.encode(), headers=(("X-Id", ("1",)),), templated=True)
        templates = compile_pair_templates(response, eng, "data.pairs[0].response", "pair-0")
        assert templates is not None and templates.shapes is not None
        rendered = render_pair(templates, response, _JOINED, {"x": "1"}, {}, ctx.variables, ctx.csv)
        shaped.append(rendered.shapes is not None)
    assert shaped == [True, False, False]
    templated_header = Response(body=b"x", headers=(("X-Id", ("{{ Request.Method }}",)),), templated=True)
    templates = compile_pair_templates(templated_header, eng, "data.pairs[0].response", "pair-0")
    assert templates is not None and templates.shapes is None
