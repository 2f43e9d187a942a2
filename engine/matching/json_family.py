"""The JSON family: json, jsonpartial, jsonpath, jwt and jwtjsonpath (spec §2.2.4-2.2.6, §2.2.10-11).

Values are parsed and JSONPaths compiled at import; a request body is parsed once per matcher call,
as Go parses it (``engine.gocompat.gojson``): literal numbers for json/jsonpartial, float64 for jsonpath.
``engine.gocompat.jsonpath_k8s`` (and jsonpath-ng) is loaded by the first JSONPath compiled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from simproxy.engine.errors import InvalidValue, SimulationError
from simproxy.engine.gocompat.gojson import (
    InvalidJSON,
    Number,
    decode_float,
    decode_literal,
    format_json_float,
    marshal,
)
from simproxy.engine.gocompat.jwt import token_parts
from simproxy.engine.matching.base import Built, guarded, require_str
from simproxy.engine.simulation.model import JSON

if TYPE_CHECKING:
    from simproxy.engine.gocompat.jsonpath_k8s import JsonPath

# Go's unicode.IsSpace, which strings.TrimSpace uses
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"


def _expected(value: JSON, path: str, kind: str) -> Any:
    text = require_str(value, path, kind)
    try:
        return decode_literal(text)
    except InvalidJSON as exc:
        message = f"the {kind} value is not JSON: {exc}"
        if kind == "json":  # Hoverfly's json matcher compares the texts before it parses anything
            raise InvalidValue(f"{path}.value", message, text.__eq__, "matches only this same text") from exc
        raise InvalidValue(f"{path}.value", message) from exc


def json_equal(value: JSON, path: str) -> Built:
    """``json``: identical text, or both sides' first JSON values deeply equal (numbers by literal text)."""
    text = require_str(value, path, "json")
    if not text:
        # Hoverfly's capture writes {"matcher": "json", "value": ""} for an empty JSON request body,
        # which matches only an empty body (identical strings); "" itself is not JSON.
        return Built(text.__eq__)
    expected = _expected(text, path, "json")

    def predicate(actual: str) -> bool:
        if actual == text:
            return True
        try:
            return bool(decode_literal(actual) == expected)
        except InvalidJSON:
            return False

    return Built(guarded(predicate, False, "json"))


def json_partial(value: JSON, path: str) -> Built:
    """``jsonpartial``: some object or array anywhere in the body contains the expected value."""
    expected = _expected(value, path, "jsonpartial")

    def predicate(actual: str) -> bool:
        try:
            return contains_somewhere(expected, decode_literal(actual))
        except InvalidJSON:
            return False

    return Built(guarded(predicate, False, "jsonpartial"))


def contains_somewhere(expected: Any, document: Any) -> bool:
    if not isinstance(document, dict | list):
        return False  # Hoverfly crashes on a scalar body
    test: Callable[[Any, Any], bool]
    if isinstance(expected, dict):
        test = _object_contains
    elif isinstance(expected, list):
        test = _array_contains
    else:
        return False  # a scalar is never contained
    return any(test(expected, node) for node in _nodes(document))


def _nodes(document: Any) -> Iterator[Any]:
    """The document and every object and array inside it."""
    stack = [document]
    while stack:
        node = stack.pop()
        yield node
        children = node.values() if isinstance(node, dict) else node
        stack.extend(child for child in children if isinstance(child, dict | list))


def _object_contains(expected: dict[str, Any], actual: Any) -> bool:
    if not isinstance(actual, dict):
        return False
    for key, want in expected.items():
        if isinstance(want, dict):
            if not _object_contains(want, actual.get(key)):
                return False
        elif isinstance(want, list):
            if not _array_contains(want, actual.get(key)):
                return False
        elif key not in actual or actual[key] != want:
            return False
    return True


def _array_contains(expected: list[Any], actual: Any) -> bool:
    if not isinstance(actual, list):
        return False
    for want in expected:
        if isinstance(want, dict):
            if not _array_holds_object(actual, want):
                return False
        elif isinstance(want, list):
            if not _array_contains(want, actual):  # Hoverfly compares the inner array with the same actual
                return False
        elif want not in actual:
            return False
    return True


def _array_holds_object(actual: list[Any], want: dict[str, Any]) -> bool:
    for item in actual:
        if isinstance(item, dict) and _object_contains(want, item):
            return True
        if isinstance(item, list) and _array_holds_object(item, want):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# jsonpath


def _compile_path(query: str, path: str) -> JsonPath:
    from simproxy.engine.gocompat.jsonpath_k8s import compile_jsonpath, prepare

    try:
        return compile_jsonpath(prepare(query))
    except ValueError as exc:
        raise InvalidValue(f"{path}.value", f"invalid JSONPath {query!r}: {exc}") from exc


def _on_json(compiled: JsonPath, kind: str) -> Built:
    def predicate(actual: str) -> bool:
        try:
            return compiled.matches(decode_float(actual))
        except InvalidJSON:
            return False

    def extract(actual: str) -> str | None:
        try:
            return compiled.extract(decode_float(actual))
        except InvalidJSON:
            return None

    return Built(guarded(predicate, False, kind), guarded(extract, None, kind))


def json_path(value: JSON, path: str) -> Built:
    """``jsonpath``: the Kubernetes JSONPath template runs on the body without an error."""
    query = require_str(value, path, "jsonpath")
    if not query:
        raise SimulationError(f"{path}.value", "an empty JSONPath (Hoverfly crashes on it)")
    return _on_json(_compile_path(query, path), "jsonpath")


# ---------------------------------------------------------------------------------------------
# JWT


def _literal_numbers(value: Any) -> Any:
    """A decoded value as Hoverfly re-reads its own marshalled JSON: numbers in Go's written form."""
    if isinstance(value, float):
        return Number(format_json_float(value))
    if isinstance(value, dict):
        return {key: _literal_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_literal_numbers(item) for item in value]
    return value


def jwt(value: JSON, path: str) -> Built:
    """``jwt``: jsonpartial of the value against the token's decoded header and payload (no ``Bearer``)."""
    expected = _expected(value, path, "jwt")

    def predicate(actual: str) -> bool:
        composite = token_parts(actual)
        return composite is not None and contains_somewhere(expected, _literal_numbers(composite))

    def extract(actual: str) -> str | None:
        composite = token_parts(actual)
        if composite is None or not contains_somewhere(expected, _literal_numbers(composite)):
            return None
        return marshal(composite)

    return Built(guarded(predicate, False, "jwt"), guarded(extract, None, "jwt"))


def _bearer_composite(actual: str) -> dict[str, Any] | None:
    token = actual.strip(_GO_SPACE)
    if token[:7].lower() == "bearer ":
        token = token[7:].strip(_GO_SPACE)
    return token_parts(token) if token else None


def jwt_json_path(value: JSON, path: str) -> Built:
    """``jwtjsonpath``: a JSONPath over the token's header and payload; ``$.x`` means ``$.payload.x``."""
    query = require_str(value, path, "jwtjsonpath").strip(_GO_SPACE)
    if not query:
        raise InvalidValue(f"{path}.value", "an empty JSONPath never matches")
    lower = query.lower()
    if not lower.startswith(("$.payload.", "$.header.")):
        if query.startswith("$."):
            query = "$.payload" + query[1:]
        elif query.startswith("."):
            query = "$.payload" + query
    compiled = _compile_path(query, path)

    def predicate(actual: str) -> bool:
        composite = _bearer_composite(actual)
        return composite is not None and compiled.matches(composite)

    def extract(actual: str) -> str | None:
        composite = _bearer_composite(actual)
        return None if composite is None else compiled.extract(composite)

    return Built(guarded(predicate, False, "jwtjsonpath"), guarded(extract, None, "jwtjsonpath"))
