"""The packed form of a journal entry: the request kept as the bytes it came in.

Most entries take this form. When one read from the client held exactly one request, the journal
keeps that read's bytes, how the request arrived (``engine.http_request.Arrival``) and the
response part its wire encoded once (``engine.responses.journal_parts``). On the request path it
only appends a tuple of objects that already exist (``Packable``); the in-process store keeps that
tuple, and the flush to a shared store packs it behind a fixed header with one join. The request
is parsed again, by the proxy's own rules, only when the journal is read. (The JSON form in
``engine.journal.entries`` stays for the rest: a request split over reads or pipelined, a body limit,
indexes, an entry rewritten after its post-serve action, an answer written with a fault, which the
JSON form names.)
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import orjson

from simproxy.engine.wire.parse import Arrival, read_request
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import split_journal_parts

MARK = b"\x01"
"""A packed entry's first byte (a JSON entry's is ``[``)."""

Packable = tuple[str, int, bytes, bytes, bytes, int, float, float, str]
"""An entry before packing: (the id's prefix, sequence number, the request's bytes, the encoded
arrival, the wire's journal part, status, time received in epoch seconds, latency in ms, mode).
Only immutable objects that exist already: the in-process store keeps this tuple as it is, and
the garbage collector stops examining it after one look."""

_HEAD = struct.Struct("<cQHddBBHII")
"""mark, sequence number, status, time received, latency, and the lengths of: the id's prefix,
the mode, the arrival, the request's bytes, the response part (in that order after the head)."""


def entry_id(entry: Packable) -> str:
    return f"{entry[0]}{entry[1]:x}"


@dataclass(frozen=True, slots=True)
class RepeatedEntries:
    """Consecutive entries of one exchange served again and again: the same request bytes (the
    request memo hands the same object for the same bytes), the same answer and the same mode; only
    the time received and the latency differ. The first entry is kept whole (``head``), the others
    as two columns of floats (the float objects the request made anyway), so a request served again
    costs the journal two list items. The in-process store keeps the run as it is
    (``store.JournalRun``): each entry's ``Packable`` is made when read."""

    head: Packable
    times: list[float]
    """The time received of each entry after the head, in epoch seconds."""
    latencies: list[float]
    """The latency of each entry after the head, in seconds (the head's, as in ``Packable``, in ms)."""

    def __len__(self) -> int:
        return len(self.times) + 1

    def entry_id(self, position: int) -> str:
        return f"{self.head[0]}{self.head[1] + position:x}"

    def record(self, position: int) -> Packable:
        if position == 0:
            return self.head
        prefix, sequence, request, arrival, response, status, _, _, mode = self.head
        at = position - 1
        return (
            prefix, sequence + position, request, arrival, response, status,
            self.times[at], self.latencies[at] * 1000, mode,
        )  # fmt: skip

    def records(self) -> Iterator[Packable]:
        return map(self.record, range(len(self)))

    def position(self, entry_id: str) -> int | None:
        prefix, first = self.head[0], self.head[1]
        if not entry_id.startswith(prefix):
            return None
        try:
            at = int(entry_id[len(prefix) :], 16) - first
        except ValueError:
            return None
        return at if 0 <= at < len(self) and self.entry_id(at) == entry_id else None

    def part(self, start: int, stop: int) -> RepeatedEntries:
        return RepeatedEntries(self.record(start), self.times[start : stop - 1], self.latencies[start : stop - 1])


def pack_entry(entry: Packable) -> bytes:
    """The bytes a shared store keeps."""
    prefix, sequence, request, arrival, response, status, received, latency_ms, mode = entry
    prefix_bytes, mode_bytes = prefix.encode("ascii"), mode.encode("ascii")
    head = _HEAD.pack(
        MARK, sequence, status, received, latency_ms,
        len(prefix_bytes), len(mode_bytes), len(arrival), len(request), len(response),
    )  # fmt: skip
    return b"".join((head, prefix_bytes, mode_bytes, arrival, request, response))


_TIMES = struct.Struct("<dd")
_TIMES_AT = struct.calcsize("<cQH")
"""Where the time received and the latency sit in ``_HEAD``."""


def finished_at(data: bytes) -> float:
    """When a packed entry's response was sent, in epoch seconds (received plus latency), read
    from its head alone."""
    received, latency_ms = _TIMES.unpack_from(data, _TIMES_AT)
    return float(received + latency_ms / 1000)


def unpack_entry(data: bytes) -> Packable:
    """``ValueError`` for bytes that are not a packed entry."""
    try:
        _, sequence, status, received, latency, *lengths = _HEAD.unpack_from(data)
    except struct.error as exc:
        raise ValueError(f"not a packed journal entry: {exc}") from exc
    if sum(lengths) != len(data) - _HEAD.size:
        raise ValueError("not a packed journal entry: its lengths do not add up")
    fields = []
    position = _HEAD.size
    for length in lengths:
        fields.append(data[position : position + length])
        position += length
    prefix, mode, arrival, request, response = fields
    return (
        prefix.decode("ascii"),
        sequence,
        request,
        arrival,
        response,
        status,
        received,
        latency,
        mode.decode("ascii"),
    )


@dataclass(frozen=True, slots=True)
class Unpacked:
    id: str
    request: RequestDetails
    status: int
    response_headers: tuple[tuple[str, tuple[str, ...]], ...]
    response_body: bytes
    mode: str
    received: datetime
    latency_ms: float


def read_entry(entry: Packable) -> Unpacked:
    """The entry, its request parsed again by the proxy's rules."""
    _, _, request, arrival, response, status, received, latency, mode = entry
    body_json, headers_json = split_journal_parts(response)
    headers = orjson.loads(headers_json)
    return Unpacked(
        entry_id(entry),
        read_request(request, Arrival.decode(arrival)),
        status,
        tuple((name, tuple(values)) for name, values in headers.items()),
        orjson.loads(body_json).encode("utf-8"),
        mode,
        datetime.fromtimestamp(received).astimezone(),
        latency,
    )
