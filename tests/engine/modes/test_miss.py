"""The plain-text body of the 502 a miss answers (spec §4.6), with simproxy's name where Hoverfly writes its own."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from simproxy.engine.matching.scoring import ClosestMiss
from simproxy.engine.modes.failures import PairTexts, miss_text, pair_texts
from simproxy.engine.simulation.model import Matcher, Pair, RequestMatcher, Response
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import plain_error
from tests.engine.conftest import compiled, exact, glob, m, request, run, simulation

PREFIX = "simproxy Error!\n\nThere was an error when matching\n\nGot error: "
NO_MATCH = "Could not find a match for request, create or record a valid matcher first!"

GO_CLIENT_HEADERS = {"User-Agent": ["Go-http-client/1.1"], "Accept-Encoding": ["gzip"]}

FUNCTIONAL_TEST_EXPECTED = """simproxy Error!

There was an error when matching

Got error: Could not find a match for request, create or record a valid matcher first!

The following request was made, but was not matched by simproxy:

{
    "Path": "/closest-miss",
    "Method": "GET",
    "Destination": "destination.com",
    "Scheme": "http",
    "Query": {},
    "Body": "",
    "FormData": {},
    "Headers": {
        "Accept-Encoding": [
            "gzip"
        ],
        "User-Agent": [
            "Go-http-client/1.1"
        ]
    }
}

Whilst simproxy has the following state:

{}

The matcher which came closest was:

{
    "path": [
        {
            "matcher": "exact",
            "value": "/closest-miss"
        }
    ],
    "destination": [
        {
            "matcher": "exact",
            "value": "destination.com"
        }
    ],
    "body": [
        {
            "matcher": "exact",
            "value": "body"
        }
    ]
}

But it did not match on the following fields:

[body]

Which if hit would have given the following response:

{
    "status": 200,
    "body": "",
    "encodedBody": false,
    "templated": false
}"""


def miss_body(requests: list[dict[str, Any]], req: Any, state: dict[str, str] | None = None, **kwargs: Any) -> str:
    result = run(compiled(*requests), req, state, **kwargs)
    assert result.pair is None
    return miss_text(req, result.closest)


def section(text: str, title: str) -> str:
    """The block that follows ``title`` in a miss body, up to the next blank-line-separated title."""
    start = text.index(title) + len(title) + 2
    end = text.find("\n\n", start)
    return text[start : end if end != -1 else None]


def test_the_functional_test_example_verbatim() -> None:
    sim = compiled(
        {"path": [exact("/closest-miss")], "destination": [exact("destination.com")], "body": [exact("body")]}
    )
    req = request("/closest-miss", destination="destination.com", headers=GO_CLIENT_HEADERS)
    result = run(sim, req)
    assert result.pair is None
    assert miss_text(req, result.closest) == FUNCTIONAL_TEST_EXPECTED


def test_the_first_strategy_ends_after_the_bare_message() -> None:
    body = miss_body([{"path": [exact("/other")]}], request("/a"), strategy="first")
    assert body == PREFIX + NO_MATCH


def test_an_empty_simulation_ends_after_the_bare_message() -> None:
    assert miss_body([], request("/a")) == PREFIX + NO_MATCH


def test_html_characters_are_escaped_in_every_block() -> None:
    body = miss_body(
        [{"path": [exact("/<b>&")], "headers": {"X-Tag": [glob("<*>")]}}],
        request("/<a>&", headers={"X-Tag": ["<i>&amp;"]}, query="q=%3Cx%3E%26"),
        {"page": "<p>&"},
    )
    for raw in "<>&":
        assert raw not in body.split(NO_MATCH)[1]
    assert '"Path": "/\\u003ca\\u003e\\u0026"' in body
    assert '"\\u003ci\\u003e\\u0026amp;"' in body
    assert '"q": [\n            "\\u003cx\\u003e\\u0026"\n        ]' in body
    assert '"page": "\\u003cp\\u003e\\u0026"' in body
    assert '"value": "/\\u003cb\\u003e\\u0026"' in body


def test_the_request_block_lists_query_and_headers_sorted() -> None:
    req = request(
        "/a",
        method="POST",
        destination="Api.Test:8080",
        query="b=2&a=1&a=x;y",
        headers={"X-Z": ["1"], "Accept": ["a", "b"]},
        body='{"k": "v"}',
        scheme="https",
    )
    body = miss_body([{"path": [exact("/b")]}], req)
    assert section(body, "was not matched by simproxy:") == "\n".join(
        [
            "{",
            '    "Path": "/a",',
            '    "Method": "POST",',
            '    "Destination": "api.test:8080",',
            '    "Scheme": "https",',
            '    "Query": {',
            '        "a": [',
            '            "1",',
            '            "x;y"',
            "        ],",
            '        "b": [',
            '            "2"',
            "        ]",
            "    },",
            '    "Body": "{\\"k\\": \\"v\\"}",',
            '    "FormData": {},',
            '    "Headers": {',
            '        "Accept": [',
            '            "a",',
            '            "b"',
            "        ],",
            '        "X-Z": [',
            '            "1"',
            "        ]",
            "    }",
            "}",
        ]
    )


def test_the_state_block_is_sorted() -> None:
    body = miss_body([{"requiresState": {"b": "x"}}], request(), {"b": "2", "a": "1"})
    assert section(body, "has the following state:") == '{\n    "a": "1",\n    "b": "2"\n}'
    assert section(body, "did not match on the following fields:") == "[state]"


def test_missed_fields_are_listed_in_order() -> None:
    body = miss_body(
        [{"method": [exact("PUT")], "path": [exact("/x")], "headers": {"X-A": [exact("1")]}}],
        request("/a"),
    )
    assert section(body, "did not match on the following fields:") == "[path, method, headers]"


def test_the_matcher_block_is_the_closest_pairs_request_in_export_form() -> None:
    matcher_set = {
        "scheme": [exact("https")],
        "method": [m("Exact", "GET", doMatch=glob("G*"))],
        "path": [exact("/x")],
        "query": {},
        "requiresState": {"s": "1"},
        "headers": {"X-B": [exact("b")], "X-A": [m("regex", "^a$")]},
    }
    body = miss_body([matcher_set], request("/a"), {"s": "1"})
    assert section(body, "The matcher which came closest was:") == "\n".join(
        [
            "{",
            '    "path": [',
            "        {",
            '            "matcher": "exact",',
            '            "value": "/x"',
            "        }",
            "    ],",
            '    "method": [',
            "        {",
            '            "matcher": "Exact",',
            '            "value": "GET",',
            '            "doMatch": {',
            '                "matcher": "glob",',
            '                "value": "G*"',
            "            }",
            "        }",
            "    ],",
            '    "scheme": [',
            "        {",
            '            "matcher": "exact",',
            '            "value": "https"',
            "        }",
            "    ],",
            '    "headers": {',
            '        "X-A": [',
            "            {",
            '                "matcher": "regex",',
            '                "value": "^a$"',
            "            }",
            "        ],",
            '        "X-B": [',
            "            {",
            '                "matcher": "exact",',
            '                "value": "b"',
            "            }",
            "        ]",
            "    },",
            '    "query": {},',
            '    "requiresState": {',
            '        "s": "1"',
            "    }",
            "}",
        ]
    )


def test_the_response_block_is_the_closest_pairs_response_in_export_form() -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00"
    sim = simulation(
        {
            "request": {"path": [exact("/x")]},
            "response": {
                "status": 201,
                "body": base64.b64encode(png).decode(),
                "encodedBody": True,
                "headers": {"Content-Type": ["image/png"]},
                "templated": True,
                "transitionsState": {"t": "2"},
                "removesState": ["r"],
                "fixedDelay": 10,
                "logNormalDelay": {"min": 1, "max": 5, "mean": 3, "median": 2},
            },
        }
    )
    body = miss_text(request("/a"), ClosestMiss(sim.pairs[0], ("path",), {}, 0))
    assert section(body, "would have given the following response:") == "\n".join(
        [
            "{",
            '    "status": 201,',
            f'    "body": "{base64.b64encode(png).decode()}",',
            '    "encodedBody": true,',
            '    "headers": {',
            '        "Content-Type": [',
            '            "image/png"',
            "        ]",
            "    },",
            '    "templated": true,',
            '    "transitionsState": {',
            '        "t": "2"',
            "    },",
            '    "removesState": [',
            '        "r"',
            "    ],",
            '    "fixedDelay": 10,',
            '    "logNormalDelay": {',
            '        "min": 1,',
            '        "max": 5,',
            '        "mean": 3,',
            '        "median": 2',
            "    }",
            "}",
        ]
    )


def test_non_ascii_text_is_written_as_is() -> None:
    body = miss_body([{"path": [exact("/caf\u00e9")]}], request("/\u00e9t\u00e9"))
    assert '"Path": "/\u00e9t\u00e9"' in body
    assert '"value": "/caf\u00e9"' in body


@pytest.mark.parametrize(
    "req",
    [
        pytest.param(request("/a", body="caf\udce9"), id="body"),
        pytest.param(request("/a", headers={"X-A": ["caf\udce9"]}), id="header"),
        pytest.param(request("/a", query="q=caf%E9"), id="query"),
        pytest.param(request("/caf\udce9"), id="path"),
    ],
)
def test_invalid_utf8_from_the_request_is_written_as_escaped_replacement_characters(req: RequestDetails) -> None:
    """Go's encoder writes each byte that is not UTF-8 as the six characters ``\\ufffd``.

    The proxy hands such bytes to the engine as surrogate escapes (``\\udce9`` for byte 0xE9).
    """
    text = miss_body([{"path": [exact("/x")]}], req)
    assert "caf\\ufffd" in text
    assert plain_error(502, text).body.decode("utf-8")  # the 502 body is valid UTF-8


def test_line_and_paragraph_separators_are_escaped() -> None:
    text = miss_body([{"path": [exact("/x")]}], request("/a\u2028b\u2029"))
    assert '"Path": "/a\\u2028b\\u2029"' in text


def test_whole_number_values_are_written_without_a_fraction() -> None:
    closest_pair = Pair(RequestMatcher(path=(Matcher("exact", 2.0),)), Response())
    body = miss_text(request("/a"), ClosestMiss(closest_pair, ("path",), {}, 0))
    assert '"value": 2\n' in body


def test_a_workers_kept_pair_texts_are_each_pairs_own() -> None:
    """A miss's 502 shows its closest pair; a worker keeps those texts, never another pair's."""
    sim = compiled(*({"path": [exact(f"/p{i}")]} for i in range(PairTexts.KEPT + 3)))
    texts = PairTexts()
    for cp in (*sim.pairs, *sim.pairs[:3]):
        assert texts(cp.pair) == pair_texts(cp.pair)
    twin = compiled({"path": [exact("/p0")]}, {"path": [exact("/other")]}).pairs[1].pair  # a new pair, maybe an old id
    assert texts(twin) == pair_texts(twin)
    assert '"value": "/other"' in texts(twin)[0]
