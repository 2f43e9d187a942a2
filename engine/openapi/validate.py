"""Request validation against an imported document: the contract each operation's default pair
carries, and the violations a request commits.

The conversion (convert.py) writes an operation's request rules into a label of its default pair,
``openapi-contract:<JSON>``, so they travel with the simulation wherever it goes (the store, every
worker, an export, ``simproxy openapi``'s output) without a member Hoverfly's format lacks.
``Contracts.build`` reads those labels once per simulation, when the simulation is compiled (off
the request path: engine/matching/scoring.py), and compiles one JSON Schema validator
per parameter and body media type (the dialect of the document: draft 4 for Swagger 2.0 and
OpenAPI 3.0, whose ``nullable`` becomes a ``null`` type, draft 2020-12 for OpenAPI 3.1).
``Contracts.check`` finds the operation a request addresses (method and path template, any value
in a parameter's place) and lists every violation: a missing required parameter, a value of the
wrong type or format (formats.py), a body that fails its schema, a media type the operation
does not accept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from simproxy.engine.errors import SimulationError
from simproxy.engine.openapi.document import dumps
from simproxy.engine.openapi.forms import (
    MULTIPART,
    URLENCODED,
    Field,
    form_fields,
    form_object,
    multipart_values,
    parameter_types,
    typed_value,
    urlencoded_values,
)

CONTRACT_LABEL: Final = "openapi-contract:"


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: where (``path``, ``query``, ``header``, ``body``), the JSON path, the text."""

    where: str
    path: str
    message: str

    def view(self) -> dict[str, str]:
        return {"in": self.where, "path": self.path, "message": self.message}


@dataclass(frozen=True, slots=True)
class _Parameter:
    where: str
    name: str
    key: str
    """Where its value is found: the path regex's group, the query name, the lower-case header name."""
    required: bool
    kind: str | None
    item_kind: str | None
    validator: Any


@dataclass(frozen=True, slots=True)
class _Media:
    """A media type a body may have, the validator of its schema (or None), and for a form the
    fields its text is read as (forms.py)."""

    type: str
    validator: Any
    fields: tuple[Field, ...] = ()


@dataclass(frozen=True, slots=True)
class _Operation:
    method: str
    pattern: re.Pattern[str]
    parameters: tuple[_Parameter, ...]
    body_required: bool
    media: tuple[_Media, ...]
    """Each media type the body may have."""
    responses: tuple[tuple[str, tuple[_Media, ...]], ...] = ()
    """(status key: ``200``, ``2XX`` or ``DEFAULT``, its media types as ``media``) as declared."""


@dataclass(frozen=True, slots=True)
class Contracts:
    """The compiled contracts of one simulation; empty (falsy) when no pair carries one."""

    operations: tuple[_Operation, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.operations)

    @staticmethod
    def build(labels: Iterable[tuple[str, ...]], *, strict: bool = True) -> Contracts:
        """Every contract found among the pairs' labels, in simulation order.

        A label that is not a contract (bad JSON, a member missing, a path that is no template) is
        a ``SimulationError`` naming it when ``strict``, and is left out otherwise (``-compat
        hoverfly``, where a label is only a label)."""
        found: list[_Operation] = []
        checker: Any = None
        for index, pair_labels in enumerate(labels):
            for position, label in enumerate(pair_labels):
                if not label.startswith(CONTRACT_LABEL):
                    continue
                if checker is None:
                    from simproxy.engine.openapi.formats import format_checker

                    checker = format_checker()
                try:
                    found.append(_compile(_loads(label[len(CONTRACT_LABEL) :]), checker))
                except (ValueError, KeyError, TypeError, AttributeError, re.error) as exc:
                    if strict:
                        where = f"data.pairs[{index}].labels[{position}]"
                        detail = f"no {exc} member" if isinstance(exc, KeyError) else str(exc)
                        raise SimulationError(where, f"not an OpenAPI contract: {detail}") from exc
        return Contracts(tuple(found))

    def check(
        self, method: str, path: str, query: Mapping[str, list[str]], headers: Mapping[str, list[str]], body: str
    ) -> list[Violation] | None:
        """The request's violations of the first operation it addresses; None when it addresses none."""
        found = self._operation(method, path)
        if found is None:
            return None
        operation, values = found
        return _violations(operation, values, query, headers, body)

    def check_answer(
        self, method: str, path: str, status: int, content_type: str, body: bytes
    ) -> list[Violation] | None:
        """A real answer's violations of the operation its request addressed (an undeclared
        status, an undeclared media type, a body failing its schema); None when it addresses none."""
        found = self._operation(method, path)
        if found is None or not found[0].responses:
            return None
        declared = dict(found[0].responses)
        media = next(
            (declared[key] for key in (str(status), f"{str(status)[0]}XX", "DEFAULT") if key in declared), None
        )
        if media is None:
            return [Violation("status", "$", f"status {status} is not declared: {', '.join(declared)}")]
        return _body_violations(media, False, content_type, body.decode("utf-8", "replace"), "response body")

    def _operation(self, method: str, path: str) -> tuple[_Operation, dict[str, str]] | None:
        for operation in self.operations:
            if operation.method != method:
                continue
            found = operation.pattern.match(path)
            if found is not None:
                return operation, found.groupdict()
        return None


def contract_label(
    method: str,
    template: str,
    prefix: str,
    version: str,
    parameters: list[dict[str, Any]],
    body: dict[str, Any],
    responses: dict[str, dict[str, Any]],
) -> str:
    """The label carrying an operation's rules (``body``: ``required`` and ``media``; ``responses``:
    each declared status's media types and their schemas, for checking real answers)."""
    contract = {
        "method": method.upper(),
        "path": prefix + template,
        "dialect": "2020-12" if version == "3.1" else "4",
        "parameters": parameters,
        "body": body,
        "responses": responses,
    }
    return CONTRACT_LABEL + dumps(contract)


def _compile(contract: dict[str, Any], checker: Any) -> _Operation:
    """One operation's path pattern and validators; ``checker`` checks the formats (formats.py)."""
    from jsonschema.validators import Draft4Validator, Draft202012Validator

    cls = Draft202012Validator if contract.get("dialect") == "2020-12" else Draft4Validator

    def validator(schema: Any) -> Any:
        return cls(_nullable(schema), format_checker=checker) if isinstance(schema, dict) else None

    def media(declared: Any) -> tuple[_Media, ...]:
        return tuple(_Media(str(m), validator(s), form_fields(s)) for m, s in (declared or {}).items())

    names: dict[str, str] = {}
    pieces = re.split(r"\{([^}/]+)\}", str(contract["path"]))
    regex = ""
    for index, piece in enumerate(pieces):
        if index % 2:
            group = f"p{len(names)}"
            names[group] = piece
            regex += f"(?P<{group}>[^/]+)"
        else:
            regex += re.escape(piece)
    parameters = tuple(_parameter(p, names, validator(p.get("schema"))) for p in contract.get("parameters", []))
    body = contract.get("body") or {}
    responses = tuple((str(status), media(declared)) for status, declared in (contract.get("responses") or {}).items())
    return _Operation(
        str(contract["method"]),
        re.compile(f"{regex}$"),
        parameters,
        bool(body.get("required")),
        media(body.get("media")),
        responses,
    )


def _parameter(rule: dict[str, Any], groups: dict[str, str], validator: Any) -> _Parameter:
    where, name = str(rule["in"]), str(rule["name"])
    kind, item_kind = parameter_types(rule.get("schema"))
    required = bool(rule.get("required")) or where == "path"
    return _Parameter(where, name, _key(groups, where, name), required, kind, item_kind, validator)


def _key(groups: dict[str, str], where: str, name: str) -> str:
    """Where a parameter's value is looked up: a path parameter's regex group (its own name may
    not be a valid group name), a header's lower-case name, a query parameter's name."""
    if where == "path":
        return next((group for group, value in groups.items() if value == name), name)
    return name.lower() if where == "header" else name


def _nullable(schema: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` as JSON Schema says it: ``null`` among the types."""
    if isinstance(schema, list):
        return [_nullable(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _nullable(value) for key, value in schema.items() if key != "nullable"}
    if schema.get("nullable") is True and isinstance(schema.get("type"), str):
        out["type"] = [schema["type"], "null"]
    return out


def _violations(
    operation: _Operation,
    path_values: dict[str, str],
    query: Mapping[str, list[str]],
    headers: Mapping[str, list[str]],
    body: str,
) -> list[Violation]:
    found: list[Violation] = []
    for parameter in operation.parameters:
        if parameter.where == "path":
            values = [path_values[parameter.key]] if parameter.key in path_values else []
        elif parameter.where == "query":
            values = query.get(parameter.key, [])
        elif parameter.where == "header":
            values = headers.get(parameter.key, [])
        else:
            continue
        where = f"$.{parameter.name}"
        if not values:
            if parameter.required:
                found.append(Violation(parameter.where, where, f"the required {parameter.where} parameter is missing"))
            continue
        value = typed_value(values, parameter.kind, parameter.item_kind)
        if parameter.validator is not None:
            found.extend(
                Violation(parameter.where, where, error.message) for error in parameter.validator.iter_errors(value)
            )
    declared = (headers.get("content-type") or [""])[0]
    found.extend(_body_violations(operation.media, operation.body_required, declared, body, "body"))
    return found


def _body_violations(
    media: tuple[_Media, ...], required: bool, declared: str, body: str, where: str
) -> list[Violation]:
    """A body's violations: missing when required, of an undeclared media type, failing its schema
    (a JSON body, or a form's fields read as their schema's types)."""
    if not media:
        return []
    media_type = declared.split(";")[0].strip().lower()
    if not body and not media_type:
        noun = "request body" if where == "body" else where
        return [Violation(where, "$", f"the required {noun} is missing")] if required else []
    accepting = [m for m in media if _accepts(m.type, media_type)]
    if not accepting:
        accepted = ", ".join(m.type for m in media)
        shown = media_type or "none"
        field = "header" if where == "body" else where
        return [Violation(field, "$.Content-Type", f"media type {shown} is not one of {accepted}")]
    chosen = accepting[0]
    if chosen.validator is None:
        return []
    try:
        if "json" in media_type:
            value = _loads(body)
        elif media_type == URLENCODED:
            value = form_object(urlencoded_values(body), chosen.fields)
        elif media_type == MULTIPART:
            value = form_object(multipart_values(declared, body), chosen.fields)
        else:
            return []
    except ValueError as exc:
        kind = "JSON" if "json" in media_type else media_type
        return [Violation(where, "$", f"the {where} is not {kind}: {exc}")]
    return [
        Violation(where, _json_path(error.absolute_path), error.message)
        for error in chosen.validator.iter_errors(value)
    ]


def _loads(text: str) -> Any:
    """JSON text's value; the standard library's reader takes the integers beyond 64 bits."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _accepts(declared: str, actual: str) -> bool:
    declared = declared.lower()
    if declared in ("*/*", actual):
        return True
    return declared.endswith("/*") and actual.startswith(declared[:-1])


def _json_path(parts: Iterable[Any]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)
