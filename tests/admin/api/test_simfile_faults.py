"""Uploaded faults: the schema's errors users see, and Hoverfly's dialect refusing simproxy's own members."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from simproxy.admin.api.simfile import parse_simulation
from simproxy.admin.errors import BadRequest

DRIBBLE = {"type": "dribble", "chunks": 5, "durationMs": 1000, "fraction": 0.5}
RULE = {"urlPattern": "api\\.test", "httpMethod": "GET", "fault": {"type": "emptyResponse", "fraction": 0.05}}


def document(fault: Any = None, *rules: Any, version: str = "v5") -> bytes:
    response: dict[str, Any] = {"status": 200, "body": "ok"}
    if fault is not None:
        response["fault"] = fault
    data: dict[str, Any] = {"pairs": [{"request": {}, "response": response}]}
    if rules:
        data["globalActions"] = {"faults": list(rules)}
    return json.dumps({"data": data, "meta": {"schemaVersion": version}}).encode()  # orjson stops at 64 bits


def rejection(raw: bytes, *, extensions: bool = True) -> str:
    with pytest.raises(BadRequest) as caught:
        parse_simulation(raw, extensions=extensions)
    return caught.value.message


def test_faults_pass_the_schema_and_reach_the_v5_document() -> None:
    doc = parse_simulation(document(DRIBBLE, RULE))
    assert doc["data"]["pairs"][0]["response"]["fault"] == DRIBBLE
    assert doc["data"]["globalActions"] == {"faults": [RULE], "delays": [], "delaysLogNormal": []}


@pytest.mark.parametrize(
    ("fault", "details"),
    [
        pytest.param(
            {"type": "teleport"},
            "Error for <data.pairs.0.response.fault.type>: data.pairs.0.response.fault.type must be one of the "
            'following: "connectionReset", "emptyResponse", "malformedChunk", "randomDataThenClose", "dribble", '
            '"bandwidth"',
            id="unknown-type",
        ),
        pytest.param(
            {"type": "connectionReset", "fraction": 1.5},
            "Error for <data.pairs.0.response.fault.fraction>: Must be less than or equal to 1",
            id="fraction-above-1",
        ),
        pytest.param(
            {"type": "connectionReset", "fraction": -1},
            "Error for <data.pairs.0.response.fault.fraction>: Must be greater than or equal to 0",
            id="fraction-below-0",
        ),
        pytest.param(
            {"type": "dribble"},
            "Error for <data.pairs.0.response.fault>: chunks is required; "
            "Error for <data.pairs.0.response.fault>: durationMs is required",
            id="dribble-without-parameters",
        ),
        pytest.param(
            {"type": "dribble", "chunks": 2.5, "durationMs": 10},
            "Error for <data.pairs.0.response.fault.chunks>: Invalid type. Expected: integer, given: number",
            id="chunks-not-whole",
        ),
        pytest.param(
            {"type": "dribble", "chunks": 10_001, "durationMs": 10},
            "Error for <data.pairs.0.response.fault.chunks>: Must be less than or equal to 10000",
            id="too-many-chunks",
        ),
        pytest.param(
            {"type": "dribble", "chunks": 2, "durationMs": 1e20},
            "Error for <data.pairs.0.response.fault.durationMs>: Must be less than or equal to 2147483647",
            id="duration-beyond-int32",
        ),
        pytest.param(
            {"type": "bandwidth", "bytesPerSecond": 2**64},
            "Error for <data.pairs.0.response.fault.bytesPerSecond>: Must be less than or equal to 10000000000",
            id="rate-beyond-64-bits",
        ),
        pytest.param(
            {"type": "bandwidth", "bytesPerSecond": 0},
            "Error for <data.pairs.0.response.fault.bytesPerSecond>: Must be greater than or equal to 1",
            id="no-rate",
        ),
        pytest.param(
            {"type": "bandwidth", "bytesPerSecond": 5, "chunks": 2},
            "Error for <data.pairs.0.response.fault>: Additional property chunks is not allowed",
            id="a-parameter-of-another-type",
        ),
        pytest.param(
            {"type": "emptyResponse", "when": "always"},
            "Error for <data.pairs.0.response.fault>: Additional property when is not allowed",
            id="unknown-key",
        ),
        pytest.param({}, "Error for <data.pairs.0.response.fault>: type is required", id="no-type"),
        pytest.param(
            {"type": 5},
            "Error for <data.pairs.0.response.fault.type>: Invalid type. Expected: string, given: integer; "
            "Error for <data.pairs.0.response.fault.type>: data.pairs.0.response.fault.type must be one of the "
            'following: "connectionReset", "emptyResponse", "malformedChunk", "randomDataThenClose", "dribble", '
            '"bandwidth"',
            id="type-not-a-string",
        ),
        pytest.param(
            {"type": "connectionReset", "fraction": "half"},
            "Error for <data.pairs.0.response.fault.fraction>: Invalid type. Expected: number, given: string",
            id="fraction-text",
        ),
        pytest.param(
            {"type": "dribble", "durationMs": 100},
            "Error for <data.pairs.0.response.fault>: chunks is required",
            id="no-chunks",
        ),
        pytest.param(
            {"type": "dribble", "chunks": "5", "durationMs": 100},
            "Error for <data.pairs.0.response.fault.chunks>: Invalid type. Expected: integer, given: string",
            id="chunks-text",
        ),
        pytest.param(
            {"type": "dribble", "chunks": 0, "durationMs": 100},
            "Error for <data.pairs.0.response.fault.chunks>: Must be greater than or equal to 1",
            id="no-pieces",
        ),
        pytest.param(
            {"type": "bandwidth"},
            "Error for <data.pairs.0.response.fault>: bytesPerSecond is required",
            id="bandwidth-without-a-rate",
        ),
        pytest.param(
            {"type": "emptyResponse", "chunks": 2},
            "Error for <data.pairs.0.response.fault>: Additional property chunks is not allowed",
            id="a-parameter-no-type-takes",
        ),
        pytest.param(
            "reset",
            "Error for <data.pairs.0.response.fault>: Invalid type. Expected: object, given: string",
            id="not-an-object",
        ),
    ],
)
def test_a_bad_fault_is_refused_naming_its_path(fault: Any, details: str) -> None:
    assert rejection(document(fault)) == f"Invalid v5 simulation: [{details}]"


def test_a_bad_global_rule_is_refused_naming_its_path() -> None:
    message = rejection(document(None, {"urlPattern": 1, "fault": {"type": "dribble", "chunks": 1}}))
    assert message == (
        "Invalid v5 simulation: [Error for <data.globalActions.faults.0.fault>: durationMs is required; "
        "Error for <data.globalActions.faults.0.urlPattern>: Invalid type. Expected: string, given: integer]"
    )


def test_hoverflys_dialect_refuses_simproxys_own_members_as_unknown_ones() -> None:
    assert rejection(document(DRIBBLE, RULE), extensions=False) == (
        "Invalid v5 simulation: [Error for <data.globalActions>: Additional property faults is not allowed; "
        "Error for <data.pairs.0.response>: Additional property fault is not allowed]"
    )
    # what a fault holds is not looked at: the member itself is unknown there
    assert rejection(document({"type": "teleport"}), extensions=False) == (
        "Invalid v5 simulation: [Error for <data.pairs.0.response>: Additional property fault is not allowed]"
    )
    assert parse_simulation(document(), extensions=False)["data"]["pairs"][0]["response"] == {
        "status": 200,
        "body": "ok",
    }


def test_hoverflys_dialect_reports_other_errors_with_them_in_field_order() -> None:
    raw = orjson.dumps(
        {
            "data": {
                "pairs": [
                    {"request": {}, "response": {"status": "x"}},
                    {"request": {}, "response": {"fault": {"type": "emptyResponse"}}},
                ]
            },
            "meta": {"schemaVersion": "v5.3"},
        }
    )
    assert rejection(raw, extensions=False) == (
        "Invalid v5.3 simulation: [Error for <data.pairs.0.response.status>: Invalid type. Expected: integer, "
        "given: string; Error for <data.pairs.1.response>: Additional property fault is not allowed]"
    )
