"""``-compat hoverfly``: admin answers whose bodies differed from Hoverfly v1.12.10's (issue 38): the
release it names, Go's ``regexp`` and ``os.ReadFile`` texts, names in the path decoded as Hoverfly's
router decodes them. The expected bodies are what Hoverfly v1.12.10 answered to the same requests;
the spec dialect keeps its own answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from simproxy.engine.version import VERSION
from tests.integration.conftest import Simproxy, simulation


@pytest.fixture(scope="module")
def hoverfly_like() -> Iterator[Simproxy]:
    proc = Simproxy("-compat", "hoverfly").start()
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def spec() -> Iterator[Simproxy]:
    proc = Simproxy().start()
    yield proc
    proc.stop()


def test_the_release_is_hoverflys_under_the_switch(hoverfly_like: Simproxy) -> None:
    assert hoverfly_like.admin("GET", "/api/v2/hoverfly/version")[2] == b'{"version":"v1.12.10"}'
    assert hoverfly_like.admin_json("GET", "/api/v2/hoverfly")[1]["version"] == "v1.12.10"
    assert hoverfly_like.admin_json("GET", "/api/v2/simulation")[1]["meta"]["hoverflyVersion"] == "v1.12.10"


def test_the_release_is_simproxys_own_without_it(spec: Simproxy) -> None:
    assert spec.admin_json("GET", "/api/v2/hoverfly/version")[1] == {"version": VERSION}
    assert spec.admin_json("GET", "/api/v2/hoverfly")[1]["version"] == VERSION
    assert spec.admin_json("GET", "/api/v2/simulation")[1]["meta"]["serviceVersion"] == VERSION


@pytest.mark.parametrize(
    ("pattern", "body"),
    [
        ("((", b'{"error":"error parsing regexp: missing closing ): `((`"}'),
        ("[a", b'{"error":"error parsing regexp: missing closing ]: `[a`"}'),
        ("a**", b'{"error":"error parsing regexp: invalid nested repetition operator: `**`"}'),
        ("(?P<x", b'{"error":"error parsing regexp: invalid named capture: `(?P\\u003cx`"}'),
        ("a{1001}", b'{"error":"error parsing regexp: invalid repeat count: `{1001}`"}'),
        ("[z-a]", b'{"error":"error parsing regexp: invalid character class range: `z-a`"}'),
        ("\\", b'{"error":"error parsing regexp: trailing backslash at end of expression: ``"}'),
    ],
)
def test_a_bad_url_pattern_is_worded_as_go_regexp_words_it(hoverfly_like: Simproxy, pattern: str, body: bytes) -> None:
    status, _, answer = hoverfly_like.admin("GET", "/api/v2/simulation?urlPattern=" + quote(pattern, safe=""))
    assert (status, answer) == (500, body)


def test_a_bad_url_pattern_is_the_clients_error_without_the_switch(spec: Simproxy) -> None:
    """Hoverfly answers 500; the spec dialect says whose error it is: a 400 that names the parameter."""
    status, _, answer = spec.admin("GET", "/api/v2/simulation?urlPattern=((")
    assert (status, json.loads(answer)) == (
        400,
        {"error": "urlPattern is not a valid regular expression: missing ): (("},
    )


@pytest.mark.parametrize(
    ("name", "encoded"),
    [
        ("Request.Body jsonpath $.id", "Request.Body%20jsonpath%20%24.id"),
        ("Request.Body jsonpath $.id", "Request.Body+jsonpath+$.id"),
        ("Request.Headers.a/b", "Request.Headers.a%2Fb"),
        ("Request.QueryParams.\u20ac", "Request.QueryParams.%E2%82%AC"),
    ],
)
def test_a_journal_index_named_in_the_path_is_decoded_as_a_query_value(
    hoverfly_like: Simproxy, name: str, encoded: str
) -> None:
    assert hoverfly_like.admin("POST", "/api/v2/journal/index", {"name": name})[0] == 200
    status, _, body = hoverfly_like.admin("DELETE", f"/api/v2/journal/index/{encoded}")
    assert (status, body) == (200, b"null")


def test_csv_sources_and_actions_named_in_the_path_are_decoded(hoverfly_like: Simproxy) -> None:
    csv = {"name": "two words", "csv": "id,name\n1,one\n"}
    assert hoverfly_like.admin("PUT", "/api/v2/hoverfly/templating-data-source/csv", csv)[0] == 200
    status, _, body = hoverfly_like.admin("DELETE", "/api/v2/hoverfly/templating-data-source/csv/two%20words")
    assert (status, body) == (200, b"{}")
    action = {"actionName": "my action", "binary": "python3", "script": "print(1)", "delayInMs": 0}
    assert hoverfly_like.admin("PUT", "/api/v2/hoverfly/post-serve-action", action)[0] == 200
    status, _, body = hoverfly_like.admin("DELETE", "/api/v2/hoverfly/post-serve-action/my+action")
    assert (status, body) == (200, b"{}")


def test_names_in_the_path_are_percent_decoded_without_the_switch_too(spec: Simproxy) -> None:
    name = "Request.QueryParam.a b"
    assert spec.admin("POST", "/api/v2/journal/index", {"name": name})[0] == 200
    assert spec.admin("DELETE", "/api/v2/journal/index/Request.QueryParam.a%20b")[0] == 200
    assert spec.admin_json("GET", "/api/v2/journal/index")[1] in ([], None)
    csv = {"name": "two words", "csv": "id,name\n1,one\n"}
    assert spec.admin("PUT", "/api/v2/hoverfly/templating-data-source/csv", csv)[0] == 200
    assert spec.admin("DELETE", "/api/v2/hoverfly/templating-data-source/csv/two%20words")[0] == 200
    status, _, body = spec.admin("DELETE", "/api/v2/hoverfly/templating-data-source/csv/two%20words")
    assert status == 404 and "two words" in json.loads(body)["error"]
    plus = {"name": "one+two", "csv": "id\n1\n"}  # a plus in a path is a plus
    assert spec.admin("PUT", "/api/v2/hoverfly/templating-data-source/csv", plus)[0] == 200
    assert spec.admin("DELETE", "/api/v2/hoverfly/templating-data-source/csv/one+two")[0] == 200


def _body_file(path: str) -> dict[str, Any]:
    return simulation({"request": {"path": [{"matcher": "exact", "value": "/f"}]}, "response": {"bodyFile": path}})


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("missing/./x.json", "open missing/x.json: no such file or directory"),
        ("admin", "read admin: is a directory"),
    ],
)
def test_a_body_file_that_cannot_be_read_is_worded_as_go_words_it(
    hoverfly_like: Simproxy, path: str, text: str
) -> None:
    status, _, body = hoverfly_like.admin("PUT", "/api/v2/simulation", _body_file(path))
    assert (status, body) == (500, b'{"error":"An error occurred: data.pairs[0].response ' + text.encode() + b'"}')


def test_a_missing_body_file_keeps_the_spec_words_without_the_switch(spec: Simproxy) -> None:
    status, _, body = spec.admin("PUT", "/api/v2/simulation", _body_file("missing/x.json"))
    assert status == 500
    assert (
        json.loads(body)["error"]
        == "An error occurred: data.pairs[0].response No such file or directory: missing/x.json"
    )


@pytest.mark.parametrize(
    ("body", "put", "patch"),
    [
        (b"", "EOF", "unexpected end of JSON input"),
        (b"{", "unexpected EOF", "unexpected end of JSON input"),
        (b'{"state":', "unexpected EOF", "unexpected end of JSON input"),
        (
            b"x",
            "invalid character 'x' looking for beginning of value",
            "invalid character 'x' looking for beginning of value",
        ),
        (b"[]", "json: cannot unmarshal array into Go value of type v2.StateView", None),
        (
            b'{"state":"x"}',
            "json: cannot unmarshal string into Go struct field StateView.state of type map[string]string",
            "json: cannot unmarshal string into Go struct field .state of type map[string]string",
        ),
        (
            b'{"state":{"a":1}}',
            "json: cannot unmarshal number into Go struct field StateView.state.a of type string",
            "json: cannot unmarshal number into Go struct field .state.a of type string",
        ),
        (b'{"state":{"a":"1"}} x', None, "invalid character 'x' after top-level value"),
    ],
)
def test_a_state_body_go_cannot_decode_is_worded_as_go_words_it(
    hoverfly_like: Simproxy, body: bytes, put: str | None, patch: str | None
) -> None:
    for method, words in (("PUT", put), ("PATCH", patch or put)):
        status, _, answer = hoverfly_like.admin(method, "/api/v2/state", raw=body)
        if words is None:  # Go's decoder reads the first value and leaves the rest
            assert (status, answer) == (200, b'{"state":{"a":"1"}}')
        else:
            assert (status, json.loads(answer)) == (400, {"error": words}), method


def test_a_null_state_value_is_the_empty_string(hoverfly_like: Simproxy) -> None:
    status, _, answer = hoverfly_like.admin("PUT", "/api/v2/state", raw=b'{"state":{"a":null}}')
    assert (status, answer) == (200, b'{"state":{"a":""}}')


def test_journal_answers_escape_markup_as_go_does_under_compat(hoverfly_like: Simproxy, spec: Simproxy) -> None:
    pair = {"request": {"path": [{"matcher": "exact", "value": "/m"}]}, "response": {"status": 200, "body": "<b>&</b>"}}
    search = {"request": {"path": [{"matcher": "exact", "value": "/m"}]}}
    for server in (hoverfly_like, spec):
        assert server.admin("DELETE", "/api/v2/journal")[0] == 200
        assert server.admin("PUT", "/api/v2/simulation", simulation(pair))[0] == 200
        assert server.proxy("http://api.test/m", "POST", b"<p>")[2] == b"<b>&</b>"
    for method, body in (("GET", None), ("POST", search)):
        compat = hoverfly_like.admin(method, "/api/v2/journal", body)[2]
        assert b'"body":"\\u003cp\\u003e"' in compat and b'"body":"\\u003cb\\u003e\\u0026\\u003c/b\\u003e"' in compat
        plain = spec.admin(method, "/api/v2/journal", body)[2]
        assert b'"body":"<p>"' in plain and b'"body":"<b>&</b>"' in plain
        read = json.loads(compat)["journal"][0]["response"]["body"]
        assert read == json.loads(plain)["journal"][0]["response"]["body"] == "<b>&</b>"


# Hoverfly v1.12.10's answers (seen on the real binary, the same for PUT and PATCH) for state bodies
# that go wrong past their first character.
STATE_SYNTAX = [
    (b'{"state": {"a": tru}}', "invalid character '}' in literal true (expecting 'e')"),
    (b'{"state": {"a": "b\n"}}', "invalid character '\\n' in string"),
    (b'{"state" {}}', "invalid character '{' after object key"),
    (b'{"state": {"a": "\\x"}}', "invalid escape sequence `\\x` in string"),
]


@pytest.mark.parametrize(("body", "words"), STATE_SYNTAX)
def test_a_state_body_that_is_not_json_is_worded_as_go_words_it(
    hoverfly_like: Simproxy, body: bytes, words: str
) -> None:
    for method in ("PUT", "PATCH"):
        status, _, answer = hoverfly_like.admin(method, "/api/v2/state", raw=body)
        assert (status, json.loads(answer)) == (400, {"error": words}), method
