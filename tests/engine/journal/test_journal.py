"""The journal's rules (hoverfly-admin.md §3.14-3.15, admin-api.md §2.13-2.14, §4.5): the entry view,
storage, time and sort parameters, paging, the search and the indexes."""

from __future__ import annotations

import base64
import gzip
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import orjson
import pytest

from simproxy.engine.journal.entries import (
    DEFAULT_LIMIT,
    JournalEntry,
    build_index,
    compile_index,
    decode_entry,
    encode_entry,
    entry_view,
    format_time,
    index_key,
    index_view,
    paging,
    parse_int,
    parse_sort,
    parse_time,
    post_serve_action_view,
    query_journal,
    truncate,
)
from simproxy.engine.journal.lookup import BodyView
from simproxy.engine.journal.search import MALFORMED, NO_REQUEST, compile_search
from simproxy.engine.templating import CsvTables, RenderContext, TemplateEngine, Variables
from simproxy.engine.wire.request import RequestDetails, query_string
from tests.engine.conftest import REGISTRY, exact, glob, m, regex, request


@dataclass(frozen=True, slots=True)
class IndexLookup:
    """The helpers' view of indexes built in memory (stored name -> key -> entry): what the journal
    helpers read, without a store."""

    indexes: Mapping[str, Mapping[str, JournalEntry]]

    def lookup(self, index: str, key: str) -> BodyView | None:
        entry = self.indexes.get(index, {}).get(key)
        return None if entry is None else BodyView.of(entry)


T0 = datetime(2024, 4, 9, 0, 56, 11, 606999, tzinfo=timezone(timedelta(hours=1)))
ENGINE = TemplateEngine()


def entry(
    req: RequestDetails | None = None,
    *,
    id: str = "id-1",
    status: int = 200,
    headers: tuple[tuple[str, tuple[str, ...]], ...] = (("Content-Type", ("text/plain",)),),
    body: bytes = b"hello",
    at: datetime = T0,
    latency: float = 0.61334,
    action: dict[str, Any] | None = None,
) -> JournalEntry:
    return JournalEntry(id, req or request(), status, headers, body, "simulate", at, latency, action)


def roundtrip(e: JournalEntry, limit: int | None = None) -> JournalEntry:
    return decode_entry(encode_entry(e, limit))


# ---------------------------------------------------------------------------------------------
# the entry view


def test_entry_view_keys_in_hoverfly_order() -> None:
    view = entry_view(entry())
    assert list(view) == ["request", "response", "mode", "timeStarted", "latency", "id", "postServeAction"]
    assert list(view["request"]) == [
        "path",
        "method",
        "destination",
        "scheme",
        "query",
        "formData",
        "body",
        "headers",
    ]
    assert list(view["response"]) == ["status", "body", "encodedBody", "headers"]


def test_entry_view_values() -> None:
    req = request(
        "/a/b", "POST", "Example.COM:8500", "b=2&a=1", headers={"X-B": ["2"], "Accept": ["x", "y"]}, body="hi"
    )
    view = entry_view(entry(req))
    assert view == {
        "request": {
            "path": "/a/b",
            "method": "POST",
            "destination": "example.com:8500",
            "scheme": "http",
            "query": "a=1&b=2",
            "formData": {},
            "body": "hi",
            "headers": {"Accept": ["x", "y"], "X-B": ["2"]},
        },
        "response": {"status": 200, "body": "hello", "encodedBody": False, "headers": {"Content-Type": ["text/plain"]}},
        "mode": "simulate",
        "timeStarted": "2024-04-09T00:56:11.606+01:00",
        "latency": 0.61334,
        "id": "id-1",
        "postServeAction": None,
    }
    assert list(view["request"]["headers"]) == ["Accept", "X-B"]  # a Go map: keys sorted


def test_response_headers_left_out_when_empty_and_sorted_when_not() -> None:
    assert "headers" not in entry_view(entry(headers=()))["response"]
    view = entry_view(entry(headers=(("b", ("1",)), ("A", ("2", "3")))))
    assert list(view["response"]["headers"].items()) == [("A", ["2", "3"]), ("b", ["1"])]


def test_empty_request_maps_are_objects() -> None:
    view = entry_view(entry(request()))
    assert view["request"]["headers"] == {}
    assert view["request"]["formData"] == {}
    assert view["request"]["query"] == ""


def test_form_data() -> None:
    req = request("/f", "POST", headers={"Content-Type": ["application/x-www-form-urlencoded"]}, body="b=2&a=1&a=3")
    assert entry_view(entry(req))["request"]["formData"] == {"a": ["1", "3"], "b": ["2"]}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", ""),
        ("b=2&a=1", "a=1&b=2"),
        ("a=2&a=1", "a=1&a=2"),  # values sorted too
        ("a&b=", "a=&b="),
        ("q=a%20b", "q=a b"),  # decoded values
        ("a=1&a-b=2", "a-b=2&a=1"),  # sorted by "k=": "-" sorts before "="
        ("x=%zz&y=1", "y=1"),  # a bad escape was dropped when parsing
    ],
)
def test_query_is_the_canonical_query_string(query: str, expected: str) -> None:
    assert entry_view(entry(request(query=query)))["request"]["query"] == expected
    assert query_string(request(query=query).query) == expected


def test_binary_response_body_is_base64() -> None:
    body = b"\x89PNG\r\n\x1a\n\x00\x01"
    response = entry_view(entry(body=body))["response"]
    assert response["encodedBody"] is True
    assert base64.b64decode(response["body"]) == body


def test_content_encoding_makes_the_response_base64() -> None:
    body = gzip.compress(b"text")
    response = entry_view(entry(headers=(("Content-Encoding", ("gzip",)),), body=body))["response"]
    assert response["encodedBody"] is True
    assert base64.b64decode(response["body"]) == body


def test_request_body_base64_when_binary_or_content_encoded() -> None:
    binary = request(body="\x00\x01\x02")
    assert entry_view(entry(binary))["request"]["body"] == base64.b64encode(b"\x00\x01\x02").decode()
    # the body was gunzipped by the proxy, but the header is still there: Hoverfly encodes it
    gzipped = request(headers={"Content-Encoding": ["gzip"]}, body="plain")
    assert entry_view(entry(gzipped))["request"]["body"] == base64.b64encode(b"plain").decode()


def test_text_json_and_html_bodies_stay_text() -> None:
    for body in (b'{"a": 1}', b"<html></html>", "caf\u00e9".encode(), b""):
        response = entry_view(entry(body=body))["response"]
        assert response["encodedBody"] is False
        assert response["body"] == body.decode()


def test_strings_that_are_not_utf8_become_replacement_characters() -> None:
    req = request("/x", query="k=%FF", headers={"X-A": [b"\xff".decode("utf-8", "surrogateescape")]})
    view = entry_view(entry(req))
    assert view["request"]["query"] == "k=\ufffd"
    assert view["request"]["headers"] == {"X-A": ["\ufffd"]}
    orjson.dumps(view)  # writable


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (datetime(2024, 4, 9, 0, 56, 11, 606999, tzinfo=UTC), "2024-04-09T00:56:11.606Z"),
        (datetime(2024, 4, 9, 0, 56, 11, tzinfo=UTC), "2024-04-09T00:56:11.000Z"),
        (datetime(2024, 4, 9, 0, 56, 11, 1000, tzinfo=timezone(timedelta(hours=-5))), "2024-04-09T00:56:11.001-05:00"),
        (datetime(2024, 4, 9, tzinfo=timezone(timedelta(hours=5, minutes=30))), "2024-04-09T00:00:00.000+05:30"),
    ],
)
def test_time_started_format(moment: datetime, text: str) -> None:
    assert format_time(moment) == text
    assert entry_view(entry(at=moment))["timeStarted"] == text


def test_latency_is_a_go_float() -> None:
    assert entry_view(entry(latency=2.0))["latency"] == 2
    assert orjson.dumps(entry_view(entry(latency=2.0))["latency"]) == b"2"
    assert entry_view(entry(latency=12.5))["latency"] == 12.5


def test_post_serve_action() -> None:
    invoked = datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    completed = invoked + timedelta(milliseconds=250)
    local = post_serve_action_view("local", invoked, completed)
    assert local == {"name": "local", "invoked": "2024-01-02T03:04:05.678Z", "completed": "2024-01-02T03:04:05.928Z"}
    remote = post_serve_action_view("remote", invoked, completed, "corr-1", 200)
    assert list(remote) == ["name", "invoked", "completed", "correlationId", "status"]
    assert entry_view(entry(action=remote))["postServeAction"] == remote


# ---------------------------------------------------------------------------------------------
# storage


def test_round_trip() -> None:
    req = request(
        "/p%2Fq",
        "PATCH",
        "h:1",
        "a=1&a=2&b",
        headers={"X-A": ["1", "2"], "Content-Type": ["application/x-www-form-urlencoded"]},
        body="f=1",
        scheme="https",
    )
    action = post_serve_action_view("a", T0, T0, "c", 201)
    original = entry(req, id="xyz", status=418, headers=(("B", ("1",)), ("A", ())), body=b"\x00\xff", action=action)
    back = roundtrip(original)
    assert back == original
    assert back.request.headers_lower == {"x-a": ["1", "2"], "content-type": ["application/x-www-form-urlencoded"]}
    assert back.request.query_lower == {"a": ["1", "2"], "b": [""]}
    assert back.time_started.utcoffset() == timedelta(hours=1)
    assert entry_view(back) == entry_view(original)


def test_round_trip_of_strings_that_are_not_utf8() -> None:
    raw = b"\xff\xfe".decode("utf-8", "surrogateescape")
    req = request("/" + raw, query="%FF=%FE", headers={"X-A": [raw]}, body=raw)
    original = entry(req, headers=(("X-B", (raw,)),), body=b"\xff\xfe")
    assert roundtrip(original) == original


def test_storage_form_is_compact_json() -> None:
    raw = encode_entry(entry())
    assert b" " not in raw.replace(b"text/plain", b"")
    assert isinstance(orjson.loads(raw), list)


@pytest.mark.parametrize(
    ("data", "limit", "expected"),
    [
        (b"large request body", 15, b"large reques..."),
        (b"large response body", 15, b"large respon..."),
        (b"short", 15, b"short"),
        (b"exactly15bytes!", 15, b"exactly15bytes!"),
        (b"abcdef", 3, b"..."),
        (b"ab", 3, b"ab"),
        (b"", 1, b""),
        ("aébcd".encode(), 5, b"a..."),  # "é" cut in half: the partial character goes
        ("aébcdef".encode(), 6, "a\u00e9...".encode()),
    ],
)
def test_truncate(data: bytes, limit: int, expected: bytes) -> None:
    assert truncate(data, limit) == expected


def test_bodies_truncated_when_stored_with_a_limit() -> None:
    original = entry(request(body="large request body"), body=b"large response body")
    stored = roundtrip(original, 15)
    assert stored.request.body == "large reques..."
    assert stored.response_body == b"large respon..."
    assert roundtrip(original, None) == original
    assert roundtrip(original, 0) == original  # 0: no limit, as in Hoverfly


# ---------------------------------------------------------------------------------------------
# parameters


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1718000000", datetime(2024, 6, 10, 6, 13, 20, tzinfo=UTC)),
        ("1718000000.5", datetime(2024, 6, 10, 6, 13, 20, 500000, tzinfo=UTC)),
        ("-1", datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC)),
        ("2024-06-10T06:13:20Z", datetime(2024, 6, 10, 6, 13, 20, tzinfo=UTC)),
        ("2024-06-10T06:13:20z", datetime(2024, 6, 10, 6, 13, 20, tzinfo=UTC)),
        ("2024-06-10T07:13:20.250+01:00", datetime(2024, 6, 10, 6, 13, 20, 250000, tzinfo=UTC)),
        ("2024-06-10T07:13:20 01:00", datetime(2024, 6, 10, 6, 13, 20, tzinfo=UTC)),  # "+" read as a space
        ("2024-06-10T06:13:20", datetime(2024, 6, 10, 6, 13, 20, tzinfo=UTC)),  # no offset: UTC
        ("2024-06-10 06:13", datetime(2024, 6, 10, 6, 13, tzinfo=UTC)),
        ("2024-06-10", datetime(2024, 6, 10, tzinfo=UTC)),
    ],
)
def test_parse_time(value: str, expected: datetime) -> None:
    parsed = parse_time(value)
    assert parsed == expected
    assert parsed is not None and parsed.tzinfo is not None


@pytest.mark.parametrize("value", ["", "0", "0.0", "abc", "yesterday", "1e9", "2024-13-01", "nan", "99999999999999999"])
def test_parse_time_gives_none(value: str) -> None:
    assert parse_time(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", ("timestarted", False)),
        ("timeStarted", ("timestarted", False)),
        ("timestarted:asc", ("timestarted", False)),
        ("TimeStarted:DESC", ("timestarted", True)),
        (":desc", ("timestarted", True)),
        ("latency", ("latency", False)),
        ("Latency:Desc", ("latency", True)),
        ("latency:desc:ignored", ("latency", True)),
    ],
)
def test_parse_sort(value: str, expected: tuple[str, bool]) -> None:
    assert parse_sort(value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("Status", "'status' is not a valid sort key, use timeStarted or latency"),
        ("status:desc", "'status' is not a valid sort key, use timeStarted or latency"),
        ("latency:UP", "'up' is not a valid sort order. use asc or desc"),
        ("latency:", "'' is not a valid sort order. use asc or desc"),
    ],
)
def test_parse_sort_errors(value: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_sort(value)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("limit", "offset", "expected"),
    [
        (None, None, (DEFAULT_LIMIT, 0)),
        ("10", "5", (10, 5)),
        ("0", "-1", (DEFAULT_LIMIT, 0)),
        ("-3", "abc", (DEFAULT_LIMIT, 0)),
        ("+7", "+2", (7, 2)),
        (" 5", "1.5", (DEFAULT_LIMIT, 0)),  # Go's Atoi takes no spaces or fractions
        ("99999999999999999999", "99999999999999999999", (2**63 - 1, 2**63 - 1)),  # clamped like Atoi
    ],
)
def test_paging(limit: str | None, offset: str | None, expected: tuple[int, int]) -> None:
    assert paging(limit, offset) == expected


def test_default_limit_is_the_spec_value() -> None:
    assert DEFAULT_LIMIT == 500
    assert paging(None, None, default_limit=25) == (25, 0)
    assert parse_int("12") == 12 and parse_int("1_0") == 0


# ---------------------------------------------------------------------------------------------
# paging, filtering, sorting

BASE = datetime(2024, 6, 10, 6, 0, 0, tzinfo=UTC)


def timeline() -> list[JournalEntry]:
    """Five entries, a second apart, with latencies 3, 1, 5, 2, 4."""
    return [
        entry(id=f"e{i}", at=BASE + timedelta(seconds=i), latency=lat)
        for i, lat in enumerate([3.0, 1.0, 5.0, 2.0, 4.0])
    ]


def ids(entries: list[JournalEntry]) -> list[str]:
    return [e.id for e in entries]


def test_page_and_total() -> None:
    page, total = query_journal(timeline(), limit=2, offset=1)
    assert (ids(page), total) == (["e1", "e2"], 5)
    page, total = query_journal(timeline(), limit=10)
    assert (ids(page), total) == (["e0", "e1", "e2", "e3", "e4"], 5)
    page, total = query_journal(timeline(), limit=2, offset=4)
    assert (ids(page), total) == (["e4"], 5)


@pytest.mark.parametrize("offset", [5, 6, 100])
def test_offset_past_the_end_gives_total_zero(offset: int) -> None:
    assert query_journal(timeline(), limit=25, offset=offset) == ([], 0)


def test_empty_journal() -> None:
    assert query_journal([], limit=25) == ([], 0)


def test_from_and_to_are_inclusive() -> None:
    page, total = query_journal(timeline(), limit=25, from_=BASE + timedelta(seconds=1), to=BASE + timedelta(seconds=3))
    assert (ids(page), total) == (["e1", "e2", "e3"], 3)
    page, total = query_journal(timeline(), limit=25, from_=BASE + timedelta(seconds=1, milliseconds=1))
    assert ids(page) == ["e2", "e3", "e4"]
    page, total = query_journal(timeline(), limit=25, to=BASE - timedelta(seconds=1))
    assert (page, total) == ([], 0)


def test_from_and_to_compare_across_offsets() -> None:
    bound = parse_time("2024-06-10T08:00:02+02:00")  # = BASE + 2s
    page, _ = query_journal(timeline(), limit=25, from_=bound)
    assert ids(page) == ["e2", "e3", "e4"]


def test_total_counts_after_filtering_and_the_page_after_sorting() -> None:
    page, total = query_journal(timeline(), limit=2, offset=1, from_=BASE + timedelta(seconds=1), sort="latency:desc")
    assert (ids(page), total) == (["e4", "e3"], 4)  # latencies 5, [4, 2], 1


def test_sorting() -> None:
    assert ids(query_journal(timeline(), limit=25, sort="latency")[0]) == ["e1", "e3", "e0", "e4", "e2"]
    assert ids(query_journal(timeline(), limit=25, sort="latency:desc")[0]) == ["e2", "e4", "e0", "e3", "e1"]
    assert ids(query_journal(timeline(), limit=25, sort="timestarted:desc")[0]) == ["e4", "e3", "e2", "e1", "e0"]


def test_timestarted_asc_keeps_arrival_order() -> None:
    entries = [entry(id="late", at=BASE + timedelta(seconds=9)), entry(id="early", at=BASE)]
    assert ids(query_journal(entries, limit=25)[0]) == ["late", "early"]
    assert ids(query_journal(entries, limit=25, sort="timestarted:asc")[0]) == ["late", "early"]
    assert ids(query_journal(entries, limit=25, sort="timestarted:desc")[0]) == ["late", "early"]


def test_bad_sort_raises() -> None:
    with pytest.raises(ValueError, match="is not a valid sort key"):
        query_journal(timeline(), limit=25, sort="size")


# ---------------------------------------------------------------------------------------------
# the search

JOURNAL = [
    entry(request("/api/users", "GET", "api.example.com", "id=7&Tag=a&tag=b"), id="get"),
    entry(
        request(
            "/api/users",
            "POST",
            "api.example.com:8443",
            headers={"Content-Type": ["application/json"], "X-Trace": ["t1", "t2"]},
            body='{"name": "ann", "age": 30}',
            scheme="https",
        ),
        id="post",
    ),
    entry(
        request(
            "/form",
            "PUT",
            "other.org",
            headers={"Content-Type": ["application/x-www-form-urlencoded"]},
            body="name=bob&name=eve&city=x",
        ),
        id="form",
    ),
    entry(request("/xml", "POST", "other.org", body="<a><b>1</b></a>"), id="xml"),
]


def found(body: Any) -> list[str]:
    return ids(compile_search(body, REGISTRY).filter(JOURNAL))


def where(**fields: Any) -> list[str]:
    return found({"request": fields})


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"path": [exact("/api/users")]}, ["get", "post"]),
        ({"path": [glob("/api/*")]}, ["get", "post"]),
        ({"path": [regex("^/(form|xml)$")]}, ["form", "xml"]),
        ({"path": [exact("/api/users")], "method": [exact("POST")]}, ["post"]),
        ({"method": [exact("post")]}, []),  # exact is case-sensitive
        ({"method": [m("Exact", "PUT")]}, ["form"]),  # matcher names are not
        ({"destination": [exact("api.example.com")]}, ["get"]),
        ({"destination": [glob("api.example.com*")]}, ["get", "post"]),
        ({"destination": [regex(":8443$")]}, ["post"]),
        ({"scheme": [exact("https")]}, ["post"]),
        ({"scheme": [exact("http")]}, ["get", "form", "xml"]),
        ({"scheme": [glob("*")], "path": [glob("/x*")]}, ["xml"]),
        ({"body": [m("json", '{"age": 30, "name": "ann"}')]}, ["post"]),
        ({"body": [m("jsonPartial", '{"name": "ann"}')]}, ["post"]),
        ({"body": [m("jsonpath", "$.age")]}, ["post"]),
        ({"body": [m("xpath", "/a/b")]}, ["xml"]),
        ({"body": [glob("*bob*")]}, ["form"]),
        ({"body": [m("form", {"name": [exact("bob")], "city": [glob("*")]})]}, ["form"]),  # first value only
        ({"body": [m("form", {"name": [exact("eve")]})]}, []),
        ({"body": [m("jsonpath", "$.name", doMatch=exact("ann"))]}, ["post"]),
        ({"body": [m("jsonpath", "$.name", doMatch=exact("bob"))]}, []),
        ({"path": [exact("/api/users"), glob("*s")]}, ["get", "post"]),  # every matcher of a list
        ({"path": [exact("/api/users"), glob("*x")]}, []),
        ({"path": []}, ["get", "post", "form", "xml"]),  # present but empty: matches everything
    ],
)
def test_search_fields(fields: dict[str, Any], expected: list[str]) -> None:
    assert where(**fields) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"id": [exact("7")]}, ["get"]),
        ({"ID": [exact("7")]}, ["get"]),  # names compared case-insensitively
        ({"id": [exact("8")]}, []),
        ({"TAG": [regex("^(a|b)$")]}, ["get"]),  # Tag/tag: one of the two (Hoverfly picks at random)
        ({"id": [glob("*")], "missing": [glob("*")]}, []),
        ({"id": [regex("^[0-9]+$")]}, ["get"]),
        ({"id": []}, ["get"]),  # the parameter must be there; an empty list then matches
        ({"id": None}, ["get"]),
        ({}, ["post", "form", "xml"]),  # {}: only requests without parameters
    ],
)
def test_search_query(query: dict[str, Any], expected: list[str]) -> None:
    assert where(query=query) == expected


def test_search_query_values_joined_with_semicolons() -> None:
    multi = [entry(request(query="a=1&a=2"), id="multi")]
    search = compile_search({"request": {"query": {"a": [exact("1;2")]}}}, REGISTRY)
    assert ids(search.filter(multi)) == ["multi"]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Content-Type": [exact("application/json")]}, ["post"]),
        ({"content-type": [glob("application/*")]}, ["post", "form"]),
        ({"X-Trace": [exact("t1;t2")]}, ["post"]),  # repeated header lines joined with ";"
        ({"X-Trace": [exact("t1")]}, []),
        ({"X-Missing": [glob("*")]}, []),
        ({"X-Trace": []}, ["post"]),
        ({"Content-Type": [glob("*")], "X-Trace": [glob("*")]}, ["post"]),
        ({}, []),  # an empty map is no criterion: nothing usable, nothing found
    ],
)
def test_search_headers(headers: dict[str, Any], expected: list[str]) -> None:
    assert where(headers=headers) == expected


def test_search_without_any_field_finds_nothing() -> None:
    assert found({"request": {}}) == []
    assert found({"request": {"requiresState": {"a": "1"}, "unknown": 1}}) == []
    assert found({"request": {"path": None, "headers": None, "query": None}}) == []


def test_search_keys_are_case_insensitive() -> None:
    assert found({"Request": {"Path": [{"Matcher": "exact", "VALUE": "/xml"}]}}) == ["xml"]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"path": {"exactMatch": "/api/users"}}, ["get", "post"]),
        ({"path": {"globMatch": "/f*"}}, ["form"]),
        ({"path": {"regexMatch": "^/x"}}, ["xml"]),
        ({"path": {"ExactMatch": "/xml"}}, ["xml"]),
        ({"method": {"exactMatch": "POST"}, "destination": {"exactMatch": "other.org"}}, ["xml"]),
        ({"scheme": {"exactMatch": "https"}}, ["post"]),
        ({"body": {"jsonMatch": '{"name": "ann", "age": 30}'}}, ["post"]),
        ({"body": {"xpathMatch": "/a/b"}}, ["xml"]),
        ({"path": {"exactMatch": "/api/users", "globMatch": "*x"}}, []),  # both must match
        ({"path": {}}, ["get", "post", "form", "xml"]),
        ({"headers": {"X-Trace": ["t1", "t2"]}}, ["post"]),  # plain headers: a glob over "t1;t2"
        ({"headers": {"Content-Type": ["application/*"]}}, ["post", "form"]),
        ({"query": {"exactMatch": "tag=b&id=7&Tag=a"}}, ["get"]),  # the whole query string, sorted
        ({"query": {"globMatch": "*id=7*"}}, ["get"]),
        ({"query": {"exactMatch": ""}}, ["post", "form", "xml"]),
    ],
)
def test_search_legacy_exact_match_form(fields: dict[str, Any], expected: list[str]) -> None:
    assert where(**fields) == expected


@pytest.mark.parametrize("body", [{}, {"other": 1}, {"request": None}, {"REQUEST": None}])
def test_search_without_request(body: dict[str, Any]) -> None:
    with pytest.raises(ValueError) as info:
        compile_search(body, REGISTRY)
    assert str(info.value) == NO_REQUEST == 'No "request" object in search parameters'


@pytest.mark.parametrize(
    "body",
    [
        [],
        "request",
        {"request": []},
        {"request": "x"},
        {"request": {"path": "/a"}},
        {"request": {"path": 1}},
        {"request": {"path": ["/a"]}},
        {"request": {"path": [None]}},
        {"request": {"path": [{"matcher": 1, "value": "/a"}]}},
        {"request": {"path": [{"matcher": "exact", "value": "/a", "config": []}]}},
        {"request": {"path": {"exactMatch": 1}}},
        {"request": {"headers": []}},
        {"request": {"headers": {"A": "x"}}},
        {"request": {"headers": {"A": ["x", {"matcher": "exact", "value": "x"}]}}},
        {"request": {"query": []}},
        {"request": {"query": {"a": "1", "b": []}}},
        {"request": {"requiresState": {"a": 1}}},
    ],
)
def test_search_malformed(body: Any) -> None:
    with pytest.raises(ValueError) as info:
        compile_search(body, REGISTRY)
    assert str(info.value) == MALFORMED


def test_search_matcher_errors_name_the_matcher() -> None:
    with pytest.raises(ValueError, match=r"^request\.path\[1\]\.matcher: unknown matcher 'nope'"):
        compile_search({"request": {"path": [exact("/a"), m("nope", "x")]}}, REGISTRY)
    with pytest.raises(ValueError, match=r"^request\.headers\.X-A\[0\]: invalid regular expression"):
        compile_search({"request": {"headers": {"X-A": [regex("(")]}}}, REGISTRY)
    with pytest.raises(ValueError, match=r"^request\.path\[0\]\.matcher: the form matcher belongs only"):
        compile_search({"request": {"path": [m("form", {})]}}, REGISTRY)


def test_search_keeps_arrival_order_and_entries_unchanged() -> None:
    search = compile_search({"request": {"method": [glob("*")]}}, REGISTRY)
    result = search.filter(reversed(JOURNAL))
    assert ids(result) == ["xml", "form", "post", "get"]
    assert result[0] is JOURNAL[3]


# ---------------------------------------------------------------------------------------------
# indexes

INDEXED = entry(
    request(
        "/orders/42",
        "POST",
        query="id=7&tag=a&tag=b",
        headers={"X-Y": ["v1"], "Content-Type": ["application/json"]},
        body='{"id": "order-9", "items": [1, 2]}',
    ),
    body=b'{"status": "ok"}',
)


def key(name: str, e: JournalEntry = INDEXED) -> str:
    expression = compile_index(name, ENGINE)
    assert expression.try_key(e) == expression.key_of(e)
    return expression.key_of(e)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Request.QueryParam.id", "7"),
        ("Request.QueryParam.tag", "ab"),  # a []string printed by raymond: the values concatenated
        ("Request.Header.X-Y", "v1"),
        ("Request.Path", "orders42"),  # Path is the []string of segments, too
        ("Request.Path.[1]", "42"),
        ("Request.Method", "POST"),
        ("Request.Scheme", "http"),
        ("Request.Body 'jsonpath' '$.id'", "order-9"),
        ('Request.Body "jsonpath" "$.items[1]"', "2"),
        ("Request.QueryParam.missing", ""),
        ("Request.Header.Missing", ""),
        ("Request.Body 'jsonpath' '$.nothing'", ""),
        ("Request.Nothing", ""),
    ],
)
def test_index_keys(name: str, expected: str) -> None:
    assert key(name) == expected


def test_index_key_of_a_missing_value_is_empty() -> None:
    bare = entry(request("/"))
    assert key("Request.QueryParam.id", bare) == ""
    assert key("Request.Body 'jsonpath' '$.id'", bare) == ""


def test_index_render_failure_leaves_the_entry_out() -> None:
    failing = compile_index("Request.Body 'jsonpath' ''", ENGINE)  # an empty JSONPath crashes Hoverfly
    assert failing.try_key(INDEXED) is None
    assert failing.key_of(INDEXED) == ""
    assert build_index(failing, [INDEXED]) == {}


@pytest.mark.parametrize(
    ("name", "stored"),
    [
        ("Request.QueryParam.id", "Request.QueryParam.id"),
        ("Request.Body 'jsonpath' '$.id'", "Request.Body jsonpath $.id"),
        ("'a''b'", "ab"),
    ],
)
def test_index_stored_name_drops_apostrophes(name: str, stored: str) -> None:
    assert index_key(name) == stored
    compiled = compile_index(name, ENGINE)
    assert (compiled.name, compiled.source) == (stored, name)


@pytest.mark.parametrize("name", ["", "Request.Path}}", "{{Request.Path", "#each Request.Path", "noSuchHelper 1 2"])
def test_index_names_that_do_not_compile(name: str) -> None:
    with pytest.raises(ValueError, match="invalid journal index"):
        compile_index(name, ENGINE)


def test_build_index_last_entry_per_key_wins() -> None:
    entries = [
        entry(request(query="id=1"), id="a"),
        entry(request(query="id=2"), id="b"),
        entry(request(query="id=1"), id="c"),
        entry(request(), id="d"),
    ]
    keyed = build_index(compile_index("Request.QueryParam.id", ENGINE), entries)
    assert {k: e.id for k, e in keyed.items()} == {"1": "c", "2": "b", "": "d"}


def test_index_view() -> None:
    entries = [entry(request(query="id=2"), id="b"), entry(request(query="id=1"), id="a")]
    keyed = build_index(compile_index("Request.QueryParam.id", ENGINE), entries)
    full = index_view("Request.QueryParam.id", keyed)
    assert full == {
        "name": "Request.QueryParam.id",
        "entries": [{"key": "1", "journalEntryId": "a"}, {"key": "2", "journalEntryId": "b"}],
    }
    assert list(full["entries"][0]) == ["key", "journalEntryId"]
    assert index_view("n", keyed, {"b"}) == {"name": "n", "entries": [{"key": "2", "journalEntryId": "b"}]}
    assert index_view("n", keyed, set()) == {"name": "n"}  # entries left out when none on the page
    assert index_view("n", {}) == {"name": "n"}


def test_index_lookup_serves_the_journal_helpers() -> None:
    name = "Request.Body 'jsonpath' '$.id'"
    expression = compile_index(name, ENGINE)
    lookup = IndexLookup({expression.name: build_index(expression, [INDEXED])})
    found_entry = lookup.lookup("Request.Body jsonpath $.id", "order-9")
    assert found_entry is not None
    assert (found_entry.request_body, found_entry.response_body) == (INDEXED.request.body, '{"status": "ok"}')
    assert lookup.lookup("Request.Body jsonpath $.id", "nope") is None
    assert lookup.lookup(name, "order-9") is None  # looked up by the stored name

    template = ENGINE.compile(
        '{{ journal "Request.Body jsonpath $.id" "order-9" "response" "jsonpath" "$.status" }}'
        '/{{ hasJournalKey "Request.Body jsonpath $.id" "order-9" }}'
        '/{{ hasJournalKey "Request.Body jsonpath $.id" "x" }}',
        "data.pairs[0].response.body",
    )
    ctx = RenderContext(request(), {}, {}, Variables(), CsvTables({}), lookup)
    assert template.render(ctx).text == "ok/true/false"
