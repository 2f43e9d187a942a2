"""``/api/v2/diff`` handlers on one worker with the in-process store: the envelope, the POST body's
rules and errors, and DELETE's empty answer (the routes themselves are registered in admin/api/app.py)."""

from __future__ import annotations

import asyncio
import itertools
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from simproxy.admin.api.diff import delete_diff, get_diff, parse_filter, post_diff
from simproxy.admin.errors import BadRequest
from simproxy.engine.fleet.runtime import Runtime
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.modes.diff_report import DiffEntry, DiffReport, DiffRequest, encode_report, encode_request
from simproxy.store import MemoryStore

REQ = DiffRequest("GET", "example.com", "/a", "x=1")
OTHER = DiffRequest("POST", "example.com", "/b", "")


def runtime() -> Runtime:
    ticks = itertools.count(0, 1_000)  # a clock that moves on: barriers need not wait for the registry to settle
    return Runtime(MemoryStore(), MatcherRegistry(), worker_id="w1", clock_ms=lambda: next(ticks))


def call(handler: Any, rt: Runtime, body: bytes = b"") -> tuple[int, str, bytes]:
    request = SimpleNamespace(
        app=SimpleNamespace(ctx=SimpleNamespace(services=SimpleNamespace(runtime=rt, diffs=rt.store))), body=body
    )
    response = asyncio.run(handler(request))
    return response.status, response.content_type, response.body


def add(rt: Runtime, request: DiffRequest, *fields: str, ts: str = "2024-05-01T10:20:30Z") -> None:
    entries = tuple(DiffEntry(f, "e", "a") for f in fields)
    asyncio.run(rt.store.diff_add(encode_request(request), encode_report(DiffReport(ts, entries))))


def test_get_answers_an_empty_list_when_there_are_no_reports() -> None:
    status, content_type, body = call(get_diff, runtime())
    assert (status, body) == (200, b'{"diff":[]}')
    assert content_type.startswith("application/json")


def test_get_answers_every_group_in_first_seen_order() -> None:
    rt = runtime()
    add(rt, REQ, "status", ts="t1")
    add(rt, OTHER, "header/Date", ts="t2")
    add(rt, REQ, "body/a", ts="t3")
    status, _, body = call(get_diff, rt)
    assert status == 200
    assert body == (
        b'{"diff":[{"request":{"method":"GET","host":"example.com","path":"/a","query":"x=1"},"diffReports":['
        b'{"timestamp":"t1","diffEntries":[{"field":"status","expected":"e","actual":"a"}]},'
        b'{"timestamp":"t3","diffEntries":[{"field":"body/a","expected":"e","actual":"a"}]}]},'
        b'{"request":{"method":"POST","host":"example.com","path":"/b","query":""},"diffReports":['
        b'{"timestamp":"t2","diffEntries":[{"field":"header/Date","expected":"e","actual":"a"}]}]}]}'
    )


def test_post_filters_and_leaves_the_stored_reports_alone() -> None:
    rt = runtime()
    add(rt, REQ, "header/Date", "body/time/at", ts="t1")
    add(rt, OTHER, "header/Date", ts="t2")
    filters = {"excludedHeaders": ["Date"], "excludedResponseFields": ["$.time.at"]}
    status, _, body = call(post_diff, rt, orjson.dumps(filters))
    assert (status, body) == (200, b'{"diff":[]}')
    status, _, body = call(post_diff, rt, b'{"EXCLUDEDHEADERS":["Date"]}')  # keys match ignoring case
    assert [g["request"]["method"] for g in orjson.loads(body)["diff"]] == ["GET"]
    assert len(orjson.loads(call(get_diff, rt)[2])["diff"]) == 2


def test_delete_clears_and_answers_200_with_an_empty_body() -> None:
    rt = runtime()
    add(rt, REQ, "status")
    status, content_type, body = call(delete_diff, rt)
    assert (status, body) == (200, b"")
    assert content_type.startswith("text/plain")
    assert call(get_diff, rt)[2] == b'{"diff":[]}'


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        (b"{}", ([], [])),
        (b"null", ([], [])),
        (b'{"excludedHeaders":null,"excludedResponseFields":[]}', ([], [])),
        (b'{"excludedHeaders":["Date","X"],"excludedResponseFields":["$.a"],"other":1}', (["Date", "X"], ["$.a"])),
        (b'{"excludedheaders":["A",null]}', (["A", ""], [])),
    ],
)
def test_filter_bodies_read_as_go_reads_them(raw: bytes, parsed: tuple[list[str], list[str]]) -> None:
    assert parse_filter(raw) == parsed


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "unexpected end of JSON input"),
        (b"  \n", "unexpected end of JSON input"),
        (b"[]", "json: cannot unmarshal array into Go value of type v2.DiffFilterView"),
        (b'"x"', "json: cannot unmarshal string into Go value of type v2.DiffFilterView"),
        (
            b'{"excludedHeaders":"Date"}',
            "json: cannot unmarshal string into Go struct field DiffFilterView.excludedHeaders of type []string",
        ),
        (
            b'{"excludedResponseFields":[1]}',
            "json: cannot unmarshal number into Go struct field DiffFilterView.excludedResponseFields of type string",
        ),
        (
            b'{"excludedHeaders":[true]}',
            "json: cannot unmarshal bool into Go struct field DiffFilterView.excludedHeaders of type string",
        ),
    ],
)
def test_bad_filter_bodies_are_400_with_a_clear_message(raw: bytes, message: str) -> None:
    with pytest.raises(BadRequest) as caught:
        parse_filter(raw)
    assert caught.value.message == message


def test_a_body_that_is_not_json_is_400_and_says_so() -> None:
    with pytest.raises(BadRequest) as caught:
        call(post_diff, runtime(), b"{not json")
    # Hoverfly's words are json.Unmarshal's (seen on v1.12.10); the spec dialect says where and why
    assert caught.value.message == "invalid character 'n' looking for beginning of object key string"
    assert caught.value.detailed.startswith("Invalid JSON: line 1, column 2: ")
