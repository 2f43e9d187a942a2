"""The one owner of the persisted simulation shape: v5 ``data`` dicts <-> ``Simulation``.

Two encodings: the *export* view (what GET returns, Hoverfly's key order and omission rules,
``encodedBody`` recomputed) and the *storage* form (lossless: keeps empty lists apart from
absent ones and always stores bodies as base64). Imports nothing but the domain model.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Any

from simproxy.engine.errors import SimulationError
from simproxy.engine.gocompat.sniff import BINARY, SNIFF_LENGTH, detect_content_type
from simproxy.engine.simulation.model import (
    FAULT_PARAMETERS,
    JSON,
    Delay,
    DelayLogNormal,
    Fault,
    FaultKind,
    GlobalFault,
    LogNormal,
    Matcher,
    Matchers,
    NamedMatchers,
    Pair,
    RequestMatcher,
    Response,
    Simulation,
)

_MATCHER_FIELDS = ("path", "method", "destination", "scheme", "body")


def go_json(value: JSON, *, sort_keys: bool = True) -> JSON:
    """A JSON value as Go holds it after decoding into ``interface{}``: object keys sorted, and
    numbers as float64, so a whole float is written (and compared) as the integer it equals."""
    if isinstance(value, dict):
        keys = sorted(value) if sort_keys else list(value)
        return {str(k): go_json(value[k], sort_keys=sort_keys) for k in keys}
    if isinstance(value, list):
        return [go_json(v, sort_keys=sort_keys) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


# ---------------------------------------------------------------------------------------------
# decoding


def decode_simulation(data: Mapping[str, Any]) -> Simulation:
    """Build a ``Simulation`` from a v5 ``data`` object (already schema-validated)."""
    pairs = tuple(_decode_pair(p, f"data.pairs[{i}]") for i, p in enumerate(data.get("pairs") or ()))
    actions = data.get("globalActions") or {}
    delays = tuple(
        Delay(
            str(d.get("urlPattern", "")),
            str(d.get("httpMethod", "")),
            _go_int(d.get("delay"), f"data.globalActions.delays[{i}].delay"),
        )
        for i, d in enumerate(actions.get("delays") or ())
    )
    log_normal = tuple(
        DelayLogNormal(
            str(d.get("urlPattern", "")),
            str(d.get("httpMethod", "")),
            _log_normal(d, f"data.globalActions.delaysLogNormal[{i}]"),
        )
        for i, d in enumerate(actions.get("delaysLogNormal") or ())
    )
    return Simulation(
        pairs=pairs,
        delays=delays,
        delays_log_normal=log_normal,
        literals=tuple(_literal(item, f"data.literals[{i}]") for i, item in enumerate(data.get("literals") or ())),
        variables=tuple(_variable(item, f"data.variables[{i}]") for i, item in enumerate(data.get("variables") or ())),
        faults=tuple(
            _decode_global_fault(f, f"data.globalActions.faults[{i}]")
            for i, f in enumerate(actions.get("faults") or ())
        ),
    )


def _literal(raw: Mapping[str, Any], path: str) -> dict[str, JSON]:
    """Hoverfly decodes literals into a struct: ``name`` and ``value`` only, in that order."""
    return {"name": raw.get("name", ""), "value": _kept_json(raw.get("value"), f"{path}.value")}


def _variable(raw: Mapping[str, Any], path: str) -> dict[str, JSON]:
    out: dict[str, JSON] = {"name": raw.get("name", ""), "function": raw.get("function", "")}
    if raw.get("arguments"):
        out["arguments"] = _kept_json(list(raw["arguments"]), f"{path}.arguments")
    return out


_STORED_INTS = (-(2**63), 2**64 - 1)
"""The whole numbers the stored and exported simulation can hold (JSON encoded by orjson)."""


def _kept_json(value: JSON, path: str) -> JSON:
    """``go_json``, refusing a whole number beyond 64 bits (``1e20``): Go keeps it as a float64 and
    writes it whole, which simproxy's store cannot hold; a 400 naming it, not a failed store."""
    converted = go_json(value)
    _check_ints(converted, path)
    return converted


def _check_ints(value: JSON, path: str) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _check_ints(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_ints(item, f"{path}[{index}]")
    elif isinstance(value, int) and not isinstance(value, bool) and not _STORED_INTS[0] <= value <= _STORED_INTS[1]:
        raise SimulationError(path, f"{value} is beyond the 64-bit whole numbers simproxy keeps")


def _decode_pair(raw: Mapping[str, Any], path: str) -> Pair:
    return Pair(
        request=_decode_request(raw.get("request") or {}, f"{path}.request"),
        response=_decode_response(raw.get("response") or {}, f"{path}.response"),
        labels=tuple(raw.get("labels") or ()),
    )


def _decode_request(raw: Mapping[str, Any], path: str) -> RequestMatcher:
    fields: dict[str, Matchers | None] = {}
    for name in _MATCHER_FIELDS:
        value = raw.get(name)
        fields[name] = None if value is None else _decode_matchers(value, f"{path}.{name}")
    query = raw.get("query")
    state = raw.get("requiresState")
    return RequestMatcher(
        **fields,
        headers=_decode_named(raw.get("headers") or {}, f"{path}.headers"),
        query=None if query is None else _decode_named(query, f"{path}.query"),
        requires_state=None if state is None else tuple(sorted((str(k), str(v)) for k, v in state.items())),
    )


def _decode_named(raw: Mapping[str, Any], path: str) -> NamedMatchers:
    return tuple(
        (str(name), _decode_matchers(matchers or (), f"{path}.{name}")) for name, matchers in sorted(raw.items())
    )


def _decode_matchers(raw: Iterable[Any], path: str) -> Matchers:
    return tuple(_decode_matcher(m, f"{path}[{i}]") for i, m in enumerate(raw))


def _decode_matcher(raw: Any, path: str) -> Matcher:
    if not isinstance(raw, Mapping):
        raise SimulationError(path, "a matcher must be an object")
    name = raw.get("matcher")
    if name is None:
        name = ""
    if not isinstance(name, str):
        raise SimulationError(path, "the matcher name must be a string")
    config = raw.get("config")
    if config is not None and not isinstance(config, Mapping):
        raise SimulationError(path, "the matcher config must be an object")
    do_match = raw.get("doMatch")
    value = _kept_json(raw.get("value"), f"{path}.value")
    return Matcher(
        name=name,
        value=_form_fields(value) if name == "form" else value,
        config=None if config is None else _kept_json(dict(config), f"{path}.config"),
        do_match=None if do_match is None else _decode_matcher(do_match, f"{path}.doMatch"),
    )


def _form_fields(value: JSON) -> JSON:
    """A ``form`` matcher's value as Hoverfly holds it: each field's matchers decoded into its
    matcher struct, so they are written ``matcher``, ``value``, ``config``, ``doMatch`` in that order
    and any other member is dropped. A value of another shape is kept for the compiler to refuse."""
    if not isinstance(value, dict):
        return value
    return {
        name: [_form_matcher(m) for m in matchers] if isinstance(matchers, list) else matchers
        for name, matchers in value.items()
    }


def _form_matcher(raw: JSON) -> JSON:
    if not isinstance(raw, dict):
        return raw
    out: dict[str, JSON] = {"matcher": raw.get("matcher", ""), "value": raw.get("value")}
    if raw.get("config"):  # Go's omitempty: an empty config is not written
        out["config"] = raw["config"]
    if raw.get("doMatch") is not None:
        out["doMatch"] = _form_matcher(raw["doMatch"])
    return out


def _decode_response(raw: Mapping[str, Any], path: str) -> Response:
    status = raw.get("status") or 200  # Hoverfly cannot serve status 0; an omitted status means 200 here
    if not isinstance(status, int) or not 100 <= status <= 999:
        raise SimulationError(f"{path}.status", f"{status!r} is not an HTTP status code")
    body_text = raw.get("body") or ""
    body_file = raw.get("bodyFile") or ""
    # a body still to be read from its file is decoded after reading, when the flag says base64
    if "bodyFileBase64" in raw:  # the storage form says so explicitly
        file_base64 = bool(raw["bodyFileBase64"])
    else:  # an import: a body still to be read from its file is base64 there when encodedBody says so
        file_base64 = bool(body_file) and not body_text and bool(raw.get("encodedBody"))
    if raw.get("encodedBody"):
        body = _b64decode(body_text, f"{path}.body")
    else:
        body = body_text.encode("utf-8", "surrogateescape")
    transitions = raw.get("transitionsState")
    removes = raw.get("removesState")
    delay = raw.get("logNormalDelay")
    return Response(
        status=status,
        body=body,
        body_file=body_file,
        body_file_base64=file_base64,
        headers=tuple(
            sorted((str(k), tuple(str(v) for v in vs or ())) for k, vs in (raw.get("headers") or {}).items())
        ),
        templated=bool(raw.get("templated")),
        transitions_state=None
        if transitions is None
        else tuple(sorted((str(k), str(v)) for k, v in transitions.items())),
        removes_state=None if removes is None else tuple(str(k) for k in removes),
        fixed_delay=_go_int(raw.get("fixedDelay"), f"{path}.fixedDelay"),
        log_normal_delay=None if delay is None else _log_normal(delay, f"{path}.logNormalDelay"),
        post_serve_action=raw.get("postServeAction") or "",
        fault=None if raw.get("fault") is None else decode_fault(raw["fault"], f"{path}.fault"),
        trailers=tuple(
            sorted((str(k), tuple(str(v) for v in vs or ())) for k, vs in (raw.get("trailers") or {}).items())
        ),
    )


def decode_fault(raw: Any, path: str) -> Fault:
    """A ``fault`` object (the schema checked an upload already; the storage form is checked again)."""
    if not isinstance(raw, Mapping):
        raise SimulationError(path, "a fault must be an object")
    name: Any = raw.get("type")
    try:
        kind = FaultKind(name)
    except (ValueError, TypeError):
        known = ", ".join(kind.value for kind in FaultKind)
        raise SimulationError(f"{path}.type", f"{name!r} is not a fault type ({known})") from None
    parameters = FAULT_PARAMETERS.get(kind, ())
    for key in raw:
        if key not in ("type", "fraction") and all(key != taken for taken, _, _ in parameters):
            raise SimulationError(f"{path}.{key}", f"a {kind.value} fault takes no {key}")
    values: dict[str, int] = {}
    for key, least, most in parameters:
        value: Any = raw.get(key)
        if not _whole(value) or not least <= value <= most:
            raise SimulationError(
                f"{path}.{key}", f"a {kind.value} fault needs {key}, a whole number from {least} to {most}"
            )
        values[key] = int(value)
    fraction = raw.get("fraction", 1)
    if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not 0 <= fraction <= 1:
        raise SimulationError(f"{path}.fraction", "the fraction must be a number from 0 to 1")
    return Fault(
        kind,
        chunks=values.get("chunks", 0),
        duration_ms=values.get("durationMs", 0),
        bytes_per_second=values.get("bytesPerSecond", 0),
        fraction=float(fraction),
    )


def _whole(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)


def _decode_global_fault(raw: Any, path: str) -> GlobalFault:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("urlPattern", ""), str):
        raise SimulationError(path, "a global fault must be an object with a urlPattern string")
    method = raw.get("httpMethod") or ""
    if not isinstance(method, str):
        raise SimulationError(f"{path}.httpMethod", "the method must be a string")
    return GlobalFault(str(raw.get("urlPattern", "")), method, decode_fault(raw.get("fault"), f"{path}.fault"))


def _log_normal(raw: Mapping[str, Any], path: str) -> LogNormal:
    return LogNormal(
        min=_go_int(raw.get("min"), f"{path}.min"),
        max=_go_int(raw.get("max"), f"{path}.max"),
        mean=_go_int(raw.get("mean"), f"{path}.mean"),
        median=_go_int(raw.get("median"), f"{path}.median"),
    )


_GO_INT = (-(2**63), 2**63 - 1)
"""The range of Go's ``int`` (64-bit), which Hoverfly decodes the delays into."""


def _go_int(value: Any, path: str) -> int:
    """A delay's milliseconds (absent: 0). The schema checked the type; a whole number beyond Go's
    ``int`` fails Hoverfly's import too (its decoder refuses it), and could not be stored."""
    if value is None:
        return 0
    if not _whole(value) or not _GO_INT[0] <= value <= _GO_INT[1]:
        raise SimulationError(path, f"{value!r} is not a whole number of milliseconds from -2^63 to 2^63 - 1")
    return int(value)


def _b64decode(text: str, path: str) -> bytes:
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise SimulationError(path, "encodedBody is true but the body is not valid base64") from exc


# ---------------------------------------------------------------------------------------------
# encoding


def export_simulation(sim: Simulation) -> dict[str, Any]:
    """The ``data`` object of ``GET /api/v2/simulation`` (Hoverfly's key order and omissions)."""
    return _encode_simulation(sim, export=True)


def storage_simulation(sim: Simulation) -> dict[str, Any]:
    """A lossless ``data`` object: ``decode_simulation(storage_simulation(s)) == s``."""
    return _encode_simulation(sim, export=False)


def _encode_simulation(sim: Simulation, *, export: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "pairs": [encode_pair(p, export=export) for p in sim.pairs],
        "globalActions": {
            "delays": [
                {"urlPattern": d.url_pattern, "httpMethod": d.http_method, "delay": d.delay} for d in sim.delays
            ],
            "delaysLogNormal": [
                {"urlPattern": d.url_pattern, "httpMethod": d.http_method, **_encode_log_normal(d.params)}
                for d in sim.delays_log_normal
            ],
        },
    }
    if sim.faults:  # simproxy's own: absent when there are none, so such documents stay Hoverfly's
        data["globalActions"]["faults"] = [
            {"urlPattern": f.url_pattern, "httpMethod": f.http_method, "fault": encode_fault(f.fault)}
            for f in sim.faults
        ]
    if sim.literals:
        data["literals"] = list(sim.literals)
    if sim.variables:
        data["variables"] = list(sim.variables)
    return data


def encode_pair(pair: Pair, *, export: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if pair.labels:
        out["labels"] = list(pair.labels)
    out["request"] = encode_request(pair.request, export=export)
    out["response"] = encode_response(pair.response, export=export)
    return out


def encode_request(req: RequestMatcher, *, export: bool = True) -> dict[str, Any]:
    """A request matcher set; the export view drops empty lists and an empty ``requiresState``."""
    out: dict[str, Any] = {}
    for name in _MATCHER_FIELDS:
        matchers: Matchers | None = getattr(req, name)
        if matchers is None or (export and not matchers):
            continue
        out[name] = [encode_matcher(m, export=export) for m in matchers]
    if req.headers:
        out["headers"] = {name: [encode_matcher(m, export=export) for m in ms] for name, ms in req.headers}
    if req.query is not None:
        out["query"] = {name: [encode_matcher(m, export=export) for m in ms] for name, ms in req.query}
    if req.requires_state is not None and (req.requires_state or not export):
        out["requiresState"] = dict(req.requires_state)
    return out


def encode_matcher(matcher: Matcher, *, export: bool = True) -> dict[str, JSON]:
    """A matcher object; the export view drops an empty ``config`` (storage keeps ``{}`` apart from absent)."""
    out: dict[str, JSON] = {"matcher": matcher.name, "value": matcher.value}
    if matcher.config is not None and (matcher.config or not export):
        out["config"] = matcher.config
    if matcher.do_match is not None:
        out["doMatch"] = encode_matcher(matcher.do_match, export=export)
    return out


def encode_response(resp: Response, *, export: bool = True) -> dict[str, Any]:
    encoded = needs_base64(resp) if export else True
    out: dict[str, Any] = {
        "status": resp.status,
        "body": base64.b64encode(resp.body).decode("ascii") if encoded else resp.body.decode("utf-8", "replace"),
    }
    if resp.body_file:
        out["bodyFile"] = resp.body_file
    out["encodedBody"] = encoded
    if resp.headers:
        out["headers"] = {name: list(values) for name, values in resp.headers}
    out["templated"] = resp.templated
    if resp.transitions_state or (resp.transitions_state is not None and not export):
        out["transitionsState"] = dict(resp.transitions_state)
    if resp.removes_state or (resp.removes_state is not None and not export):
        out["removesState"] = list(resp.removes_state)
    if resp.fixed_delay:
        out["fixedDelay"] = resp.fixed_delay
    if resp.log_normal_delay is not None:
        out["logNormalDelay"] = _encode_log_normal(resp.log_normal_delay)
    if resp.post_serve_action:
        out["postServeAction"] = resp.post_serve_action
    if resp.fault is not None:
        out["fault"] = encode_fault(resp.fault)
    if resp.trailers:
        out["trailers"] = {name: list(values) for name, values in resp.trailers}
    if not export:
        out["bodyFileBase64"] = resp.body_file_base64
    return out


def encode_fault(fault: Fault) -> dict[str, Any]:
    """A ``fault`` object: its type, the parameters the type takes, and ``fraction`` unless it is 1."""
    out: dict[str, Any] = {"type": fault.kind.value}
    if fault.kind is FaultKind.DRIBBLE:
        out["chunks"] = fault.chunks
        out["durationMs"] = fault.duration_ms
    elif fault.kind is FaultKind.BANDWIDTH:
        out["bytesPerSecond"] = fault.bytes_per_second
    if fault.fraction != 1:
        out["fraction"] = int(fault.fraction) if fault.fraction.is_integer() else fault.fraction
    return out


def _encode_log_normal(params: LogNormal) -> dict[str, int]:
    return {"min": params.min, "max": params.max, "mean": params.mean, "median": params.median}


# ---------------------------------------------------------------------------------------------
# Hoverfly's export rule for encodedBody (core/handlers/v2/simulation_views.go): base64 when the
# response has a Content-Encoding header or the sniffed MIME type is not a text-like one.

_TEXTUAL = ("text", "plain", "css", "html", "json", "xml", "js", "javascript")


def needs_base64(resp: Response) -> bool:
    if resp.header("Content-Encoding"):
        return True
    mime = sniff_content_type(resp.body)
    return not any(word in mime for word in _TEXTUAL)


def sniff_content_type(body: bytes) -> str:
    """Go's ``http.DetectContentType``, except that text which is not UTF-8 counts as binary (so that
    an export never loses bytes to a JSON string)."""
    mime = detect_content_type(body)
    if mime.startswith("text/"):
        try:
            body[:SNIFF_LENGTH].decode("utf-8")
        except UnicodeDecodeError as exc:
            # A multi-byte character cut at byte 512 is still text; anything else is binary.
            if exc.start < min(len(body), SNIFF_LENGTH) - 3:
                return BINARY
    return mime
