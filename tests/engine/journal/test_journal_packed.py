"""The journal's packed entries: a request kept as the bytes it came in reads back as the proxy
built it, and agrees with the JSON form; the recorder stores both kinds in arrival order."""

from __future__ import annotations

import asyncio
import gzip
import time
from collections.abc import Mapping, Sequence

import orjson
import pytest

from simproxy.engine.journal.entries import (
    completion_order,
    decode_entry,
    encode_entry,
    encode_record,
    record_entry,
)
from simproxy.engine.journal.packed import Packable, pack_entry, unpack_entry
from simproxy.engine.journal.recorder import JOURNAL_BATCH_BYTES, Recorder
from simproxy.engine.simulation.model import Response
from simproxy.engine.wire.parse import Arrival, read_request
from simproxy.engine.wire.response import Wire, render_response
from simproxy.store import JournalRecord, MemoryStore, StoreUnavailable

ZIPPED = gzip.compress(b'{"zipped": true}')
RESPONSE_HEADERS = (("Content-Type", ("application/json",)), ("X-Many", ("1", "2")))

# (bytes received, arrival, what the request must read as)
CASES: list[tuple[bytes, Arrival, dict[str, object]]] = [
    (
        b"GET http://Api.Test:8080/p%20q?b=2&a=1&a=0 HTTP/1.1\r\nHost: other\r\nuser-agent: t\r\n\r\n",
        Arrival(),
        {
            "method": "GET", "scheme": "http", "destination": "api.test:8080", "path": "/p q",
            "query": {"b": ["2"], "a": ["1", "0"]}, "headers": {"User-Agent": ["t"]}, "body": "",
        },
    ),
    (
        b"POST /form HTTP/1.1\r\nHost: Web.Test\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: 7\r\n\r\na=1&b=2",
        Arrival(webserver=True),
        {
            "scheme": "http", "destination": "web.test", "path": "/form", "body": "a=1&b=2",
            "form": {"a": ["1"], "b": ["2"]},
        },
    ),
    (
        b"DELETE /in?x=1 HTTP/1.1\r\nX-Trace: 7\r\n\r\n",
        Arrival(tunnel_authority="secure.test:443", tunnel_scheme="https"),
        {
            "method": "DELETE", "scheme": "https", "destination": "secure.test:443", "path": "/in",
            "headers": {"X-Trace": ["7"]},
        },
    ),
    (
        b"GET http://h.test/ HTTP/1.1\r\nHost: h.test\r\nProxy-Authorization: Basic YTpi\r\nX: 1\r\n\r\n",
        Arrival(strip_proxy_authorization=True),
        {"headers": {"X": ["1"]}},
    ),
    (
        b"GET http://h.test/ HTTP/1.1\r\nHost: h.test\r\nProxy-Authorization: Basic YTpi\r\n\r\n",
        Arrival(),
        {"headers": {"Proxy-Authorization": ["Basic YTpi"]}},
    ),
    (
        b"PUT http://h.test/z HTTP/1.1\r\nHost: h.test\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
        % (len(ZIPPED), ZIPPED),
        Arrival(),
        {"body": '{"zipped": true}', "headers": {"Content-Encoding": ["gzip"], "Content-Length": [str(len(ZIPPED))]}},
    ),
    (
        b"GET http://h.test/%C3%A9t%C3%A9 HTTP/1.1\r\nHost: h.test\r\nX-Bytes: caf\xe9\r\n\r\n",
        Arrival(),
        {"path": "/\u00e9t\u00e9", "headers": {"X-Bytes": ["caf\udce9"]}},
    ),
]  # fmt: skip


def _wire(body: bytes = b'{"ok": 1}') -> Wire:
    return render_response(Response(status=201, body=body, headers=RESPONSE_HEADERS), "response").proxy


def _packable(raw: bytes, arrival: Arrival, mode: str = "simulate") -> Packable:
    wire = _wire()
    assert wire.journal is not None
    return ("abcd", 10, raw, arrival.encode(), wire.journal, wire.status, 1700000000.25, 1.5, mode)


@pytest.mark.parametrize(("raw", "arrival", "expected"), CASES)
def test_a_request_reads_back_as_the_proxy_built_it(raw: bytes, arrival: Arrival, expected: dict[str, object]) -> None:
    request = read_request(raw, arrival)
    for name, value in expected.items():
        assert getattr(request, name) == value, name


@pytest.mark.parametrize(("raw", "arrival", "expected"), CASES)
def test_the_packed_and_the_json_form_of_an_entry_agree(
    raw: bytes, arrival: Arrival, expected: Mapping[str, object]
) -> None:
    request, wire = read_request(raw, arrival), _wire()
    as_json = decode_entry(encode_record("abcda", request, wire, "spy", 1700000000.25, 1.5))
    packable = _packable(raw, arrival, mode="spy")
    assert unpack_entry(pack_entry(packable)) == packable
    as_packed = decode_entry(pack_entry(packable))
    assert as_packed == as_json == decode_entry(packable)  # the in-process store keeps the tuple
    assert as_packed.id == "abcda" and as_packed.status == 201 and as_packed.mode == "spy"
    assert as_packed.response_headers == RESPONSE_HEADERS and as_packed.response_body == b'{"ok": 1}'
    assert as_packed.time_started.timestamp() == 1700000000.25 and as_packed.latency_ms == 1.5


@pytest.mark.parametrize(("raw", "arrival", "expected"), CASES)
def test_an_http2_request_reads_back_alike_from_the_quick_and_the_careful_json_form(
    raw: bytes, arrival: Arrival, expected: Mapping[str, object]
) -> None:
    request, wire = read_request(raw, arrival), _wire()
    object.__setattr__(request, "protocol", "HTTP/2.0")  # as engine/server/http2.py marks its requests
    quick = decode_entry(encode_record("abcda", request, wire, "spy", 1700000000.25, 1.5))
    careful = decode_entry(encode_entry(record_entry("abcda", request, wire, "spy", 1700000000.25, 1.5)))
    assert quick == careful
    assert quick.request.protocol == "HTTP/2.0" and quick.request == request


def test_only_the_first_request_of_the_bytes_is_read() -> None:
    raw = (
        b"GET http://h.test/one HTTP/1.1\r\nHost: h.test\r\n\r\nGET http://h.test/two HTTP/1.1\r\nHost: h.test\r\n\r\n"
    )
    assert read_request(raw, Arrival()).path == "/one"


@pytest.mark.parametrize(
    "arrival",
    [
        Arrival(),
        Arrival(True, True),
        Arrival(tunnel_authority="[::1]:8443", tunnel_scheme="https"),
        Arrival(own_port=8500),
    ],
)
def test_an_arrival_is_stored_without_the_proxy_port(arrival: Arrival) -> None:
    decoded = Arrival.decode(arrival.encode())
    assert decoded == Arrival(
        arrival.webserver, arrival.strip_proxy_authorization, arrival.tunnel_authority, arrival.tunnel_scheme
    )


@pytest.mark.parametrize("data", [b"\x01", b"\x01" + bytes(60), pack_entry(_packable(CASES[0][0], Arrival()))[:-1]])
def test_bytes_that_are_not_a_packed_entry_are_refused(data: bytes) -> None:
    with pytest.raises(ValueError):
        unpack_entry(data)


class _AwayOnce(MemoryStore):
    """The in-process store, unreachable for its first journal write; ``shared``: it takes bytes
    only, as a Redis store does."""

    def __init__(self, shared: bool = False) -> None:
        super().__init__()
        self.shared = shared
        self.refused = 0

    async def journal_append(
        self, entries: Sequence[tuple[str, JournalRecord]], index_keys: Mapping[str, Mapping[str, str]], limit: int
    ) -> None:
        if self.shared:
            assert all(isinstance(entry, bytes) for _, entry in entries)
        if not self.refused:
            self.refused = len(entries)
            raise StoreUnavailable("away")
        await super().journal_append(entries, index_keys, limit)


def _record(recorder: Recorder, n: int, *, kept: bool) -> int:
    raw = b"GET http://h.test/%d HTTP/1.1\r\nHost: h.test\r\n\r\n" % n
    request = read_request(raw, Arrival())
    return recorder.record(request, _wire(), time.time(), 0.5, "simulate", raw if kept else None, Arrival().encode())


@pytest.mark.parametrize("shared", [False, True])
def test_the_recorder_stores_kept_and_encoded_entries_in_order_through_an_outage(shared: bool) -> None:
    async def scenario() -> None:
        store, recorder = _AwayOnce(shared), Recorder(journal_size=100, logs_size=10)
        sequences = [_record(recorder, n, kept=n % 3 != 0) for n in range(6)]
        with pytest.raises(StoreUnavailable):
            await recorder.flush(store)
        sequences += [_record(recorder, n, kept=n % 2 == 0) for n in range(6, 9)]
        await recorder.flush(store)
        entries = [decode_entry(raw) for raw in await store.journal_entries()]
        assert store.refused == 6 and not recorder.pending
        assert [e.request.path for e in entries] == [f"/{n}" for n in range(9)]
        assert [e.id for e in entries] == [recorder.entry_id(s) for s in sequences]
        assert len(set(sequences)) == 9 and 0 not in sequences

    asyncio.run(scenario())


@pytest.mark.parametrize("shared", [False, True])
def test_entries_cut_to_the_body_limit_are_stored_in_the_order_they_came_among_the_others(shared: bool) -> None:
    """A response over the body limit is encoded only at the flush; it still goes between the
    entries it came between."""

    async def scenario() -> None:
        store, recorder = _AwayOnce(shared), Recorder(journal_size=100, logs_size=10, body_limit=64)
        store.refused = -1  # never away
        for n, body in enumerate([b"x" * 200, b"ok", b"y" * 200, b"ok", b"ok", b"z" * 200]):
            raw = b"GET http://h.test/%d HTTP/1.1\r\nHost: h.test\r\n\r\n" % n
            request = read_request(raw, Arrival())
            recorder.record(request, _wire(body), time.time(), 0.5, "simulate", raw, Arrival().encode())
        await recorder.flush(store)
        entries = [decode_entry(raw) for raw in await store.journal_entries()]
        assert [e.request.path for e in entries] == [f"/{n}" for n in range(6)]
        assert [len(e.response_body) for e in entries] == [64, 2, 64, 2, 2, 64]  # cut to the limit

    asyncio.run(scenario())


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("away", [True, False])
def test_the_recorder_keeps_the_newest_entries_and_counts_what_it_gives_up_while_the_store_is_away(
    shared: bool, away: bool
) -> None:
    """Nine entries for a journal of four: the buffer keeps the newest. What it gave up counts as
    dropped when the flush after it could not reach the store; when it could, those entries were
    beyond what the store keeps anyway (a busy worker with a small journal, between two flushes)."""

    async def scenario() -> None:
        store, recorder = _AwayOnce(shared), Recorder(journal_size=4, logs_size=10)
        if not away:
            store.refused = -1  # reachable from the start
        for n in range(9):
            _record(recorder, n, kept=True)
        if away:
            with pytest.raises(StoreUnavailable):
                await recorder.flush(store)
            recorder.settle(reached=False)  # what the runtime does when its flush fails
        await recorder.flush(store)
        recorder.settle(reached=True)
        assert [decode_entry(raw).request.path for raw in await store.journal_entries()] == ["/5", "/6", "/7", "/8"]
        assert recorder.take_dropped() == ({"journal": 5} if away else {})

    asyncio.run(scenario())


def test_a_disabled_journal_records_nothing() -> None:
    recorder = Recorder(journal_size=0, logs_size=10)
    assert _record(recorder, 1, kept=True) == 0 and not recorder.pending


class _Batches(MemoryStore):
    """A shared in-process store noting the bytes of each journal batch it is given."""

    shared = True

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    async def journal_append(
        self, entries: Sequence[tuple[str, JournalRecord]], index_keys: Mapping[str, Mapping[str, str]], limit: int
    ) -> None:
        self.batches.append(sum(len(entry) for _, entry in entries))
        await super().journal_append(entries, index_keys, limit)


class _KeyedBatches(MemoryStore):
    """A shared in-process store noting, per journal batch, its entries' ids and its index keys."""

    shared = True

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[tuple[set[str], dict[str, str]]] = []

    async def journal_append(
        self, entries: Sequence[tuple[str, JournalRecord]], index_keys: Mapping[str, Mapping[str, str]], limit: int
    ) -> None:
        self.batches.append(({entry_id for entry_id, _ in entries}, dict(index_keys.get("Request.Path", {}))))
        await super().journal_append(entries, index_keys, limit)


def test_an_index_key_goes_to_the_store_with_the_batch_of_the_entry_it_names() -> None:
    """Else the ``journal`` template helper could find a key naming an entry not stored yet."""

    async def scenario() -> None:
        store, recorder = _KeyedBatches(), Recorder(journal_size=100, logs_size=10)
        recorder.use_indexes(["Request.Path"])
        big = _wire(b"x" * (5 << 20))
        for n in range(3):
            raw = b"GET http://h.test/%d HTTP/1.1\r\nHost: h.test\r\n\r\n" % n
            recorder.record(read_request(raw, Arrival()), big, time.time(), 0.5, "simulate", raw, Arrival().encode())
        await recorder.flush(store)
        assert len(store.batches) == 3
        for ids, keys in store.batches:
            assert len(ids) == 1 and set(keys.values()) == ids  # each batch's key names its own entry
        assert [list(keys) for _, keys in store.batches] == [["0"], ["1"], ["2"]]  # each batch: its own path

    asyncio.run(scenario())


def test_large_entries_go_to_a_shared_store_in_batches_of_a_few_megabytes() -> None:
    async def scenario() -> None:
        store, recorder = _Batches(), Recorder(journal_size=100, logs_size=10)
        big = _wire(b"x" * (3 << 20))
        for n in range(6):
            raw = b"GET http://h.test/%d HTTP/1.1\r\nHost: h.test\r\n\r\n" % n
            recorder.record(read_request(raw, Arrival()), big, time.time(), 0.5, "simulate", raw, Arrival().encode())
        huge = read_request(b"GET /huge HTTP/1.1\r\nHost: h.test\r\n\r\n", Arrival())
        recorder.record(huge, _wire(b"y" * (9 << 20)), time.time(), 0.5, "simulate")  # not kept: encoded at once
        await recorder.flush(store)
        assert not recorder.pending
        assert len(store.batches) == 4 and all(size <= JOURNAL_BATCH_BYTES for size in store.batches[:3])
        assert store.batches[3] > JOURNAL_BATCH_BYTES  # an entry larger than a batch goes alone
        paths = [decode_entry(raw).request.path for raw in await store.journal_entries()]
        assert paths == [f"/{n}" for n in range(6)] + ["/huge"]

    asyncio.run(scenario())


def test_a_shared_journal_reads_in_the_order_the_responses_were_sent_whatever_each_entrys_form() -> None:
    """Two workers' batches, stored batch by batch: read back by when each response was sent
    (received plus latency), packed entries and JSON ones (epoch or ISO time) alike."""
    raw, arrival = CASES[0][0], CASES[0][1]
    request, wire = read_request(raw, arrival), _wire()
    assert wire.journal is not None
    t = 1700000000.0

    def packed(prefix: str, n: int, received: float, latency_ms: float) -> bytes:
        return pack_entry((prefix, n, raw, arrival.encode(), wire.journal or b"", 201, received, latency_ms, "spy"))

    def as_json(entry_id: str, received: float, latency_ms: float, *, iso: bool = False) -> bytes:
        record = encode_record(entry_id, request, wire, "spy", received, latency_ms)
        return encode_entry(decode_entry(record)) if iso else record

    first_worker = [
        packed("a", 1, t + 0.001, 1.0),
        packed("a", 2, t + 0.010, 1.0),
        as_json("a3", t + 0.030, 1.0, iso=True),
    ]
    second_worker = [as_json("b1", t + 0.004, 2.0), packed("b", 2, t + 0.020, 0.5), as_json("b3", t + 0.021, 0.5)]
    assert json_time(first_worker[2]) and not json_time(second_worker[0])  # both JSON forms are there
    stored = first_worker + second_worker  # as the two batches reached the store
    assert [decode_entry(stored[i]).id for i in completion_order(stored)] == ["a1", "b1", "a2", "b2", "b3", "a3"]
    same_instant = [packed("c", 1, t, 1.0), packed("d", 1, t, 1.0), packed("c", 2, t, 1.0)]
    assert completion_order(same_instant) == [0, 1, 2]  # stable


def json_time(record: bytes) -> bool:
    """Whether a JSON entry holds its time as ISO text (``encode_entry``) rather than epoch seconds."""
    return isinstance(orjson.loads(record)[3], str)
