"""Form bodies (urlencoded and multipart) checked against their schema, and matched by the
conversion; Swagger 2's ``formData`` parameters alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simproxy.engine.matching.scoring import compile_simulation, match
from simproxy.engine.openapi.convert import to_simulation
from simproxy.engine.openapi.document import load_document
from simproxy.engine.openapi.validate import Contracts
from simproxy.engine.simulation.codec import decode_simulation
from tests.engine.conftest import REGISTRY, request

DATA = Path(__file__).resolve().parents[2] / "data" / "openapi"
FORM = {"content-type": ["application/x-www-form-urlencoded"]}
BOUNDARY = "b0undary"
MULTIPART = {"content-type": [f"multipart/form-data; boundary={BOUNDARY}"]}


def _doc(raw: bytes) -> dict[str, Any]:
    return to_simulation(load_document(raw))


def _contracts(doc: dict[str, Any]) -> Contracts:
    return Contracts.build(tuple(p.get("labels", ())) for p in doc["data"]["pairs"])


def _messages(contracts: Contracts, method: str, path: str, headers: dict[str, list[str]], body: str) -> list[str]:
    found = contracts.check(method, path, {}, headers, body)
    assert found is not None
    return [f"{v.where} {v.path}: {v.message}" for v in found]


def _multipart(*parts: tuple[str, str, str]) -> str:
    """A multipart/form-data body: (name, filename or '', content) each."""
    out = ""
    for name, filename, content in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        kind = "\r\nContent-Type: application/octet-stream" if filename else ""
        out += f"--{BOUNDARY}\r\nContent-Disposition: {disposition}{kind}\r\n\r\n{content}\r\n"
    return out + f"--{BOUNDARY}--\r\n"


def test_an_urlencoded_form_is_read_as_its_schema_types() -> None:
    contracts = _contracts(_doc((DATA / "forms.yaml").read_bytes()))

    def check(body: str) -> list[str]:
        return _messages(contracts, "POST", "/signup", FORM, body)

    assert check("user=bo&age=30&newsletter=true&langs=en&langs=fr&scores=1,2&email=bo%40example.com") == []
    assert check("user=b&age=twelve&newsletter=maybe&langs=en,xx&scores=1,x&email=bo") == [
        "body $.user: 'b' is too short",
        "body $.age: 'twelve' is not of type 'integer'",
        "body $.newsletter: 'maybe' is not of type 'boolean'",
        "body $.langs[1]: 'xx' is not one of ['en', 'fr', 'de']",
        "body $.scores[1]: 'x' is not of type 'integer'",
        "body $.email: 'bo' is not a 'email'",
    ]
    assert check("age=17") == ["body $: 'user' is a required property", "body $.age: 17 is less than the minimum of 18"]
    assert check("") == ["body $: 'user' is a required property", "body $: 'age' is a required property"]


def test_a_multipart_form_is_read_part_by_part() -> None:
    contracts = _contracts(_doc((DATA / "forms.yaml").read_bytes()))

    def check(body: str, headers: dict[str, list[str]] = MULTIPART) -> list[str]:
        return _messages(contracts, "POST", "/avatars", headers, body)

    assert check(_multipart(("owner", "", "7"), ("picture", "me.png", "\x89PNG..."))) == []
    assert check(_multipart(("owner", "", "seven"), ("caption", "", "far too long a caption"))) == [
        "body $: 'picture' is a required property",
        "body $.owner: 'seven' is not of type 'integer'",
        "body $.caption: 'far too long a caption' is too long",
    ]
    assert check("owner=7", {"content-type": ["multipart/form-data; boundary=other"]}) == [
        "body $: the body is not multipart/form-data: not multipart/form-data with the boundary its Content-Type names"
    ]


def test_an_operation_taking_json_or_a_form_reads_each_as_sent() -> None:
    contracts = _contracts(_doc((DATA / "forms.yaml").read_bytes()))
    json_type = {"content-type": ["application/json"]}
    assert _messages(contracts, "PUT", "/notes", FORM, "text=hi&pinned=true") == []
    assert _messages(contracts, "PUT", "/notes", FORM, "pinned=yes") == [
        "body $: 'text' is a required property",
        "body $.pinned: 'yes' is not of type 'boolean'",
    ]
    assert _messages(contracts, "PUT", "/notes", json_type, '{"text": "hi", "pinned": "true"}') == [
        "body $.pinned: 'true' is not of type 'boolean'"
    ]


SWAGGER = b"""
swagger: "2.0"
info: {title: Uploads, version: "1"}
paths:
  /files:
    post:
      parameters:
        - {name: folder, in: formData, type: integer, required: true}
        - {name: public, in: formData, type: boolean}
        - {name: content, in: formData, type: file}
      responses:
        "201": {description: stored, schema: {type: object}, examples: {application/json: {stored: true}}}
"""


def test_swagger_2_form_data_parameters_are_the_form_schema() -> None:
    doc = _doc(SWAGGER)
    contracts = _contracts(doc)
    assert _messages(contracts, "POST", "/files", FORM, "folder=3&public=false") == []
    assert _messages(contracts, "POST", "/files", FORM, "folder=top&public=no") == [
        "body $.folder: 'top' is not of type 'integer'",
        "body $.public: 'no' is not of type 'boolean'",
    ]
    # no consumes: either encoding, the multipart one with its file
    upload = _multipart(("folder", "", "3"), ("content", "a.txt", "hello"))
    assert _messages(contracts, "POST", "/files", MULTIPART, upload) == []
    assert _messages(contracts, "POST", "/files", MULTIPART, _multipart(("public", "", "true"))) == [
        "body $: 'folder' is a required property"
    ]


def _answer(doc: dict[str, Any], **req: Any) -> int | None:
    sim = compile_simulation(decode_simulation(doc["data"]), REGISTRY)
    result = match(sim, request(**req), {})
    return None if result.pair is None else result.pair.pair.response.status


def test_a_required_urlencoded_body_is_matched_by_its_required_fields() -> None:
    doc = _doc((DATA / "forms.yaml").read_bytes())
    form = {"Content-Type": ["application/x-www-form-urlencoded"]}
    assert doc["data"]["pairs"][0]["request"]["body"] == [
        {
            "matcher": "form",
            "value": {"user": [{"matcher": "regex", "value": ".*"}], "age": [{"matcher": "regex", "value": ".*"}]},
        }
    ]
    assert _answer(doc, path="/signup", method="POST", headers=form, body="user=bo&age=30") == 201
    assert _answer(doc, path="/signup", method="POST", headers=form, body="user=bo") is None
    # a body that may be JSON too gets no form matcher: a JSON body would never match it
    json_type = {"Content-Type": ["application/json"]}
    assert "body" not in doc["data"]["pairs"][-1]["request"]
    assert _answer(doc, path="/notes", method="PUT", headers=json_type, body='{"text": "hi"}') == 204
    assert _answer(doc, path="/notes", method="PUT", headers=form, body="text=hi") == 204
