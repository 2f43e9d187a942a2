"""The differential harness's miners and comparison, on small synthetic files (no Hoverfly needed)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.corpus import RequestSpec, mine, rst_blocks
from benchmarks.diffcases import pair_request, sample, template_request
from benchmarks.diffcompare import Facts, compare, loose_shape, normalise_body
from benchmarks.diffwire import Answer, Step
from benchmarks.golit import GoFile, decode_interpreted
from tests.difftree import SIMULATION, write_tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "hoverfly")


def test_go_literals_decode_escapes_join_pieces_and_skip_comments() -> None:
    source = GoFile('var a = "x\\ty\\u00e9\\x41\\101" // "not me"\nvar b = `raw\\n\r` + "+more"\n/* "nor me" */\n')
    assert [lit.value for lit in source.literals] == ["x\tyéAA", "raw\\n+more"]
    assert [lit.line for lit in source.literals] == [1, 2]
    assert '"not me"' not in source.code and "nor me" not in source.code  # comments are blanked
    assert decode_interpreted('\\"quoted\\"') == '"quoted"'


def test_call_arguments_resolve_literals_and_names_bound_to_literals() -> None:
    text = 'const top = "T"\nfunc Test_A() {\n\tlocal := `L`\n\tf(local, top, 3)\n\tf(1, "x")\n}\n'
    source = GoFile(text)
    first = text.index("f(local") + 1
    assert source.string_args(first, 2) == ("L", "T")
    assert source.string_args(text.index("f(1") + 1, 2) is None
    assert [f.name for f in source.functions] == ["Test_A"]


def test_rst_literal_blocks_are_found_with_their_language() -> None:
    blocks = list(rst_blocks('Intro::\n\n    plain text\n\n.. code:: json\n\n    {"a": 1}\n\n.. note::\n\n    no\n'))
    assert [(lang, text) for _, lang, text in blocks] == [("", "plain text"), ("json", '{"a": 1}')]


def test_simulations_are_mined_from_files_docs_and_go_literals_not_vendor(tree: Path) -> None:
    mined = mine(tree)
    origins = {doc.origin for doc in mined.simulations}
    assert origins == {
        "testdata/sim.json",
        "docs/pages/keyconcepts/state.rst:5",
        "functional-tests/testdata/sims.go:3",
        "functional-tests/testdata/sims.go:12",
    }
    by_origin = {doc.origin: doc for doc in mined.simulations}
    assert by_origin["functional-tests/testdata/sims.go:12"].document == {
        "data": {"pairs": []},
        "meta": {"schemaVersion": "v5"},
    }
    assert by_origin["testdata/sim.json"].text == (tree / "testdata/sim.json").read_text()  # PUT as written
    reasons = Counter((s.miner, s.reason) for s in mined.skipped)
    assert reasons[("Go string literals", "not JSON (a fragment, a format string or an annotated example)")] == 1


def test_templates_come_with_the_request_and_state_their_test_gives(tree: Path) -> None:
    mined = mine(tree)
    by_text = {t.template: t for t in mined.templates}
    query = by_text["{{ Request.QueryParam.id }} of {{ Request.Path.[1] }}"]
    assert query.request == RequestSpec(path="/a/b", query=(("id", "7"),))
    assert by_text["{{csv 'people' 'id' '1' 'name'}} {{ State.k }}"].state == (("k", "v"),)
    assert "{{ not a template }}" not in by_text  # an expected output given to Equal(...)
    assert {"{{ Request.Path.[1] }}", "{{ Request.Method }}", "{{ randomUuid }}"} <= set(by_text)
    assert mined.csv_sources == (("people", "id,name\n1,Ada\n"),)
    assert ("docs templates", "template in a table cell without a literal") in {
        (s.miner, s.reason) for s in mined.skipped
    }


def test_matcher_cases_come_from_calls_and_the_field_table(tree: Path) -> None:
    mined = mine(tree)
    cases = sorted((json.dumps(m.matchers), m.input, m.expected) for m in mined.matchers)
    assert cases == sorted(
        [
            (json.dumps([{"matcher": "glob", "value": "t*st"}]), "test", True),
            (json.dumps([{"matcher": "glob", "value": "*esT"}]), "test", False),
            (json.dumps([{"matcher": "exact", "value": "same"}]), "same", True),
            (json.dumps([{"matcher": "glob", "value": "a*"}]), "abc", True),
        ]
    )
    reasons = Counter(s.reason for s in mined.skipped)
    assert reasons["value or input is not a string literal"] == 1  # GlobMatch(1, "yes")
    assert reasons["toMatch is not a string literal"] == 1


def test_requests_are_built_to_hit_a_pair() -> None:
    doc = json.loads(SIMULATION)
    request = pair_request(doc["data"]["pairs"][0])
    assert (request.method, request.destination, request.path, request.query) == ("GET", "x.test", "/one", "id=7")
    assert request.headers == (("X-Key", "k"),)
    assert sample({"exactMatch": "/legacy"}) == "/legacy"
    assert sample([{"matcher": "regex", "value": "^/items/\\d+$"}]) == "/items/1"
    assert sample([{"matcher": "jsonpath", "value": "$.a.b"}]) == '{"a": {"b": "x"}}'
    assert sample([{"matcher": "xpath", "value": "/root/id"}]) == "<root><id>x</id></root>"
    step = request.step("hit")
    assert step.wire().startswith(b"GET http://x.test/one?id=7 HTTP/1.1\r\nHost: x.test\r\nX-Key: k\r\n\r\n")
    assert request.step("hit", webserver=True).target == "/one?id=7"


def test_a_template_request_carries_what_the_test_gave_and_defaults_for_the_rest() -> None:
    request = template_request("{{ Request.Body 'xpath' '/root/id' }}", RequestSpec(path="/a/b", query=(("id", "7"),)))
    assert (request.path, request.query) == ("/a/b", "id=7")
    assert request.body.startswith("<root>") and ("Content-Type", "application/xml") in request.headers


FACTS = (Facts(1111, 2222, "/w/h", "v1.12.10"), Facts(3333, 4444, "/w/s", "v0.1.0"))


def _answer(body: bytes, *headers: tuple[str, str], status: int = 200) -> Answer:
    return Answer(status, "OK", headers, body)


def test_what_must_differ_is_normalised_and_the_version_is_reported() -> None:
    step = Step("admin", "GET", "/api/v2/journal")
    a = _answer(
        b'{"id":"abc","timeStarted":"2026-01-01T00:00:00Z","timestamp":"2026-01-01T00:00:00Z","port":"2222",'
        b'"v":"v1.12.10"}',
        ("Date", "Mon"),
    )
    b = _answer(
        b'{"id":"xyz","timeStarted":"2026-01-01T00:00:01Z","timestamp":"2026-01-01T00:00:01Z","port":"4444",'
        b'"v":"v0.1.0"}',
        ("Date", "Tue"),
    )
    verdict = compare(step, a, b, FACTS)
    assert [k for k, _ in verdict.aspects] == ["version string"]
    assert normalise_body(b"/w/h/tmp_123 and 1111", FACTS[0], step) == b"{folder}/... and {admin-port}"


def test_log_lines_as_text_are_compared_without_their_times() -> None:
    step = Step("admin", "GET", "/api/v2/logs?limit=1")
    first = b"INFO[2026-11-29T04:29:21Z] payloads imported  total=1\n"
    second = b"INFO[2026-11-29T04:29:22Z] payloads imported  total=1\n"
    assert normalise_body(first, FACTS[0], step) == normalise_body(second, FACTS[1], step)
    other = Step("admin", "GET", "/api/v2/simulation")
    assert normalise_body(first, FACTS[0], other) != normalise_body(second, FACTS[1], other)


def test_each_aspect_that_differs_is_named_most_important_first() -> None:
    step = Step("proxy", "GET", "http://x/")
    a = _answer(b"same", ("Content-Length", "4"), ("Content-Type", "text/plain"), ("Date", "x"))
    assert compare(step, a, a, FACTS).same
    reordered = _answer(b"same", ("Date", "y"), ("content-type", "text/plain"), ("Content-Length", "4"))
    verdict = compare(step, a, reordered, FACTS)
    assert [k for k, _ in verdict.aspects] == ["header name case", "header order"] and verdict.same_but_layout
    other = _answer(b"else", ("Content-Length", "4"), ("Transfer-Encoding", "chunked"), status=502)
    kinds = [k for k, _ in compare(step, a, other, FACTS).aspects]
    assert kinds[:3] == ["both Content-Length and Transfer-Encoding", "status", "body"]
    assert "headers" in kinds
    silent = Answer(0, error="no answer (closed)")
    assert compare(step, a, silent, FACTS).kind == "no answer"


def test_random_answers_are_compared_by_shape() -> None:
    assert loose_shape(b'{"id":"a1","n":[1,2]}') == loose_shape(b'{"id":"zz-9","n":[7,8]}')
    assert loose_shape(b'{"id":"a1"}') != loose_shape(b'{"other":"a1"}')
    step = Step("proxy", "GET", "http://x/", loose=True)
    assert compare(step, _answer(b"Nurse, adult"), _answer(b"Sports administrator"), FACTS).same
    assert not compare(step, _answer(b"text"), _answer(b""), FACTS).same
