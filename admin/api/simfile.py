"""Uploaded simulation document (any schema version) -> v5 document, as Hoverfly does it.

Parse, check the envelope, validate against the schema of the declared version, then upgrade
v1-v4 to the v5 shape. Pure functions over plain dicts; the only I/O is reading the schema files
under ``admin/api/schemas`` once, on first use (when ``jsonschema`` is imported too). Every rejection is a
``BadRequest`` with Hoverfly's text (and, for a body that is not a JSON object, the spec dialect's
account of where and why: admin/api/jsonbody.py).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, cast

import orjson

from simproxy.admin.api.jsonbody import INVALID_JSON, decode, wrong_shape
from simproxy.admin.errors import BadRequest, PayloadTooLarge

JSONDict = dict[str, Any]

_PRODUCT: Final = "simproxy"

# The request fields that hold one list of matchers each, in v5 output order.
_MATCHER_FIELDS: Final = ("path", "method", "destination", "scheme", "body")

# v2-v4 field-matcher object keys -> v5 matcher names. Hoverfly always emits them in this order,
# whatever order the keys had in the uploaded object.
_LEGACY_MATCHERS: Final = (
    ("exactMatch", "exact"),
    ("globMatch", "glob"),
    ("jsonMatch", "json"),
    ("jsonPathMatch", "jsonpath"),
    ("regexMatch", "regex"),
    ("xmlMatch", "xml"),
    ("xpathMatch", "xpath"),
)


# ---------------------------------------------------------------------------------------------
# Public API


def parse_simulation(
    raw: bytes, max_pairs: int | None = None, *, product: str = _PRODUCT, extensions: bool = True
) -> JSONDict:
    """Bytes of a PUT/POST body -> ``{"data": <v5 data>, "meta": <meta as given>}``.

    ``max_pairs``: a document with more pairs is refused (413) before anything else is done with it.
    ``product``: the name an unsupported version's error asks to update (``-compat``).
    ``extensions``: simproxy's own members (``EXTENSIONS``) are accepted; without them (``-compat
    hoverfly``) a document using one is refused as Hoverfly's schema would refuse an unknown member.
    """
    doc = _load_object(raw)
    if max_pairs is not None:
        _check_size(doc, max_pairs)
    version = _schema_version(doc)
    _schema_name(version, product)
    details = validate(doc, version, extensions=extensions)
    if details:
        raise BadRequest(f"Invalid {version} simulation: [{'; '.join(details)}]")
    return upgrade_to_v5(doc)


OPENAPI_TYPES: Final = ("yaml", "openapi", "swagger")
"""A Content-Type naming one of these (``application/yaml``, ``application/vnd.oai.openapi+json``)
declares an OpenAPI document; a JSON upload is one when its top level has ``openapi``/``swagger``."""


def is_openapi_upload(raw: bytes, content_type: str = "") -> bool:
    """Whether an upload is an OpenAPI / Swagger document rather than a simulation.

    Cheap for a simulation: a JSON body is parsed for the question only when one of the two
    member names appears near its start.
    """
    lowered = content_type.lower()
    if any(word in lowered for word in OPENAPI_TYPES):
        return True
    head = raw[:4096]
    if b'"openapi"' not in head and b'"swagger"' not in head:
        return False
    from simproxy.engine.openapi.document import declared_version

    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:  # the standard library reads integers beyond 64 bits, which orjson refuses
            doc = json.loads(raw)
        except ValueError:
            return False  # not JSON: parse_simulation says why
    return declared_version(doc) is not None


def openapi_simulation(raw: bytes, read: Callable[[str], bytes] | None = None, *, validate: bool = True) -> JSONDict:
    """An OpenAPI / Swagger document (YAML or JSON) -> its v5 simulation document.

    ``read`` gives the bytes of a file a ``$ref`` names, relative to the document's folder;
    ``validate``: requests that break the document are answered 422 (engine/openapi/validate.py).
    Anything wrong with the document is a 400 saying where (engine/openapi/document.py).
    """
    from simproxy.engine.openapi.convert import to_simulation
    from simproxy.engine.openapi.document import OpenAPIError, load_document

    try:
        return to_simulation(load_document(raw, read), validate=validate)
    except OpenAPIError as exc:
        raise BadRequest(f"Invalid OpenAPI document: {exc}") from exc


def parse_upload(
    raw: bytes,
    max_pairs: int | None = None,
    *,
    product: str = _PRODUCT,
    extensions: bool = True,
    content_type: str = "",
    read: Callable[[str], bytes] | None = None,
    validate: bool = True,
) -> JSONDict:
    """``parse_simulation``, or an OpenAPI document converted first (never under ``-compat hoverfly``,
    whose ``extensions`` are off: Hoverfly refuses such a body as a simulation)."""
    if extensions and is_openapi_upload(raw, content_type):
        raw = orjson.dumps(openapi_simulation(raw, read, validate=validate))
    return parse_simulation(raw, max_pairs, product=product, extensions=extensions)


def upgrade_to_v5(doc: JSONDict) -> JSONDict:
    """An already-validated document of any supported version -> a v5 document.

    ``meta`` is returned as given (its ``schemaVersion`` still names the uploaded version).
    ``data`` always has ``pairs`` and ``globalActions.delays``/``delaysLogNormal`` lists.
    The input is never mutated; the output may share nested values with it.
    """
    version = _schema_version(doc)
    upgrade = _UPGRADES[_schema_name(version)]
    data = doc.get("data") or {}
    return {"data": upgrade(data), "meta": doc["meta"]}


def schema_document() -> bytes:
    """The v5 JSON Schema, byte for byte as served by ``GET /api/v2/simulation/schema``."""
    return _schema_bytes("v5")


def validate(doc: JSONDict, schema_version: str, *, extensions: bool = True) -> list[str]:
    """Check ``doc`` against the schema for ``schema_version``.

    Returns gojsonschema-style details, ``Error for <field>: <description>``, ordered by field
    (document order of array indexes) and then by schema order; ``[]`` when the document is valid.
    Raises ``BadRequest`` for an unsupported version. Without ``extensions``, simproxy's own
    members are unknown members of the objects that hold them.
    """
    name = _schema_name(schema_version)
    found = [
        (tuple(error.absolute_path), description)
        for error in _validator(name, extensions).iter_errors(doc)
        for description in _describe(error)
    ]
    if not extensions and name == "v5":
        found += _extensions_used(doc)
    found.sort(key=lambda item: item[0])  # stable: schema order within a field
    details = [f"Error for <{_field(path)}>: {description}" for path, description in found]
    # One jsonschema error per missing property still describes all of them: keep each once.
    return list(dict.fromkeys(details))


# ---------------------------------------------------------------------------------------------
# Envelope and version dispatch


def _check_size(doc: JSONDict, max_pairs: int) -> None:
    data = doc.get("data")
    pairs = data.get("pairs") if isinstance(data, dict) else None
    if isinstance(pairs, list) and len(pairs) > max_pairs:
        raise PayloadTooLarge(f"The simulation holds {len(pairs)} pairs, more than -max-pairs {max_pairs}")


def _load_object(raw: bytes) -> JSONDict:
    doc = decode(raw, INVALID_JSON)
    if not isinstance(doc, dict):
        raise wrong_shape(INVALID_JSON, "a simulation must be a JSON object", doc)
    return doc


def _schema_version(doc: JSONDict) -> str:
    # Hoverfly panics (500) when meta is not an object or schemaVersion not a string; we answer
    # with the same 400 as for a missing one.
    meta = doc.get("meta")
    if not isinstance(meta, dict):
        raise BadRequest('Invalid JSON, missing "meta" object')
    version = meta.get("schemaVersion")
    if not isinstance(version, str):
        raise BadRequest('Invalid JSON, missing "meta.schemaVersion" string')
    return version


def _schema_name(version: str, product: str = _PRODUCT) -> str:
    """The schema file (and upgrade) for a declared version."""
    # Any string starting with "v5" counts as v5 ("v5.9", "v5x"): Hoverfly never checks the minor.
    if version.startswith("v5"):
        return "v5"
    # v3 files are read exactly as v4 files.
    if version in ("v3", "v4"):
        return "v4"
    if version in ("v1", "v2"):
        return version
    raise BadRequest(
        f"Invalid simulation: schema version {version} is not supported by this version of "
        f"{product}, you may need to update {product}"
    )


# ---------------------------------------------------------------------------------------------
# Schemas and gojsonschema-style error details


@functools.cache
def _schema_bytes(name: str) -> bytes:
    return (Path(__file__).with_name("schemas") / f"{name}.json").read_bytes()


EXTENSIONS: Final = ("data.pairs[].response.fault", "data.pairs[].response.trailers", "data.globalActions.faults")
"""simproxy's own members of the v5 format (fault injection), which Hoverfly's schema does not know."""


@functools.cache
def _validator(name: str, extensions: bool = True) -> Any:
    from jsonschema.validators import validator_for

    schema = orjson.loads(_schema_bytes(name))
    if name == "v5" and not extensions:  # Hoverfly's v5 schema: simproxy's own members unknown
        del schema["$defs"]["response"]["properties"]["fault"]
        del schema["$defs"]["response"]["properties"]["trailers"]
        del schema["properties"]["data"]["properties"]["globalActions"]["properties"]["faults"]
    return validator_for(schema)(schema)


def _extensions_used(doc: JSONDict) -> list[tuple[tuple[str | int, ...], str]]:
    """Where ``doc`` uses one of ``EXTENSIONS``, as Hoverfly's schema reports an unknown member."""
    data = doc.get("data")
    if not isinstance(data, dict):
        return []
    found: list[tuple[tuple[str | int, ...], str]] = []
    pairs = data.get("pairs")
    for index, pair in enumerate(pairs if isinstance(pairs, list) else ()):
        response = pair.get("response") if isinstance(pair, dict) else None
        for member in ("fault", "trailers"):
            if isinstance(response, dict) and member in response:
                found.append((("data", "pairs", index, "response"), f"Additional property {member} is not allowed"))
    actions = data.get("globalActions")
    if isinstance(actions, dict) and "faults" in actions:
        found.append((("data", "globalActions"), "Additional property faults is not allowed"))
    return found


def _field(path: Any) -> str:
    """gojsonschema's field notation: ``(root)`` or dotted keys and indexes (``data.pairs.0``)."""
    return ".".join(str(part) for part in path) or "(root)"


def _describe(error: Any) -> list[str]:
    """gojsonschema's English description(s) for one jsonschema ``ValidationError``."""
    keyword = cast(str, error.validator)
    if keyword == "required":
        # gojsonschema reports the missing property on the object that lacks it.
        return [f"{name} is required" for name in error.validator_value if name not in error.instance]
    if keyword == "additionalProperties":
        # jsonschema reports all extra properties at once; gojsonschema gives one line per property.
        return [f"Additional property {name} is not allowed" for name in _extra_properties(error)]
    if keyword == "type":
        return [f"Invalid type. Expected: {_expected(error.validator_value)}, given: {_json_type(error.instance)}"]
    if keyword == "minimum":
        return [f"Must be greater than or equal to {error.validator_value}"]
    if keyword == "maximum":
        return [f"Must be less than or equal to {error.validator_value}"]
    if keyword == "enum":
        allowed = ", ".join(orjson.dumps(value).decode() for value in error.validator_value)
        return [f"{_field(error.absolute_path)} must be one of the following: {allowed}"]
    return [cast(str, error.message)]


def _extra_properties(error: Any) -> list[str]:
    declared = error.schema.get("properties", {})
    patterns = error.schema.get("patternProperties", {})
    return [
        name
        for name in error.instance
        if name not in declared and not any(re.search(pattern, name) for pattern in patterns)
    ]


def _expected(types: str | list[str]) -> str:
    return types if isinstance(types, str) else ", ".join(types)


def _json_type(value: object) -> str:
    """The JSON type name gojsonschema reports for a value ("integer" for whole numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


# ---------------------------------------------------------------------------------------------
# Upgrades. Each takes the validated ``data`` object and returns v5 ``data``.


def _from_v5(data: JSONDict) -> JSONDict:
    # v5 passes through untouched, apart from filling in the lists callers rely on.
    actions = data.get("globalActions") or {}
    return {
        **data,
        "pairs": data.get("pairs") or [],
        "globalActions": {**actions, **_delays(actions)},
    }


def _from_v4(data: JSONDict) -> JSONDict:
    return _upgrade_pairs(data, _request_v4, stateful=True, keep_delays=True)


def _from_v2(data: JSONDict) -> JSONDict:
    return _upgrade_pairs(data, _request_v2, stateful=False, keep_delays=True)


def _from_v1(data: JSONDict) -> JSONDict:
    # Hoverfly drops a v1 file's globalActions entirely, so importing one clears global delays.
    return _upgrade_pairs(data, _request_v1, stateful=False, keep_delays=False)


def _upgrade_pairs(
    data: JSONDict, request: Callable[[JSONDict], JSONDict], *, stateful: bool, keep_delays: bool
) -> JSONDict:
    pairs = [
        {
            "request": request(pair.get("request") or {}),
            "response": _response(pair.get("response") or {}, stateful=stateful),
        }
        for pair in data.get("pairs") or []
    ]
    actions = (data.get("globalActions") or {}) if keep_delays else {}
    return {"pairs": pairs, "globalActions": _delays(actions)}


def _delays(actions: JSONDict) -> JSONDict:
    # The v2-v4 globalActions share Hoverfly's v5 type, so delaysLogNormal survives the upgrade.
    return {
        "delays": actions.get("delays") or [],
        "delaysLogNormal": actions.get("delaysLogNormal") or [],
    }


def _request_v1(request: JSONDict) -> JSONDict:
    # requestType "recording" or absent means exact values; anything else made them globs.
    request_type = request.get("requestType")
    kind = "exact" if request_type is None or request_type == "recording" else "glob"
    # Missing fields become [] (not absent), as in Hoverfly: that difference shows in duplicate
    # detection. The whole-query string is dropped, so the pair matches any query.
    upgraded: JSONDict = {
        field: [] if request.get(field) is None else [{"matcher": kind, "value": request[field]}]
        for field in _MATCHER_FIELDS
    }
    if request.get("headers") is not None:
        upgraded["headers"] = _glob_headers(request["headers"])
    return upgraded


def _request_v2(request: JSONDict) -> JSONDict:
    # The whole-query field-matcher is dropped as in v1.
    upgraded: JSONDict = {field: _matchers(request.get(field)) for field in _MATCHER_FIELDS}
    if request.get("headers") is not None:
        upgraded["headers"] = _glob_headers(request["headers"])
    return upgraded


def _request_v4(request: JSONDict) -> JSONDict:
    upgraded = _request_v2(request)
    with_matchers = request.get("headersWithMatchers")
    if with_matchers is not None:
        headers = {name: list(matchers) for name, matchers in upgraded.get("headers", {}).items()}
        for name, field_matchers in with_matchers.items():
            # Appended after the glob matcher built from the plain header of the same name.
            headers.setdefault(name, []).extend(_matchers(field_matchers))
        upgraded["headers"] = headers
    queries = request.get("queriesWithMatchers")
    if queries is not None:
        upgraded["query"] = {name: _matchers(field_matchers) for name, field_matchers in queries.items()}
    if request.get("requiresState") is not None:
        upgraded["requiresState"] = request["requiresState"]
    return upgraded


def _matchers(field_matchers: JSONDict | None) -> list[JSONDict]:
    """A v2-v4 field-matcher object -> v5 matcher list ([] when absent)."""
    if not field_matchers:
        return []
    return [
        {"matcher": name, "value": field_matchers[key]}
        for key, name in _LEGACY_MATCHERS
        if field_matchers.get(key) is not None
    ]


def _glob_headers(headers: dict[str, list[str]]) -> dict[str, list[JSONDict]]:
    # Legacy plain headers become one glob per header over the values joined with ";".
    return {name: [{"matcher": "glob", "value": ";".join(values)}] for name, values in headers.items()}


def _response(response: JSONDict, *, stateful: bool) -> JSONDict:
    """v1-v4 response -> v5 response; v1/v2 have no templating or state (``templated`` is false)."""
    upgraded = {
        key: response[key] for key in ("status", "body", "encodedBody", "headers") if response.get(key) is not None
    }
    upgraded["templated"] = bool(response.get("templated")) if stateful else False
    if stateful:
        for key in ("transitionsState", "removesState"):
            if response.get(key) is not None:
                upgraded[key] = response[key]
    return upgraded


_UPGRADES: Final = MappingProxyType({"v5": _from_v5, "v4": _from_v4, "v2": _from_v2, "v1": _from_v1})
