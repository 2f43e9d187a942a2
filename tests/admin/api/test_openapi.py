"""``admin/api/openapi.py``: the document lists exactly the routes admin/api/app.py registers, is a valid
OpenAPI 3.1 document, declares the bearer scheme on every operation but the three open ones, and
describes what the handlers answer where that is simproxy's own (a faulted journal entry)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator
from sanic import Sanic

from simproxy.admin.api.app import create_app
from simproxy.admin.api.openapi import get_openapi, openapi_document
from simproxy.admin.settings import Settings
from simproxy.engine.journal.entries import entry_view, record_entry
from simproxy.engine.simulation.model import Fault, FaultKind, Response
from simproxy.engine.version import VERSION
from simproxy.engine.wire.parse import Arrival, read_request
from simproxy.engine.wire.response import render_response

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
OPEN = {("get", "/api/health"), ("post", "/api/token-auth"), ("options", "/api/token-auth")} | {
    ("get", path)
    for path in ("/", "/dashboard", "/dashboard/{name}")  # the page's files hold no data
}
ERROR_SCHEMA = {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}
SANIC_PARAM = re.compile(r"<([^:>]+)(?::[^>]*)?>")
TEMPLATE_PARAM = re.compile(r"\{([^}]+)\}")

Operation = tuple[str, str]


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return openapi_document()


@pytest.fixture(scope="module")
def app() -> Iterator[Sanic[Any, Any]]:
    built: Sanic[Any, Any] = create_app(Settings(enable_middleware_api=True))
    yield built
    Sanic.unregister_app(built)


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield method, path, operation


def routed(app: Sanic[Any, Any]) -> set[Operation]:
    """(method, path) of every route; HEAD and the OPTIONS routes Sanic adds itself are left out."""
    found = set()
    for route in app.router.routes:
        explicit = getattr(route.handler, "__module__", "").startswith("simproxy.admin.")
        path = SANIC_PARAM.sub(r"{\1}", route.uri)
        for method in route.methods:
            if method == "HEAD" or (method == "OPTIONS" and not explicit):
                continue
            found.add((method.lower(), path))
    return found


def listing(pairs: set[Operation]) -> str:
    return "\n".join(f"    {method.upper()} {path}" for method, path in sorted(pairs, key=lambda p: (p[1], p[0])))


def test_the_document_lists_exactly_the_registered_routes(app: Sanic[Any, Any], document: dict[str, Any]) -> None:
    registered = routed(app)
    documented = {(method, path) for method, path, _ in operations(document)}
    undocumented, unrouted = registered - documented, documented - registered
    assert not undocumented and not unrouted, (
        f"registered but not documented:\n{listing(undocumented) or '    (none)'}\n"
        f"documented but not registered:\n{listing(unrouted) or '    (none)'}"
    )
    assert ("put", "/api/v2/service/middleware") in documented  # the route -enable-middleware-api adds
    assert "-enable-middleware-api" in document["paths"]["/api/v2/hoverfly/middleware"]["put"]["description"]
    assert ("get", "/api/v2/openapi.json") in documented


def _walk(value: Any, where: str = "#") -> Iterator[tuple[str, Any]]:
    yield where, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, f"{where}/{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, f"{where}/{i}")


def _resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), f"{ref} does not point inside the document"
    node: Any = document
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        assert isinstance(node, dict) and part in node, f"{ref} does not resolve"
        node = node[part]
    return node


def _schemas(document: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every Schema Object: the components and those under content and parameters."""
    for name, schema in document["components"]["schemas"].items():
        yield f"#/components/schemas/{name}", schema
    for where, node in _walk(document["paths"], "#/paths"):
        if isinstance(node, dict) and "schema" in node and (where.count("/content/") or where.count("/parameters/")):
            yield f"{where}/schema", node["schema"]


def test_the_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1.")
    assert document["info"]["version"] == VERSION and document["info"]["title"]
    assert document["components"]["schemas"]["Error"] == ERROR_SCHEMA
    for where, schema in _schemas(document):
        try:
            Draft202012Validator.check_schema(schema)
        except Exception as exc:  # the message names the schema that is not valid JSON Schema 2020-12
            raise AssertionError(f"{where}: {exc}") from exc
    for _, node in _walk(document):
        if isinstance(node, dict) and "$ref" in node:
            _resolve(document, node["$ref"])
    ids = [operation["operationId"] for _, _, operation in operations(document)]
    assert len(ids) == len(set(ids)), "operationIds must be unique"
    for method, path, operation in operations(document):
        name = f"{method.upper()} {path}"
        assert path.startswith("/") and operation.get("summary"), name
        responses = operation["responses"]
        assert responses and all(re.fullmatch(r"[1-5]\d\d|default", code) for code in responses), name
        assert all(response.get("description") for response in responses.values()), name
        for code, response in responses.items():
            if code != "default" and int(code) >= 400:
                assert response["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
        parameters = operation.get("parameters", [])
        assert all({"name", "in", "schema"} <= set(p) for p in parameters), name
        declared = {p["name"] for p in parameters if p["in"] == "path"}
        assert declared == set(TEMPLATE_PARAM.findall(path)), f"{name}: path parameters {declared}"
        assert all(p["required"] for p in parameters if p["in"] == "path"), name
        if "requestBody" in operation:
            assert operation["requestBody"]["content"], name


def test_every_operation_but_the_open_ones_needs_the_bearer_token(document: dict[str, Any]) -> None:
    bearer = document["components"]["securitySchemes"]["bearer"]
    assert (bearer["type"], bearer["scheme"], bearer["bearerFormat"]) == ("http", "bearer", "JWT")
    assert "-auth" in document["info"]["description"]
    seen_open = set()
    for method, path, operation in operations(document):
        if (method, path) in OPEN:
            seen_open.add((method, path))
            assert operation["security"] == [], f"{method.upper()} {path} must not need a token"
        else:
            assert operation["security"] == [{"bearer": []}], f"{method.upper()} {path} must declare the token"
            assert "401" in operation["responses"], f"{method.upper()} {path} must list the 401"
    assert seen_open == OPEN


def test_the_handler_serves_a_fresh_document_as_json(document: dict[str, Any]) -> None:
    response = asyncio.run(get_openapi(SimpleNamespace()))  # type: ignore[arg-type]
    assert response.status == 200 and response.content_type.startswith("application/json")
    assert orjson.loads(response.body) == document
    again = openapi_document()
    assert again == document and again is not document


def test_a_faulted_journal_entry_is_what_the_document_describes(document: dict[str, Any]) -> None:
    """The journal entry of an answer written with a fault names it in ``response.fault``."""
    schema = document["components"]["schemas"]["JournalEntry"]
    wire = render_response(Response(status=200, body=b"ok"), "response").proxy
    request = read_request(b"GET http://h.test/ HTTP/1.1\r\nHost: h.test\r\n\r\n", Arrival())
    for fault in (Fault(FaultKind.CONNECTION_RESET), Fault(FaultKind.DRIBBLE, chunks=3, duration_ms=10)):
        view = entry_view(record_entry("e1", request, replace(wire, fault=fault), "simulate", 1.0, 1.0))
        Draft202012Validator(schema).validate(orjson.loads(orjson.dumps(view)))
        described = schema["properties"]["response"]["properties"]["fault"]
        Draft202012Validator(described).validate(view["response"]["fault"])
        assert set(view["response"]["fault"]) <= set(described["properties"])
