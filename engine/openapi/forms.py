"""Form bodies and parameter text read as the values their schemas describe, for validation.

A query, path or header parameter, and each field of an ``application/x-www-form-urlencoded`` or
``multipart/form-data`` body, arrive as text; ``typed_value`` reads them as the type the schema
declares (an integer, a number, a boolean, an array of such, split at commas or repeated), so
that JSON Schema can check them. A text that is not of its type is left as text, and the check
then says so (``'many' is not of type 'integer'``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import parse_qs

from simproxy.engine.openapi.generate import schema_type

URLENCODED: Final = "application/x-www-form-urlencoded"
MULTIPART: Final = "multipart/form-data"

Field = tuple[str, str | None, str | None]
"""A form field as validation reads it: its name, its schema's type, its items' type (arrays)."""


def form_fields(schema: Any) -> tuple[Field, ...]:
    """Each property of an object schema with the types its text is read as ((), not an object)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return ()
    return tuple(
        (str(name), schema_type(prop), _item_type(prop)) for name, prop in properties.items() if isinstance(prop, dict)
    )


def parameter_types(schema: Any) -> tuple[str | None, str | None]:
    """A parameter's type and, for an array, its items' type."""
    return (schema_type(schema), _item_type(schema)) if isinstance(schema, dict) else (None, None)


def _item_type(schema: dict[str, Any]) -> str | None:
    items = schema.get("items")
    return schema_type(items) if isinstance(items, dict) else None


def typed_value(values: list[str], kind: str | None, item_kind: str | None = None) -> Any:
    """Text as the type its schema declares (left as text when it is not one); an array's items
    are the values given (repeated fields), each split at commas."""
    if kind == "array":
        return [_typed_one(item, item_kind) for value in values for item in value.split(",")]
    return _typed_one(values[0], kind)


def _typed_one(text: str, kind: str | None) -> Any:
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        return text
    if kind == "boolean" and text in ("true", "false"):
        return text == "true"
    return text


def form_object(values: dict[str, list[str]], fields: Iterable[Field]) -> dict[str, Any]:
    """A form's fields as the object its schema describes: each declared field as its type, any
    other as text (a repeated one as its first value)."""
    kinds = {name: (kind, item_kind) for name, kind, item_kind in fields}
    return {name: typed_value(given, *kinds.get(name, (None, None))) for name, given in values.items()}


def urlencoded_values(body: str) -> dict[str, list[str]]:
    """An urlencoded body's fields, each with its values in order (empty values kept)."""
    return parse_qs(body, keep_blank_values=True, errors="surrogateescape")


def multipart_values(content_type: str, body: str) -> dict[str, list[str]]:
    """A ``multipart/form-data`` body's fields (a file's content as text); ``ValueError`` when it
    is not one (no boundary, no part, a part without a name)."""
    from email.parser import BytesParser  # the email package costs start-up 10 ms: loaded by the first form
    from email.policy import HTTP

    raw = body.encode("utf-8", "surrogateescape")
    message = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + raw
    )
    if not message.is_multipart() or message.defects:
        raise ValueError("not multipart/form-data with the boundary its Content-Type names")
    values: dict[str, list[str]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            raise ValueError("a part without a Content-Disposition name")
        payload = part.get_payload(decode=True)
        text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(payload or "")
        values.setdefault(name, []).append(text)
    return values
