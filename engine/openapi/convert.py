"""An inlined OpenAPI / Swagger document -> a v5 simulation document (plain dicts).

Each operation gives:

- a default pair: its path (the first server's or ``basePath``'s prefix, then the template) as an
  exact matcher, or as a regex with each parameter by its schema (digits for an integer, the
  values of an enum...), the method,
  a presence matcher for every required query and header parameter, and the request body's media
  types as a ``Content-Type`` matcher when the body is required (with a ``form`` matcher of its
  required fields when it can only be urlencoded). It answers the lowest 2xx status
  with its first example, or a body generated from the response schema (generate.py);
- pairs that also match a ``Prefer`` header, as Prism reads it: ``code=404`` for every other
  declared status, ``example=name`` for every named example (with ``code=`` too when another
  status has an example of that name), and ``dynamic=true`` for a templated answer to the default
  status made anew on each request. One more matcher met scores
  higher, so the existing matcher engine picks them over the default pair.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote, urlparse

from simproxy.engine.openapi.document import Document, OpenAPIError, Reader, dumps
from simproxy.engine.openapi.forms import MULTIPART, URLENCODED
from simproxy.engine.openapi.generate import Raw, example_value, schema_type, template_value
from simproxy.engine.openapi.validate import contract_label

_METHODS: Final = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# header parameters OpenAPI says to ignore: they are described by other means
_IGNORED_HEADERS: Final = frozenset({"accept", "content-type", "authorization"})
_NO_BODY: Final = frozenset({204, 205, 304})
_JSON_TYPE: Final = re.compile(r"^application/(?:[\w.+-]*\+)?json\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Answer:
    """One declared answer: the status, the example's name ('' for the only or the generated one)."""

    status: int
    name: str
    media_type: str
    body: str
    templated: bool = False
    encoded: bool = False
    """``body`` is base64 (an ``externalValue`` file that is not UTF-8 text)."""


def to_simulation(document: Document, *, validate: bool = True) -> dict[str, Any]:
    """The v5 simulation document (``{"data": ..., "meta": ...}``) serving ``document``.

    ``validate``: each operation's default pair carries its request contract in a label
    (validate.py), and a request that breaks it is answered 422 with its violations.
    """
    root = document.root
    prefix = _prefix(root, document.version)
    pairs: list[dict[str, Any]] = []
    for template, item in (root.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        shared = item.get("parameters") or []
        for method in _METHODS:
            operation = item.get(method)
            if isinstance(operation, dict):
                found = _operation_pairs(document, str(template), method, operation, shared, prefix, validate)
                pairs.extend(found)
    data = {"pairs": pairs, "globalActions": {"delays": [], "delaysLogNormal": []}}
    return {"data": data, "meta": {"schemaVersion": "v5.2"}}


def _operation_pairs(
    document: Document,
    template: str,
    method: str,
    operation: dict[str, Any],
    shared: list[Any],
    prefix: str,
    validate: bool,
) -> Iterator[dict[str, Any]]:
    root, version = document.root, document.version
    parameters = _parameters(shared, operation.get("parameters") or [])
    request: dict[str, Any] = {
        "path": [_path_matcher(template, parameters, prefix)],
        "method": [{"matcher": "exact", "value": method.upper()}],
    }
    query = {
        p["name"]: [{"matcher": "regex", "value": ".*"}]
        for p in parameters
        if p.get("in") == "query" and p.get("required")
    }
    if query:
        request["query"] = query
    headers: dict[str, list[dict[str, str]]] = {
        p["name"]: [{"matcher": "regex", "value": ".*"}]
        for p in parameters
        if p.get("in") == "header" and p.get("required") and str(p["name"]).lower() not in _IGNORED_HEADERS
    }
    form = _form_matcher(root, version, operation, parameters)
    if form is not None:
        request["body"] = [form]
    media_types = _request_media_types(root, version, operation, parameters)
    if media_types:
        alternatives = "|".join(re.escape(m) for m in media_types)
        headers["Content-Type"] = [{"matcher": "regex", "value": f"^(?:{alternatives})\\s*(?:;|$)"}]
    answers = _answers(document, operation, f"paths.{template}.{method}")
    if not answers:
        answers = [Answer(200, "", "", "")]
    first = _default(answers)
    default = _pair(request, headers, [], first)
    name = str(operation.get("operationId") or f"{method.upper()} {template}")
    default["labels"] = [f"openapi:{name}"]
    if validate:
        contract = _contract(root, version, template, method, operation, parameters, prefix)
        default["labels"].append(contract)
    yield default
    # as few pairs as say it all: every pair of an operation is scored on each of its requests
    seen_codes: set[int] = {first.status}
    seen_names: set[str] = set()
    for answer in answers:
        code = f"code={answer.status}"
        if answer.templated:
            if answer.status == first.status:
                yield _pair(request, headers, ["dynamic=true"], answer)
        elif answer.status not in seen_codes:
            seen_codes.add(answer.status)
            yield _pair(request, headers, [code], answer)
        if answer.name and answer.name in seen_names:
            yield _pair(request, headers, [code, f"example={answer.name}"], answer)
        elif answer.name:
            seen_names.add(answer.name)
            yield _pair(request, headers, [f"example={answer.name}"], answer)


def _pair(
    request: dict[str, Any], headers: dict[str, list[dict[str, str]]], prefer: list[str], answer: Answer
) -> dict[str, Any]:
    matched = dict(headers)
    if prefer:
        matched["Prefer"] = [{"matcher": "regex", "value": f"(?:^|[ ,;]){re.escape(p)}(?:[ ,;]|$)"} for p in prefer]
    response: dict[str, Any] = {"status": answer.status, "body": answer.body, "encodedBody": answer.encoded}
    if answer.media_type:
        response["headers"] = {"Content-Type": [answer.media_type]}
    if answer.templated:
        response["templated"] = True
    out = dict(request)
    if matched:
        out["headers"] = matched
    return {"request": out, "response": response}


def _contract(
    root: dict[str, Any],
    version: str,
    template: str,
    method: str,
    operation: dict[str, Any],
    parameters: list[dict[str, Any]],
    prefix: str,
) -> str:
    """The label holding what a request to this operation must follow (validate.py reads it)."""
    rules = [
        {"in": p.get("in"), "name": p["name"], "required": bool(p.get("required")), "schema": parameter_schema(p)}
        for p in parameters
        if p.get("in") in ("path", "query", "header") and str(p["name"]).lower() not in _IGNORED_HEADERS
    ]
    body: dict[str, Any] = {"required": False, "media": {}}
    if version == "2.0":
        sent = [p for p in parameters if p.get("in") in ("body", "formData")]
        if sent:
            schema = next((p.get("schema") for p in sent if p.get("in") == "body"), None) or _form_schema(sent)
            consumes = _consumes(root, operation, sent) or ["application/json"]
            body = {"required": any(p.get("required") for p in sent), "media": dict.fromkeys(consumes, schema)}
    elif isinstance(operation.get("requestBody"), dict):
        request_body = operation["requestBody"]
        media = {str(m): (v or {}).get("schema") for m, v in (request_body.get("content") or {}).items()}
        body = {"required": bool(request_body.get("required")), "media": media}
    return contract_label(method, template, prefix, version, rules, body, _declared_answers(root, version, operation))


def _declared_answers(root: dict[str, Any], version: str, operation: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each declared status (``200``, ``2XX``, ``default``) -> its media types -> schema (or None)."""
    out: dict[str, dict[str, Any]] = {}
    produces = operation.get("produces") or root.get("produces") or ["application/json"]
    for status, response in (operation.get("responses") or {}).items():
        if not isinstance(response, dict):
            continue
        if version == "2.0":
            schema = response.get("schema")
            out[str(status).upper()] = dict.fromkeys(produces, schema) if schema is not None else {}
        else:
            content = response.get("content") or {}
            out[str(status).upper()] = {str(m): (v or {}).get("schema") for m, v in content.items()}
    return out


def _default(answers: list[Answer]) -> Answer:
    """The lowest 2xx status's first answer, else the first declared one (never a dynamic one)."""
    fixed = [a for a in answers if not a.templated] or answers
    success = [a for a in fixed if 200 <= a.status < 300]
    return min(success, key=lambda a: a.status) if success else fixed[0]


def _parameters(shared: list[Any], own: list[Any]) -> list[dict[str, Any]]:
    """Path-level parameters overridden by the operation's (same name and location)."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for parameter in (*shared, *own):
        if isinstance(parameter, dict) and "name" in parameter:
            merged[(str(parameter["name"]), str(parameter.get("in")))] = parameter
    return list(merged.values())


def parameter_schema(parameter: dict[str, Any]) -> dict[str, Any]:
    """A parameter's schema: OpenAPI 3's ``schema`` (or its content's), Swagger 2's own keywords."""
    schema = parameter.get("schema")
    if isinstance(schema, dict):
        return schema
    content = parameter.get("content")
    if isinstance(content, dict):
        for media in content.values():
            if isinstance(media, dict) and isinstance(media.get("schema"), dict):
                return dict(media["schema"])
    keys = ("type", "format", "enum", "items", "minimum", "maximum", "pattern", "minLength", "maxLength")
    return {k: parameter[k] for k in keys if k in parameter}


def _path_matcher(template: str, parameters: list[dict[str, Any]], prefix: str) -> dict[str, str]:
    """An exact matcher for a path without parameters, else an anchored regex. Both keep the
    candidate index working: it buckets exact paths, and regexes by their literal prefix."""
    kinds = {str(p["name"]): parameter_schema(p) for p in parameters if p.get("in") == "path"}
    pieces = re.split(r"\{([^}/]+)\}", prefix + template)
    if len(pieces) == 1:
        return {"matcher": "exact", "value": pieces[0]}
    parts = [_segment(kinds.get(piece, {})) if index % 2 else _literal(piece) for index, piece in enumerate(pieces)]
    return {"matcher": "regex", "value": f"^{''.join(parts)}$"}


def _literal(text: str) -> str:
    """``text`` as a regex matching itself, escaping only what RE2 reads as special."""
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", text)


def _segment(schema: dict[str, Any]) -> str:
    """What one path parameter's value may look like, by its schema."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return "(?:" + "|".join(re.escape(str(v).lower() if isinstance(v, bool) else str(v)) for v in enum) + ")"
    kind = schema_type(schema)
    if kind == "integer":
        return "-?[0-9]+"
    if kind == "number":
        return r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
    if kind == "boolean":
        return "(?:true|false)"
    if schema.get("format") == "uuid":
        return "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    return "[^/]+"


def _prefix(root: dict[str, Any], version: str) -> str:
    """The path prefix the API is served under: Swagger's ``basePath``, or the first server URL's
    path (its variables at their defaults); '' when there is none."""
    if version == "2.0":
        return str(root.get("basePath") or "").rstrip("/")
    for server in root.get("servers") or []:
        if isinstance(server, dict) and isinstance(server.get("url"), str):
            url = server["url"]
            for name, variable in (server.get("variables") or {}).items():
                url = url.replace("{" + str(name) + "}", str((variable or {}).get("default", "")))
            return urlparse(url).path.rstrip("/")
    return ""


def _request_media_types(
    root: dict[str, Any], version: str, operation: dict[str, Any], parameters: list[dict[str, Any]]
) -> list[str]:
    """The media types a required request body must declare (none when the body is optional)."""
    if version == "2.0":
        body = [p for p in parameters if p.get("in") in ("body", "formData")]
        if not any(p.get("required") for p in body):
            return []
        return _consumes(root, operation, body) or ["application/json"]
    request_body = operation.get("requestBody")
    if not isinstance(request_body, dict) or not request_body.get("required"):
        return []
    content = request_body.get("content") or {}
    return [str(m) for m in content if "*" not in str(m)]


def _consumes(root: dict[str, Any], operation: dict[str, Any], sent: list[dict[str, Any]]) -> list[str]:
    """Swagger 2's request media types: the operation's or the document's ``consumes``, else for
    ``formData`` parameters both form encodings; [] when nothing says."""
    consumes = operation.get("consumes") or root.get("consumes") or []
    if not consumes and any(p.get("in") == "formData" for p in sent):
        consumes = [URLENCODED, MULTIPART]
    return [str(c) for c in consumes]


def _form_schema(sent: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Swagger 2's ``formData`` parameters as the schema of the object a form body is read as
    (a ``file`` field as any value); None without such parameters."""
    fields = [p for p in sent if p.get("in") == "formData"]
    if not fields:
        return None
    properties = {str(p["name"]): {} if p.get("type") == "file" else parameter_schema(p) for p in fields}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [str(p["name"]) for p in fields if p.get("required")]
    if required:
        schema["required"] = required
    return schema


def _form_matcher(
    root: dict[str, Any], version: str, operation: dict[str, Any], parameters: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """A ``form`` body matcher requiring each required field, for an operation whose required
    body can only be urlencoded (the matcher reads only that encoding); None otherwise."""
    if _request_media_types(root, version, operation, parameters) != [URLENCODED]:
        return None
    if version == "2.0":
        required = [str(p["name"]) for p in parameters if p.get("in") == "formData" and p.get("required")]
    else:
        media = ((operation.get("requestBody") or {}).get("content") or {}).get(URLENCODED) or {}
        schema = media.get("schema") if isinstance(media, dict) else None
        listed = schema.get("required") if isinstance(schema, dict) else None
        required = [str(name) for name in listed] if isinstance(listed, list) else []
    if not required:
        return None
    return {"matcher": "form", "value": {name: [{"matcher": "regex", "value": ".*"}] for name in required}}


def _answers(document: Document, operation: dict[str, Any], where: str) -> list[Answer]:
    root, version = document.root, document.version
    responses = operation.get("responses") or {}
    declared = {_status(key) for key in responses if key != "default"}
    answers: list[Answer] = []
    for key, response in responses.items():
        if not isinstance(response, dict):
            continue
        status = _status(key)
        if key == "default" and declared:
            continue  # the fallback of the other statuses: no status of its own to answer with
        if version == "2.0":
            answers.extend(_swagger_answers(root, operation, status, response))
        else:
            answers.extend(_openapi_answers(status, response, document.read, f"{where}.responses.{key}"))
    return answers


def _status(key: Any) -> int:
    text = str(key).upper()
    if text == "DEFAULT":
        return 200
    if len(text) == 3 and text.endswith("XX") and text[0].isdigit():
        return int(text[0]) * 100
    return int(text) if text.isdigit() else 200


def _openapi_answers(status: int, response: dict[str, Any], read: Reader | None, where: str) -> Iterator[Answer]:
    content = response.get("content") or {}
    if not content or status in _NO_BODY:
        yield Answer(status, "", "", "")
        return
    media_type = _preferred(list(content))
    media = content.get(media_type) or {}
    schema = media.get("schema") if isinstance(media.get("schema"), dict) else None
    named = media.get("examples")
    given = False
    if isinstance(named, dict):
        for name, example in named.items():
            if isinstance(example, dict) and "value" in example:
                given = True
                yield Answer(status, str(name), media_type, _encode(example["value"], media_type))
            elif isinstance(example, dict) and isinstance(example.get("externalValue"), str) and read is not None:
                found = _external(example["externalValue"], read, f"{where}.content.{media_type}.examples.{name}")
                if found is not None:
                    given = True
                    yield Answer(status, str(name), media_type, *found)
    if "example" in media:
        given = True
        yield Answer(status, "", media_type, _encode(media["example"], media_type))
    if not given:
        yield Answer(status, "", media_type, _encode(example_value(schema), media_type))
    if schema is not None:
        yield Answer(status, "", media_type, _template(template_value(schema), media_type), templated=True)


def _external(location: str, read: Reader, where: str) -> tuple[str, bool, bool] | None:
    """An ``externalValue`` file beside the document, as an answer's body (its text; base64 when
    it is not UTF-8), with ``templated`` False and ``encoded``; None for a URL, not a file."""
    if "://" in location:
        return None
    try:
        raw = read(unquote(location))
    except OSError as exc:
        raise OpenAPIError(f"{where}.externalValue", f"cannot read {location!r}: {exc.strerror or exc}") from exc
    try:
        return raw.decode("utf-8"), False, False
    except UnicodeDecodeError:
        return base64.b64encode(raw).decode("ascii"), False, True


def _swagger_answers(
    root: dict[str, Any], operation: dict[str, Any], status: int, response: dict[str, Any]
) -> Iterator[Answer]:
    schema = response.get("schema") if isinstance(response.get("schema"), dict) else None
    examples = response.get("examples") if isinstance(response.get("examples"), dict) else {}
    produces = [str(p) for p in (operation.get("produces") or root.get("produces") or ["application/json"])]
    if status in _NO_BODY or (schema is None and not examples):
        yield Answer(status, "", "", "")
        return
    if examples:
        for media_type, value in examples.items():
            yield Answer(status, "", str(media_type), _encode(value, str(media_type)))
    media_type = _preferred(produces)
    if not examples:
        yield Answer(status, "", media_type, _encode(example_value(schema), media_type))
    if schema is not None:
        yield Answer(status, "", media_type, _template(template_value(schema), media_type), templated=True)


def _preferred(media_types: list[str]) -> str:
    """A JSON media type when the response offers one, else the first declared."""
    return next((m for m in media_types if _JSON_TYPE.match(m)), media_types[0] if media_types else "")


def _encode(value: Any, media_type: str) -> str:
    if isinstance(value, str) and not _JSON_TYPE.match(media_type):
        return value
    return dumps(value)


def _template(value: Any, media_type: str) -> str:
    """A JSON body whose leaves are template expressions (numbers and booleans left unquoted)."""
    if isinstance(value, str) and not _JSON_TYPE.match(media_type):
        return value
    raws: list[str] = []

    def mark(node: Any) -> Any:
        if isinstance(node, Raw):
            raws.append(str(node))
            return f"\x00{len(raws) - 1}\x00"
        if isinstance(node, dict):
            return {k: mark(v) for k, v in node.items()}
        if isinstance(node, list):
            return [mark(v) for v in node]
        return node

    text = dumps(mark(value))
    # a space after each expression: "}}" then an object's "}" would read as a triple mustache
    return re.sub(r'"\\u0000(\d+)\\u0000"', lambda m: raws[int(m.group(1))] + " ", text)
