"""The admin API of one real simproxy process (in-process store), driven over real sockets."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from tests.integration.conftest import Simproxy, pair, simulation

NAMESPACES = ("service", "hoverfly")
COUNTERS = {"capture", "diff", "modify", "simulate", "spy", "synthesize"}

RICH = {
    "data": {
        "pairs": [
            {
                "labels": ["first", "api"],
                "request": {
                    "path": [{"matcher": "exact", "value": "/rich"}],
                    "method": [{"matcher": "exact", "value": "POST"}],
                    "destination": [{"matcher": "glob", "value": "*.example.com"}],
                    "scheme": [{"matcher": "exact", "value": "https"}],
                    "body": [{"matcher": "regex", "value": "^\\{.*\\}$"}],
                    "headers": {"X-Api-Key": [{"matcher": "exact", "value": "k1"}]},
                    "query": {
                        "page": [{"matcher": "glob", "value": "*", "doMatch": {"matcher": "regex", "value": "\\d"}}]
                    },
                    "requiresState": {"stage": "2"},
                },
                "response": {
                    "status": 201,
                    "body": "created <&>",
                    "bodyFile": "ignored.json",
                    "encodedBody": False,
                    "headers": {"Content-Type": ["application/json"], "X-Multi": ["a", "b"]},
                    "templated": True,
                    "transitionsState": {"stage": "3"},
                    "removesState": ["old"],
                    "fixedDelay": 25,
                    "logNormalDelay": {"min": 10, "max": 100, "mean": 40, "median": 30},
                },
            },
            {
                "request": {"query": {}},
                "response": {"status": 204, "body": "", "encodedBody": False, "templated": False},
            },
        ],
        "globalActions": {
            "delays": [{"urlPattern": "example\\.com", "httpMethod": "GET", "delay": 100}],
            "delaysLogNormal": [{"urlPattern": ".", "httpMethod": "", "min": 1, "max": 9, "mean": 4, "median": 3}],
        },
        "literals": [{"name": "answer", "value": 42}],
        "variables": [{"name": "who", "function": "faker", "arguments": ["Name"]}],
    },
    "meta": {"schemaVersion": "v5.3", "hoverflyVersion": "v1.12.10", "timeExported": "2026-01-01T00:00:00Z"},
}


def _put(sp: Simproxy, doc: Any) -> tuple[int, Any]:
    return sp.admin_json("PUT", "/api/v2/simulation", doc)


@pytest.mark.parametrize("ns", NAMESPACES)
def test_configuration_root_has_the_spec_fields(simproxy: Simproxy, ns: str) -> None:
    status, config = simproxy.admin_json("GET", f"/api/v2/{ns}")
    assert status == 200
    assert list(config) == [
        "cors",
        "destination",
        "middleware",
        "mode",
        "arguments",
        "isWebServer",
        "usage",
        "version",
        "upstreamProxy",
    ]
    assert config["cors"] == {"enabled": False}
    assert config["middleware"] == {"binary": "", "script": "", "remote": ""}
    assert config["isWebServer"] is False
    assert set(config["usage"]["counters"]) == COUNTERS
    assert config["version"].startswith("v")
    assert config["upstreamProxy"] == ""


@pytest.mark.parametrize("ns", NAMESPACES)
def test_small_configuration_endpoints(simproxy: Simproxy, ns: str) -> None:
    assert simproxy.admin_json("GET", f"/api/v2/{ns}/version")[1]["version"].startswith("v")
    assert simproxy.admin_json("GET", f"/api/v2/{ns}/upstream-proxy") == (200, {"upstreamProxy": ""})
    assert simproxy.admin_json("GET", f"/api/v2/{ns}/cors") == (200, {"enabled": False})
    assert simproxy.admin_json("GET", f"/api/v2/{ns}/middleware") == (200, {"binary": "", "script": "", "remote": ""})
    status, usage = simproxy.admin_json("GET", f"/api/v2/{ns}/usage")
    assert status == 200 and usage["usage"] == usage["metrics"] and set(usage["usage"]["counters"]) == COUNTERS


@pytest.mark.parametrize("ns", NAMESPACES)
def test_mode_round_trip_and_every_mode_accepted(simproxy: Simproxy, ns: str) -> None:
    try:
        for mode in ("capture", "spy", "synthesize", "modify", "diff", "simulate"):
            status, view = simproxy.admin_json("PUT", f"/api/v2/{ns}/mode", {"mode": mode})
            assert status == 200 and view["mode"] == mode
            assert simproxy.admin_json("GET", f"/api/v2/{ns}/mode")[1] == view
        status, view = simproxy.admin_json(
            "PUT", f"/api/v2/{ns}/mode", {"mode": "capture", "arguments": {"headersWhitelist": ["*"], "stateful": True}}
        )
        assert view == {"mode": "capture", "arguments": {"headersWhitelist": ["*"], "stateful": True}}
        status, view = simproxy.admin_json(
            "PUT", f"/api/v2/{ns}/mode", {"Mode": "simulate", "arguments": {"matchingStrategy": "FIRST"}}
        )
        assert view == {"mode": "simulate", "arguments": {"matchingStrategy": "FIRST"}}
        status, raw_headers, _raw = simproxy.admin("GET", f"/api/v2/{ns}/mode")
        assert raw_headers["content-type"].startswith("application/json")
    finally:
        simproxy.admin_json("PUT", f"/api/v2/{ns}/mode", {"mode": "simulate"})
    assert simproxy.admin_json("GET", f"/api/v2/{ns}/mode")[1] == {
        "mode": "simulate",
        "arguments": {"matchingStrategy": "strongest"},
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "Malformed JSON: line 1, column 2: unexpected character, expected a string key"),
        (b"", "Malformed JSON: the body is empty"),
        (b'{"mode": 5}', 'Malformed JSON: "mode" must be a string, not 5'),
        (
            b'{"mode": "simulate", "arguments": {"stateful": "yes"}}',
            'Malformed JSON: "arguments.stateful" must be true or false, not "yes"',
        ),
        (
            b'{"mode": "teleport"}',
            'Not a valid mode: "teleport"; one of capture, diff, modify, simulate, spy, synthesize',
        ),
        (
            b'{"mode": "capture", "arguments": {"headersWhitelist": ["*", "X-A"]}}',
            "Must provide a list containing only an asterix, or a list containing only headers names",
        ),
        (
            b'{"mode": "simulate", "arguments": {"matchingStrategy": "weakest"}}',
            "Only matching strategy of 'first' or 'strongest' is permitted",
        ),
    ],
)
def test_bad_mode_bodies_are_rejected_and_change_nothing(simproxy: Simproxy, body: bytes, message: str) -> None:
    before = simproxy.admin_json("GET", "/api/v2/service/mode")[1]
    status, headers, payload = simproxy.admin("PUT", "/api/v2/service/mode", raw=body)
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert json.loads(payload) == {"error": message}
    assert simproxy.admin_json("GET", "/api/v2/service/mode")[1] == before


def test_destination(simproxy: Simproxy) -> None:
    try:
        assert simproxy.admin_json("PUT", "/api/v2/hoverfly/destination", {"destination": "example\\.com"}) == (
            200,
            {"destination": "example\\.com"},
        )
        assert simproxy.admin_json("GET", "/api/v2/service/destination") == (200, {"destination": "example\\.com"})
        assert simproxy.admin_json("PUT", "/api/v2/service/destination", {"destination": "(unclosed"}) == (
            422,
            {"error": "destination is not a valid regular expression string"},
        )
        assert simproxy.admin_json("PUT", "/api/v2/service/destination", raw=b"[") == (
            400,
            {"error": "Malformed JSON: line 1, column 2: unexpected end of data"},
        )
        assert simproxy.admin_json("GET", "/api/v2/service/destination") == (200, {"destination": "example\\.com"})
    finally:
        simproxy.admin_json("PUT", "/api/v2/service/destination", {"destination": "."})


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/v2/nothing"),
        ("PUT", "/api/v2/service/version"),
        ("PATCH", "/api/v2/simulation"),
        ("GET", "/api/v2/service/nothing"),
    ],
)
def test_unknown_paths_and_methods_are_404_json(simproxy: Simproxy, method: str, path: str) -> None:
    status, _headers, payload = simproxy.admin(method, path)
    assert status == 404
    assert "error" in json.loads(payload)


def test_simulation_round_trip_preserves_every_field(simproxy: Simproxy) -> None:
    status, view = _put(simproxy, RICH)
    assert status == 200
    status, _headers, raw = simproxy.admin("GET", "/api/v2/simulation")
    assert status == 200 and raw.endswith(b"\n")
    exported = json.loads(raw)
    assert exported["data"] == RICH["data"]
    assert view == {
        "warnings": [
            {
                "message": (
                    "WARNING: Response contains both `body` and `bodyFile` in data.pairs[0].response, "
                    "please remove one of them otherwise `body` is used if non empty"
                )
            }
        ]
    }
    meta = exported["meta"]
    assert meta["schemaVersion"] == "v5.3"
    assert meta["serviceVersion"].startswith("v")
    assert meta["timeExported"][10] == "T" and (meta["timeExported"].endswith("Z") or meta["timeExported"][-6] in "+-")
    # the exported document imports again unchanged
    _put(simproxy, exported)
    assert simproxy.admin_json("GET", "/api/v2/simulation")[1]["data"] == RICH["data"]


def test_schema_endpoint_accepts_exports_and_rejects_malformed(simproxy: Simproxy) -> None:
    _put(simproxy, RICH)
    status, headers, raw = simproxy.admin("GET", "/api/v2/simulation/schema")
    assert status == 200 and headers["content-type"].startswith("application/json")
    schema = json.loads(raw)
    jsonschema.validators.validator_for(schema).check_schema(schema)
    exported = simproxy.admin_json("GET", "/api/v2/simulation")[1]
    jsonschema.validate(exported, schema)
    broken = json.loads(json.dumps(exported))
    broken["data"]["pairs"][0]["response"]["status"] = "201"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"data": {}, "meta": {"schemaVersion": "v5"}, "extra": 1}, schema)


def test_v3_exact_match_file_imports_and_is_served(simproxy: Simproxy) -> None:
    v3 = {
        "data": {
            "pairs": [
                {
                    "request": {
                        "path": {"exactMatch": "/v3"},
                        "method": {"exactMatch": "GET"},
                        "destination": {"exactMatch": "legacy.com"},
                        "headers": {"X-Old": ["a", "b"]},
                    },
                    "response": {"status": 200, "body": "from v3", "encodedBody": False, "templated": False},
                }
            ],
            "globalActions": {"delays": []},
        },
        "meta": {"schemaVersion": "v3", "hoverflyVersion": "v0.13.0"},
    }
    status, view = _put(simproxy, v3)
    assert status == 200
    request = view["data"]["pairs"][0]["request"]
    assert request["path"] == [{"matcher": "exact", "value": "/v3"}]
    assert request["headers"] == {"X-Old": [{"matcher": "glob", "value": "a;b"}]}
    status, _, body = simproxy.proxy("http://legacy.com/v3", headers={"X-Old": "a;b"})
    assert (status, body) == (200, b"from v3")


def test_rejected_simulations_leave_the_previous_one_served(simproxy: Simproxy) -> None:
    _put(simproxy, simulation(pair("/kept", "still here")))
    cases = [
        (b"not json", 400, "Invalid JSON: line 1, column 1: invalid literal, expected 'null'"),
        (b"[1, 2]", 400, "Invalid JSON: a simulation must be a JSON object, not an array"),
        (b'{"data": {"pairs": []}}', 400, 'Invalid JSON, missing "meta" object'),
        (b'{"data": {"pairs": []}, "meta": {}}', 400, 'Invalid JSON, missing "meta.schemaVersion" string'),
        (
            b'{"data": {"pairs": []}, "meta": {"schemaVersion": "r3"}}',
            400,
            "Invalid simulation: schema version r3 is not supported by this version of simproxy, "
            "you may need to update simproxy",
        ),
    ]
    for raw, status, message in cases:
        assert simproxy.admin_json("PUT", "/api/v2/simulation", raw=raw) == (status, {"error": message})
    status, body = simproxy.admin_json(
        "PUT",
        "/api/v2/simulation",
        {"data": {"pairs": [{"request": {}, "response": {"status": "200"}}]}, "meta": {"schemaVersion": "v5"}},
    )
    assert status == 400 and body["error"].startswith(
        "Invalid v5 simulation: [Error for <data.pairs.0.response.status>"
    )
    status, body = simproxy.admin_json(
        "PUT",
        "/api/v2/simulation",
        simulation({"request": {"path": [{"matcher": "nosuch", "value": "/x"}]}, "response": {"status": 200}}),
    )
    assert status == 400 and "unknown matcher 'nosuch'" in body["error"]
    status, body = simproxy.admin_json(
        "PUT",
        "/api/v2/simulation",
        simulation({"request": {"path": [{"matcher": "regex", "value": "(open"}]}, "response": {"status": 200}}),
    )
    assert status == 400 and "data.pairs[0].request.path[0]" in body["error"]
    status, body = simproxy.admin_json(
        "POST",
        "/api/v2/simulation",
        {
            "data": {"pairs": [pair("/new", "x")], "globalActions": {"delays": [{"urlPattern": "(", "delay": 5}]}},
            "meta": {"schemaVersion": "v5.2"},
        },
    )
    assert (
        status == 500 and body["error"] == "An error occurred: Response delay entry skipped due to invalid pattern : ("
    )
    exported = simproxy.admin_json("GET", "/api/v2/simulation")[1]
    assert [p["request"]["path"][0]["value"] for p in exported["data"]["pairs"]] == ["/kept"]
    assert simproxy.proxy("http://any.host/kept")[2] == b"still here"


def test_post_appends_and_skips_duplicates_with_a_warning(simproxy: Simproxy) -> None:
    _put(simproxy, simulation(pair("/a", "A")))
    status, body = simproxy.admin_json("POST", "/api/v2/simulation", simulation(pair("/a", "other"), pair("/b", "B")))
    assert status == 200
    assert body == {
        "warnings": [{"message": "WARNING: data.pairs[0] is not added due to a conflict with the existing simulation"}]
    }
    exported = simproxy.admin_json("GET", "/api/v2/simulation")[1]
    assert [(p["request"]["path"][0]["value"], p["response"]["body"]) for p in exported["data"]["pairs"]] == [
        ("/a", "A"),
        ("/b", "B"),
    ]
    assert simproxy.proxy("http://h/a")[2] == b"A"
    assert simproxy.proxy("http://h/b")[2] == b"B"


def test_delete_simulation_empties_it(simproxy: Simproxy) -> None:
    _put(simproxy, simulation(pair("/gone", "x")))
    status, _headers, raw = simproxy.admin("DELETE", "/api/v2/simulation")
    assert status == 200
    assert json.loads(raw)["data"] == {"pairs": [], "globalActions": {"delays": [], "delaysLogNormal": []}}
    assert simproxy.proxy("http://h/gone")[0] == 502


def test_simulated_responses_are_served_byte_for_byte(simproxy: Simproxy) -> None:
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    _put(
        simproxy,
        simulation(
            {
                "request": {"path": [{"matcher": "exact", "value": "/img"}]},
                "response": {
                    "status": 200,
                    "body": png,
                    "encodedBody": True,
                    "headers": {"Content-Type": ["image/png"]},
                },
            },
            {
                "request": {
                    "path": [{"matcher": "glob", "value": "/files/*"}],
                    "method": [{"matcher": "exact", "value": "PUT"}],
                },
                "response": {"status": 418, "body": "teapot", "headers": {"X-Custom": ["one", "two"]}},
            },
        ),
    )
    import base64

    status, headers, body = simproxy.proxy("http://cdn.example.com/img")
    assert status == 200 and body == base64.b64decode(png) and headers["content-type"] == "image/png"
    status, headers, body = simproxy.proxy("http://files.example.com/files/a/b", method="PUT", body=b"data")
    assert (status, body) == (418, b"teapot")
    assert headers["x-custom"] == "one, two"  # http.client joins repeated header lines
    exported = simproxy.admin_json("GET", "/api/v2/simulation")[1]
    assert exported["data"]["pairs"][0]["response"]["encodedBody"] is True
    assert exported["data"]["pairs"][0]["response"]["body"] == png


def test_query_and_header_matching_through_the_proxy(simproxy: Simproxy) -> None:
    _put(
        simproxy,
        simulation(
            pair("/search", "plain"),
            pair("/search", "by query", query={"q": [{"matcher": "exact", "value": "a b"}]}),
            pair(
                "/search",
                "by header",
                headers={"X-Mode": [{"matcher": "exact", "value": "fast"}]},
                query={"q": [{"matcher": "exact", "value": "a b"}]},
            ),
        ),
    )
    assert simproxy.proxy("http://h/search?q=a+b")[2] == b"by query"
    assert simproxy.proxy("http://h/search?q=a%20b&extra=1", headers={"x-mode": "fast"})[2] == b"by header"
    assert simproxy.proxy("http://h/search?q=other")[2] == b"plain"


def test_miss_is_a_502_with_the_closest_pair(simproxy: Simproxy) -> None:
    _put(
        simproxy,
        simulation(
            {
                "request": {
                    "path": [{"matcher": "exact", "value": "/closest-miss"}],
                    "destination": [{"matcher": "exact", "value": "destination.com"}],
                    "body": [{"matcher": "exact", "value": "body"}],
                },
                "response": {"status": 200, "body": ""},
            },
            pair("/elsewhere", "x", method=[{"matcher": "exact", "value": "DELETE"}]),
        ),
    )
    status, headers, body = simproxy.proxy(
        "http://destination.com/closest-miss", headers={"Accept-Encoding": "identity"}
    )
    assert status == 502
    assert headers["content-type"] == "text/plain"
    text = body.decode()
    assert text.startswith(
        "simproxy Error!\n\nThere was an error when matching\n\nGot error: "
        "Could not find a match for request, create or record a valid matcher first!\n\n"
        'The following request was made, but was not matched by simproxy:\n\n{\n    "Path": "/closest-miss",'
    )
    assert '"value": "/closest-miss"' in text.split("The matcher which came closest was:")[1]
    assert "But it did not match on the following fields:\n\n[body]\n\n" in text
    assert text.endswith(
        'Which if hit would have given the following response:\n\n{\n    "status": 200,\n    "body": "",\n'
        '    "encodedBody": false,\n    "templated": false\n}'
    )


def test_first_strategy_and_a_miss_without_closest(simproxy: Simproxy) -> None:
    _put(
        simproxy,
        simulation(
            {"request": {"path": [{"matcher": "glob", "value": "/s/*"}]}, "response": {"status": 200, "body": "glob"}},
            pair("/s/1", "exact"),
        ),
    )
    try:
        assert simproxy.proxy("http://h/s/1")[2] == b"exact"  # strongest: exact (2 points) beats glob (1)
        simproxy.admin_json(
            "PUT", "/api/v2/service/mode", {"mode": "simulate", "arguments": {"matchingStrategy": "first"}}
        )
        # as in Hoverfly, the cached strongest answer outlives the strategy switch until a flush
        assert simproxy.proxy("http://h/s/1")[2] == b"exact"
        assert simproxy.admin_json("DELETE", "/api/v2/cache") == (200, {"cache": []})
        assert simproxy.proxy("http://h/s/1")[2] == b"glob"
        status, _, body = simproxy.proxy("http://h/none")
        assert status == 502 and body.decode().endswith("create or record a valid matcher first!")
    finally:
        simproxy.admin_json("PUT", "/api/v2/service/mode", {"mode": "simulate"})


def test_usage_counts_every_proxied_request(simproxy: Simproxy) -> None:
    before = simproxy.admin_json("GET", "/api/v2/service/usage")[1]["usage"]["counters"]["simulate"]
    _put(simproxy, simulation(pair("/count", "1")))
    for _ in range(5):
        simproxy.proxy("http://h/count")
    simproxy.proxy("http://h/miss")
    after = simproxy.admin_json("GET", "/api/v2/hoverfly/usage")[1]
    assert after["usage"]["counters"]["simulate"] == before + 6
    assert after["metrics"] == after["usage"]


@pytest.mark.parametrize(
    ("where", "at"),
    [
        ({"literals": [{"name": "big", "value": {"n": [1, 1e20]}}]}, "data.literals[0].value.n[1]"),
        (
            {"variables": [{"name": "v", "function": "randomInteger", "arguments": [-1e19]}]},
            "data.variables[0].arguments[0]",
        ),
        (
            {"pairs": [{"request": {"body": [{"matcher": "json", "value": 1e20}]}, "response": {"status": 200}}]},
            "data.pairs[0].request.body[0].value",
        ),
    ],
)
def test_whole_numbers_beyond_64_bits_are_refused_naming_them(
    simproxy: Simproxy, where: dict[str, Any], at: str
) -> None:
    """Go keeps 1e20 as a float64 and writes it whole; simproxy's store cannot hold such a number:
    a 400 naming it, and the simulation served before is still served (it was a 500 from the store)."""
    assert simproxy.admin("PUT", "/api/v2/simulation", simulation(pair("/kept", "kept")))[0] == 200
    document = simulation()
    document["data"].update(where)
    status, _, body = simproxy.admin("PUT", "/api/v2/simulation", document)
    assert status == 400
    assert at in json.loads(body)["error"]
    assert "beyond the 64-bit whole numbers" in json.loads(body)["error"]
    assert simproxy.proxy("http://api.test/kept")[::2] == (200, b"kept")
