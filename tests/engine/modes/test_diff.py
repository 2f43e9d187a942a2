"""Diff reports (hoverfly-admin.md §3.17, §7.8; admin-api.md §2.16, §4.7): the wire views and their key
order, storage, the POST exclusion rule and how a real response is compared with the simulated one."""

from __future__ import annotations

import gzip
import zlib
from datetime import UTC, datetime, timedelta, timezone

import orjson
import pytest

from simproxy.engine.modes.diff_report import (
    DiffEntry,
    DiffGroup,
    DiffReport,
    DiffRequest,
    compare_responses,
    decode_groups,
    decode_report,
    decode_request,
    diff_view,
    encode_report,
    encode_request,
    excluded_field,
    filter_reports,
    report_timestamp,
)

REQ = DiffRequest("GET", "example.com:8080", "/api/users", "page=1&q=a+b")
TS = "2024-05-01T10:20:30Z"


def report(*fields: str, ts: str = TS) -> DiffReport:
    return DiffReport(ts, tuple(DiffEntry(f, f"e-{f}", f"a-{f}") for f in fields))


def fields(entries: list[DiffEntry]) -> list[str]:
    return [e.field for e in entries]


def compare(
    expected_body: bytes | str = b"",
    actual_body: bytes | str = b"",
    expected_headers: dict[str, list[str]] | None = None,
    actual_headers: dict[str, list[str]] | None = None,
    expected_status: int = 200,
    actual_status: int = 200,
    whitelist: tuple[str, ...] = (),
) -> list[DiffEntry]:
    return compare_responses(
        expected_status,
        expected_headers or {},
        expected_body,
        actual_status,
        actual_headers or {},
        actual_body,
        whitelist,
    )


# ---------------------------------------------------------------------------------------------
# views


def test_the_view_has_hoverflys_key_order_byte_for_byte() -> None:
    group = DiffGroup(REQ, (DiffReport(TS, (DiffEntry("header/Content-Type", "[text/plain]", "[application/json]"),)),))
    assert orjson.dumps(diff_view([group])) == (
        b'{"diff":[{"request":{"method":"GET","host":"example.com:8080","path":"/api/users","query":"page=1&q=a+b"},'
        b'"diffReports":[{"timestamp":"2024-05-01T10:20:30Z","diffEntries":'
        b'[{"field":"header/Content-Type","expected":"[text/plain]","actual":"[application/json]"}]}]}]}'
    )


def test_no_reports_is_an_empty_list_not_null() -> None:
    assert orjson.dumps(diff_view([])) == b'{"diff":[]}'


def test_groups_and_reports_keep_their_order_in_the_view() -> None:
    other = DiffRequest("POST", "a", "/", "")
    view = diff_view([DiffGroup(REQ, (report("x", ts="t1"), report("y", ts="t2"))), DiffGroup(other, (report("z"),))])
    assert [g["request"]["method"] for g in view["diff"]] == ["GET", "POST"]
    assert [r["timestamp"] for r in view["diff"][0]["diffReports"]] == ["t1", "t2"]


def test_report_timestamp_is_rfc3339_seconds_in_utc() -> None:
    moment = datetime(2024, 5, 1, 12, 20, 30, 999_999, tzinfo=timezone(timedelta(hours=2)))
    assert report_timestamp(moment) == "2024-05-01T10:20:30Z"
    assert report_timestamp(datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2024-01-02T03:04:05Z"
    naive = datetime(2024, 1, 2, 3, 4, 5)  # local time
    assert report_timestamp(naive) == report_timestamp(naive.astimezone())


# ---------------------------------------------------------------------------------------------
# storage


def test_identical_requests_share_a_key_and_different_ones_do_not() -> None:
    assert encode_request(REQ) == encode_request(
        DiffRequest(*["GET", "example.com:8080", "/api/users", "page=1&q=a+b"])
    )
    variants = [
        DiffRequest("POST", REQ.host, REQ.path, REQ.query),
        DiffRequest(REQ.method, "example.com", REQ.path, REQ.query),
        DiffRequest(REQ.method, REQ.host, "/api/users/", REQ.query),
        DiffRequest(REQ.method, REQ.host, REQ.path, ""),
    ]
    assert len({encode_request(r) for r in [REQ, *variants]}) == 5
    # no separator can make two requests collide
    assert encode_request(DiffRequest("a", "b c", "", "")) != encode_request(DiffRequest("a b", "c", "", ""))


def test_request_keys_and_reports_round_trip() -> None:
    odd = DiffRequest("GET", "h\u00e9", '/p"\\', "a=\n")
    assert decode_request(encode_request(REQ)) == REQ
    assert decode_request(encode_request(odd)) == odd
    stored = DiffReport(TS, (DiffEntry("body/a", "1", "null"), DiffEntry("status", "200", "404")))
    assert decode_report(encode_report(stored)) == stored
    assert decode_report(encode_report(DiffReport(TS, ()))) == DiffReport(TS, ())


def test_the_stored_report_is_its_wire_view() -> None:
    assert orjson.loads(encode_report(report("status"))) == {
        "timestamp": TS,
        "diffEntries": [{"field": "status", "expected": "e-status", "actual": "a-status"}],
    }


def test_text_that_is_not_valid_unicode_is_stored_with_replacement_characters() -> None:
    stored = DiffReport(TS, (DiffEntry("body", "a\udcff", "b"),))
    assert decode_report(encode_report(stored)).entries[0].expected == "a\ufffd"
    assert decode_request(encode_request(DiffRequest("GET", "h", "/\ud800", ""))).path == "/\ufffd"


def test_decode_groups_reads_what_the_store_returns() -> None:
    stored = [(encode_request(REQ), [encode_report(report("a")), encode_report(report("b"))])]
    assert decode_groups(stored) == [DiffGroup(REQ, (report("a"), report("b")))]


@pytest.mark.parametrize("raw", [b"[]", b'{"timestamp":"t"}', b'{"timestamp":"t","diffEntries":[{"field":"x"}]}'])
def test_a_report_that_is_not_ours_is_an_error(raw: bytes) -> None:
    with pytest.raises(ValueError):
        decode_report(raw)


@pytest.mark.parametrize("key", ['["GET","h","/"]', '{"method":"GET"}', '["GET","h","/",1]'])
def test_a_request_key_that_is_not_ours_is_an_error(key: str) -> None:
    with pytest.raises(ValueError):
        decode_request(key)


# ---------------------------------------------------------------------------------------------
# POST /diff exclusions


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("$.time", "body/time"),
        ("$.a.b", "body/a/b"),
        ("$.a.b.c", "body/a/b/c"),
        ("a.b", "a/b"),  # no "$.": only the dots change
        ("$..a", "body//a"),
        ("$.a$.b", "body/abody/b"),  # every "$." is replaced, not only the first
        ("$", "$"),
    ],
)
def test_a_json_path_becomes_an_entry_field(path: str, field: str) -> None:
    assert excluded_field(path) == field


def test_excluded_headers_and_fields_drop_exactly_their_entries() -> None:
    groups = [DiffGroup(REQ, (report("header/Date", "header/X-Id", "body/time", "body/a/b", "status"),))]
    kept = filter_reports(groups, ["Date"], ["$.time", "$.a.b"])
    assert [fields(list(r.entries)) for r in kept[0].reports] == [["header/X-Id", "status"]]


def test_header_exclusion_is_case_sensitive() -> None:
    groups = [DiffGroup(REQ, (report("header/Date"),))]
    assert filter_reports(groups, ["date"], []) == groups
    assert filter_reports(groups, ["Date"], []) == []


def test_a_json_path_only_excludes_its_own_field_not_its_children_or_parents() -> None:
    groups = [DiffGroup(REQ, (report("body/a", "body/a/b/c", "body"),))]
    kept = filter_reports(groups, [], ["$.a.b"])
    assert kept == groups
    kept = filter_reports(groups, [], ["$.a"])
    assert fields(list(kept[0].reports[0].entries)) == ["body/a/b/c", "body"]


def test_reports_and_groups_left_empty_are_dropped_and_the_rest_keep_their_order() -> None:
    other, third = DiffRequest("POST", "h", "/x", ""), DiffRequest("GET", "h", "/y", "")
    groups = [
        DiffGroup(REQ, (report("header/Date", ts="t1"), report("status", ts="t2"), report("header/Date", ts="t3"))),
        DiffGroup(other, (report("header/Date"),)),
        DiffGroup(third, (report("body/x", ts="t4"),)),
    ]
    kept = filter_reports(groups, ["Date"], [])
    assert [g.request for g in kept] == [REQ, third]
    assert [r.timestamp for r in kept[0].reports] == ["t2"]
    assert filter_reports(groups, ["Date"], ["$.x", "status"]) == []


def test_filtering_leaves_the_reports_untouched() -> None:
    groups = [DiffGroup(REQ, (report("header/Date", "status"),))]
    filter_reports(groups, ["Date"], [])
    assert groups == [DiffGroup(REQ, (report("header/Date", "status"),))]
    assert filter_reports(groups, [], []) == groups


# ---------------------------------------------------------------------------------------------
# comparing responses: status and headers


def test_identical_responses_have_no_differences() -> None:
    headers = {"Content-Type": ["application/json"], "X": ["1", "2"]}
    assert compare(b'{"a":1}', b'{"a":1}', headers, dict(headers)) == []
    assert compare() == []


def test_status_differs_as_decimal_strings() -> None:
    assert compare(expected_status=200, actual_status=404) == [DiffEntry("status", "200", "404")]


def test_an_unset_expected_status_is_not_compared() -> None:
    assert compare(expected_status=0, actual_status=503) == []


def test_a_header_with_other_values_prints_both_as_go_slices() -> None:
    entries = compare(
        expected_headers={"Content-Type": ["text/plain"]}, actual_headers={"Content-Type": ["application/json"]}
    )
    assert entries == [DiffEntry("header/Content-Type", "[text/plain]", "[application/json]")]
    entries = compare(expected_headers={"X": ["a", "b"]}, actual_headers={"X": ["b", "a"]})
    assert entries == [DiffEntry("header/X", "[a b]", "[b a]")]
    assert compare(expected_headers={"X": []}, actual_headers={"X": ["a"]}) == [DiffEntry("header/X", "[]", "[a]")]


def test_a_missing_header_is_null_and_names_compare_exactly() -> None:
    assert compare(expected_headers={"X-Id": ["7"]}) == [DiffEntry("header/X-Id", "[7]", "null")]
    entries = compare(expected_headers={"x-id": ["7"]}, actual_headers={"X-Id": ["7"]})
    assert entries == [DiffEntry("header/x-id", "[7]", "null")]


def test_headers_only_the_real_response_has_are_not_differences() -> None:
    assert compare(actual_headers={"Date": ["now"], "Hoverfly": ["Was-Here"]}) == []


def test_the_headers_whitelist_skips_the_headers_it_names_or_all_with_a_star() -> None:
    expected = {"Date": ["a"], "X-Id": ["1"], "Server": ["s"]}
    actual = {"Date": ["b"], "X-Id": ["2"]}
    assert fields(compare(expected_headers=expected, actual_headers=actual, whitelist=("Date", "Server"))) == [
        "header/X-Id"
    ]
    assert fields(compare(expected_headers=expected, actual_headers=actual, whitelist=("date",))) == [
        "header/Date",
        "header/X-Id",
        "header/Server",
    ]
    assert compare(expected_headers=expected, actual_headers=actual, whitelist=("*",)) == []


def test_headers_may_be_given_as_pairs_like_a_simulation_response_holds_them() -> None:
    entries = compare_responses(200, (("X", ("1",)),), b"", 200, (("X", ("2",)),), b"", ())
    assert entries == [DiffEntry("header/X", "[1]", "[2]")]


def test_entries_come_status_first_then_headers_in_expected_order_then_body() -> None:
    entries = compare(
        b'{"z":1,"a":2}',
        b'{"z":2,"a":3}',
        {"B": ["1"], "A": ["1"]},
        {},
        expected_status=201,
    )
    assert fields(entries) == ["status", "header/B", "header/A", "body/z", "body/a"]


# ---------------------------------------------------------------------------------------------
# comparing responses: bodies


def test_json_bodies_compare_key_by_key_with_nested_paths() -> None:
    entries = compare(b'{"a":{"b":{"c":"x","d":"same"}},"e":"y"}', b'{"a":{"b":{"c":"z","d":"same"}},"e":"w"}')
    assert entries == [DiffEntry("body/a/b/c", "x", "z"), DiffEntry("body/e", "y", "w")]


def test_keys_only_in_the_real_body_are_not_differences() -> None:
    assert compare(b'{"a":1}', b'{"a":1,"extra":2}') == []


def test_a_key_missing_from_the_real_body_is_null() -> None:
    assert compare(b'{"a":{"b":1}}', b'{"a":{}}') == [DiffEntry("body/a/b", "1", "null")]
    assert compare(b'{"a":{"b":1}}', b"{}") == [DiffEntry("body/a", "map[b:1]", "null")]


@pytest.mark.parametrize(
    ("expected", "actual", "entry"),
    [
        ('{"a":1}', '{"a":"1"}', ("1", "1")),  # number vs string: different types
        ('{"a":true}', '{"a":1}', ("true", "1")),
        ('{"a":null}', '{"a":0}', ("null", "0")),
        ('{"a":{"b":1}}', '{"a":[1]}', ("map[b:1]", "[1]")),
        ('{"a":"x"}', '{"a":null}', ("x", "null")),
    ],
)
def test_values_of_different_json_types_always_differ(expected: str, actual: str, entry: tuple[str, str]) -> None:
    assert compare(expected, actual) == [DiffEntry("body/a", *entry)]


def test_equal_values_of_one_type_do_not_differ() -> None:
    assert (
        compare(
            '{"a":null,"b":1.0,"c":false,"d":"s","e":[1,{"x":null}]}',
            '{"a":null,"b":1,"c":false,"d":"s","e":[1.0,{"x":null}]}',
        )
        == []
    )


def test_arrays_are_compared_whole_and_printed_like_go() -> None:
    assert compare('{"a":[1,2]}', '{"a":[2,1]}') == [DiffEntry("body/a", "[1 2]", "[2 1]")]
    assert compare('{"a":[true]}', '{"a":[1]}') == [DiffEntry("body/a", "[true]", "[1]")]  # not Python's True == 1
    entries = compare('{"a":[{"y":"b","x":null},"s",[1.5]]}', '{"a":[]}')
    assert entries == [DiffEntry("body/a", "[map[x:<nil> y:b] s [1.5]]", "[]")]


@pytest.mark.parametrize(
    ("number", "printed"),
    [
        ("42", "42"),
        ("-3", "-3"),
        ("1.5", "1.5"),
        ("1000000", "1e+06"),
        ("123456", "123456"),
        ("1521222334104", "1.521222334104e+12"),
        ("0.0001", "0.0001"),
        ("0.00001", "1e-05"),
        ("1e21", "1e+21"),
        ("0", "0"),
    ],
)
def test_numbers_print_as_go_float64_percent_v(number: str, printed: str) -> None:
    assert compare(f'{{"n":{number}}}', '{"n":"x"}') == [DiffEntry("body/n", printed, "x")]


def test_nested_objects_print_with_sorted_keys_and_nil() -> None:
    entries = compare('{"a":{"z":1,"b":{"k":[true,false]},"n":null}}', '{"a":"flat"}')
    assert entries == [DiffEntry("body/a", "map[b:map[k:[true false]] n:<nil> z:1]", "flat")]


def test_bodies_that_are_not_json_compare_as_raw_text() -> None:
    assert compare("hello", "hello") == []
    assert compare("hello", "world") == [DiffEntry("body", "hello", "world")]
    assert compare('{"a":1}', "not json") == [DiffEntry("body", '{"a":1}', "not json")]
    assert compare("not json", '{"a":1}') == [DiffEntry("body", "not json", '{"a":1}')]
    assert compare("", '{"a":1}') == [DiffEntry("body", "", '{"a":1}')]


def test_json_that_is_not_an_object_compares_as_raw_text() -> None:
    assert compare("[1,2]", "[1, 2]") == [DiffEntry("body", "[1,2]", "[1, 2]")]
    assert compare('"s"', '"s"') == []
    assert compare('{"a":1}', "[1]") == [DiffEntry("body", '{"a":1}', "[1]")]


def test_formatting_inside_json_does_not_matter() -> None:
    assert compare(b'{\n\t"a": 1,\r\n  "b": [1, 2]\n}', b'{"b":[1,2],"a":1}') == []


def test_single_quotes_become_double_quotes_and_backslashes_spaces_before_parsing() -> None:
    assert compare("{'a':'x'}", '{"a":"x"}') == []
    # an escaped newline is read as a space and an "n"
    assert compare('{"a":"x\\ny"}', '{"a":"x ny"}') == []
    assert compare('{"a":"x\\ny"}', '{"a":"x\\ny"}') == []
    # what the raw entry shows is the body as it was, when the cleanup leaves it unparsable
    assert compare('{"a":"q\\"s"}', '{"a":"q"}') == [DiffEntry("body", '{"a":"q\\"s"}', '{"a":"q"}')]


def test_bodies_are_decoded_by_their_content_encoding_before_comparing() -> None:
    zipped = gzip.compress(b'{"a":1,"b":2}')
    entries = compare(b'{"a":1,"b":3}', zipped, actual_headers={"Content-Encoding": ["gzip"]})
    assert entries == [DiffEntry("body/b", "3", "2")]
    deflated = zlib.compress(b'{"a":1}')
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    raw_deflated = raw.compress(b'{"a":1}') + raw.flush()
    for body in (deflated, raw_deflated):
        assert compare(b'{"a":1}', body, actual_headers={"content-encoding": ["deflate"]}) == []
    twice = gzip.compress(gzip.compress(b'{"a":1}'))
    assert compare(b'{"a":1}', twice, actual_headers={"Content-Encoding": ["gzip", "gzip"]}) == []
    assert compare(zipped, b'{"a":1,"b":2}', expected_headers={"Content-Encoding": ["gzip"]}) == [
        DiffEntry("header/Content-Encoding", "[gzip]", "null")
    ]


def test_a_body_that_cannot_be_decoded_compares_as_raw_bytes() -> None:
    entries = compare(b'{"a":1}', b'{"a":1}', actual_headers={"Content-Encoding": ["gzip"]})
    assert entries == []  # not gzip: the raw texts are equal
    entries = compare(b'{"a":1}', b'{"a":2}', actual_headers={"Content-Encoding": ["br"]})
    assert entries == [DiffEntry("body", '{"a":1}', '{"a":2}')]
    # an unknown encoding is left alone
    assert compare(b'{"a":1}', b'{"a":1 }', actual_headers={"Content-Encoding": ["identity"]}) == []


def test_bodies_that_are_not_utf8_are_shown_with_replacement_characters() -> None:
    assert compare(b"caf\xe9", b"cafe") == [DiffEntry("body", "caf\ufffd", "cafe")]
    assert compare(b"\xff", b"\xfe") == [DiffEntry("body", "\ufffd", "\ufffd")]  # the bytes differ
    assert compare("caf\u00e9", b"caf\xc3\xa9") == []  # a str body is its UTF-8 bytes
