"""Builders of OpenAPI 3.1 fragments, shared by admin/api/openapi.py and admin/api/openapi_fleet.py."""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

JSON = "application/json"


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def typed(kind: str, description: str = "", **extra: Any) -> Schema:
    out: Schema = {"type": kind, **extra}
    if description:
        out["description"] = description
    return out


def string(description: str = "", **extra: Any) -> Schema:
    return typed("string", description, **extra)


def integer(description: str = "") -> Schema:
    return typed("integer", description)


def boolean(description: str = "") -> Schema:
    return typed("boolean", description)


def array(items: Schema, description: str = "") -> Schema:
    return typed("array", description, items=items)


def strings(names: str) -> Schema:
    """String properties, one per space-separated name."""
    return {name: string() for name in names.split()}


def object_(properties: Schema, required: str = "", description: str = "") -> Schema:
    """An object with these properties (others allowed); ``required``: names, space-separated, or ``*`` for all."""
    out = typed("object", description, properties=properties, additionalProperties=True)
    names = list(properties) if required == "*" else required.split()
    if names:
        out["required"] = names
    return out


def nullable(schema: Schema, description: str) -> Schema:
    return {"anyOf": [{"type": "null"}, schema], "description": description}


def map_of(values: Schema, description: str = "") -> Schema:
    return typed("object", description, additionalProperties=values)


def list_map() -> Schema:
    """A Go ``map[string][]string`` (headers, form fields)."""
    return map_of(array(string()))


# -- operation helpers ------------------------------------------------------------------------------


def ok(description: str, schema: Schema | None = None, media: str = JSON) -> Schema:
    """A 200: ``schema`` under ``media``, or (no schema) an empty ``text/plain`` body."""
    if schema is None:
        return {"description": description, "content": {"text/plain": {"schema": string("Empty.", maxLength=0)}}}
    return {"description": description, "content": {media: {"schema": schema}}}


def text(description: str, media: str) -> Schema:
    return ok(description, string(), media)


def error(description: str) -> Schema:
    return {"description": description, "content": {JSON: {"schema": ref("Error")}}}


def body(schema: Schema, description: str, *, required: bool = True, media: tuple[str, ...] = (JSON,)) -> Schema:
    return {"description": description, "required": required, "content": {m: {"schema": schema} for m in media}}


def path_param(name: str, description: str, schema: Schema | None = None) -> Schema:
    return {"name": name, "in": "path", "required": True, "description": description, "schema": schema or string()}


def query(name: str, description: str, schema: Schema | None = None) -> Schema:
    return {"name": name, "in": "query", "required": False, "description": description, "schema": schema or string()}


def op(
    summary: str,
    ok: Schema,
    errors: dict[int, str] | None = None,
    *,
    body: Schema | None = None,
    params: tuple[Schema, ...] = (),
    description: str = "",
) -> Schema:
    """One operation; tags, the operationId, security and the common error answers are added later."""
    out: Schema = {"summary": summary}
    if description:
        out["description"] = description
    if params:
        out["parameters"] = list(params)
    if body is not None:
        out["requestBody"] = body
    out["responses"] = {"200": ok} | {str(status): error(text) for status, text in sorted((errors or {}).items())}
    return out
