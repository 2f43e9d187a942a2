"""What every worker writes about the traffic it served: journal entries and log records.

The request path only appends a tuple to a buffer; the runtime's flush (every few milliseconds,
and before every ack) builds the entries, computes their index keys and stores them in one
round trip, so a journal read after a barrier sees every response already sent, fleet-wide.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Sequence
from typing import TypeVar

from engine.journal import (
    IndexExpression,
    JournalEntry,
    build_index,
    compile_index,
    encode_entry,
    encode_record,
    record_entry,
)
from engine.request import RequestDetails
from engine.responses import Wire, compact
from engine.templating import TemplateEngine
from store import Store, StoreError

T = TypeVar("T")

Pending = tuple[str, RequestDetails, Wire, float, float, str]
"""(entry id, request, response, wall-clock time received, latency in ms, mode)."""


class Recorder:
    def __init__(self, *, journal_size: int, logs_size: int, body_limit: int | None = None) -> None:
        self.journal_size = journal_size
        self.logs_size = logs_size
        self.body_limit = body_limit
        self._journal: list[Pending] = []
        # entries encoded on the request path, as two flat lists: ids and bytes are not tracked by
        # the garbage collector, where a tuple per request would be (and examined by it until the flush)
        self._ids: list[str] = []
        self._bodies: list[bytes] = []
        self._logs: list[bytes] = []
        self._prefix = secrets.token_hex(4)
        self._sequence = itertools.count(1)
        self._indexes: dict[str, IndexExpression] = {}
        self._templates = TemplateEngine()
        self.dropped: dict[str, int] = {}
        """Records given up while the store was away, by kind (``journal``, ``logs``): the buffers
        keep the newest ``journal_size``/``logs_size`` only, what the store would keep anyway."""

    @property
    def journal_enabled(self) -> bool:
        return self.journal_size > 0

    @property
    def pending(self) -> bool:
        return bool(self._journal or self._ids or self._logs)

    def record(self, req: RequestDetails, wire: Wire, received: float, latency_ms: float, mode: str) -> str:
        """Called on the request path; returns the entry's id ("" with the journal off). Without
        indexes or a body limit the entry is encoded at once (about 2 us): holding requests for the
        flush instead keeps them alive long enough to make the garbage collector's work grow with
        the traffic."""
        if not self.journal_size:
            return ""
        entry_id = f"{self._prefix}{next(self._sequence):x}"
        if self._indexes or self.body_limit:
            self._journal.append((entry_id, req, wire, received, latency_ms, mode))
            if len(self._journal) > 2 * self.journal_size:  # the store is away: keep the newest
                self._journal = self._keep("journal", self._journal, self.journal_size)
        else:
            self._ids.append(entry_id)
            # the in-process store keeps entries as given: compacted here, while orjson's 4 KB buffer
            # is hot and free for the next request (a copy at the flush, 5 ms later, read up to a
            # megabyte of cold buffers: a sixth of the journal's samples under py-spy)
            self._bodies.append(compact(encode_record(entry_id, req, wire, mode, received, latency_ms)))
            if len(self._ids) > 2 * self.journal_size:
                self._keep_encoded(self._ids, self._bodies)
        return entry_id

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

    def index(self, name: str) -> IndexExpression:
        if name not in self._indexes:
            self._indexes[name] = compile_index(name, self._templates)
        return self._indexes[name]

    def entry(self, pending: Pending) -> JournalEntry:
        entry_id, req, wire, received, latency_ms, mode = pending
        return record_entry(entry_id, req, wire, mode, received, latency_ms)

    async def flush(self, store: Store) -> None:
        """Store what was buffered; on a store error the records are kept for the next flush."""
        if self._journal or self._ids:
            taken, self._journal = self._journal, []
            ids, bodies_, self._ids, self._bodies = self._ids, self._bodies, [], []
            entries = [self.entry(p) for p in taken]
            bodies = [
                *zip(ids, bodies_, strict=True),
                *((e.id, compact(encode_entry(e, self.body_limit))) for e in entries),
            ]
            keys = {
                name: {key: e.id for key, e in build_index(expr, entries).items()}
                for name, expr in self._indexes.items()
            }
            try:
                await store.journal_append(bodies, keys, self.journal_size)
            except StoreError:  # keep them (bounded) for the next flush; entries keep their ids
                self._keep_encoded([i for i, _ in bodies] + self._ids, [b for _, b in bodies] + self._bodies)
                raise
        if self._logs:
            logs, self._logs = self._logs, []
            try:
                await store.logs_append(logs, self.logs_size)
            except StoreError:
                self._logs = self._keep("logs", logs + self._logs, self.logs_size)
                raise

    def _keep_encoded(self, ids: list[str], bodies: list[bytes]) -> None:
        self._ids = self._keep("journal", ids, self.journal_size)
        self._bodies = bodies[len(bodies) - len(self._ids) :]

    def _keep(self, kind: str, records: list[T], limit: int) -> list[T]:
        if len(records) > limit:
            self.dropped[kind] = self.dropped.get(kind, 0) + len(records) - limit
        return records[-limit:] if limit else []

    def take_dropped(self) -> dict[str, int]:
        dropped, self.dropped = self.dropped, {}
        return dropped
