"""Uploaded simulation documents of every schema version: errors users see, and the v5 they become."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema.validators import validator_for

from simproxy.admin.api.simfile import JSONDict, parse_simulation, schema_document, upgrade_to_v5, validate
from simproxy.admin.errors import BadRequest

NO_DELAYS = {"delays": [], "delaysLogNormal": []}


def body(doc: Any) -> bytes:
    return orjson.dumps(doc)


def rejection(raw: bytes) -> str:
    with pytest.raises(BadRequest) as caught:
        parse_simulation(raw)
    return caught.value.message


def simulation(version: str, *pairs: JSONDict, **data: Any) -> JSONDict:
    return {"data": {"pairs": list(pairs), **data}, "meta": {"schemaVersion": version}}


def v5_pair(status: Any = 200) -> JSONDict:
    return {"request": {"path": [{"matcher": "exact", "value": "/"}]}, "response": {"status": status}}


# ---------------------------------------------------------------------------------------------
# Envelope errors


@pytest.mark.parametrize("raw", [b"", b"not json", b'{"data": ', b"[1, 2]", b'"text"', b"12", b"null"])
def test_body_that_is_not_a_json_object_is_invalid_json(raw: bytes) -> None:
    assert rejection(raw) == "Invalid JSON"


@pytest.mark.parametrize("meta", [{}, {"meta": None}, {"meta": "v5"}, {"meta": ["v5"]}, {"meta": 5}])
def test_missing_or_non_object_meta(meta: JSONDict) -> None:
    assert rejection(body({"data": {}, **meta})) == 'Invalid JSON, missing "meta" object'


@pytest.mark.parametrize("meta", [{}, {"schemaVersion": None}, {"schemaVersion": 5}, {"schemaVersion": ["v5"]}])
def test_missing_or_non_string_schema_version(meta: JSONDict) -> None:
    expected = 'Invalid JSON, missing "meta.schemaVersion" string'
    assert rejection(body({"data": {}, "meta": meta})) == expected


@pytest.mark.parametrize("version", ["r3", "v6", "V5", "", "5", "v4.1", "v1.0"])
def test_unsupported_schema_version(version: str) -> None:
    assert rejection(body(simulation(version))) == (
        f"Invalid simulation: schema version {version} is not supported by this version of simproxy, "
        "you may need to update simproxy"
    )


def test_envelope_is_checked_before_the_schema() -> None:
    assert rejection(body({"meta": {}, "extra": 1})) == 'Invalid JSON, missing "meta.schemaVersion" string'


# ---------------------------------------------------------------------------------------------
# Schema violations: Hoverfly's wording, gojsonschema field notation, deterministic order


def test_missing_data_names_the_given_version() -> None:
    assert rejection(body({"meta": {"schemaVersion": "v3"}})) == (
        "Invalid v3 simulation: [Error for <(root)>: data is required]"
    )


def test_v1_pair_without_request_and_response() -> None:
    assert rejection(body(simulation("v1", {}))) == (
        "Invalid v1 simulation: [Error for <data.pairs.0>: request is required; "
        "Error for <data.pairs.0>: response is required]"
    )


def test_v5_status_as_string() -> None:
    assert rejection(body(simulation("v5.3", v5_pair(status="200")))) == (
        "Invalid v5.3 simulation: [Error for <data.pairs.0.response.status>: "
        "Invalid type. Expected: integer, given: string]"
    )


def test_v5_pairs_not_an_array() -> None:
    doc = {"data": {"pairs": {"request": {}, "response": {}}}, "meta": {"schemaVersion": "v5"}}
    assert rejection(body(doc)) == (
        "Invalid v5 simulation: [Error for <data.pairs>: Invalid type. Expected: array, given: object]"
    )


def test_v5_pair_without_request() -> None:
    assert rejection(body(simulation("v5.2", {"response": {"status": 200}}))) == (
        "Invalid v5.2 simulation: [Error for <data.pairs.0>: request is required]"
    )


def test_extra_root_members_are_refused_one_by_one() -> None:
    doc = {**simulation("v5.3"), "pairs": [], "extra": True}
    assert rejection(body(doc)) == (
        "Invalid v5.3 simulation: [Error for <(root)>: Additional property pairs is not allowed; "
        "Error for <(root)>: Additional property extra is not allowed]"
    )


@pytest.mark.parametrize("version", ["v1", "v2", "v3", "v4"])
def test_legacy_root_refuses_extra_members(version: str) -> None:
    doc = {**simulation(version), "foo": 1}
    assert rejection(body(doc)) == (
        f"Invalid {version} simulation: [Error for <(root)>: Additional property foo is not allowed]"
    )


def test_several_errors_come_root_first_then_by_field() -> None:
    doc = simulation(
        "v5.1",
        {"request": {}, "response": {"status": "x", "body": 1}},
        {"request": {"path": "/"}},
    )
    doc["data"]["globalActions"] = {"delays": [{"delay": "1s"}]}
    doc["other"] = 1
    assert validate(doc, "v5.1") == [
        "Error for <(root)>: Additional property other is not allowed",
        "Error for <data.globalActions.delays.0.delay>: Invalid type. Expected: integer, given: string",
        "Error for <data.pairs.0.response.body>: Invalid type. Expected: string, given: integer",
        "Error for <data.pairs.0.response.status>: Invalid type. Expected: integer, given: string",
        "Error for <data.pairs.1>: response is required",
        "Error for <data.pairs.1.request.path>: Invalid type. Expected: array, given: string",
    ]


def test_array_indexes_are_ordered_as_numbers() -> None:
    pairs = [v5_pair() for _ in range(11)]
    pairs[2]["response"]["status"] = "a"
    pairs[10]["response"]["status"] = "b"
    fields = [detail.split(">")[0] for detail in validate(simulation("v5", *pairs), "v5")]
    assert fields == ["Error for <data.pairs.2.response.status", "Error for <data.pairs.10.response.status"]


def in_request(**request: Any) -> JSONDict:
    return {"pairs": [{"request": request, "response": {}}]}


def in_response(**response: Any) -> JSONDict:
    return {"pairs": [{"request": {}, "response": response}]}


def wrong_type(expected: str, given: str) -> str:
    return f"Invalid type. Expected: {expected}, given: {given}"


@pytest.mark.parametrize(
    ("doc_data", "field", "description"),
    [
        ({"literals": [{"name": "a"}]}, "data.literals.0", "value is required"),
        ({"literals": [{"name": 1, "value": 1}]}, "data.literals.0.name", wrong_type("string", "integer")),
        ({"variables": [{"name": "v"}]}, "data.variables.0", "function is required"),
        (
            {"variables": [{"name": "v", "function": "f", "arguments": "x"}]},
            "data.variables.0.arguments",
            wrong_type("array", "string"),
        ),
        (
            {"globalActions": {"delaysLogNormal": [{"min": 1.5}]}},
            "data.globalActions.delaysLogNormal.0.min",
            wrong_type("integer", "number"),
        ),
        (in_request(method="GET"), "data.pairs.0.request.method", wrong_type("array", "string")),
        (
            in_request(headers={"A": ["x"]}),
            "data.pairs.0.request.headers.A.0",
            wrong_type("object", "string"),
        ),
        (
            in_request(query={"q": [{"matcher": 1}]}),
            "data.pairs.0.request.query.q.0.matcher",
            wrong_type("string", "integer"),
        ),
        (
            in_request(body=[{"config": {"ignoreOrder": "yes"}}]),
            "data.pairs.0.request.body.0.config.ignoreOrder",
            wrong_type("boolean", "string"),
        ),
        (
            in_request(body=[{"doMatch": {"doMatch": {"matcher": None}}}]),
            "data.pairs.0.request.body.0.doMatch.doMatch.matcher",
            wrong_type("string", "null"),
        ),
        (
            in_request(requiresState={"a": 1}),
            "data.pairs.0.request.requiresState.a",
            wrong_type("string", "integer"),
        ),
        (
            {"pairs": [{"labels": ["a", 2], "request": {}, "response": {}}]},
            "data.pairs.0.labels.1",
            wrong_type("string", "integer"),
        ),
        (
            in_response(fixedDelay=-1),
            "data.pairs.0.response.fixedDelay",
            "Must be greater than or equal to 0",
        ),
        (
            in_response(logNormalDelay={"mean": "1"}),
            "data.pairs.0.response.logNormalDelay.mean",
            wrong_type("integer", "string"),
        ),
        (in_response(headers={"A": "x"}), "data.pairs.0.response.headers.A", wrong_type("array", "string")),
        (in_response(encodedBody=0), "data.pairs.0.response.encodedBody", wrong_type("boolean", "integer")),
        (
            in_response(removesState=[1]),
            "data.pairs.0.response.removesState.0",
            wrong_type("string", "integer"),
        ),
    ],
)
def test_v5_schema_rejects_malformed_members(doc_data: JSONDict, field: str, description: str) -> None:
    assert rejection(body({"data": doc_data, "meta": {"schemaVersion": "v5.3"}})) == (
        f"Invalid v5.3 simulation: [Error for <{field}>: {description}]"
    )


def test_v5_meta_fields_must_be_strings() -> None:
    doc = {"data": {}, "meta": {"schemaVersion": "v5", "hoverflyVersion": 1, "serviceVersion": True}}
    assert validate(doc, "v5") == [
        "Error for <meta.hoverflyVersion>: Invalid type. Expected: string, given: integer",
        "Error for <meta.serviceVersion>: Invalid type. Expected: string, given: boolean",
    ]


@pytest.mark.parametrize(
    ("version", "doc_data", "field", "description"),
    [
        ("v1", in_request(path=1), "data.pairs.0.request.path", wrong_type("string", "integer")),
        ("v1", in_request(method=1), "data.pairs.0.request.method", wrong_type("string", "integer")),
        (
            "v1",
            in_request(headers={"A": "x"}),
            "data.pairs.0.request.headers.A",
            wrong_type("array", "string"),
        ),
        ("v1", in_response(status="200"), "data.pairs.0.response.status", wrong_type("integer", "string")),
        ("v2", in_request(path="/"), "data.pairs.0.request.path", wrong_type("object", "string")),
        (
            "v2",
            in_request(path={"exactMatch": 1}),
            "data.pairs.0.request.path.exactMatch",
            wrong_type("string", "integer"),
        ),
        (
            "v3",
            in_request(requiresState={"a": True}),
            "data.pairs.0.request.requiresState.a",
            wrong_type("string", "boolean"),
        ),
        (
            "v4",
            in_request(headersWithMatchers={"A": "x"}),
            "data.pairs.0.request.headersWithMatchers.A",
            wrong_type("object", "string"),
        ),
        (
            "v4",
            in_response(templated="yes"),
            "data.pairs.0.response.templated",
            wrong_type("boolean", "string"),
        ),
        (
            "v4",
            in_response(removesState="a"),
            "data.pairs.0.response.removesState",
            wrong_type("array", "string"),
        ),
    ],
)
def test_legacy_schemas_reject_malformed_members(
    version: str, doc_data: JSONDict, field: str, description: str
) -> None:
    assert rejection(body({"data": doc_data, "meta": {"schemaVersion": version}})) == (
        f"Invalid {version} simulation: [Error for <{field}>: {description}]"
    )


def test_v1_delays_are_type_checked_even_though_dropped() -> None:
    doc = simulation("v1", globalActions={"delays": [{"urlPattern": 1}]})
    assert rejection(body(doc)) == (
        "Invalid v1 simulation: [Error for <data.globalActions.delays.0.urlPattern>: "
        "Invalid type. Expected: string, given: integer]"
    )


def test_validate_returns_nothing_for_a_valid_document() -> None:
    assert validate(simulation("v5", v5_pair()), "v5") == []


def test_validate_refuses_an_unsupported_version() -> None:
    with pytest.raises(BadRequest, match="schema version v9 is not supported"):
        validate(simulation("v9"), "v9")


# ---------------------------------------------------------------------------------------------
# v5 documents


RICH_V5: JSONDict = {
    "data": {
        "pairs": [
            {
                "labels": ["orders", "happy path"],
                "request": {
                    "path": [{"matcher": "glob", "value": "/orders/*"}],
                    "method": [{"matcher": "exact", "value": "POST"}],
                    "destination": [{"matcher": "regex", "value": "^api\\."}],
                    "scheme": [{"matcher": "exact", "value": "https"}],
                    "body": [
                        {
                            "matcher": "jsonpath",
                            "value": "$.items",
                            "doMatch": {"matcher": "json", "value": '[{"sku": 1}]'},
                        },
                        {"matcher": "form", "value": {"name": [{"matcher": "exact", "value": "x"}]}},
                    ],
                    "headers": {
                        "Accept": [
                            {
                                "matcher": "array",
                                "value": ["a", "b"],
                                "config": {
                                    "ignoreUnknown": True,
                                    "ignoreOrder": False,
                                    "ignoreOccurrences": True,
                                },
                            }
                        ]
                    },
                    "query": {"page": [{"matcher": "exact", "value": "1"}]},
                    "requiresState": {"sequence:1": "1"},
                },
                "response": {
                    "status": 201,
                    "body": "eyJvayI6IHRydWV9",
                    "bodyFile": "responses/created.json",
                    "encodedBody": True,
                    "templated": True,
                    "headers": {"Content-Type": ["application/json"]},
                    "transitionsState": {"sequence:1": "2"},
                    "removesState": ["basket"],
                    "fixedDelay": 0,
                    "logNormalDelay": {"min": 10, "max": 100, "mean": 40, "median": 30},
                    "postServeAction": "notify",
                },
            },
            {"request": {}, "response": {"status": 204}},
        ],
        "globalActions": {
            "delays": [{"urlPattern": "api\\.", "httpMethod": "GET", "delay": 100}],
            "delaysLogNormal": [{"urlPattern": ".", "httpMethod": "", "min": 1, "max": 9, "mean": 4, "median": 3}],
        },
        "literals": [{"name": "greeting", "value": "hi"}, {"name": "limits", "value": {"max": 3}}],
        "variables": [
            {"name": "id", "function": "randomUuid"},
            {"name": "when", "function": "now", "arguments": ["", "unix"]},
        ],
    },
    "meta": {"schemaVersion": "v5.3", "serviceVersion": "v0.1.0", "timeExported": "2026-01-01T00:00:00Z"},
}


def test_rich_v5_3_document_is_accepted_and_kept_as_given() -> None:
    doc = copy.deepcopy(RICH_V5)
    assert validate(doc, "v5.3") == []
    assert parse_simulation(body(doc)) == RICH_V5
    assert doc == RICH_V5


@pytest.mark.parametrize("version", ["v5", "v5.1", "v5.2", "v5.3", "v5.9", "v5x"])
def test_every_v5_prefixed_version_is_read_as_v5(version: str) -> None:
    doc = simulation(version, v5_pair())
    assert parse_simulation(body(doc)) == {
        "data": {"pairs": [v5_pair()], "globalActions": NO_DELAYS},
        "meta": {"schemaVersion": version},
    }


def test_unknown_members_below_the_root_are_accepted_and_kept() -> None:
    pair = {
        "request": {"deprecatedQuery": [{"matcher": "exact", "value": "a=1"}], "future": 1},
        "response": {"status": 200, "note": "x"},
        "comment": "kept",
    }
    doc = {
        "data": {"pairs": [pair], "somethingNew": []},
        "meta": {"schemaVersion": "v5.2", "hoverflyVersion": "v1.12.10", "extra": 1},
    }
    result = parse_simulation(body(doc))
    assert result["data"]["pairs"] == [pair]
    assert result["data"]["somethingNew"] == []
    assert result["meta"] == doc["meta"]


def test_v5_fills_in_the_lists_callers_rely_on() -> None:
    assert parse_simulation(body({"data": {}, "meta": {"schemaVersion": "v5"}}))["data"] == {
        "pairs": [],
        "globalActions": NO_DELAYS,
    }
    partial = simulation("v5", globalActions={"delays": [{"urlPattern": ".", "delay": 5}]})
    assert parse_simulation(body(partial))["data"]["globalActions"] == {
        "delays": [{"urlPattern": ".", "delay": 5}],
        "delaysLogNormal": [],
    }


def test_v5_matcher_values_of_any_json_type_are_accepted() -> None:
    values = ["text", 1, 1.5, True, None, ["a"], {"k": "v"}]
    pair = {"request": {"body": [{"matcher": "exact", "value": value} for value in values]}, "response": {}}
    assert validate(simulation("v5", pair), "v5") == []


# ---------------------------------------------------------------------------------------------
# Upgrades


def test_v1_template_request_becomes_globs_and_loses_query_and_delays() -> None:
    doc = simulation(
        "v1",
        {
            "request": {
                "requestType": "template",
                "path": "/api/*",
                "method": "GET",
                "destination": "*.example.com",
                "query": "a=1&b=%20x",
                "headers": {"Accept": ["text/html", "application/json"], "X-One": ["1"]},
            },
            "response": {
                "status": 200,
                "body": "ok",
                "encodedBody": False,
                "headers": {"Content-Type": ["text/plain"]},
                "postServeAction": "notify",
            },
        },
        globalActions={"delays": [{"urlPattern": ".", "httpMethod": "GET", "delay": 100}]},
    )
    doc["meta"]["hoverflyVersion"] = "v0.11.0"
    assert parse_simulation(body(doc)) == {
        "data": {
            "pairs": [
                {
                    "request": {
                        "path": [{"matcher": "glob", "value": "/api/*"}],
                        "method": [{"matcher": "glob", "value": "GET"}],
                        "destination": [{"matcher": "glob", "value": "*.example.com"}],
                        "scheme": [],
                        "body": [],
                        "headers": {
                            "Accept": [{"matcher": "glob", "value": "text/html;application/json"}],
                            "X-One": [{"matcher": "glob", "value": "1"}],
                        },
                    },
                    "response": {
                        "status": 200,
                        "body": "ok",
                        "encodedBody": False,
                        "headers": {"Content-Type": ["text/plain"]},
                        "templated": False,
                    },
                }
            ],
            "globalActions": NO_DELAYS,
        },
        "meta": {"schemaVersion": "v1", "hoverflyVersion": "v0.11.0"},
    }


@pytest.mark.parametrize("request_type", [None, "recording"])
def test_v1_recorded_request_becomes_exact_matchers(request_type: str | None) -> None:
    request: JSONDict = {"scheme": "http", "path": "/a", "body": ""}
    if request_type is not None:
        request["requestType"] = request_type
    result = parse_simulation(body(simulation("v1", {"request": request, "response": {"status": 200}})))
    assert result["data"]["pairs"][0]["request"] == {
        "path": [{"matcher": "exact", "value": "/a"}],
        "method": [],
        "destination": [],
        "scheme": [{"matcher": "exact", "value": "http"}],
        "body": [{"matcher": "exact", "value": ""}],
    }


def test_v1_any_other_request_type_counts_as_template() -> None:
    pair = {"request": {"requestType": "whatever", "path": "/a"}, "response": {}}
    result = parse_simulation(body(simulation("v1", pair)))
    assert result["data"]["pairs"][0]["request"]["path"] == [{"matcher": "glob", "value": "/a"}]


def test_v1_empty_request_becomes_empty_lists_not_absent_fields() -> None:
    result = parse_simulation(body(simulation("v1", {"request": {}, "response": {}})))
    assert result["data"]["pairs"] == [
        {
            "request": {"path": [], "method": [], "destination": [], "scheme": [], "body": []},
            "response": {"templated": False},
        }
    ]


def test_v2_field_matchers_become_lists_in_fixed_order_and_query_is_dropped() -> None:
    path = {
        "xpathMatch": "/x",
        "xmlMatch": "<x/>",
        "regexMatch": "^/a",
        "jsonPathMatch": "$.a",
        "jsonMatch": "{}",
        "globMatch": "/a*",
        "exactMatch": "/a",
    }
    doc = simulation(
        "v2",
        {
            "request": {
                "path": path,
                "method": {"exactMatch": "GET"},
                "query": {"exactMatch": "a=1"},
                "headers": {"Accept": ["a", "b"]},
            },
            "response": {"status": 200, "body": "{{ x }}", "templated": True},
        },
        globalActions={
            "delays": [{"urlPattern": ".", "httpMethod": "", "delay": 10}],
            "delaysLogNormal": [{"urlPattern": ".", "min": 1, "max": 9, "mean": 4, "median": 3}],
        },
    )
    result = parse_simulation(body(doc))
    assert result["data"] == {
        "pairs": [
            {
                "request": {
                    "path": [
                        {"matcher": "exact", "value": "/a"},
                        {"matcher": "glob", "value": "/a*"},
                        {"matcher": "json", "value": "{}"},
                        {"matcher": "jsonpath", "value": "$.a"},
                        {"matcher": "regex", "value": "^/a"},
                        {"matcher": "xml", "value": "<x/>"},
                        {"matcher": "xpath", "value": "/x"},
                    ],
                    "method": [{"matcher": "exact", "value": "GET"}],
                    "destination": [],
                    "scheme": [],
                    "body": [],
                    "headers": {"Accept": [{"matcher": "glob", "value": "a;b"}]},
                },
                # templated is not part of v2: ignored.
                "response": {"status": 200, "body": "{{ x }}", "templated": False},
            }
        ],
        "globalActions": {
            "delays": [{"urlPattern": ".", "httpMethod": "", "delay": 10}],
            "delaysLogNormal": [{"urlPattern": ".", "min": 1, "max": 9, "mean": 4, "median": 3}],
        },
    }


def test_v3_exact_match_file() -> None:
    doc = simulation(
        "v3",
        {
            "request": {
                "path": {"exactMatch": "/hello"},
                "method": {"exactMatch": "GET"},
                "destination": {"exactMatch": "example.com"},
                "scheme": {"exactMatch": "http"},
                "query": {"exactMatch": "name=world"},
                "body": {"exactMatch": ""},
            },
            "response": {"status": 200, "body": "hello world", "encodedBody": False, "templated": False},
        },
    )
    result = parse_simulation(body(doc))
    assert result["data"]["pairs"] == [
        {
            "request": {
                "path": [{"matcher": "exact", "value": "/hello"}],
                "method": [{"matcher": "exact", "value": "GET"}],
                "destination": [{"matcher": "exact", "value": "example.com"}],
                "scheme": [{"matcher": "exact", "value": "http"}],
                "body": [{"matcher": "exact", "value": ""}],
            },
            "response": {"status": 200, "body": "hello world", "encodedBody": False, "templated": False},
        }
    ]
    assert result["data"]["globalActions"] == NO_DELAYS
    assert result["meta"] == {"schemaVersion": "v3"}


def test_v4_header_and_query_matchers_and_state_are_carried_over() -> None:
    doc = simulation(
        "v4",
        {
            "request": {
                "path": {"globMatch": "/basket/*"},
                "headers": {"Accept": ["application/json"]},
                "headersWithMatchers": {
                    "Accept": {"regexMatch": "json$"},
                    "X-Token": {"exactMatch": "t", "globMatch": "*"},
                },
                "queriesWithMatchers": {"page": {"exactMatch": "2"}, "sort": {}},
                "requiresState": {"basket": "full"},
            },
            "response": {
                "status": 200,
                "body": "{{ State.basket }}",
                "templated": True,
                "transitionsState": {"basket": "empty"},
                "removesState": ["coupon"],
            },
        },
        globalActions={"delays": [{"urlPattern": "basket", "delay": 50}]},
    )
    result = parse_simulation(body(doc))
    assert result["data"] == {
        "pairs": [
            {
                "request": {
                    "path": [{"matcher": "glob", "value": "/basket/*"}],
                    "method": [],
                    "destination": [],
                    "scheme": [],
                    "body": [],
                    "headers": {
                        "Accept": [
                            {"matcher": "glob", "value": "application/json"},
                            {"matcher": "regex", "value": "json$"},
                        ],
                        "X-Token": [{"matcher": "exact", "value": "t"}, {"matcher": "glob", "value": "*"}],
                    },
                    "query": {"page": [{"matcher": "exact", "value": "2"}], "sort": []},
                    "requiresState": {"basket": "full"},
                },
                "response": {
                    "status": 200,
                    "body": "{{ State.basket }}",
                    "templated": True,
                    "transitionsState": {"basket": "empty"},
                    "removesState": ["coupon"],
                },
            }
        ],
        "globalActions": {"delays": [{"urlPattern": "basket", "delay": 50}], "delaysLogNormal": []},
    }


def test_v4_without_query_matchers_has_no_query_so_any_query_matches() -> None:
    pair = {"request": {"query": {"exactMatch": "a=1"}}, "response": {"status": 200}}
    request = parse_simulation(body(simulation("v4", pair)))["data"]["pairs"][0]["request"]
    assert "query" not in request
    assert "requiresState" not in request
    assert "headers" not in request


def test_v4_empty_query_matchers_stay_an_empty_query() -> None:
    pair = {"request": {"queriesWithMatchers": {}}, "response": {}}
    request = parse_simulation(body(simulation("v4", pair)))["data"]["pairs"][0]["request"]
    assert request["query"] == {}


def test_upgrade_to_v5_works_on_a_validated_dict_and_does_not_mutate_it() -> None:
    doc = simulation(
        "v4",
        {
            "request": {
                "headers": {"A": ["1"]},
                "headersWithMatchers": {"A": {"exactMatch": "2"}},
            },
            "response": {},
        },
    )
    before = copy.deepcopy(doc)
    result = upgrade_to_v5(doc)
    assert result["data"]["pairs"][0]["request"]["headers"] == {
        "A": [{"matcher": "glob", "value": "1"}, {"matcher": "exact", "value": "2"}]
    }
    assert doc == before


def test_upgrade_to_v5_passes_v5_through() -> None:
    doc = copy.deepcopy(RICH_V5)
    assert upgrade_to_v5(doc) == RICH_V5


def test_legacy_file_without_pairs_gives_empty_lists() -> None:
    for version in ("v1", "v2", "v3", "v4"):
        result = parse_simulation(body({"data": {}, "meta": {"schemaVersion": version}}))
        assert result["data"] == {"pairs": [], "globalActions": NO_DELAYS}


# ---------------------------------------------------------------------------------------------
# The served schema


def test_schema_document_is_a_valid_json_schema() -> None:
    schema = orjson.loads(schema_document())
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert schema["title"]
    assert schema["description"]
    validator_for(schema).check_schema(schema)
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["data", "meta"]


def test_schema_document_is_the_shipped_file() -> None:
    shipped = Path(__file__).parents[3] / "admin" / "api" / "schemas" / "v5.json"
    assert schema_document() == shipped.read_bytes()


@pytest.mark.parametrize("name", ["v1", "v2", "v4", "v5"])
def test_every_shipped_schema_passes_its_meta_schema(name: str) -> None:
    schema = orjson.loads((Path(__file__).parents[3] / "admin" / "api" / "schemas" / f"{name}.json").read_bytes())
    validator_for(schema).check_schema(schema)
