"""A request served again (the same read, answer and mode) is one more time and latency of the entry
before it: the recorder keeps such runs as ``RepeatedEntries``, the in-process store keeps them as
they are, and every entry still reads back, is numbered, trimmed, amended and found on its own."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simproxy.engine.journal.entries import decode_entry
from simproxy.engine.journal.packed import Packable, RepeatedEntries
from simproxy.engine.journal.recorder import Recorder
from simproxy.engine.simulation.model import Response
from simproxy.engine.wire.parse import Arrival, read_request
from simproxy.engine.wire.request import Received
from simproxy.engine.wire.response import Wire, render_response
from simproxy.store import JournalItem, MemoryStore

ARRIVAL = Arrival().encode()


def _wire(body: bytes) -> Wire:
    return render_response(
        Response(status=200, body=body, headers=(("Content-Type", ("text/plain",)),)), "response"
    ).proxy


def _read(path: str) -> bytes:
    return f"GET http://h.test{path} HTTP/1.1\r\nHost: h.test\r\n\r\n".encode()


def _served(raw: bytes | None, received: float) -> Received:
    request = read_request(raw or _read("/split"), Arrival())
    return Received(request, received, 0.0, raw, ARRIVAL)


class _Shared(MemoryStore):
    """Keeps what it is given, but asks for packed entries, as a shared store does."""

    shared = True


def _serve_all(recorder: Recorder, plan: list[tuple[bytes | None, Wire, str]]) -> list[int]:
    """Tell the recorder of each (read, wire, mode) in turn, entry ``i`` received at ``1000 + i`` and
    taking ``i`` ms; the sequence numbers it gave, one per entry."""
    numbers = []
    for i, (raw, wire, mode) in enumerate(plan):
        recorder.served(wire, _served(raw, 1000.0 + i), i / 1000, mode)
        numbers.append(recorder.last_sequence)
    return numbers


@pytest.mark.parametrize("shared", [False, True])
def test_entries_of_a_request_served_again_read_back_each_with_its_own_number_time_and_latency(shared: bool) -> None:
    one, other = _read("/one"), _read("/other")
    hit, miss = _wire(b"one"), _wire(b"other")
    mode = "simulate"
    plan: list[tuple[bytes | None, Wire, str]] = [(one, hit, mode)] * 4
    plan += [(other, miss, mode), (one, hit, mode), (one, hit, mode), (None, hit, mode), (one, hit, mode)]
    plan += [(one, hit, mode)] * 3

    async def scenario() -> None:
        store = _Shared() if shared else MemoryStore()
        recorder = Recorder(journal_size=100, logs_size=0, repeats=True)
        numbers = _serve_all(recorder, plan[:6])
        await recorder.flush(store)  # a flush between two entries of one run
        numbers += _serve_all(recorder, plan[6:])[: len(plan) - 6]
        await recorder.flush(store)
        raws = await store.journal_entries()
        assert all(isinstance(raw, bytes) for raw in raws) == shared
        entries = [decode_entry(raw) for raw in raws]
        assert [e.request.path for e in entries] == ["/one"] * 4 + ["/other", "/one", "/one", "/split"] + ["/one"] * 4
        assert [e.id for e in entries] == [recorder.entry_id(n) for n in numbers]
        assert numbers == list(range(numbers[0], numbers[0] + len(plan)))
        # _serve_all's clock restarted at the flush: entry i of each half at 1000 + i
        times = [e.time_started.timestamp() for e in entries]
        assert times == [1000.0 + i for i in range(6)] + [1000.0 + i for i in range(len(plan) - 6)]
        latencies = [round(e.latency_ms, 6) for e in entries]
        assert latencies == [float(i) for i in range(6)] + [float(i) for i in range(len(plan) - 6)]
        assert [e.response_body for e in entries] == [b"one"] * 4 + [b"other", b"one", b"one", b"one"] + [b"one"] * 4
        assert (await store.sizes())[0] == len(plan)
        assert not recorder.pending

    asyncio.run(scenario())


def test_an_entry_in_another_mode_is_not_taken_for_a_repeat() -> None:
    raw, wire = _read("/one"), _wire(b"one")

    async def scenario() -> None:
        store, recorder = MemoryStore(), Recorder(journal_size=100, logs_size=0, repeats=True)
        _serve_all(recorder, [(raw, wire, "simulate"), (raw, wire, "simulate"), (raw, wire, "spy")])
        await recorder.flush(store)
        assert [decode_entry(r).mode for r in await store.journal_entries()] == ["simulate", "simulate", "spy"]

    asyncio.run(scenario())


def test_without_repeats_every_entry_is_kept_on_its_own() -> None:
    raw, wire = _read("/one"), _wire(b"one")

    async def scenario() -> None:
        store, recorder = MemoryStore(), Recorder(journal_size=100, logs_size=0)
        numbers = _serve_all(recorder, [(raw, wire, "simulate")] * 3)
        await recorder.flush(store)
        stored = await store.journal_entries()
        assert [type(r) for r in stored] == [tuple] * 3
        assert [decode_entry(r).id for r in stored] == [recorder.entry_id(n) for n in numbers]

    asyncio.run(scenario())


def _run(first: int, count: int, path: str = "/r") -> RepeatedEntries:
    head: Packable = ("ab12cd34", first, _read(path), ARRIVAL, _wire(b"r").journal or b"", 200, 10.0, 1.0, "simulate")
    times = [10.0 + i for i in range(1, count)]
    return RepeatedEntries(head, times, [0.001] * (count - 1))


def _ids(records: list[object]) -> list[str]:
    return [decode_entry(r).id for r in records]  # type: ignore[arg-type]


def test_the_in_process_store_trims_amends_finds_and_clears_entries_inside_runs() -> None:
    async def scenario() -> None:
        store = MemoryStore()
        single: Packable = ("ab12cd34", 1, _read("/s"), ARRIVAL, _wire(b"s").journal or b"", 200, 9.0, 1.0, "simulate")
        await store.journal_append([("ab12cd341", single), _run(2, 5)], {}, 100)
        assert (await store.sizes())[0] == 6
        assert _ids(await store.journal_entries()) == [f"ab12cd34{n:x}" for n in range(1, 7)]
        await store.journal_append([_run(7, 3)], {}, 5)  # the limit cuts into the first run
        assert _ids(await store.journal_entries()) == [f"ab12cd34{n:x}" for n in range(5, 10)]
        assert (await store.sizes())[0] == 5
        # an entry in the middle of a run is amended; its neighbours keep their ids and times
        assert await store.journal_amend("ab12cd347", b"amended")
        assert not await store.journal_amend("ab12cd3401", b"no such entry")
        assert not await store.journal_amend("ab12cd342", b"trimmed")
        stored = await store.journal_entries()
        assert stored[2] == b"amended" and len(stored) == 5
        assert _ids([r for r in stored if r != b"amended"]) == [f"ab12cd34{n:x}" for n in (5, 6, 8, 9)]
        assert [decode_entry(r).time_started.timestamp() for r in stored if r != b"amended"] == [13.0, 14.0, 11.0, 12.0]
        await store.journal_set_index(
            "by", {"k5": "ab12cd345", "k7": "ab12cd347", "k9": "ab12cd349", "k1": "ab12cd341"}
        )
        found = await store.journal_lookup("by", ["k5", "k7", "k9", "k1", "none"])
        assert found[1] == b"amended" and found[3:] == [None, None]
        assert _ids([found[0], found[2]]) == ["ab12cd345", "ab12cd349"]
        await store.journal_append([_run(10, 4)], {}, 3)  # the whole of the older entries goes
        assert _ids(await store.journal_entries()) == [f"ab12cd34{n:x}" for n in (11, 12, 13)]
        await store.journal_clear(["by"])
        assert await store.journal_entries() == [] and (await store.sizes())[0] == 0

    asyncio.run(scenario())


def test_a_run_finds_only_its_own_entries() -> None:
    run = _run(0x10, 4)
    assert [run.position(run.entry_id(i)) for i in range(4)] == [0, 1, 2, 3]
    for other in ("ab12cd34f", "ab12cd3414", "ab12cd34010", "ab12cd34zz", "ff12cd3411", "ab12cd34"):
        assert run.position(other) is None
    part = run.part(1, 3)
    assert [part.entry_id(i) for i in range(len(part))] == ["ab12cd3411", "ab12cd3412"]
    assert [(r[6], r[7]) for r in part.records()] == [(11.0, 1.0), (12.0, 1.0)]  # latency in ms


def test_the_count_of_entries_stays_right_through_amends_and_trims_of_runs() -> None:
    async def scenario() -> None:
        store = MemoryStore()
        await store.journal_append([_run(1, 8)], {}, 100)
        for n in range(1, 9):  # every entry of the run amended: the run is split each time
            assert await store.journal_amend(f"ab12cd34{n:x}", b"amended %d" % n)
        assert (await store.sizes())[0] == 8
        assert await store.journal_entries() == [b"amended %d" % n for n in range(1, 9)]
        await store.journal_append([_run(9, 10)], {}, 10)
        assert (await store.sizes())[0] == 10
        assert _ids(await store.journal_entries()) == [f"ab12cd34{n:x}" for n in range(9, 19)]

        store = MemoryStore()
        await store.journal_append([_run(1, 3)], {}, 4)
        assert await store.journal_amend("ab12cd342", b"amended")  # the middle one
        assert (await store.sizes())[0] == 3
        single: Packable = ("ab12cd34", 4, _read("/s"), ARRIVAL, _wire(b"s").journal or b"", 200, 9.0, 1.0, "simulate")
        await store.journal_append([("ab12cd344", single)], {}, 4)
        await store.journal_append([("ab12cd345", single)], {}, 4)
        stored = await store.journal_entries()
        assert (await store.sizes())[0] == len(stored) == 4 and stored[0] == b"amended"

    asyncio.run(scenario())


@pytest.mark.parametrize("limit", [1, 2])
def test_a_run_cut_to_its_last_entries_reads_back_as_entries(limit: int) -> None:
    async def scenario() -> None:
        store = MemoryStore()
        await store.journal_append([_run(1, 4)], {}, limit)
        stored = await store.journal_entries()
        assert all(isinstance(r, tuple) for r in stored)
        assert _ids(stored) == [f"ab12cd34{n:x}" for n in range(5 - limit, 5)]
        assert (await store.sizes())[0] == limit
        await store.journal_append([_run(5, 3)], {}, 3)  # a run of 3 then cut by an amend into ones
        assert await store.journal_amend("ab12cd346", b"amended")
        stored = await store.journal_entries()
        assert all(isinstance(r, tuple | bytes) for r in stored) and len(stored) == 3

    asyncio.run(scenario())


# a journal step: ("append", [run lengths; 1 is a single entry], limit) or ("amend", which entry)
Step = tuple[str, list[int], int]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("append"), st.lists(st.integers(1, 6), min_size=1, max_size=4), st.integers(0, 12)),
            st.tuples(st.just("amend"), st.just([]), st.integers(0, 40)),
        ),
        max_size=25,
    )
)
def test_the_in_process_journal_reads_as_a_plain_list_of_its_entries(steps: list[Step]) -> None:
    """Whatever appends (entries and runs), trims and amends come, the store reads back exactly what
    a plain list of entries would hold."""

    async def scenario() -> None:
        store, model = MemoryStore(), []  # model: (id, amended bytes or None), oldest first
        sequence = 1
        for kind, lengths, number in steps:
            if kind == "append":
                items: list[JournalItem] = []
                for length in lengths:
                    if length == 1:
                        single = _run(sequence, 1).head
                        items.append((f"ab12cd34{sequence:x}", single))
                    else:
                        items.append(_run(sequence, length))
                    model += [(f"ab12cd34{n:x}", None) for n in range(sequence, sequence + length)]
                    sequence += length
                await store.journal_append(items, {}, number)
                model = model[max(len(model) - number, 0) :] if number else []
            else:
                entry_id = f"ab12cd34{number + 1:x}"
                position = next((i for i, (known, _) in enumerate(model) if known == entry_id), None)
                assert await store.journal_amend(entry_id, b"amended " + entry_id.encode()) == (position is not None)
                if position is not None:
                    model[position] = (entry_id, b"amended " + entry_id.encode())
            stored = await store.journal_entries()
            assert (await store.sizes())[0] == len(stored) == len(model)
            for record, (entry_id, amended) in zip(stored, model, strict=True):
                assert record == amended if amended else decode_entry(record).id == entry_id

    asyncio.run(scenario())
