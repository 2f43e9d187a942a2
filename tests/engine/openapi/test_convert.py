"""OpenAPI documents -> simulations: what the pairs match and answer, matched by the engine itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simproxy.engine.matching.scoring import compile_simulation, match
from simproxy.engine.openapi.convert import to_simulation
from simproxy.engine.openapi.document import OpenAPIError, load_document
from simproxy.engine.openapi.generate import example_value
from simproxy.engine.simulation.codec import decode_simulation
from tests.engine.conftest import REGISTRY, request

DATA = Path(__file__).resolve().parents[2] / "data" / "openapi"


def _kennel() -> dict[str, Any]:
    raw = (DATA / "kennel.yaml").read_bytes()
    return to_simulation(load_document(raw, lambda name: (DATA / name).read_bytes()))


def _answer(doc: dict[str, Any], **req: Any) -> tuple[int, Any] | None:
    sim = compile_simulation(decode_simulation(doc["data"]), REGISTRY)
    result = match(sim, request(**req), {})
    if result.pair is None:
        return None
    response = result.pair.pair.response
    return response.status, json.loads(response.body) if response.body else None


def test_each_operation_matches_its_path_method_and_required_parameters() -> None:
    doc = _kennel()
    tenant = {"X-Tenant": ["a"]}
    assert _answer(doc, path="/v1/dogs", query="limit=3", headers=tenant) == (
        200,
        [{"id": 7, "name": "Rex", "born": "2019-04-01", "tags": ["good"]}],
    )
    assert _answer(doc, path="/dogs", query="limit=3", headers=tenant) is None  # the server's /v1 is needed
    assert _answer(doc, path="/v1/dogs", headers=tenant) is None
    assert _answer(doc, path="/v1/dogs/12", method="PUT") is None
    assert _answer(doc, path="/v1/dogs/-12") is not None
    assert _answer(doc, path="/v1/dogs/x12") is None


def test_prefer_pairs_outrank_the_default_answer() -> None:
    doc = _kennel()
    assert _answer(doc, path="/v1/dogs/1", headers={"Prefer": ["code=404"]}) == (404, {"title": "gone", "status": 404})
    assert _answer(doc, path="/v1/dogs/1", headers={"Prefer": ["example=fido"]})[1]["id"] == 8  # type: ignore[index]
    assert _answer(doc, path="/v1/dogs/1", headers={"Prefer": ["code=4040"]})[0] == 200  # type: ignore[index]


def test_swagger_2_body_parameter_requires_its_media_type() -> None:
    doc = to_simulation(load_document((DATA / "petstore2.json").read_bytes()))
    json_body = {"Content-Type": ["application/json; charset=utf-8"]}
    assert _answer(doc, path="/api/fish", method="POST", headers=json_body) == (201, {"id": 1, "kind": "carp"})
    assert _answer(doc, path="/api/fish", method="POST") is None


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "string", "format": "uuid"}, "7d3b2c1a-5e4f-4a6b-9c8d-0e1f2a3b4c5d"),
        ({"type": "string", "format": "email"}, "someone@example.com"),
        ({"type": "string", "format": "uri"}, "https://example.com/resource"),
        ({"type": "string", "minLength": 9}, "stringxxx"),
        ({"type": "integer", "minimum": 5}, 5),
        ({"type": ["null", "number"], "exclusiveMinimum": 1}, 2),
        ({"enum": ["b", "a"]}, "b"),
        ({"oneOf": [{"type": "boolean"}, {"type": "string"}]}, True),
        (
            {"allOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"b": {"const": "x"}}}]},
            {"a": 0, "b": "x"},
        ),
        ({"type": "array", "minItems": 2, "items": {"type": "integer"}}, [0, 0]),
    ],
)
def test_generated_values_follow_type_and_format(schema: dict[str, Any], value: Any) -> None:
    assert example_value(schema) == value


def test_a_schema_holding_itself_is_cut_not_refused() -> None:
    raw = b"""
openapi: 3.1.0
paths:
  /tree:
    get:
      responses:
        '200':
          description: a tree
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Node'}
components:
  schemas:
    Node:
      type: object
      properties:
        name: {type: string}
        children: {type: array, items: {$ref: '#/components/schemas/Node'}}
"""
    doc = to_simulation(load_document(raw))
    assert _answer(doc, path="/tree") == (200, {"name": "string", "children": []})


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"- just\n- a list\n", "the top level is not a mapping"),
        (b"openapi: 2.5\n", "version 2.5 is not supported"),
        (b"swagger: '2.0'\npaths: [1]\n", "paths: must be a mapping"),
        (b"openapi: 3.0.0\npaths: {}\nx: {$ref: '#/nowhere/at/all'}\n", "x.$ref: cannot resolve '#/nowhere/at/all'"),
    ],
)
def test_bad_documents_say_where(raw: bytes, message: str) -> None:
    with pytest.raises(OpenAPIError) as caught:
        load_document(raw)
    assert message in str(caught.value)


def test_a_missing_file_beside_the_document_is_named() -> None:
    raw = b"openapi: 3.0.0\npaths: {}\nx: {$ref: 'elsewhere.yaml#/A'}\n"
    with pytest.raises(OpenAPIError) as caught:
        load_document(raw, lambda name: (DATA / name).read_bytes())
    assert "x.$ref: cannot resolve 'elsewhere.yaml#/A': elsewhere.yaml: No such file or directory" in str(caught.value)


def test_integers_beyond_64_bits_are_kept() -> None:
    raw = b"""
openapi: 3.0.0
paths:
  /size:
    get:
      parameters: [{name: n, in: query, required: true, schema: {type: integer, maximum: 18446744073709551616}}]
      responses:
        '200': {description: ok, content: {application/json: {example: {big: 18446744073709551616}}}}
"""
    doc = to_simulation(load_document(raw))
    assert _answer(doc, path="/size", query="n=1") == (200, {"big": 18446744073709551616})
    assert "18446744073709551616" in doc["data"]["pairs"][0]["labels"][1]


def _gallery(folder: Path = DATA) -> dict[str, Any]:
    raw = (DATA / "gallery.yaml").read_bytes()
    return to_simulation(load_document(raw, lambda name: (folder / name).read_bytes()))


def _pair_for(doc: dict[str, Any], **req: Any) -> Any:
    sim = compile_simulation(decode_simulation(doc["data"]), REGISTRY)
    found = match(sim, request(**req), {}).pair
    assert found is not None
    return found.pair.response


def test_an_external_example_is_read_from_the_file_beside_the_document(tmp_path: Path) -> None:
    tabby = _pair_for(_gallery(), path="/cats/tom", headers={"Prefer": ["example=tabby"]})
    assert (tabby.status, tabby.body) == (200, b'{"id": "tabby", "colour": "striped", "lives": 9}\n')
    # the first example is the default answer; one at a URL is not fetched, and answers nothing
    assert _pair_for(_gallery(), path="/cats/tom").body == tabby.body
    remote = _pair_for(_gallery(), path="/cats/tom", headers={"Prefer": ["example=remote"]})
    assert remote.body == tabby.body
    # a file that is not UTF-8 text is answered as it is, base64 in the simulation
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "tabby.json").write_bytes(b"\x89PNG\r\n\x1a\n\xff")
    binary = _pair_for(_gallery(tmp_path), path="/cats/tom")
    assert binary.body == b"\x89PNG\r\n\x1a\n\xff"
    # a missing file is named, with where the document asks for it
    with pytest.raises(OpenAPIError) as info:
        _gallery(tmp_path / "nowhere")
    assert str(info.value).startswith(
        "paths./cats/{name}.get.responses.200.content.application/json.examples.tabby.externalValue:"
        " cannot read 'examples/tabby.json'"
    )


def test_an_external_example_without_a_folder_is_left_out() -> None:
    doc = to_simulation(load_document((DATA / "gallery.yaml").read_bytes()))
    assert not any("example=tabby" in json.dumps(p["request"]) for p in doc["data"]["pairs"])
