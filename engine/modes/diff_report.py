"""Diff mode's reports (Hoverfly's ``core/modes/diff_mode.go`` and ``/api/v2/diff``). Pure: no I/O, no clock.

A report lists how a real response differed from the one the simulation would have served; reports are
grouped per identical request ``{method, host, path, query}``, groups in first-seen order, reports in
arrival order. ``compare_responses`` produces the entries, ``filter_reports`` applies a ``POST /diff``
body's exclusions, and the ``*_view`` functions give Hoverfly's wire shapes (struct key order).

Where Hoverfly crashes or is accidental, the comparison chooses instead:
* bodies that are both JSON but not both objects are compared as raw text (Hoverfly panics);
* an unknown ``Content-Encoding`` leaves the body as it is (Hoverfly panics), ``deflate`` accepts zlib-wrapped
  data as well as raw DEFLATE, ``br`` is not decoded (no decoder installed: such bodies compare as raw text),
  and the header is found whatever the case of its name;
* entries come in a fixed order (status, headers in the expected response's order, body keys in the
  expected document's order) where Hoverfly's follows Go's random map order.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from simproxy.engine.gocompat.dialect import SPEC, Dialect
from simproxy.engine.gocompat.gojson import InvalidJSON, decode_float, format_v_float, go_text
from simproxy.engine.simulation.model import JSON

NULL = "null"
"""What an entry shows for a value that is absent (a missing header or body key) or JSON null."""

Headers = Mapping[str, Sequence[str]] | Iterable[tuple[str, Sequence[str]]]


@dataclass(frozen=True, slots=True)
class DiffEntry:
    """One difference: ``status``, ``header/<Name>``, ``body`` or ``body/<key>/<subkey>...``."""

    field: str
    expected: str
    actual: str


@dataclass(frozen=True, slots=True)
class DiffReport:
    """The differences found for one request; ``timestamp`` is RFC 3339 (see ``report_timestamp``)."""

    timestamp: str
    entries: tuple[DiffEntry, ...]


@dataclass(frozen=True, slots=True)
class DiffRequest:
    """What reports are grouped by: taken from the forwarded URL (``query`` is the raw query string)."""

    method: str
    host: str
    path: str
    query: str


@dataclass(frozen=True, slots=True)
class DiffGroup:
    request: DiffRequest
    reports: tuple[DiffReport, ...]


def report_timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC with seconds, ``2024-05-01T10:20:30Z`` (admin-api.md §2.16: an ISO 8601 UTC string)."""
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------------
# wire views (Go struct order: request{method,host,path,query}, diffReports[{timestamp, diffEntries}])


def entry_view(entry: DiffEntry) -> dict[str, str]:
    return {"field": entry.field, "expected": entry.expected, "actual": entry.actual}


def report_view(report: DiffReport) -> dict[str, Any]:
    return {"timestamp": report.timestamp, "diffEntries": [entry_view(e) for e in report.entries]}


def request_view(request: DiffRequest) -> dict[str, str]:
    return {"method": request.method, "host": request.host, "path": request.path, "query": request.query}


def group_view(group: DiffGroup) -> dict[str, Any]:
    return {"request": request_view(group.request), "diffReports": [report_view(r) for r in group.reports]}


def diff_view(groups: Iterable[DiffGroup], dialect: Dialect = SPEC) -> dict[str, Any]:
    """The body of ``GET`` and ``POST /api/v2/diff``: ``{"diff": [...]}``, ``[]`` (Hoverfly: ``null``)
    when there is none."""
    return {"diff": dialect.listed([group_view(g) for g in groups])}


# ---------------------------------------------------------------------------------------------
# storage: a group's key is its request as a JSON array, a report is its wire view


def encode_request(request: DiffRequest) -> str:
    """The store's group key: equal for identical requests, different otherwise."""
    return orjson.dumps(
        [go_text(request.method), go_text(request.host), go_text(request.path), go_text(request.query)]
    ).decode()


def decode_request(key: str) -> DiffRequest:
    value = orjson.loads(key)
    if not (isinstance(value, list) and len(value) == 4 and all(isinstance(v, str) for v in value)):
        raise ValueError(f"not a diff request key: {key!r}")
    return DiffRequest(*value)


def encode_report(report: DiffReport) -> bytes:
    return orjson.dumps(
        {
            "timestamp": go_text(report.timestamp),
            "diffEntries": [
                {"field": go_text(e.field), "expected": go_text(e.expected), "actual": go_text(e.actual)}
                for e in report.entries
            ],
        }
    )


def decode_report(raw: bytes) -> DiffReport:
    value = orjson.loads(raw)
    try:
        entries = tuple(DiffEntry(str(e["field"]), str(e["expected"]), str(e["actual"])) for e in value["diffEntries"])
        return DiffReport(str(value["timestamp"]), entries)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a stored diff report: {exc}") from exc


def decode_groups(stored: Iterable[tuple[str, Sequence[bytes]]]) -> list[DiffGroup]:
    """What ``Store.diff_reports`` returns, as groups (raises ValueError on data that is not ours)."""
    return [DiffGroup(decode_request(key), tuple(decode_report(r) for r in reports)) for key, reports in stored]


# ---------------------------------------------------------------------------------------------
# POST /diff: exclusions


def excluded_field(json_path: str) -> str:
    """An ``excludedResponseFields`` JSONPath as an entry field: ``$.`` -> ``body/``, then ``.`` -> ``/``."""
    return json_path.replace("$.", "body/").replace(".", "/")


def filter_reports(
    groups: Iterable[DiffGroup], excluded_headers: Iterable[str], excluded_fields: Iterable[str]
) -> list[DiffGroup]:
    """Drop every entry named by an exclusion (exact, case-sensitive), then reports and groups left empty."""
    dropped = {"header/" + h for h in excluded_headers} | {excluded_field(f) for f in excluded_fields}
    kept: list[DiffGroup] = []
    for group in groups:
        reports = []
        for report in group.reports:
            entries = tuple(e for e in report.entries if e.field not in dropped)
            if entries:
                reports.append(report if len(entries) == len(report.entries) else DiffReport(report.timestamp, entries))
        if reports:
            kept.append(DiffGroup(group.request, tuple(reports)))
    return kept


# ---------------------------------------------------------------------------------------------
# comparing a real response with the simulated one


def compare_responses(
    expected_status: int,
    expected_headers: Headers,
    expected_body: bytes | str,
    actual_status: int,
    actual_headers: Headers,
    actual_body: bytes | str,
    headers_whitelist: Sequence[str] = (),
) -> list[DiffEntry]:
    """The entries of a report comparing the simulation's response (expected) with the real one.

    ``status`` when the expected status is set and differs; ``header/<Name>`` for each expected header
    (names compared exactly) that is missing or has other values, unless named in ``headers_whitelist``
    (the diff mode's argument; ``*`` names them all); the body key by key when both bodies are JSON
    objects, else one ``body`` entry when the raw bodies differ. An empty list: nothing differs.
    """
    entries: list[DiffEntry] = []
    if expected_status != 0 and expected_status != actual_status:
        entries.append(DiffEntry("status", str(expected_status), str(actual_status)))
    expected_map, actual_map = _header_map(expected_headers), _header_map(actual_headers)
    ignored = set(headers_whitelist)
    if "*" not in ignored:
        for name, values in expected_map.items():
            if name in ignored:
                continue
            actual = actual_map.get(name)
            if actual is None:
                entries.append(DiffEntry("header/" + name, _go_list(values), NULL))
            elif list(values) != list(actual):
                entries.append(DiffEntry("header/" + name, _go_list(values), _go_list(actual)))
    expected_raw, actual_raw = _bytes(expected_body), _bytes(actual_body)
    expected_doc = _json_object(expected_raw, expected_map)
    actual_doc = _json_object(actual_raw, actual_map) if expected_doc is not None else None
    if expected_doc is not None and actual_doc is not None:
        _compare_objects("body", expected_doc, actual_doc, entries)
    elif expected_raw != actual_raw:
        entries.append(DiffEntry("body", _text(expected_raw), _text(actual_raw)))
    return entries


def _header_map(headers: Headers) -> dict[str, Sequence[str]]:
    items = headers.items() if isinstance(headers, Mapping) else headers
    return {go_text(name): [go_text(v) for v in values] for name, values in items}


def _bytes(body: bytes | str) -> bytes:
    return body.encode("utf-8", "surrogateescape") if isinstance(body, str) else bytes(body)


def _text(body: bytes) -> str:
    return body.decode("utf-8", "replace")


_JSON_CLEANUP = bytes.maketrans(b"\r\n\t\\'", b'    "')


def _json_object(body: bytes, headers: Mapping[str, Sequence[str]]) -> dict[str, JSON] | None:
    """The body as a JSON object, read as Hoverfly reads it for a diff; None when it is not one."""
    decoded = _decompress(body, _encodings(headers))
    if decoded is None:
        return None
    try:
        value = decode_float(_text(decoded.translate(_JSON_CLEANUP)))
    except InvalidJSON:
        return None
    return value if isinstance(value, dict) else None


def _encodings(headers: Mapping[str, Sequence[str]]) -> list[str]:
    return [v for name, values in headers.items() if name.lower() == "content-encoding" for v in values]


def _decompress(body: bytes, encodings: Sequence[str]) -> bytes | None:
    """The body with each listed encoding undone in turn; None when one cannot be undone."""
    for encoding in encodings:
        try:
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                try:
                    body = zlib.decompress(body)
                except zlib.error:
                    body = zlib.decompress(body, -zlib.MAX_WBITS)
            elif encoding == "br":
                return None
        except (OSError, EOFError, zlib.error):
            return None
    return body


def _compare_objects(prefix: str, expected: dict[str, JSON], actual: dict[str, JSON], out: list[DiffEntry]) -> None:
    for key, want in expected.items():
        field = f"{prefix}/{key}"
        if key not in actual:
            out.append(DiffEntry(field, _go_top(want), NULL))
            continue
        got = actual[key]
        if isinstance(want, dict) and isinstance(got, dict):
            _compare_objects(field, want, got, out)
        elif not _same(want, got):
            out.append(DiffEntry(field, _go_top(want), _go_top(got)))


def _same(a: JSON, b: JSON) -> bool:
    """Go's ``reflect.DeepEqual`` on decoded JSON: types must match (``true`` is not ``1``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _go_list(values: Sequence[str]) -> str:
    """A string slice as Go's ``fmt`` prints it: ``[v1 v2]``."""
    return "[" + " ".join(values) + "]"


def _go_top(value: JSON) -> str:
    """An entry's value: Go's ``%v`` of a decoded JSON value, with JSON null shown as ``null``."""
    return NULL if value is None else _go_v(value)


def _go_v(value: JSON) -> str:
    """Go's ``%v`` of a decoded JSON value: strings raw, float64 ``%g``, ``[a b]``, ``map[k:v]``."""
    if value is None:
        return "<nil>"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float | int):
        return format_v_float(float(value))
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_v(v) for v in value) + "]"
    return str(value)
