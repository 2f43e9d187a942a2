"""v5 ``data`` <-> Simulation: Hoverfly's export view (spec §1.9, §9.1) and the lossless storage form."""

from __future__ import annotations

import base64
import copy
import gzip
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simproxy.engine.errors import SimulationError
from simproxy.engine.simulation.codec import decode_simulation, export_simulation, storage_simulation
from simproxy.engine.simulation.model import (
    MAX_BYTES_PER_SECOND,
    MAX_CHUNKS,
    MAX_DURATION_MS,
    Fault,
    FaultKind,
    Matcher,
    Pair,
    RequestMatcher,
    Response,
    Simulation,
)
from tests.engine.conftest import exact, glob, m, pair, regex

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def export(data: dict[str, Any]) -> dict[str, Any]:
    return export_simulation(decode_simulation(data))


def key_orders(value: Any) -> Any:
    """The key order of every object in a JSON value, nested like the value itself."""
    if isinstance(value, dict):
        return [(key, key_orders(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [key_orders(item) for item in value]
    return None


def assert_same_json(actual: Any, expected: Any) -> None:
    assert actual == expected
    assert key_orders(actual) == key_orders(expected)


# A document already in export form: every response field, labels, literals, variables, both delay
# kinds, matcher config and doMatch, `query: {}`, keys in Hoverfly's order and maps sorted by key.
RICH: dict[str, Any] = {
    "pairs": [
        {
            "labels": ["checkout", "slow"],
            "request": {
                "path": [exact("/orders"), m("glob", "/ord*", doMatch=m("regex", "s$", doMatch=exact("/orders")))],
                "method": [m("Exact", "POST")],
                "destination": [regex("^api\\.")],
                "scheme": [exact("https")],
                "body": [m("", '{"id":1}')],
                "headers": {
                    "Accept": [glob("*json*")],
                    "X-Multi": [exact("a;b"), m("array", ["a", "b"], config={"ignoreOrder": True})],
                },
                "query": {"page": [exact("1")], "q": [m("exact", 1.5)]},
                "requiresState": {"basket": "full", "sequence:1": "2"},
            },
            "response": {
                "status": 201,
                "body": '{"ok":true}',
                "bodyFile": "responses/created.json",
                "encodedBody": False,
                "headers": {"Content-Type": ["application/json"], "Set-Cookie": ["a=1", "b=2"]},
                "templated": True,
                "transitionsState": {"basket": "empty", "sequence:1": "3"},
                "removesState": ["coupon", "alpha"],
                "fixedDelay": 150,
                "logNormalDelay": {"min": 10, "max": 900, "mean": 200, "median": 100},
                "postServeAction": "notify",
            },
        },
        {
            "request": {"path": [exact("/empty-query")], "query": {}},
            "response": {"status": 404, "body": "", "encodedBody": False, "templated": False},
        },
        {
            "request": {"headers": {"X-Value": [m("exact", None), m("exact", {"k": [1, "two", False]})]}},
            "response": {"status": 200, "body": b64(PNG), "encodedBody": True, "templated": False},
        },
        {
            "request": {},
            "response": {
                "status": 200,
                "body": b64(gzip.compress(b"hello", mtime=0)),
                "encodedBody": True,
                "headers": {"Content-Encoding": ["gzip"]},
                "templated": False,
            },
        },
    ],
    "globalActions": {
        "delays": [
            {"urlPattern": "api\\.test/slow", "httpMethod": "GET", "delay": 500},
            {"urlPattern": ".", "httpMethod": "", "delay": 1},
        ],
        "delaysLogNormal": [
            {"urlPattern": "x", "httpMethod": "POST", "min": 1, "max": 100, "mean": 30, "median": 20},
        ],
    },
    "literals": [{"name": "greeting", "value": "hi"}, {"name": "list", "value": [1, "a", None]}],
    "variables": [
        {"name": "id", "function": "randomUuid"},
        {"name": "n", "function": "randomIntegerRange", "arguments": [1, 10]},
    ],
}


def test_a_document_in_export_form_exports_unchanged() -> None:
    assert_same_json(export(copy.deepcopy(RICH)), RICH)


def test_hoverflys_normalisations_on_export() -> None:
    given_data: dict[str, Any] = {
        "variables": [],
        "literals": [],
        "globalActions": {},
        "pairs": [
            {
                "response": {
                    "postServeAction": "",
                    "fixedDelay": 0,
                    "removesState": [],
                    "transitionsState": {},
                    "headers": {"X-B": ["2"], "A-Lower": ["x"], "Z-Upper": ["z"], "a-lower": ["y"]},
                    "body": b64(b'{"text": "decodes to JSON"}'),
                    "encodedBody": True,
                    "bodyFile": "",
                },
                "request": {
                    "requiresState": {},
                    "query": {"b": [exact("2")], "B": [exact("1")], "a": [exact("0")]},
                    "headers": {},
                    "body": [],
                    "scheme": [],
                    "destination": [],
                    "method": [{"value": "GET", "config": {}, "matcher": "exact"}],
                    "path": [],
                },
                "labels": [],
            },
            {"request": {"path": None, "query": None}, "response": {"status": 0}},
        ],
    }
    expected = {
        "pairs": [
            {
                "request": {
                    "method": [exact("GET")],
                    "query": {"B": [exact("1")], "a": [exact("0")], "b": [exact("2")]},
                },
                "response": {
                    "status": 200,
                    "body": '{"text": "decodes to JSON"}',
                    "encodedBody": False,
                    "headers": {"A-Lower": ["x"], "X-B": ["2"], "Z-Upper": ["z"], "a-lower": ["y"]},
                    "templated": False,
                },
            },
            {"request": {}, "response": {"status": 200, "body": "", "encodedBody": False, "templated": False}},
        ],
        "globalActions": {"delays": [], "delaysLogNormal": []},
    }
    assert_same_json(export(given_data), expected)


def test_literals_and_variables_are_exported_in_hoverflys_shape() -> None:
    """Go decodes them into structs: fixed key order, unknown keys dropped, empty ``arguments`` omitted."""
    exported = export(
        {
            "pairs": [pair()],
            "literals": [{"value": 1, "name": "a", "note": "dropped"}],
            "variables": [
                {"arguments": [], "function": "randomUuid", "name": "v"},
                {"arguments": ["x"], "name": "w", "function": "faker"},
            ],
        }
    )
    assert_same_json(exported["literals"], [{"name": "a", "value": 1}])
    assert_same_json(
        exported["variables"],
        [{"name": "v", "function": "randomUuid"}, {"name": "w", "function": "faker", "arguments": ["x"]}],
    )


def test_export_writes_keys_in_hoverflys_order_whatever_the_input_order() -> None:
    scrambled = orjson.loads(orjson.dumps(RICH, option=orjson.OPT_SORT_KEYS))
    scrambled["pairs"][0]["response"]["logNormalDelay"] = {"median": 100, "mean": 200, "max": 900, "min": 10}
    scrambled["globalActions"]["delays"][0] = {"delay": 500, "httpMethod": "GET", "urlPattern": "api\\.test/slow"}
    scrambled["literals"] = RICH["literals"]  # literal and variable key order: see the test above
    scrambled["variables"] = RICH["variables"]
    exported = export(scrambled)
    assert_same_json(exported, RICH)
    assert list(exported) == ["pairs", "globalActions", "literals", "variables"]
    assert list(exported["globalActions"]) == ["delays", "delaysLogNormal"]
    first = exported["pairs"][0]
    assert list(first) == ["labels", "request", "response"]
    assert list(first["request"]) == [
        "path",
        "method",
        "destination",
        "scheme",
        "body",
        "headers",
        "query",
        "requiresState",
    ]
    assert list(first["response"]) == [
        "status",
        "body",
        "bodyFile",
        "encodedBody",
        "headers",
        "templated",
        "transitionsState",
        "removesState",
        "fixedDelay",
        "logNormalDelay",
        "postServeAction",
    ]
    assert list(first["request"]["path"][1]) == ["matcher", "value", "doMatch"]
    assert list(first["request"]["headers"]["X-Multi"][1]) == ["matcher", "value", "config"]
    assert list(first["response"]["logNormalDelay"]) == ["min", "max", "mean", "median"]
    assert list(exported["globalActions"]["delays"][0]) == ["urlPattern", "httpMethod", "delay"]
    assert list(exported["globalActions"]["delaysLogNormal"][0]) == [
        "urlPattern",
        "httpMethod",
        "min",
        "max",
        "mean",
        "median",
    ]


def test_an_empty_simulation_exports_empty_lists_and_no_literals_or_variables() -> None:
    assert_same_json(export({}), {"pairs": [], "globalActions": {"delays": [], "delaysLogNormal": []}})
    assert_same_json(
        export({"pairs": [], "literals": [], "variables": []}),
        {"pairs": [], "globalActions": {"delays": [], "delaysLogNormal": []}},
    )


def test_query_present_but_empty_is_exported_and_absent_is_not() -> None:
    assert export({"pairs": [pair({"query": {}})]})["pairs"][0]["request"] == {"query": {}}
    assert export({"pairs": [pair({})]})["pairs"][0]["request"] == {}


def test_an_empty_config_is_dropped_on_export() -> None:
    exported = export({"pairs": [pair({"path": [m("exact", "/a", config={})]})]})
    assert exported["pairs"][0]["request"]["path"] == [exact("/a")]


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"b": 1, "a": 2, "C": 3}, id="object"),
        pytest.param([{"z": 1, "y": {"d": 1, "c": 2}}], id="nested-object"),
    ],
)
def test_object_values_are_exported_with_sorted_keys(value: Any) -> None:
    """Go decodes these into maps, and encoding/json writes map keys sorted."""
    exported = export(
        {
            "pairs": [pair({"path": [m("exact", value)]})],
            "literals": [{"name": "l", "value": value}],
            "variables": [{"name": "v", "function": "faker", "arguments": [value]}],
        }
    )
    sorted_value = orjson.loads(orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
    assert key_orders(exported["pairs"][0]["request"]["path"][0]["value"]) == key_orders(sorted_value)
    assert key_orders(exported["literals"][0]["value"]) == key_orders(sorted_value)
    assert key_orders(exported["variables"][0]["arguments"][0]) == key_orders(sorted_value)


def test_whole_numbers_are_exported_without_a_fraction() -> None:
    """Go holds JSON numbers as float64 and writes 1.0 back as 1."""
    exported = export(
        {
            "pairs": [pair({"path": [m("exact", 1.0)]})],
            "literals": [{"name": "n", "value": 2.0}],
            "variables": [{"name": "v", "function": "faker", "arguments": [3.0, 0.5]}],
        }
    )
    wire = orjson.dumps(exported)
    assert b'"value":1}' in wire
    assert b'"value":2}' in wire
    assert b'"arguments":[3,0.5]' in wire


# ---------------------------------------------------------------------------------------------
# encodedBody on export


def exported_body(body: bytes, headers: dict[str, list[str]] | None = None) -> tuple[str, bool]:
    response: dict[str, Any] = {"status": 200, "body": b64(body), "encodedBody": True}
    if headers is not None:
        response["headers"] = headers
    out = export({"pairs": [{"request": {}, "response": response}]})["pairs"][0]["response"]
    return out["body"], out["encodedBody"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"hello world", id="text"),
        pytest.param(b'{"a": [1, 2]}', id="json"),
        pytest.param(b"<html><body>hi</body></html>", id="html"),
        pytest.param(b"  <?xml version='1.0'?><a/>", id="xml"),
        pytest.param("caf\u00e9 \u2603 \U0001f600".encode(), id="utf8"),
        pytest.param(b"\xef\xbb\xbfwith a BOM", id="utf8-bom"),
        pytest.param(b"line\r\nbreaks\tand tabs\x0c", id="whitespace-controls"),
        pytest.param(b"\x1b[1mbold\x1b[0m", id="escape-byte-is-not-binary"),
        pytest.param(b"RIFF is a container format", id="riff-prefixed-text"),
        pytest.param(b"x" * 511 + "\u00e9".encode(), id="multibyte-char-cut-at-512"),
    ],
)
def test_text_bodies_export_as_plain_text(body: bytes) -> None:
    assert exported_body(body) == (body.decode("utf-8"), False)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(PNG, id="png"),
        pytest.param(gzip.compress(b"hello"), id="gzip"),
        pytest.param(b"%PDF-1.7\n%text", id="pdf"),
        pytest.param(b"GIF89a" + b"text", id="gif"),
        pytest.param(b"\xff\xd8\xff\xe0", id="jpeg"),
        pytest.param(b"PK\x03\x04", id="zip"),
        pytest.param(b"wOFF then text", id="woff"),
        pytest.param(b"BMW is a car", id="bmp-signature"),
        pytest.param(b"\x00\x01\x02", id="control-bytes"),
        pytest.param(b"%!PS-Adobe-3.0\n%%Title: x", id="postscript"),
        pytest.param(b"OTTO then text", id="otf-font"),
        pytest.param(b"ttcf then text", id="font-collection"),
        pytest.param(b"ID3 tag then text", id="mp3"),
    ],
)
def test_bodies_go_sniffs_as_binary_export_as_base64(body: bytes) -> None:
    assert exported_body(body) == (b64(body), True)


def test_a_content_encoding_header_forces_base64() -> None:
    assert exported_body(b"plain text", {"Content-Encoding": ["identity"]}) == (b64(b"plain text"), True)
    assert exported_body(b"plain text", {"Content-Encoding": ["gzip", "br"]}) == (b64(b"plain text"), True)


def test_content_encoding_is_looked_up_by_its_exact_name() -> None:
    assert exported_body(b"plain text", {"content-encoding": ["gzip"]}) == ("plain text", False)


def test_content_encoding_without_values_does_not_force_base64() -> None:
    assert exported_body(b"plain text", {"Content-Encoding": []}) == ("plain text", False)


def test_a_plain_body_is_stored_as_its_utf8_bytes() -> None:
    sim = decode_simulation({"pairs": [pair(body="caf\u00e9")]})
    assert sim.pairs[0].response.body == "caf\u00e9".encode()
    assert export_simulation(sim)["pairs"][0]["response"]["body"] == "caf\u00e9"


def test_an_encoded_body_is_decoded_once_on_import() -> None:
    sim = decode_simulation({"pairs": [pair(body=b64(b64(b"twice").encode()), encodedBody=True)]})
    assert sim.pairs[0].response.body == b64(b"twice").encode()


@pytest.mark.parametrize("body", ["not base64!", "aGVsbG8=x", "****", "aGVs bG8="])
def test_invalid_base64_with_encoded_body_is_rejected(body: str) -> None:
    with pytest.raises(SimulationError) as caught:
        decode_simulation({"pairs": [pair(), pair(body=body, encodedBody=True)]})
    assert caught.value.path == "data.pairs[1].response.body"


def test_base64_is_only_decoded_when_encoded_body_is_true() -> None:
    sim = decode_simulation({"pairs": [pair(body="aGVsbG8=", encodedBody=False)]})
    assert sim.pairs[0].response.body == b"aGVsbG8="


# ---------------------------------------------------------------------------------------------
# status


@pytest.mark.parametrize("response", [{}, {"status": 0}, {"status": None}])
def test_a_missing_or_zero_status_is_200(response: dict[str, Any]) -> None:
    sim = decode_simulation({"pairs": [{"request": {}, "response": response}]})
    assert sim.pairs[0].response.status == 200
    assert export_simulation(sim)["pairs"][0]["response"]["status"] == 200


@pytest.mark.parametrize("status", [100, 200, 299, 418, 599, 600, 999])
def test_any_three_digit_status_is_kept(status: int) -> None:
    """Go's server accepts any status from 100 to 999 (``checkWriteHeaderCode``)."""
    sim = decode_simulation({"pairs": [pair(status=status)]})
    assert export_simulation(sim)["pairs"][0]["response"]["status"] == status


@pytest.mark.parametrize("status", [99, 1, -200, 1000, 20000])
def test_a_status_outside_100_to_999_is_rejected(status: int) -> None:
    with pytest.raises(SimulationError) as caught:
        decode_simulation({"pairs": [pair(), pair(status=status)]})
    assert caught.value.path == "data.pairs[1].response.status"


GO_INT_MAX = 2**63 - 1
LOG_NORMAL = {"min": 1, "max": 100, "mean": 20, "median": 10}


@pytest.mark.parametrize(
    ("data", "path"),
    [
        pytest.param({"pairs": [pair(fixedDelay=1e20)]}, "data.pairs[0].response.fixedDelay", id="fixed-1e20"),
        pytest.param({"pairs": [pair(fixedDelay=2**64)]}, "data.pairs[0].response.fixedDelay", id="fixed-2^64"),
        pytest.param(
            {"pairs": [pair(logNormalDelay=LOG_NORMAL | {"max": 1e20})]},
            "data.pairs[0].response.logNormalDelay.max",
            id="log-normal",
        ),
        pytest.param(
            {"globalActions": {"delays": [{"urlPattern": ".", "delay": 2**63}]}},
            "data.globalActions.delays[0].delay",
            id="global",
        ),
        pytest.param(
            {"globalActions": {"delaysLogNormal": [{"urlPattern": "."} | LOG_NORMAL | {"min": -(2**63) - 1}]}},
            "data.globalActions.delaysLogNormal[0].min",
            id="global-log-normal",
        ),
    ],
)
def test_a_delay_beyond_gos_int_is_rejected_naming_its_place(data: dict[str, Any], path: str) -> None:
    """Hoverfly decodes delays into Go's int (a larger number fails its import); simproxy could not
    store one either. The schema types them as integers only: the codec names the place."""
    with pytest.raises(SimulationError) as caught:
        decode_simulation(data)
    assert caught.value.path == path


def test_the_largest_delay_gos_int_holds_is_kept() -> None:
    sim = decode_simulation(
        {"pairs": [pair(fixedDelay=GO_INT_MAX)], "globalActions": {"delays": [{"urlPattern": ".", "delay": 9e18}]}}
    )
    assert (sim.pairs[0].response.fixed_delay, sim.delays[0].delay) == (GO_INT_MAX, 9 * 10**18)
    assert stored(sim) == sim


# ---------------------------------------------------------------------------------------------
# storage form


def stored(sim: Simulation) -> Simulation:
    """What the runtime reads back after persisting ``sim`` (orjson bytes in the store)."""
    return decode_simulation(orjson.loads(orjson.dumps(storage_simulation(sim))))


def test_storage_round_trips_a_rich_simulation() -> None:
    sim = decode_simulation(copy.deepcopy(RICH))
    assert stored(sim) == sim


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"pairs": [pair({"path": []})]}, id="empty-path-list"),
        pytest.param({"pairs": [pair({"path": []}), pair({})]}, id="empty-and-absent-list"),
        pytest.param({"pairs": [pair({"method": [], "destination": [], "scheme": [], "body": []})]}, id="all-empty"),
        pytest.param({"pairs": [pair({"query": {}}), pair({})]}, id="empty-and-absent-query"),
        pytest.param({"pairs": [pair({"query": {"a": []}})]}, id="query-name-without-matchers"),
        pytest.param({"pairs": [pair({"headers": {"X-A": []}})]}, id="header-without-matchers"),
        pytest.param({"pairs": [pair({"requiresState": {}}), pair({})]}, id="empty-and-absent-state"),
        pytest.param({"pairs": [pair({"path": [m("exact", "/", config={})]})]}, id="empty-config"),
        pytest.param({"pairs": [pair({"path": [m("exact", "/", doMatch=m("glob", "*", config={}))]})]}, id="chain"),
        pytest.param({"pairs": [pair({"path": [m("exact", None)]})]}, id="null-value"),
        pytest.param({"pairs": [pair(body=b64(b"\xff\xfe\x00binary"), encodedBody=True)]}, id="binary-body"),
        pytest.param({"pairs": [pair(body=b64(b"caf\xe9"), encodedBody=True)]}, id="latin1-body"),
        pytest.param({"pairs": [pair(body="", bodyFile="f.txt")]}, id="body-file"),
        pytest.param({"pairs": [pair(headers={"X-Empty": []})]}, id="response-header-without-values"),
        pytest.param({"pairs": [pair(transitionsState={})]}, id="empty-transitions"),
        pytest.param({"pairs": [pair(removesState=[])]}, id="empty-removes"),
        pytest.param(
            {"pairs": [pair(logNormalDelay={"min": 0, "max": 0, "mean": 0, "median": 0})]}, id="zero-lognormal"
        ),
        pytest.param({"pairs": [{"labels": ["a", "a"], "request": {}, "response": {}}]}, id="labels"),
        pytest.param({"pairs": [], "literals": [{"name": "x", "value": {"b": 1, "a": [None]}}]}, id="literals"),
    ],
)
def test_storage_is_lossless(data: dict[str, Any]) -> None:
    sim = decode_simulation(data)
    assert stored(sim) == sim


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    # every float from 2**53 up is whole, and a whole number beyond 64 bits is refused at import
    | st.floats(min_value=-(2.0**63), max_value=2.0**63, exclude_max=True)
    | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=6,
)
names = st.sampled_from(["exact", "Exact", "", "glob", "regex", "array", "jsonpath"])
matchers: st.SearchStrategy[Matcher] = st.deferred(
    lambda: st.builds(
        Matcher,
        names,
        json_values,
        st.none() | st.dictionaries(st.sampled_from(["ignoreOrder", "ignoreUnknown"]), st.booleans()),
        st.none() | matchers,
    )
)
matcher_lists = st.none() | st.lists(matchers, max_size=2).map(tuple)
named_lists = st.dictionaries(st.text(min_size=1, max_size=4), st.lists(matchers, max_size=2).map(tuple)).map(
    lambda d: tuple(sorted(d.items()))
)
string_maps = st.dictionaries(st.text(min_size=1, max_size=4), st.text(max_size=4)).map(
    lambda d: tuple(sorted(d.items()))
)
request_matchers = st.builds(
    RequestMatcher,
    path=matcher_lists,
    method=matcher_lists,
    destination=matcher_lists,
    scheme=matcher_lists,
    body=matcher_lists,
    headers=named_lists,
    query=st.none() | named_lists,
    requires_state=st.none() | string_maps,
)
faults = st.sampled_from(FaultKind).flatmap(
    lambda kind: st.builds(
        Fault,
        st.just(kind),
        chunks=st.integers(1, MAX_CHUNKS) if kind is FaultKind.DRIBBLE else st.just(0),
        duration_ms=st.integers(0, MAX_DURATION_MS) if kind is FaultKind.DRIBBLE else st.just(0),
        bytes_per_second=st.integers(1, MAX_BYTES_PER_SECOND) if kind is FaultKind.BANDWIDTH else st.just(0),
        fraction=st.floats(0, 1),
    )
)
responses = st.builds(
    Response,
    status=st.integers(100, 599),
    body=st.binary(max_size=20),
    body_file=st.text(max_size=5),
    headers=st.dictionaries(st.text(min_size=1, max_size=5), st.lists(st.text(max_size=5), max_size=2).map(tuple)).map(
        lambda d: tuple(sorted(d.items()))
    ),
    templated=st.booleans(),
    transitions_state=st.none() | string_maps.filter(bool),
    removes_state=st.none() | st.lists(st.text(max_size=3), min_size=1, max_size=2).map(tuple),
    fixed_delay=st.integers(0, GO_INT_MAX),
    post_serve_action=st.text(max_size=5),
    fault=st.none() | faults,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.builds(Pair, request_matchers, responses, st.lists(st.text(max_size=3)).map(tuple)), max_size=3))
def test_storage_round_trips_any_simulation(pairs: list[Pair]) -> None:
    sim = Simulation(pairs=tuple(pairs))
    assert stored(sim) == sim


@pytest.mark.parametrize("value", [1e20, -1e19, 2.0**64, [1, {"n": 1.8446744073709552e19}]])
def test_a_whole_number_beyond_64_bits_is_refused_naming_it(value: Any) -> None:
    data = {"pairs": [{"request": {"body": [{"matcher": "json", "value": value}]}, "response": {}}]}
    with pytest.raises(SimulationError, match=r"data\.pairs\[0\]\.request\.body\[0\]\.value.* is beyond the 64-bit"):
        decode_simulation(data)


def test_the_largest_64_bit_whole_numbers_are_kept() -> None:
    data = {"literals": [{"name": "n", "value": [float(2**63), -float(2**63), 2**64 - 1]}]}
    assert decode_simulation(data).literals[0]["value"] == [2**63, -(2**63), 2**64 - 1]


def test_a_form_matchers_fields_are_written_as_hoverflys_matcher_structs() -> None:
    """Hoverfly decodes each form field's matchers into its matcher struct: the export writes them
    ``matcher, value, config, doMatch`` whatever order they came in, without other members
    (seen beside Hoverfly v1.12.10: its PUT answer and closest-miss text are these bytes)."""
    form = {
        "b": [{"value": "2", "extra": 1, "matcher": "exact"}],
        "a": [{"doMatch": {"value": "1", "matcher": "exact"}, "value": "$.x", "matcher": "jsonpath"}],
        "c": [{"config": {"ignoreOrder": True}, "value": ["x"], "matcher": "array"}],
    }
    data = {"pairs": [{"request": {"body": [{"matcher": "form", "value": form}]}, "response": {"status": 200}}]}
    written = orjson.dumps(export(data)["pairs"][0]["request"]["body"][0]["value"])
    assert written == (
        b'{"a":[{"matcher":"jsonpath","value":"$.x","doMatch":{"matcher":"exact","value":"1"}}],'
        b'"b":[{"matcher":"exact","value":"2"}],'
        b'"c":[{"matcher":"array","value":["x"],"config":{"ignoreOrder":true}}]}'
    )
