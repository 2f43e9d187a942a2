"""The errors a new user meets first (issue 37, item 8): a body that is not JSON says where and why,
a mode that does not exist lists the modes, in the spec dialect at every admin endpoint that takes
a JSON body; under ``-compat hoverfly`` the answers stay Hoverfly's bytes. Real processes."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.integration.conftest import Simproxy

NOT_JSON = b'{"a": 1,\n  "b" 2}'
"""The colon after "b" is missing: line 2, column 7."""
WHERE = "line 2, column 7: unexpected character, expected ':' after key"

# (method, path, Hoverfly's words, the words of the spec dialect)
ENDPOINTS = [
    ("PUT", "/api/v2/simulation", "Invalid JSON", "Invalid JSON"),
    ("POST", "/api/v2/simulation", "Invalid JSON", "Invalid JSON"),
    ("PUT", "/api/v2/hoverfly/mode", "Malformed JSON", "Malformed JSON"),
    ("PUT", "/api/v2/service/destination", "Malformed JSON", "Malformed JSON"),
    ("PUT", "/api/v2/service/middleware", "Malformed JSON", "Malformed JSON"),
    ("PUT", "/api/v2/service/post-serve-action", "Malformed JSON", "Malformed JSON"),
    ("PUT", "/api/v2/service/templating-data-source/csv", "Malformed JSON", "Malformed JSON"),
    ("POST", "/api/v2/journal", "Malformed JSON", "Malformed JSON"),
    ("POST", "/api/v2/journal/index", "Malformed JSON", "Malformed JSON"),
]
# simproxy's own words for these (Hoverfly answers with Go's decoder message, which is not copied)
OWN_WORDS = [("PUT", "/api/v2/state"), ("PATCH", "/api/v2/state"), ("POST", "/api/v2/diff")]


@pytest.fixture(scope="module")
def spec() -> Iterator[Simproxy]:
    proc = Simproxy("-enable-middleware-api").start()
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def hoverfly() -> Iterator[Simproxy]:
    proc = Simproxy("-compat", "hoverfly", "-enable-middleware-api").start()
    yield proc
    proc.stop()


def _error(sp: Simproxy, method: str, path: str, raw: bytes) -> tuple[int, bytes]:
    status, _, body = sp.admin(method, path, raw=raw)
    return status, body


@pytest.mark.parametrize(("method", "path", "words", "spec_words"), ENDPOINTS)
def test_a_body_that_is_not_json_says_where_and_why(
    spec: Simproxy, method: str, path: str, words: str, spec_words: str
) -> None:
    status, body = _error(spec, method, path, NOT_JSON)
    assert (status, json.loads(body)) == (400, {"error": f"{spec_words}: {WHERE}"})
    status, body = _error(spec, method, path, b"")
    assert (status, json.loads(body)) == (400, {"error": f"{spec_words}: the body is empty"})


@pytest.mark.parametrize(("method", "path"), OWN_WORDS)
def test_state_and_diff_say_where_and_why_alike(spec: Simproxy, method: str, path: str) -> None:
    status, body = _error(spec, method, path, NOT_JSON)
    assert (status, json.loads(body)) == (400, {"error": f"Invalid JSON: {WHERE}"})
    status, body = _error(spec, method, path, b" \n")
    assert (status, json.loads(body)) == (400, {"error": "Invalid JSON: the body is empty"})


@pytest.mark.parametrize(("method", "path", "words", "spec_words"), ENDPOINTS)
def test_hoverflys_dialect_answers_hoverflys_bytes(
    hoverfly: Simproxy, method: str, path: str, words: str, spec_words: str
) -> None:
    for raw in (NOT_JSON, b""):
        status, headers, body = hoverfly.admin(method, path, raw=raw)
        assert (status, headers["content-type"], body) == (
            400, "text/plain; charset=utf-8", b'{"error":"' + words.encode() + b'"}'
        )  # fmt: skip


def test_hoverflys_dialect_keeps_its_words_for_state_and_diff(hoverfly: Simproxy) -> None:
    assert _error(hoverfly, "POST", "/api/v2/diff", b"") == (400, b'{"error":"unexpected end of JSON input"}')
    for method, path in OWN_WORDS:
        status, body = _error(hoverfly, method, path, NOT_JSON)  # Go's json.Unmarshal and json.Decoder words
        assert (status, json.loads(body)) == (400, {"error": "invalid character '2' after object key"})


def test_a_byte_that_is_not_utf8_is_placed_too(spec: Simproxy) -> None:
    status, body = _error(spec, "PUT", "/api/v2/simulation", '{"é":\n  "\xff"}'.encode("latin-1"))
    assert (status, json.loads(body)) == (400, {"error": "Invalid JSON: line 1, column 3: the byte 0xe9 is not UTF-8"})
    status, body = _error(spec, "PUT", "/api/v2/simulation", '{"é":\n  "'.encode() + b'\xff"}')
    assert (status, json.loads(body)) == (400, {"error": "Invalid JSON: line 2, column 4: the byte 0xff is not UTF-8"})


def test_json_of_the_wrong_shape_says_what_came(spec: Simproxy, hoverfly: Simproxy) -> None:
    cases = [
        ("PUT", "/api/v2/simulation", b"[]", "Invalid JSON: a simulation must be a JSON object, not an array"),
        ("PUT", "/api/v2/service/destination", b'"x"', 'Malformed JSON: the body must be a JSON object, not "x"'),
        ("PUT", "/api/v2/service/destination", b'{"destination": 1}',
         'Malformed JSON: "destination" must be a string, not 1'),
        (
            "PUT", "/api/v2/service/mode", b'{"mode": "capture", "arguments": {"headersWhitelist": ["X-A", null]}}',
            'Malformed JSON: "arguments.headersWhitelist" must hold strings, not null',
        ),
        ("POST", "/api/v2/journal/index", b'{"name": ["a"]}', 'Malformed JSON: "name" must be a string, not an array'),
    ]  # fmt: skip
    for method, path, raw, message in cases:
        assert (method, path, _error(spec, method, path, raw)) == (
            method, path, (400, json.dumps({"error": message}, separators=(",", ":"), ensure_ascii=False).encode())
        )  # fmt: skip
        words = message.split(":")[0].encode()
        assert _error(hoverfly, method, path, raw) == (400, b'{"error":"' + words + b'"}')


def test_a_mode_that_does_not_exist_lists_the_modes(spec: Simproxy, hoverfly: Simproxy) -> None:
    listed = "one of capture, diff, modify, simulate, spy, synthesize"
    for mode, shown in (("record", '"record"'), ("", '""')):
        raw = json.dumps({"mode": mode}).encode()
        status, body = _error(spec, "PUT", "/api/v2/service/mode", raw)
        assert (status, json.loads(body)) == (400, {"error": f"Not a valid mode: {shown}; {listed}"})
        assert _error(hoverfly, "PUT", "/api/v2/hoverfly/mode", raw) == (400, b'{"error":"Not a valid mode"}')
