"""The journal (Hoverfly's core/journal): entries, their wire view and storage form, paging and
sorting, and the indexes (the ``POST /journal`` search is ``engine.journal_search``). Pure: no I/O, no clock.

An answer written with a fault (simproxy's own) keeps the response the simulation chose, and names
the fault that broke or slowed it for the client: ``response.fault`` in the view, an element of its
own in the storage form (absent, as in Hoverfly, when no fault applied).

Bodies are truncated when an entry is *stored* (``encode_entry(..., body_limit)``), as Hoverfly
truncates when it records, so the view, the search and the indexes all see the truncated text. An index name is
the template ``{{<name>}}`` rendered over an entry's request.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

import orjson

from simproxy.engine.errors import SimulationError
from simproxy.engine.journal.packed import MARK as PACKED
from simproxy.engine.journal.packed import Packable, finished_at, read_entry, unpack_entry
from simproxy.engine.matching.registry import CompiledMatcher
from simproxy.engine.simulation.codec import decode_fault, encode_fault, sniff_content_type
from simproxy.engine.simulation.model import Fault
from simproxy.engine.templating import CsvTables, NoJournal, RenderContext, Template, TemplateEngine, Variables
from simproxy.engine.wire.request import RequestDetails, lower_keys, query_string
from simproxy.engine.wire.response import Wire, split_journal_parts
from simproxy.store import JournalRecord

DEFAULT_LIMIT = 500
"""``limit`` when absent or not a positive integer (admin-api.md; Hoverfly's code says 25)."""

Headers = tuple[tuple[str, tuple[str, ...]], ...]
CompiledList = tuple[CompiledMatcher, ...]
Named = tuple[tuple[str, CompiledList], ...]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One proxied request and its answer."""

    id: str
    request: RequestDetails
    status: int
    response_headers: Headers
    response_body: bytes
    mode: str
    time_started: datetime
    """Aware; its own offset is the one shown in ``timeStarted``."""
    latency_ms: float
    post_serve_action: dict[str, Any] | None = None
    """The wire object (see ``post_serve_action_view``), or None when no action ran."""
    fault: Fault | None = None
    """The fault the answer was written with (engine/server/faults.py), or None: then the client
    got ``status``, headers and body as recorded. With one, it got what that fault sends."""


def fault_view(fault: Fault) -> dict[str, Any]:
    """An entry's ``response.fault``: the fault's type and the parameters it was written with. No
    ``fraction``: the request got the fault (a request the roll spared has no ``fault``)."""
    view = encode_fault(fault)
    view.pop("fraction", None)
    return view


def post_serve_action_view(
    name: str, invoked: datetime, completed: datetime, correlation_id: str = "", status: int = 0
) -> dict[str, Any]:
    """An entry's ``postServeAction`` object; ``correlationId`` and ``status`` left out when empty."""
    out: dict[str, Any] = {"name": name, "invoked": format_time(invoked), "completed": format_time(completed)}
    if correlation_id:
        out["correlationId"] = correlation_id
    if status:
        out["status"] = status
    return out


# ---------------------------------------------------------------------------------------------
# the wire view

_TEXTUAL = ("text", "plain", "css", "html", "json", "xml", "js", "javascript")


def format_time(moment: datetime) -> str:
    """Go's ``2006-01-02T15:04:05.000Z07:00``: milliseconds truncated, ``Z`` for a zero offset."""
    base = (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
        f"{moment.second:02d}.{moment.microsecond // 1000:03d}"
    )
    offset = moment.utcoffset()
    minutes = 0 if offset is None else int(offset.total_seconds()) // 60
    if minutes == 0:
        return base + "Z"
    sign = "+" if minutes > 0 else "-"
    return f"{base}{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _text(value: str) -> str:
    """A string as Go's JSON writes it: bytes that are not UTF-8 become U+FFFD."""
    if value.isascii():
        return value
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _body(headers: Mapping[str, Sequence[str]], body: bytes) -> tuple[str, bool]:
    """(body, base64?) by Hoverfly's ``NeedsEncoding``: any ``Content-Encoding`` (exact key), or a
    sniffed type that is not text-like."""
    if headers.get("Content-Encoding") or not any(word in sniff_content_type(body) for word in _TEXTUAL):
        return base64.b64encode(body).decode("ascii"), True
    return body.decode("utf-8", "replace"), False


def _map(values: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """A Go map of string slices: keys sorted."""
    return {_text(k): [_text(v) for v in values[k]] for k in sorted(values)}


def entry_view(entry: JournalEntry) -> dict[str, Any]:
    """One entry as ``GET /api/v2/journal`` lists it, in Hoverfly's key order."""
    req = entry.request
    req_body, _ = _body(req.headers, req.body.encode("utf-8", "surrogateescape"))
    response_headers = dict(entry.response_headers)
    resp_body, encoded = _body(response_headers, entry.response_body)
    response: dict[str, Any] = {"status": entry.status}
    if entry.fault is not None:  # next to the status the client did not get as recorded
        response["fault"] = fault_view(entry.fault)
    response["body"], response["encodedBody"] = resp_body, encoded
    if response_headers:
        response["headers"] = _map(response_headers)
    latency = entry.latency_ms
    return {
        "request": {
            "path": _text(req.path),
            "method": _text(req.method),
            "destination": _text(req.destination),
            "scheme": req.scheme,
            "query": _text(query_string(req.query)),
            "formData": _map(req.form),
            "body": req_body,
            "headers": _map(req.headers),
            **({"protocol": req.protocol} if req.protocol else {}),
        },
        "response": response,
        "mode": entry.mode,
        "timeStarted": format_time(entry.time_started),
        "latency": int(latency) if float(latency).is_integer() else latency,  # Go writes 2, not 2.0
        "id": entry.id,
        "postServeAction": entry.post_serve_action,
    }


# ---------------------------------------------------------------------------------------------
# the storage form


def truncate(data: bytes, limit: int) -> bytes:
    """Hoverfly's ``TruncateStringWithEllipsis``: at most ``limit`` bytes ending in ``...``, cut
    back to valid UTF-8. (Hoverfly also turns a body *shorter* than a limit of 1-3 into ``...``.)"""
    if len(data) <= limit:
        return data
    if limit <= 3:
        return b"..."
    cut = data[: limit - 3]
    try:
        cut.decode("utf-8")
    except UnicodeDecodeError as exc:  # the longest valid prefix, as Go's loop leaves it
        cut = cut[: exc.start]
    return cut + b"..."


def _w(value: str) -> Any:
    """A string orjson can write: itself, or ``{"x": base64}`` of its bytes when it holds escapes."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return {"x": base64.b64encode(value.encode("utf-8", "surrogateescape")).decode("ascii")}
    return value


def _u(value: Any) -> str:
    if isinstance(value, dict):
        return base64.b64decode(value["x"]).decode("utf-8", "surrogateescape")
    return str(value)


def _pairs(values: Iterable[tuple[str, Sequence[str]]]) -> list[Any]:
    return [[_w(k), [_w(v) for v in vs]] for k, vs in values]


def _unpairs(raw: list[Any] | dict[str, Any]) -> dict[str, list[str]]:
    items = raw.items() if isinstance(raw, dict) else raw
    return {_u(k): [_u(v) for v in vs] for k, vs in items}


def encode_entry(entry: JournalEntry, body_limit: int | None = None) -> bytes:
    """The compact storage form; both bodies truncated to ``body_limit`` bytes when it is above 0."""
    req = entry.request
    req_body = req.body
    resp_body = entry.response_body
    if body_limit is not None and body_limit > 0:
        req_body = truncate(req_body.encode("utf-8", "surrogateescape"), body_limit).decode("utf-8", "surrogateescape")
        resp_body = truncate(resp_body, body_limit)
    texts = (req.method, req.scheme, req.destination, req.path, req_body, resp_body.decode("utf-8", "surrogateescape"))
    maps = (req.query.items(), req.headers.items(), req.form.items(), entry.response_headers)
    payload = (entry.id, entry.status, entry.mode, entry.time_started.isoformat(), entry.latency_ms)
    row = [*payload, entry.post_serve_action, [_w(t) for t in texts], [_pairs(m) for m in maps]]
    if entry.fault is not None or req.protocol:  # a ninth element, only then: an entry without stays as it was
        row.append(None if entry.fault is None else fault_view(entry.fault))
    if req.protocol:  # a tenth, HTTP/2's
        row.append(req.protocol)
    return orjson.dumps(row)


def encode_record(
    entry_id: str, req: RequestDetails, wire: Wire, mode: str, received: float, latency_ms: float
) -> bytes:
    """``encode_entry`` for the request path's common case, without building a ``JournalEntry``:
    an answer without a fault (the recorder sends a faulted one to ``encode_entry``).

    The response part was encoded once with the wire; maps are written as objects and the time
    as epoch seconds (``decode_entry`` reads both forms). Text that is not valid UTF-8 falls back
    to ``encode_entry``'s careful form.
    """
    if wire.journal is not None:
        body, headers = (orjson.Fragment(part) for part in split_journal_parts(wire.journal))
        texts = (req.method, req.scheme, req.destination, req.path, req.body, body)
        maps = (req.query, req.headers, req.form, headers)
        row = [entry_id, wire.status, mode, received, latency_ms, None, texts, maps]
        if req.protocol:  # no fault (a ninth element), HTTP/2's tenth: as encode_entry writes them
            row += (None, req.protocol)
        try:
            return orjson.dumps(row)
        except orjson.JSONEncodeError:
            pass
    return encode_entry(record_entry(entry_id, req, wire, mode, received, latency_ms))


def record_entry(
    entry_id: str, req: RequestDetails, wire: Wire, mode: str, received: float, latency_ms: float
) -> JournalEntry:
    """The entry for a request the proxy answered with ``wire`` (``received``: epoch seconds), and
    the fault it was written with, if any."""
    moment = datetime.fromtimestamp(received).astimezone()
    return JournalEntry(
        entry_id, req, wire.status, wire.journaled_headers, wire.raw_body, mode, moment, latency_ms, None, wire.fault
    )


def decode_entry(raw: JournalRecord) -> JournalEntry:
    """An entry in any stored form: ``encode_entry``'s JSON, or ``engine.journal.packed``'s packed
    bytes or (from the in-process store) its tuple."""
    if isinstance(raw, tuple) or raw[:1] == PACKED:
        e = read_entry(cast(Packable, raw) if isinstance(raw, tuple) else unpack_entry(raw))
        return JournalEntry(
            e.id, e.request, e.status, e.response_headers, e.response_body, e.mode, e.received, e.latency_ms
        )
    fields = orjson.loads(raw)
    id_, status, mode, started, latency, action, texts, maps = fields[:8]
    fault = decode_fault(fields[8], "journal entry fault") if len(fields) > 8 and fields[8] is not None else None
    protocol = fields[9] if len(fields) > 9 else ""
    method, scheme, destination, path, body, resp_body = (_u(t) for t in texts)
    query, headers, form = (_unpairs(m) for m in maps[:3])
    request = RequestDetails(
        method,
        scheme,
        destination,
        path,
        query,
        body,
        headers,
        lower_keys(headers),
        lower_keys(query),
        form,
        "",
        protocol,
    )
    raw_headers = maps[3].items() if isinstance(maps[3], dict) else maps[3]
    response_headers = tuple((_u(k), tuple(_u(v) for v in vs)) for k, vs in raw_headers)
    resp = resp_body.encode("utf-8", "surrogateescape")
    if isinstance(started, int | float):
        time_started = datetime.fromtimestamp(started).astimezone()
    else:
        time_started = datetime.fromisoformat(started)
    return JournalEntry(id_, request, status, response_headers, resp, mode, time_started, float(latency), action, fault)


def completion_order(records: Sequence[JournalRecord]) -> list[int]:
    """The positions of a shared store's records in the order their responses were sent, as one
    process's journal lists them. Each worker flushes its entries in that order, but the store
    holds the workers' batches in the order the batches came, so two requests served on two
    workers within one flush interval could be listed the other way round. Stable: entries sent at
    one instant keep the store's order."""
    return sorted(range(len(records)), key=[_finished_at(r) for r in records].__getitem__)


def _finished_at(raw: JournalRecord) -> float:
    if isinstance(raw, tuple):  # the in-process store's unpacked form (a lone worker's: in order)
        entry = cast(Packable, raw)
        return entry[6] + entry[7] / 1000
    if raw[:1] == PACKED:
        return finished_at(raw)
    head = _JSON_TIMES.match(raw, 0, 256)  # not the whole entry: its bodies can be megabytes
    if head is None:
        started, latency = orjson.loads(raw)[3:5]
    else:
        iso, epoch, text = head.groups()
        started, latency = (iso.decode() if iso is not None else float(epoch)), float(text)
    at = started if isinstance(started, int | float) else datetime.fromisoformat(started).timestamp()
    return float(at + float(latency) / 1000)


_JSON_TIMES = re.compile(rb'\["(?:[^"\\]|\\.)*",-?\d+,"(?:[^"\\]|\\.)*",(?:"([^"]*)"|([^,"]+)),([^,\]]+)(?=[,\]])')
"""The head of a JSON entry (``encode_entry``, ``encode_record``): its id, status and mode, then its
time received (ISO text, or epoch seconds) and latency."""


# ---------------------------------------------------------------------------------------------
# GET /journal: parameters, filtering, sorting, paging

_GO_INT = re.compile(r"[+-]?[0-9]+\Z")
_EPOCH = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z")
_SPACED_OFFSET = re.compile(r"([0-9]) ([0-9]{2}(?::?[0-9]{2})?)\Z")
_INT64 = 2**63


def parse_int(value: str | None) -> int:
    """Go's ``strconv.Atoi`` with its error ignored: 0 for anything but an integer, clamped to int64."""
    if value is None or not _GO_INT.match(value):
        return 0
    return max(-_INT64, min(int(value), _INT64 - 1))


def paging(limit: str | None, offset: str | None, default_limit: int = DEFAULT_LIMIT) -> tuple[int, int]:
    """The effective ``(limit, offset)``: the default limit unless positive, offset 0 unless positive."""
    lim, off = parse_int(limit), parse_int(offset)
    return (lim if lim > 0 else default_limit), max(off, 0)


def parse_time(value: str) -> datetime | None:
    """A ``from``/``to`` bound: epoch seconds (also with a fraction) or ISO 8601 (UTC without an offset;
    a ``+`` that URL-decoding made a space is restored). None for neither, or epoch 0 (Hoverfly: no bound)."""
    text = value.strip()
    if _EPOCH.match(text):
        seconds = float(text) if "." in text else int(text)
        if seconds == 0:
            return None
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    upper = text.upper()
    for candidate in (upper, _SPACED_OFFSET.sub(r"\1+\2", upper)):
        try:
            moment = datetime.fromisoformat(candidate)
        except ValueError:
            continue
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return None


def parse_sort(value: str) -> tuple[str, bool]:
    """``<field>[:<order>]`` -> (``timestarted``|``latency``, descending); ``ValueError`` in Hoverfly's words."""
    params = value.split(":")
    key = params[0].lower() or "timestarted"
    if key not in ("timestarted", "latency"):
        raise ValueError(f"'{key}' is not a valid sort key, use timeStarted or latency")
    order = "asc"
    if len(params) > 1:
        order = params[1].lower()
        if order not in ("asc", "desc"):
            raise ValueError(f"'{order}' is not a valid sort order. use asc or desc")
    return key, order == "desc"


def query_journal(
    entries: Sequence[JournalEntry],
    *,
    limit: int,
    offset: int = 0,
    from_: datetime | None = None,
    to: datetime | None = None,
    sort: str = "",
) -> tuple[list[JournalEntry], int]:
    """(the page, the total after the inclusive ``from``/``to``); ``([], 0)`` when ``offset`` is past the
    end. ``timestarted:asc`` keeps the arrival order (Hoverfly does not sort it). ``ValueError``: bad sort."""
    key, descending = parse_sort(sort)
    selected = [
        e for e in entries if (from_ is None or e.time_started >= from_) and (to is None or e.time_started <= to)
    ]
    if key == "latency":
        selected.sort(key=lambda e: e.latency_ms, reverse=descending)
    elif descending:
        selected.sort(key=lambda e: e.time_started, reverse=True)
    return page_of(selected, limit, offset)


def page_of(items: Sequence[T], limit: int, offset: int) -> tuple[list[T], int]:
    """(``items[offset:offset + limit]``, the total); ``([], 0)`` when ``offset`` is past the end."""
    total = len(items)
    offset = max(offset, 0)
    if offset >= total:
        return [], 0
    return list(items[offset : offset + max(limit, 0)]), total


# ---------------------------------------------------------------------------------------------
# journal indexes


def index_key(name: str) -> str:
    """The name an index is stored and listed under: Hoverfly removes every apostrophe."""
    return name.replace("'", "")


@dataclass(frozen=True, slots=True)
class IndexExpression:
    """An index name compiled once as the template ``{{<name>}}``."""

    name: str
    """The stored name (``index_key``)."""
    source: str
    template: Template

    def key_of(self, entry: JournalEntry) -> str:
        """The entry's key: ``""`` for a missing value (and for a failed render)."""
        return self.try_key(entry) or ""

    def try_key(self, entry: JournalEntry) -> str | None:
        """The key, or None when the render fails: Hoverfly leaves such an entry out of the index."""
        ctx = RenderContext(entry.request, {}, {}, Variables(), CsvTables({}), NoJournal())
        result = self.template.render(ctx)
        return result.text if result.ok else None


def compile_index(name: str, engine: TemplateEngine) -> IndexExpression:
    """Raises ``ValueError`` for a name that is not a template expression."""
    try:
        template = engine.compile("{{" + name + "}}", "journal index")
    except SimulationError as exc:
        raise ValueError(f"invalid journal index {name!r}: {exc.message}") from exc
    return IndexExpression(index_key(name), name, template)


def build_index(expression: IndexExpression, entries: Iterable[JournalEntry]) -> dict[str, JournalEntry]:
    """Key -> entry over ``entries`` in arrival order: one entry per key, the last one wins."""
    out: dict[str, JournalEntry] = {}
    for entry in entries:
        key = expression.try_key(entry)
        if key is not None:
            out[key] = entry
    return out


def index_view(name: str, keyed: Mapping[str, JournalEntry], page_ids: Container[str] | None = None) -> dict[str, Any]:
    """``{"name", "entries": [{"key", "journalEntryId"}]}`` by key, only ``page_ids`` when given; no
    ``entries`` when empty (Hoverfly's ``omitempty``)."""
    entries = [
        {"key": key, "journalEntryId": entry.id}
        for key, entry in sorted(keyed.items())
        if page_ids is None or entry.id in page_ids
    ]
    return {"name": name, "entries": entries} if entries else {"name": name}
