"""What every worker writes about the traffic it served: journal entries and log records.

The request path only appends a tuple to a buffer (or, when the request's bytes could not be
kept, encodes the entry at once); the runtime's flush (every few milliseconds, and before every
ack) packs and indexes the entries and stores them in one round trip, so a journal read after a
barrier sees every response already sent, fleet-wide. Entries and logs go in batches the store
applies once, however often a batch is sent (store/batches.py).
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TypeVar

from simproxy.engine.journal.entries import (
    IndexExpression,
    JournalEntry,
    build_index,
    compile_index,
    encode_entry,
    encode_record,
    record_entry,
)
from simproxy.engine.journal.packed import Packable, RepeatedEntries, pack_entry
from simproxy.engine.templating import TemplateEngine
from simproxy.engine.wire.request import Received, RequestDetails
from simproxy.engine.wire.response import Wire, compact
from simproxy.store import Batch, BatchedStore, BatchIds, JournalItem, JournalRecord, Outbox

T = TypeVar("T")
_SEQUENCE = itemgetter(1)
_NONE_SAME: tuple[bytes | None, Wire | None, str] = (None, None, "")
"""``Recorder._same`` when the last entry is not one a request served again may repeat."""

JOURNAL_BATCH_BYTES = 8 << 20
"""A shared store's journal batch carries at most this many bytes of entries (one entry at least):
Redis applies a batch in one script and answers no one else meanwhile. Sixteen 40 MB entries in
one batch (``-journal-body-size-limit=``, whole bodies) held it for seconds."""

Pending = tuple[int, str, RequestDetails, Wire, float, float, str]
"""(sequence number, entry id, request, response, wall-clock time received, latency in ms, mode)."""
IndexKeys = dict[str, dict[str, str]]
"""Index name -> {key: the id of the entry it names}."""


@dataclass(frozen=True, slots=True)
class JournalBatch:
    """Entries as ``journal_append`` takes them, and the index keys that point at them."""

    entries: Sequence[JournalItem]
    index_keys: Mapping[str, Mapping[str, str]]


class Recorder:
    def __init__(
        self,
        *,
        journal_size: int,
        logs_size: int,
        body_limit: int | None = None,
        repeats: bool = False,
        sample: int = 1,
    ) -> None:
        self.journal_size = journal_size
        self.sample = max(sample, 1)
        """One request in ``sample`` gets an entry (``-journal-sample``): the first, then every Nth."""
        self._unsampled = 0
        """Requests still to pass over before the next one journaled."""
        self._passed = False
        """The request ``served`` was last told about got no entry (sampled out)."""
        self.logs_size = logs_size
        self.body_limit = body_limit
        self._buffered_max = 2 * journal_size
        """Entries buffered at most (the store being away), per buffer."""
        self._packable: list[Packable | RepeatedEntries] = []
        self.repeats = repeats
        """A request served again as the entry before it (``served``) is kept as one more time and
        latency of that entry's run (``RepeatedEntries``): for a store that keeps runs as given, the
        in-process one."""
        self._times: list[float] = []
        """The times received of the entries that repeat the last of ``_packable`` (then ``_same``)."""
        self._latencies: list[float] = []
        """Lists, not arrays: an array's append parses its argument with a format string, four
        times a list's append, on every request served again. The run keeps the lists: 64 bytes an
        entry, against 16 in arrays, and converting them would cost the flush what it saved."""
        self._same = _NONE_SAME
        """(read, wire, mode) of the last entry when it may be repeated, else the wire is None."""
        self._runs = False
        """``_packable`` holds a run."""
        self._last_sequence = 0
        self._encoded: list[tuple[int, bytes]] = []
        """(sequence number, JSON form) of entries whose bytes the proxy could not keep."""
        self._journal: list[Pending] = []
        """Entries waiting for the flush with their request, to be indexed or cut to the body limit."""
        self._ready: list[JournalItem] = []
        """Entries in their stored form that did not fit in the last batch (JOURNAL_BATCH_BYTES)."""
        self._ready_keys: IndexKeys = {}
        self._logs: list[bytes] = []
        ids = BatchIds()
        self._journal_out: Outbox[JournalBatch] = Outbox(ids)
        self._logs_out: Outbox[list[bytes]] = Outbox(ids)
        self._prefix = secrets.token_hex(4)
        self._id_of = f"{self._prefix}%x".__mod__
        """Sequence number -> entry id: a C callable, which the flush maps over a batch."""
        self._sequence = itertools.count(1)
        self._indexes: dict[str, IndexExpression] = {}
        self._packs = True
        """Entries may be packed: no index (indexes need the request at the flush)."""
        self._templates = TemplateEngine()
        self.dropped: dict[str, int] = {}
        """Records given up while the store was away, by kind (``journal``, ``logs``): the buffers
        keep the newest ``journal_size``/``logs_size`` only, what the store would keep anyway."""
        self.store_away = False
        """Set by the runtime while the store cannot be reached: records the buffers give up then
        count in ``dropped`` at once."""
        self._given_up: dict[str, int] = {}
        """Records given up while the store was thought reachable, until the next flush tells
        (``settle``): a busy worker with a small journal trims its buffer between two flushes too,
        of entries the store would not keep anyway, and those are not counted."""

    @property
    def journal_enabled(self) -> bool:
        return self.journal_size > 0

    @property
    def pending(self) -> bool:
        return bool(
            self._times
            or self._packable
            or self._encoded
            or self._journal
            or self._ready
            or self._logs
            or self._journal_out
            or self._logs_out
        )

    @property
    def last_sequence(self) -> int:
        """The number of the entry made for the request ``served`` was last told about (0: none)."""
        if self._passed:
            return 0
        if self._times:
            return self._repeated()[1] + len(self._times)
        return self._last_sequence

    def served(self, wire: Wire, received: Received, seconds: float, mode: str) -> None:
        """The journal's observer (``engine.modes.observers``): the entry of a request answered."""
        if self.sample > 1:  # -journal-sample: pass over all but one request in N
            if self._unsampled:
                self._unsampled -= 1
                self._passed = True
                return
            self._unsampled = self.sample - 1
            self._passed = False
        read, same_wire, same_mode = self._same
        if wire is same_wire and received.raw is read and mode is same_mode:  # served again: two floats
            self._times.append(received.at)
            self._latencies.append(seconds)
            return
        if self.journal_size:
            self._last_sequence = self.record(
                received.request, wire, received.at, seconds * 1000, mode, received.raw, received.arrival
            )
        else:
            self._last_sequence = 0

    def _repeated(self) -> Packable:
        """The entry the ones in ``_times`` repeat: the last of ``_packable`` (``_same`` is set only
        as it is appended, and a run is made of it only when ``_times`` is emptied)."""
        head = self._packable[-1]
        assert not isinstance(head, RepeatedEntries)
        return head

    def _close_run(self) -> None:
        """The entries repeating the last of ``_packable`` become its run; numbering goes on after them."""
        head = self._repeated()
        self._packable[-1] = RepeatedEntries(head, self._times, self._latencies)
        self._sequence = itertools.count(head[1] + len(self._times) + 1)
        self._times, self._latencies = [], []
        self._runs = True

    def entry_id(self, sequence: int) -> str:
        """The id of the entry ``record`` numbered ``sequence``."""
        return self._id_of(sequence)

    def record(
        self,
        req: RequestDetails,
        wire: Wire,
        received: float,
        latency_ms: float,
        mode: str,
        raw: bytes | None = None,
        arrival: bytes = b"",
    ) -> int:
        """Called on the request path; returns the entry's sequence number (0 with the journal off).

        ``raw``: the bytes the request came in, when they held exactly it. Then (and with the
        response's journal part at hand, no index, and both bodies within the body limit) the
        entry is only a tuple until the flush packs it. Otherwise it is encoded as JSON at once
        (holding requests for the flush keeps them alive long enough to make the garbage
        collector's work grow with the traffic), or, for indexes and a body to cut to the limit,
        held with its request after all. An answer written with a fault is never packed: its
        entry says which fault it got (``_record_faulted``)."""
        if not self.journal_size:
            return 0
        if self._times:
            self._close_run()
        sequence = next(self._sequence)
        if wire.fault is not None:  # the one check an answer without a fault costs here
            return self._record_faulted((sequence, self.entry_id(sequence), req, wire, received, latency_ms, mode))
        limit = self.body_limit
        # the common case first, inline: the read holds the request, the wire's body is its content
        whole = (
            not limit
            or (raw is not None and len(raw) <= limit and wire.content is None and len(wire.body) <= limit)
            or self._within_limit(limit, req, wire, raw)
        )
        if raw is not None and self._packs and whole and wire.journal is not None:
            self._packable.append(
                (self._prefix, sequence, raw, arrival, wire.journal, wire.status, received, latency_ms, mode)
            )
            if len(self._packable) > self._buffered_max:  # the store is away: keep the newest
                self._packable = self._keep("journal", self._packable, self.journal_size)
            self._same = (raw, wire, mode) if self.repeats else _NONE_SAME
            return sequence
        self._same = _NONE_SAME
        if not (self._packs and whole):
            self._journal.append((sequence, self.entry_id(sequence), req, wire, received, latency_ms, mode))
            if len(self._journal) > self._buffered_max:
                self._journal = self._keep("journal", self._journal, self.journal_size)
        else:
            # the in-process store keeps entries as given: compacted here, while orjson's 4 KB
            # buffer is hot and free for the next request
            entry_id = self.entry_id(sequence)
            self._encoded.append((sequence, compact(encode_record(entry_id, req, wire, mode, received, latency_ms))))
            if len(self._encoded) > self._buffered_max:
                self._encoded = self._keep("journal", self._encoded, self.journal_size)
        return sequence

    def _record_faulted(self, pending: Pending) -> int:
        """A faulted answer's entry, always in the JSON form, which holds the fault (the packed form
        and a run of repeats have no place for one): encoded at once, or at the flush for indexes."""
        self._same = _NONE_SAME
        if self._packs:
            self._encoded.append((pending[0], compact(encode_entry(self.entry(pending), self.body_limit))))
            if len(self._encoded) > self._buffered_max:
                self._encoded = self._keep("journal", self._encoded, self.journal_size)
        else:
            self._journal.append(pending)
            if len(self._journal) > self._buffered_max:
                self._journal = self._keep("journal", self._journal, self.journal_size)
        return pending[0]

    @staticmethod
    def _within_limit(limit: int, req: RequestDetails, wire: Wire, raw: bytes | None) -> bool:
        """Neither body needs cutting to the body limit ``limit`` (the request's read holds its body)."""
        if len(wire.raw_body) > limit:
            return False
        if raw is not None and len(raw) <= limit:
            return True
        return len(req.body.encode("utf-8", "surrogateescape")) <= limit

    def amended(self, entry: JournalEntry) -> bytes:
        """The stored form of an entry written again (a post-serve action's record added)."""
        return compact(encode_entry(entry, self.body_limit))

    def log(self, record: bytes) -> None:
        if self.logs_size:
            self._logs.append(record)
            if len(self._logs) > 2 * self.logs_size:
                self._logs = self._keep("logs", self._logs, self.logs_size)

    def use_indexes(self, names: Sequence[str]) -> None:
        """The journal indexes the fleet has (from the runtime config), compiled once each."""
        for name in names:
            self.index(name)
        for name in [n for n in self._indexes if n not in names]:
            del self._indexes[name]
        self._packs = not self._indexes
        self._same = _NONE_SAME  # an entry indexed is not repeated

    def index(self, name: str) -> IndexExpression:
        if name not in self._indexes:
            self._indexes[name] = compile_index(name, self._templates)
            self._packs = False
            self._same = _NONE_SAME
        return self._indexes[name]

    def entry(self, pending: Pending) -> JournalEntry:
        _, entry_id, req, wire, received, latency_ms, mode = pending
        return record_entry(entry_id, req, wire, mode, received, latency_ms)

    async def flush(self, store: BatchedStore) -> None:
        """Store what was buffered; on a store error the batch is kept, as it was, for the next flush."""

        async def write_journal(batch: Batch[JournalBatch]) -> None:
            journal = batch.items
            await store.batch(batch.id).journal_append(journal.entries, journal.index_keys, self.journal_size)

        async def write_logs(batch: Batch[list[bytes]]) -> None:
            await store.batch(batch.id).logs_append(batch.items, self.logs_size)

        await self._journal_out.send(write_journal, lambda: self._take_journal(store.shared))
        while self._ready:
            await self._journal_out.send(write_journal, lambda: self._take_journal(store.shared))
        await self._logs_out.send(write_logs, self._take_logs)

    def _take_journal(self, pack: bool) -> JournalBatch | None:
        """The buffered entries, packed (``pack``, for a shared store: then at most
        JOURNAL_BATCH_BYTES of them, the rest kept for the next batch) and indexed; the newest
        ``journal_size`` only, all the store would keep of them."""
        if self._packable or self._encoded or self._journal:
            taken, self._journal = self._journal, []
            entries = [self.entry(p) for p in taken]
            encoded = [(p[0], compact(encode_entry(e, self.body_limit))) for p, e in zip(taken, entries, strict=True)]
            self._ready += self._take_recorded(pack, encoded)
            del self._ready[: -self.journal_size]
            for expr in self._indexes.values():  # stored under the index's name, quotes removed
                ready = self._ready_keys.setdefault(expr.name, {})
                ready.update((k, e.id) for k, e in build_index(expr, entries).items())
        if not self._ready:
            return None
        cut = len(self._ready)
        if pack:
            size, cut = 0, 0
            for item in self._ready:
                size += len(item[1]) if isinstance(item, tuple) else 0  # a shared store gets no runs
                if cut and size > JOURNAL_BATCH_BYTES:
                    break
                cut += 1
        sent = self._ready[:cut]
        del self._ready[:cut]
        keys, self._ready_keys = self._ready_keys, {}
        if self._ready and keys:  # entries held back for the next batch: their keys go with them
            keys, self._ready_keys = _split_keys(keys, {item[0] for item in sent if isinstance(item, tuple)})
        return JournalBatch(sent, keys)

    def _take_logs(self) -> list[bytes] | None:
        logs, self._logs = self._logs, []
        return logs[-self.logs_size :] or None

    def _take_recorded(self, pack: bool, late: list[tuple[int, bytes]]) -> list[JournalItem]:
        """The packable and the encoded entries, and ``late`` (entries encoded only now, by sequence
        number), as (id, stored form) in the order they came, and the runs as they are; the
        packable ones packed for a shared store, kept as tuples for the in-process one."""
        if self._times:
            self._close_run()
        self._same = _NONE_SAME  # the next entry is the first of the next buffer
        packable, encoded, self._packable, self._encoded = self._packable, self._encoded, [], []
        encoded += late
        runs, self._runs = self._runs, False
        if not runs and not encoded:
            # one pass in C for the common case, with no Python code run per entry
            plain: list[Packable] = packable  # type: ignore[assignment]  # no run among them
            ids = map(self._id_of, map(_SEQUENCE, plain))
            kept: Iterable[JournalRecord] = map(pack_entry, plain) if pack else plain
            return list(zip(ids, kept, strict=True))
        numbered: list[tuple[int, JournalItem]] = []
        for item in packable:
            if not isinstance(item, RepeatedEntries):
                numbered.append((item[1], (self._id_of(item[1]), pack_entry(item) if pack else item)))
            elif pack:  # a shared store keeps every entry on its own
                first = item.head[1]
                numbered += ((first + i, (item.entry_id(i), pack_entry(e))) for i, e in enumerate(item.records()))
            else:
                numbered.append((item.head[1], item))
        if encoded:
            numbered += ((sequence, (self.entry_id(sequence), body)) for sequence, body in encoded)
            numbered.sort(key=itemgetter(0))
        return [entry for _, entry in numbered]

    def _keep(self, kind: str, records: list[T], limit: int) -> list[T]:
        if len(records) > limit:
            counts = self.dropped if self.store_away else self._given_up
            counts[kind] = counts.get(kind, 0) + len(records) - limit
        return records[-limit:] if limit else []

    def settle(self, *, reached: bool) -> None:
        """A flush ended: the store was ``reached`` (what the buffers gave up since the last one was
        beyond what it keeps) or not (that was given up while it was away: counted)."""
        self.store_away = not reached
        given_up, self._given_up = self._given_up, {}
        if not reached:
            for kind, count in given_up.items():
                self.dropped[kind] = self.dropped.get(kind, 0) + count

    def take_dropped(self) -> dict[str, int]:
        dropped, self.dropped = self.dropped, {}
        return dropped


def _split_keys(keys: IndexKeys, sent: set[str]) -> tuple[IndexKeys, IndexKeys]:
    """(the index ``keys`` naming an entry whose id is in ``sent``, the rest). A key written before
    its entry would name, for the journal template helper, an entry not stored yet."""
    now: IndexKeys = {}
    later: IndexKeys = {}
    for name, named in keys.items():
        for key, entry_id in named.items():
            (now if entry_id in sent else later).setdefault(name, {})[key] = entry_id
    return now, later
