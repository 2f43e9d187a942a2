"""A journal entry of an answer written with a fault says which fault it got, next to the response
the simulation chose, in every form the entry takes: the view, the JSON storage form, and through
the recorder into the in-process and a shared store (a faulted answer is never packed)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import orjson
import pytest

from simproxy.engine.journal.entries import decode_entry, encode_entry, entry_view, record_entry
from simproxy.engine.journal.packed import MARK
from simproxy.engine.journal.recorder import Recorder
from simproxy.engine.simulation.model import Fault, FaultKind, Response
from simproxy.engine.wire.parse import Arrival, read_request
from simproxy.engine.wire.request import Received
from simproxy.engine.wire.response import Wire, render_response
from simproxy.store import MemoryStore

ARRIVAL = Arrival().encode()

# (the fault the answer was written with, its ``response.fault`` in the journal)
FAULTS: list[tuple[Fault, dict[str, Any]]] = [
    (Fault(FaultKind.CONNECTION_RESET), {"type": "connectionReset"}),
    (Fault(FaultKind.EMPTY_RESPONSE, fraction=0.5), {"type": "emptyResponse"}),
    (Fault(FaultKind.MALFORMED_CHUNK), {"type": "malformedChunk"}),
    (Fault(FaultKind.RANDOM_DATA_THEN_CLOSE), {"type": "randomDataThenClose"}),
    (
        Fault(FaultKind.DRIBBLE, chunks=5, duration_ms=1000, fraction=0.2),
        {"type": "dribble", "chunks": 5, "durationMs": 1000},
    ),
    (Fault(FaultKind.BANDWIDTH, bytes_per_second=51200), {"type": "bandwidth", "bytesPerSecond": 51200}),
]  # fmt: skip


def _wire(fault: Fault | None = None, body: bytes = b'{"ok": 1}') -> Wire:
    wire = render_response(
        Response(status=200, body=body, headers=(("Content-Type", ("application/json",)),)), "response"
    ).proxy
    return wire if fault is None else replace(wire, fault=fault)


def _read(path: str) -> bytes:
    return f"GET http://h.test{path} HTTP/1.1\r\nHost: h.test\r\n\r\n".encode()


def _received(path: str, at: float, *, kept: bool = True) -> Received:
    raw = _read(path)
    return Received(read_request(raw, Arrival()), at, 0.0, raw if kept else None, ARRIVAL)


class _Shared(MemoryStore):
    """Keeps what it is given, but asks for packed entries, as a shared store (Redis) does."""

    shared = True


def _journal(store: MemoryStore) -> list[Any]:
    return asyncio.run(store.journal_entries())


@pytest.mark.parametrize(("fault", "shown"), FAULTS, ids=[f.kind.value for f, _ in FAULTS])
def test_an_entry_shows_its_fault_next_to_the_status_the_client_did_not_get_as_recorded(
    fault: Fault, shown: dict[str, Any]
) -> None:
    req = read_request(_read("/orders"), Arrival())
    entry = record_entry("e1", req, _wire(fault), "simulate", 1700000000.25, 2.5)
    response = entry_view(entry)["response"]
    assert list(response) == ["status", "fault", "body", "encodedBody", "headers"]
    assert response["status"] == 200 and response["fault"] == shown and response["body"] == '{"ok": 1}'

    stored = encode_entry(entry)
    assert orjson.loads(stored)[8] == shown  # an element of its own, after the eight of every entry
    back = decode_entry(stored)
    assert back.fault == replace(fault, fraction=1.0)  # it applied: the fraction that chose it is not kept
    assert entry_view(back) == entry_view(entry)
    assert entry_view(decode_entry(encode_entry(entry, body_limit=4)))["response"]["fault"] == shown


def test_an_entry_without_a_fault_is_stored_and_shown_as_before() -> None:
    req = read_request(_read("/orders"), Arrival())
    entry = record_entry("e1", req, _wire(), "simulate", 1700000000.25, 2.5)
    assert list(entry_view(entry)["response"]) == ["status", "body", "encodedBody", "headers"]
    assert len(orjson.loads(encode_entry(entry))) == 8
    assert decode_entry(encode_entry(entry)).fault is None


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("how", ["kept", "split", "indexed", "limited"])
def test_the_recorder_stores_the_fault_of_each_faulted_answer_among_the_others(shared: bool, how: str) -> None:
    """Whatever path an entry takes (its request's bytes kept, a request split over reads, an
    index, a body cut to the limit), a faulted answer's entry comes back with its fault and the
    others without, in the order they came; the unfaulted ones kept as bytes are still packed."""
    reset, dribble = FAULTS[0][0], FAULTS[4][0]
    plan = [None, reset, None, None, dribble, reset, None]

    async def scenario() -> list[Any]:
        store = _Shared() if shared else MemoryStore()
        recorder = Recorder(journal_size=100, logs_size=10, body_limit=4 if how == "limited" else None)
        if how == "indexed":
            recorder.use_indexes(["Request.Path"])
        plain = _wire()  # one object, served again and again: the recorder may keep a run of it
        for n, fault in enumerate(plan):
            wire = plain if fault is None else _wire(fault)
            recorder.served(wire, _received(f"/{n}", time.time(), kept=how != "split"), 0.001, "simulate")
        await recorder.flush(store)
        return list(await store.journal_entries())

    records = asyncio.run(scenario())
    entries = [decode_entry(raw) for raw in records]
    assert [e.request.path for e in entries] == [f"/{n}" for n in range(len(plan))]
    assert [e.fault for e in entries] == [None if f is None else replace(f, fraction=1.0) for f in plan]
    assert [("fault" in entry_view(e)["response"]) for e in entries] == [f is not None for f in plan]
    if how == "kept":  # the first, unfaulted entry packed as before; the faulted ones in JSON
        assert isinstance(records[0], tuple) or records[0][:1] == MARK
        assert all(isinstance(records[n], bytes) and records[n][:1] == b"[" for n in (1, 4, 5))


def test_a_faulted_answer_served_again_is_no_repeat_of_the_same_answer_unfaulted() -> None:
    """A pair's answer with its fault, the same answer spared by the roll, and the pair's faulted
    answer again: three entries, each with the fault it got (the in-process store keeps runs)."""
    faulted = _wire(FAULTS[1][0])
    spared = replace(faulted, fault=None)
    recorder = Recorder(journal_size=100, logs_size=10, repeats=True)
    store = MemoryStore()
    for n, wire in enumerate([spared, spared, faulted, faulted, spared]):
        recorder.served(wire, _received("/same", 1000.0 + n), 0.001, "simulate")
    asyncio.run(recorder.flush(store))
    kinds = [None if e.fault is None else e.fault.kind.value for e in map(decode_entry, _journal(store))]
    assert kinds == [None, None, "emptyResponse", "emptyResponse", None]
