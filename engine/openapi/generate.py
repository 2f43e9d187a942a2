"""A value from a JSON Schema (references already inlined): the answer when no example is given.

``example_value`` is deterministic: the schema's own ``example``, ``default``, ``const`` or first
``enum`` value when it has one, else a fixed value of the right type and format (a date-time, a
uuid, an email address, a URI...), so a test asserting on a generated answer stays stable.
``template_value`` builds the same shape with Hoverfly template helpers in place of the leaves
(``{{ randomUuid }}``...), for ``Prefer: dynamic=true``: the existing templating renders it anew
for every request.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any, Final

_MAX_DEPTH: Final = 12

_FORMATS: Final = MappingProxyType(
    {
        "date-time": "2024-01-02T03:04:05Z",
        "date": "2024-01-02",
        "time": "03:04:05Z",
        "uuid": "7d3b2c1a-5e4f-4a6b-9c8d-0e1f2a3b4c5d",
        "email": "someone@example.com",
        "idn-email": "someone@example.com",
        "uri": "https://example.com/resource",
        "url": "https://example.com/resource",
        "uri-reference": "/resource",
        "iri": "https://example.com/resource",
        "hostname": "example.com",
        "ipv4": "192.0.2.10",
        "ipv6": "2001:db8::10",
        "byte": "c2ltcHJveHk=",
        "password": "********",
        "duration": "PT1H",
    }
)

# template helpers per string format for dynamic answers; other strings get randomString
_DYNAMIC_FORMATS: Final = MappingProxyType(
    {
        "date-time": "{{ now '' '' }}",
        "date": "{{ now '' '2006-01-02' }}",
        "uuid": "{{ randomUuid }}",
        "email": "{{ randomEmail }}",
        "ipv4": "{{ randomIPv4 }}",
        "ipv6": "{{ randomIPv6 }}",
    }
)


def schema_type(schema: dict[str, Any]) -> str | None:
    """The schema's one type (3.1 lists drop ``null``); guessed from its keywords when absent."""
    declared = schema.get("type")
    if isinstance(declared, list):
        declared = next((t for t in declared if t != "null"), declared[0] if declared else None)
    if isinstance(declared, str):
        return declared
    if "properties" in schema or "additionalProperties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return None


def example_value(schema: Any, depth: int = 0) -> Any:
    """A deterministic value that satisfies ``schema`` in the common cases."""
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    for key in ("example", "default", "const"):
        if key in schema:
            return schema[key]
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    if isinstance(schema.get("allOf"), list):
        return _all_of(schema, depth, example_value)
    for key in ("oneOf", "anyOf"):
        choices = schema.get(key)
        if isinstance(choices, list) and choices:
            return example_value(choices[0], depth + 1)
    kind = schema_type(schema)
    if kind == "object":
        return _object(schema, depth, example_value)
    if kind == "array":
        if not schema.get("items") and not schema.get("minItems"):
            return []  # items of any kind, or a recursive schema cut short: a tree's leaf
        count = max(1, int(schema.get("minItems", 1)))
        item = example_value(schema.get("items", {}), depth + 1)
        return [item] * count
    if kind == "string":
        return _string(schema)
    if kind == "integer":
        return int(_number(schema))
    if kind == "number":
        return _number(schema)
    if kind == "boolean":
        return True
    return None


def template_value(schema: Any, depth: int = 0) -> Any:
    """``example_value``'s shape with template expressions as the leaves (strings to render)."""
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    if "enum" in schema or "const" in schema:
        return example_value(schema, depth)
    if isinstance(schema.get("allOf"), list):
        return _all_of(schema, depth, template_value)
    for key in ("oneOf", "anyOf"):
        choices = schema.get(key)
        if isinstance(choices, list) and choices:
            return template_value(choices[0], depth + 1)
    kind = schema_type(schema)
    if kind == "object":
        return _object(schema, depth, template_value)
    if kind == "array":
        return [template_value(schema["items"], depth + 1)] if schema.get("items") else []
    if kind == "string":
        return _DYNAMIC_FORMATS.get(str(schema.get("format", "")), "{{ randomString }}")
    if kind == "integer":
        return Raw("{{ randomIntegerRange 1 1000 }}")
    if kind == "number":
        return Raw("{{ randomFloatRange 1.0 1000.0 }}")
    if kind == "boolean":
        return Raw("{{ randomBoolean }}")
    return None


class Raw(str):
    """A template expression written into the JSON body without quotes (a number or a boolean)."""

    __slots__ = ()


def _all_of(schema: dict[str, Any], depth: int, make: Callable[[Any, int], Any]) -> Any:
    """The parts' objects merged (later properties win); a part that is not an object stands alone."""
    merged: dict[str, Any] = {}
    other: Any = None
    for part in schema["allOf"]:
        value = make(part, depth + 1)
        if isinstance(value, dict):
            merged.update(value)
        elif other is None:
            other = value
    if isinstance(schema.get("properties"), dict):
        merged.update(_object(schema, depth, make))
    return merged if merged or other is None else other


def _object(schema: dict[str, Any], depth: int, make: Callable[[Any, int], Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {name: make(sub, depth + 1) for name, sub in properties.items()}


def _string(schema: dict[str, Any]) -> str:
    value = _FORMATS.get(str(schema.get("format", "")), "string")
    minimum = int(schema.get("minLength", 0))
    if len(value) < minimum:
        value = value + "x" * (minimum - len(value))
    maximum = schema.get("maxLength")
    if isinstance(maximum, int) and len(value) > maximum:
        value = value[:maximum]
    return value


def _number(schema: dict[str, Any]) -> float:
    low = schema.get("minimum")
    exclusive = schema.get("exclusiveMinimum")
    if isinstance(exclusive, int | float) and not isinstance(exclusive, bool):
        return exclusive + 1  # 3.1: the bound itself
    if isinstance(low, int | float):
        return low + 1 if exclusive is True else low
    high = schema.get("maximum")
    if isinstance(high, int | float) and high < 0:
        return high
    return 0
