"""OpenAPI documents as simulations, through real simproxy processes: ``-import`` (YAML, with
references to a file beside it), the admin API (YAML or JSON bodies), ``simproxy openapi``, the
``Prefer`` header, and bad documents answered with a 400 that says where."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Simproxy
from tests.integration.upstream import Upstream

DATA = Path(__file__).resolve().parents[1] / "data" / "openapi"
KENNEL = "http://kennel.example.com/v1"
TENANT = {"X-Tenant": "acme"}


@pytest.fixture
def kennel(simproxy_factory: Any) -> Simproxy:
    sp: Simproxy = simproxy_factory("-import", str(DATA / "kennel.yaml"))
    return sp


def _json(answer: tuple[int, dict[str, str], bytes]) -> tuple[int, Any]:
    status, _, body = answer
    return status, json.loads(body) if body else None


def test_imported_yaml_answers_its_examples_through_the_proxy(kennel: Simproxy) -> None:
    assert _json(kennel.proxy(f"{KENNEL}/dogs?limit=2", headers=TENANT)) == (
        200,
        [{"id": 7, "name": "Rex", "born": "2019-04-01", "tags": ["good"]}],
    )
    # the first server's path is the prefix
    assert _json(kennel.proxy(f"{KENNEL}/dogs/7"))[1]["name"] == "Rex"
    assert kennel.proxy("http://kennel.example.com/dogs/7")[0] == 502
    status, _, body = kennel.proxy(f"{KENNEL}/dogs/7", method="DELETE")
    assert (status, body) == (204, b"")


def test_generated_answer_for_a_body_of_the_declared_media_type(kennel: Simproxy) -> None:
    new_dog = json.dumps({"name": "Bo"}).encode()
    status, body = _json(kennel.proxy(f"{KENNEL}/dogs", "POST", new_dog, {"Content-Type": "application/json"}))
    # no example: generated from the allOf schema, realistic by format, the same every time
    assert status == 201
    assert body == {
        "name": "string",
        "born": "2024-01-02",
        "tags": ["string"],
        "id": 0,
        "chipped": "2024-01-02T03:04:05Z",
    }


def _violations(answer: tuple[int, dict[str, str], bytes]) -> list[dict[str, str]]:
    status, headers, body = answer
    assert (status, headers["content-type"]) == (422, "application/json"), body
    doc = json.loads(body)
    assert doc["error"] == "the request does not follow the API description"
    return list(doc["violations"])


def test_requests_that_break_the_document_get_422_with_every_violation(kennel: Simproxy) -> None:
    assert _violations(kennel.proxy(f"{KENNEL}/dogs")) == [
        {"in": "query", "path": "$.limit", "message": "the required query parameter is missing"},
        {"in": "header", "path": "$.X-Tenant", "message": "the required header parameter is missing"},
    ]
    assert _violations(kennel.proxy(f"{KENNEL}/dogs?limit=many", headers=TENANT)) == [
        {"in": "query", "path": "$.limit", "message": "'many' is not of type 'integer'"}
    ]
    assert _violations(kennel.proxy(f"{KENNEL}/dogs?limit=500", headers=TENANT)) == [
        {"in": "query", "path": "$.limit", "message": "500 is greater than the maximum of 50"}
    ]
    assert _violations(kennel.proxy(f"{KENNEL}/dogs/rex")) == [
        {"in": "path", "path": "$.dogId", "message": "'rex' is not of type 'integer'"}
    ]
    bad_dog = json.dumps({"name": "", "tags": "good"}).encode()
    assert _violations(kennel.proxy(f"{KENNEL}/dogs", "POST", bad_dog, {"Content-Type": "application/json"})) == [
        {"in": "body", "path": "$.name", "message": "'' should be non-empty"},
        {"in": "body", "path": "$.tags", "message": "'good' is not of type 'array'"},
    ]
    assert _violations(kennel.proxy(f"{KENNEL}/dogs", "POST", b"{}", {"Content-Type": "application/json"})) == [
        {"in": "body", "path": "$", "message": "'name' is a required property"}
    ]
    assert _violations(kennel.proxy(f"{KENNEL}/dogs", "POST", b"name=Bo", {"Content-Type": "text/plain"})) == [
        {"in": "header", "path": "$.Content-Type", "message": "media type text/plain is not one of application/json"}
    ]
    assert _violations(kennel.proxy(f"{KENNEL}/dogs", "POST")) == [
        {"in": "body", "path": "$", "message": "the required request body is missing"}
    ]
    # the journal keeps what the client was told
    journal = kennel.admin_json("GET", "/api/v2/journal")[1]["journal"]
    last = journal[-1]["response"]
    assert last["status"] == 422 and "the required request body is missing" in last["body"]


def test_validation_can_be_left_out(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory()
    raw = (DATA / "petstore2.json").read_bytes()
    assert sp.admin("PUT", "/api/v2/simulation?validate=false", raw=raw)[0] == 200
    assert sp.proxy("http://aquarium/api/fish/goldie")[0] == 502  # not a pair's path: a miss, not a 422
    assert sp.admin("PUT", "/api/v2/simulation", raw=raw)[0] == 200
    assert _violations(sp.proxy("http://aquarium/api/fish/goldie")) == [
        {"in": "path", "path": "$.fishId", "message": "'goldie' is not of type 'integer'"}
    ]
    bad_fish = {"Content-Type": "application/json"}
    assert _violations(sp.proxy("http://aquarium/api/fish", "POST", b'{"kind": "shark"}', bad_fish)) == [
        {"in": "body", "path": "$.kind", "message": "'shark' is not one of ['carp', 'trout']"}
    ]


def test_formats_are_checked_in_the_body(kennel: Simproxy) -> None:
    json_body = {"Content-Type": "application/json"}
    late = json.dumps({"name": "Bo", "born": "2023-02-29"}).encode()
    assert _violations(kennel.proxy(f"{KENNEL}/dogs", "POST", late, json_body)) == [
        {"in": "body", "path": "$.born", "message": "'2023-02-29' is not a 'date'"}
    ]
    leap = json.dumps({"name": "Bo", "born": "2024-02-29"}).encode()
    assert kennel.proxy(f"{KENNEL}/dogs", "POST", leap, json_body)[0] == 201


def test_import_flag_turns_validation_off(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-openapi-validation=false", "-import", str(DATA / "kennel.yaml"))
    # a limit of the wrong type and beyond the maximum: the example all the same
    for limit in ("many", "500"):
        answer = _json(sp.proxy(f"{KENNEL}/dogs?limit={limit}", headers=TENANT))
        assert answer == (200, [{"id": 7, "name": "Rex", "born": "2019-04-01", "tags": ["good"]}])
    bad_dog = json.dumps({"name": "", "tags": "good"}).encode()
    assert sp.proxy(f"{KENNEL}/dogs", "POST", bad_dog, {"Content-Type": "application/json"})[0] == 201
    assert sp.proxy(f"{KENNEL}/owners/not-a-uuid/pets")[0] == 502  # only the path matcher: a miss


def test_prefer_picks_the_status_the_example_or_a_dynamic_answer(kennel: Simproxy) -> None:
    assert _json(kennel.proxy(f"{KENNEL}/dogs/7", headers={"Prefer": "code=404"})) == (
        404,
        {"title": "gone", "status": 404},
    )
    assert _json(kennel.proxy(f"{KENNEL}/dogs/7", headers={"Prefer": "example=fido"}))[1]["name"] == "Fido"
    assert _json(kennel.proxy(f"{KENNEL}/dogs/7", headers={"Prefer": "code=200, example=fido"}))[1]["id"] == 8
    # a status whose only answer is generated from a schema in the other file
    assert _json(kennel.proxy(f"{KENNEL}/dogs?limit=1", headers={"Prefer": "code=400", **TENANT})) == (
        400,
        {"title": "string", "status": 0},
    )
    # a response defined in the other file, with its own media type and example
    post = {"Content-Type": "application/json", "Prefer": "code=409"}
    status, headers, body = kennel.proxy(f"{KENNEL}/dogs", "POST", b'{"name": "Rex"}', post)
    assert (status, headers["content-type"], json.loads(body)) == (
        409,
        "application/problem+json",
        {"title": "taken", "status": 409},
    )
    first = _json(kennel.proxy(f"{KENNEL}/dogs/7", headers={"Prefer": "dynamic=true"}))
    second = _json(kennel.proxy(f"{KENNEL}/dogs/7", headers={"Prefer": "dynamic=true"}))
    assert first[0] == second[0] == 200
    assert isinstance(first[1]["id"], int) and first[1]["name"] != second[1]["name"]


def test_one_of_answers_with_its_first_choice(kennel: Simproxy) -> None:
    owner = "0b6f1c1e-2d3a-4b5c-8d9e-0f1a2b3c4d5e"
    status, body = _json(kennel.proxy(f"{KENNEL}/owners/{owner}/pets"))
    assert status == 200 and body[0]["chipped"] == "2024-01-02T03:04:05Z"
    # the path matcher takes only a UUID; validation says why the request is wrong
    assert _violations(kennel.proxy(f"{KENNEL}/owners/not-a-uuid/pets")) == [
        {"in": "path", "path": "$.ownerId", "message": "'not-a-uuid' is not a 'uuid'"}
    ]


def test_admin_api_takes_swagger_json_and_yaml_on_the_webserver(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-webserver")
    status, _ = sp.admin_json("PUT", "/api/v2/simulation", raw=(DATA / "petstore2.json").read_bytes())
    assert status == 200
    assert _json(sp.proxy("/api/fish/3")) == (200, {"id": 0, "kind": "carp"})
    assert _json(sp.proxy("/api/fish/3", headers={"Prefer": "code=404"})) == (404, {"message": "no fish"})
    created = sp.proxy("/api/fish", "POST", b'{"kind": "trout"}', {"Content-Type": "application/json"})
    assert _json(created) == (201, {"id": 1, "kind": "carp"})

    yaml_doc = b"openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /ping:\n    get:\n" + (
        b"      responses:\n        '200':\n          description: ok\n          content:\n"
        b"            text/plain:\n              example: pong\n"
    )
    status, _ = sp.admin_json("POST", "/api/v2/simulation", raw=yaml_doc, headers={"Content-Type": "application/yaml"})
    assert status == 200
    status, headers, body = sp.proxy("/ping")
    assert (status, headers["content-type"], body) == (200, "text/plain", b"pong")
    assert sp.proxy("/api/fish/3")[0] == 200  # POST appended


BAD = {
    "not YAML": (b"openapi: [3.0\npaths: {", "not YAML or JSON at line"),
    "not OpenAPI": (b"name: kennel\npairs: []\n", "no `openapi` or `swagger` member"),
    "unresolvable": (
        b"openapi: 3.0.0\npaths:\n  /a:\n    get:\n      responses:\n"
        b"        '200': {$ref: '#/components/responses/Nope'}\n",
        "paths./a.get.responses.200.$ref: cannot resolve '#/components/responses/Nope'",
    ),
    "cycle": (
        b"openapi: 3.0.0\npaths: {}\ncomponents:\n  schemas:\n    A: {$ref: '#/components/schemas/B'}\n"
        b"    B: {$ref: '#/components/schemas/A'}\n",
        "#/components/schemas/A.$ref: reference cycle: "
        "#/components/schemas/B -> #/components/schemas/A -> #/components/schemas/B",
    ),
    "other file": (
        b"openapi: 3.0.0\npaths:\n  /a:\n    get:\n      responses:\n        '200': {$ref: 'common.yaml#/x'}\n",
        "references to other files need the document's folder",
    ),
}


def test_bad_documents_get_a_400_that_says_where(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory()
    for name, (raw, expected) in BAD.items():
        status, body = sp.admin_json("PUT", "/api/v2/simulation", raw=raw, headers={"Content-Type": "application/yaml"})
        assert status == 400, name
        assert body["error"].startswith("Invalid OpenAPI document: ") and expected in body["error"], (name, body)
    assert sp.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"] == []


def test_openapi_command_prints_a_simulation_that_imports_as_is(simproxy_factory: Any, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "simproxy", "openapi", str(DATA / "kennel.yaml")], capture_output=True, check=True
    )
    printed = json.loads(done.stdout)
    assert printed["meta"]["schemaVersion"].startswith("v5")
    assert printed["data"]["pairs"][0]["labels"][0] == "openapi:listDogs"
    assert printed["data"]["pairs"][0]["labels"][1].startswith("openapi-contract:")
    saved = tmp_path / "kennel.json"
    saved.write_bytes(done.stdout)
    sp: Simproxy = simproxy_factory("-import", str(saved))
    assert _json(sp.proxy(f"{KENNEL}/dogs/7", headers={"Prefer": "example=fido"}))[1]["name"] == "Fido"
    failed = subprocess.run(
        [sys.executable, "-m", "simproxy", "openapi", str(DATA / "missing.yaml")], capture_output=True
    )
    assert failed.returncode == 1 and b"missing.yaml" in failed.stderr


REAL_SERVICE = b"""
openapi: 3.0.3
info: {title: the upstream of tests/integration/upstream.py, described wrongly on purpose, version: '1'}
paths:
  /echo:
    get:
      parameters:
        - {name: X-Trace, in: header, required: true, schema: {type: string}}
      responses:
        '200':
          description: what arrived
          content:
            application/json:
              schema:
                type: object
                required: [method, path, verb]
                properties:
                  method: {type: string}
                  path: {type: integer}
  /status/{code}:
    get:
      parameters:
        - {name: code, in: path, required: true, schema: {type: integer}}
      responses:
        '200': {description: fine, content: {text/plain: {example: status 200}}}
  /plain:
    get:
      responses:
        '200': {description: json, content: {application/json: {example: {}}}}
"""


def _contract_reports(sp: Simproxy) -> dict[str, list[dict[str, str]]]:
    groups = sp.admin_json("GET", "/api/v2/diff")[1]["diff"]
    return {g["request"]["path"]: [e for r in g["diffReports"] for e in r["diffEntries"]] for g in groups}


def test_capture_reports_real_answers_that_break_the_document(simproxy_factory: Any, upstream: Upstream) -> None:
    sp: Simproxy = simproxy_factory()
    yaml_type = {"Content-Type": "application/yaml"}
    assert sp.admin("PUT", "/api/v2/simulation", raw=REAL_SERVICE, headers=yaml_type)[0] == 200
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    assert sp.proxy(upstream.url("/echo"), headers={"X-Trace": "1"})[0] == 200  # the real answer, as it is
    assert sp.proxy(upstream.url("/status/418"))[0] == 418
    assert sp.proxy(upstream.url("/plain"))[2] == b"real /plain"
    assert sp.proxy(upstream.url("/undescribed"))[0] == 200
    expected_answer = "as the API description says"
    assert _contract_reports(sp) == {
        "/echo": [
            {"field": "openapi/response body", "expected": expected_answer, "actual": "'verb' is a required property"},
            {
                "field": "openapi/response body.path",
                "expected": expected_answer,
                "actual": "'/echo' is not of type 'integer'",
            },
        ],
        "/status/418": [
            {"field": "openapi/status", "expected": expected_answer, "actual": "status 418 is not declared: 200"}
        ],
        "/plain": [
            {
                "field": "openapi/response body.Content-Type",
                "expected": expected_answer,
                "actual": "media type text/plain is not one of application/json",
            }
        ],
    }


def test_spy_reports_the_real_answers_it_forwards(simproxy_factory: Any, upstream: Upstream) -> None:
    sp: Simproxy = simproxy_factory()
    assert (
        sp.admin("PUT", "/api/v2/simulation", raw=REAL_SERVICE, headers={"Content-Type": "application/yaml"})[0] == 200
    )
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "spy"})[0] == 200
    simulated = sp.proxy(upstream.url("/echo"), headers={"X-Trace": "1"})  # a pair answers: nothing to check
    assert simulated[0] == 200 and "hoverfly" not in simulated[1]
    assert sp.admin_json("GET", "/api/v2/diff")[1] == {"diff": []}
    forwarded = sp.proxy(upstream.url("/echo"))  # no X-Trace: no pair, the real service answers
    assert "Forwarded" in forwarded[1]["hoverfly"]
    assert [e["actual"] for e in _contract_reports(sp)["/echo"]] == [
        "'verb' is a required property",
        "'/echo' is not of type 'integer'",
    ]


def test_the_webserver_serves_and_validates_an_imported_document(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-webserver", "-import", str(DATA / "kennel.yaml"))
    assert _json(sp.proxy("/v1/dogs/7", headers={"Prefer": "example=fido"}))[1]["name"] == "Fido"
    assert _json(sp.proxy("/v1/dogs?limit=5", headers={"Prefer": "code=400", **TENANT}))[0] == 400
    assert _violations(sp.proxy("/v1/dogs?limit=0", headers=TENANT)) == [
        {"in": "query", "path": "$.limit", "message": "0 is less than the minimum of 1"}
    ]


def test_hoverfly_compat_takes_no_document(simproxy_factory: Any) -> None:
    raw = (DATA / "petstore2.json").read_bytes()
    assert simproxy_factory().admin("PUT", "/api/v2/simulation", raw=raw)[0] == 200
    compat: Simproxy = simproxy_factory("-compat", "hoverfly")
    status, body = compat.admin_json("PUT", "/api/v2/simulation", raw=raw)
    assert status == 400 and "OpenAPI" not in body["error"]  # refused as Hoverfly refuses it
    done = subprocess.run(
        [sys.executable, "-m", "simproxy", "-compat", "hoverfly", "-import", str(DATA / "kennel.yaml")],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert b"only JSON files are acceppted" in done.stdout + done.stderr


def test_openapi_command_usage() -> None:
    done = subprocess.run([sys.executable, "-m", "simproxy", "openapi"], capture_output=True)
    assert done.returncode == 2 and done.stderr.startswith(b"usage: simproxy openapi [--no-validation] FILE")


def test_form_bodies_are_matched_and_validated(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-import", str(DATA / "forms.yaml"))
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    assert _json(sp.proxy("http://forms.test/signup", "POST", b"user=bo&age=30&langs=en&langs=de", form)) == (
        201,
        {"welcome": True},
    )
    assert _violations(sp.proxy("http://forms.test/signup", "POST", b"user=bo&age=9&langs=xx", form)) == [
        {"in": "body", "path": "$.age", "message": "9 is less than the minimum of 18"},
        {"in": "body", "path": "$.langs[0]", "message": "'xx' is not one of ['en', 'fr', 'de']"},
    ]
    boundary = "simproxy-test"
    multipart = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    parts = [("owner", "7"), ("picture", "not really a picture")]
    body = "".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{n}"\r\n\r\n{v}\r\n' for n, v in parts)
    assert sp.proxy("http://forms.test/avatars", "POST", f"{body}--{boundary}--\r\n".encode(), multipart)[0] == 204
    wrong = body.replace("\r\n\r\n7\r\n", "\r\n\r\nseven\r\n")
    assert _violations(
        sp.proxy("http://forms.test/avatars", "POST", f"{wrong}--{boundary}--\r\n".encode(), multipart)
    ) == [{"in": "body", "path": "$.owner", "message": "'seven' is not of type 'integer'"}]


def test_external_examples_are_read_beside_the_document(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-import", str(DATA / "gallery.yaml"))
    tabby = {"id": "tabby", "colour": "striped", "lives": 9}
    assert _json(sp.proxy("http://gallery.test/cats/tom", headers={"Prefer": "example=tabby"})) == (200, tabby)
    assert _json(sp.proxy("http://gallery.test/cats/tom")) == (200, tabby)  # the first example: the default


def test_a_label_that_is_no_contract_is_refused_except_as_hoverfly(simproxy_factory: Any) -> None:
    pair = {"request": {}, "response": {"status": 200, "body": "ok"}, "labels": ["openapi-contract:{oops"]}
    raw = json.dumps({"data": {"pairs": [pair]}, "meta": {"schemaVersion": "v5.2"}}).encode()
    status, body = simproxy_factory().admin_json("PUT", "/api/v2/simulation", raw=raw)
    assert status == 400 and "data.pairs[0].labels[0]: not an OpenAPI contract" in body["error"]
    compat: Simproxy = simproxy_factory("-compat", "hoverfly")
    assert compat.admin("PUT", "/api/v2/simulation", raw=raw)[0] == 200  # only a label, as in Hoverfly
    assert compat.proxy("http://any.test/")[:3:2] == (200, b"ok")
