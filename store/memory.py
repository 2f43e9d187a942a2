"""The in-process store: the embedded default for a single worker; plain dicts, no I/O.

It is only correct inside one process, which is why settings refuse it with several workers.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Mapping, Sequence
from itertools import repeat, starmap
from operator import itemgetter
from types import MappingProxyType
from typing import Any, cast

from simproxy.store.base import (
    DOCUMENTS,
    NO_EFFECTS,
    TRAFFIC_KEEP_S,
    JournalItem,
    JournalRecord,
    JournalRun,
    Versions,
    WriteEffects,
)
from simproxy.store.batches import BatchId
from simproxy.store.errors import SimulationChanged


class MemoryStore:
    shared = False
    errors = 0
    """No call of the in-process store fails."""

    def __init__(self) -> None:
        self._generation = 0
        self._documents: dict[str, tuple[int, bytes]] = {}
        self._workers: dict[str, tuple[int, int]] = {}
        self._counters: dict[str, int] = {}
        self._registry_since: int | None = None
        self._state: dict[str, str] = {}
        self._state_version = 0
        self._diff: dict[str, list[bytes]] = {}  # insertion order: groups in first-seen order
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._journal: deque[JournalRecord | JournalRun] = deque()
        """Entries and runs of entries (``JournalRun``), oldest first, holding the last ``limit``
        entries appended; the ids beside them rather than paired with them (a pair would be one
        more object kept per entry), a run standing for its own ids."""
        self._journal_ids: deque[str | JournalRun] = deque()
        self._journal_extra = 0
        """How many more entries the journal holds than items: the length of each run, less one. A
        run is kept only with two entries or more (``_kept``), so 0 means there is no run."""
        self._indexes: dict[str, dict[str, str]] = {}
        self._login_failures = (0, 0)  # (count, ms of the last)
        self._revoked: dict[str, int] = {}  # digest -> until (ms)
        self._logs: deque[bytes] = deque()
        self._metrics: dict[str, dict[str, float]] = {}
        self._traffic: dict[int, dict[str, float]] = {}
        self._closed = asyncio.Event()

    def batch(self, batch: BatchId) -> MemoryStore:
        return self  # a call that returns was applied, once: no reply is ever lost

    async def ping(self) -> None:
        return None

    async def read_versions(self) -> Versions:
        return Versions(self._generation, {name: self._documents.get(name, (0, b""))[0] for name in DOCUMENTS})

    async def read_document(self, name: str) -> tuple[int, bytes] | None:
        return self._documents.get(name)

    async def write_document(
        self, name: str, body: bytes, expected_version: int | None = None, effects: WriteEffects = NO_EFFECTS
    ) -> int | None:
        current = self._documents.get(name, (0, b""))[0]
        if expected_version is not None and current != expected_version:
            return None
        self._generation += 1
        self._documents[name] = (self._generation, bytes(body))
        if effects.clear_cache:
            self._clear_cache()
        if effects.state:
            self._state.update(effects.state)
            self._state_version += 1
        return self._generation

    def _check_simulation(self, simulation: int | None) -> None:
        if simulation is not None and self._documents.get("simulation", (0, b""))[0] != simulation:
            raise SimulationChanged("the simulation was replaced since this step was decided")

    async def bump_generation(self) -> int:
        self._generation += 1
        return self._generation

    async def publish(self, generation: int) -> None:
        return None  # one process: there is nobody else to tell

    async def subscribe(self) -> AsyncIterator[int]:
        await self._closed.wait()
        published: list[int] = []  # one process: nothing is ever published to it
        for generation in published:
            yield generation

    async def heartbeat(self, worker_id: str, acked: int, now_ms: int, instance: str = "") -> None:
        self._workers[worker_id] = (now_ms, acked)
        if self._registry_since is None:
            self._registry_since = now_ms

    async def registry_since(self) -> int | None:
        return self._registry_since

    async def worker_acks(self, alive_since_ms: int) -> dict[str, int]:
        return {wid: acked for wid, (seen, acked) in self._workers.items() if seen >= alive_since_ms}

    async def unregister(self, worker_id: str) -> None:
        self._workers.pop(worker_id, None)

    async def add_counters(self, counts: Mapping[str, int]) -> None:
        for key, value in counts.items():
            self._counters[key] = self._counters.get(key, 0) + value

    async def read_counters(self) -> dict[str, int]:
        return dict(self._counters)

    async def state_get(self) -> dict[str, str]:
        return dict(self._state)

    async def state_replace(self, values: Mapping[str, str]) -> None:
        self._state = dict(values)
        self._state_version += 1

    async def state_update(self, values: Mapping[str, str]) -> None:
        self._state.update(values)
        self._state_version += 1

    async def state_read(self) -> tuple[int, dict[str, str]]:
        return self._state_version, dict(self._state)

    def held_state(self) -> MemoryStore:
        return self

    def state_now(self) -> Mapping[str, str]:
        return MappingProxyType(self._state)

    def step_now(self, sets: Mapping[str, str], removes: Sequence[str], simulation: int | None = None) -> None:
        self._check_simulation(simulation)
        if sets or removes:
            self._state.update(sets)
            for key in removes:
                self._state.pop(key, None)
            self._state_version += 1

    async def state_step(
        self, version: int, sets: Mapping[str, str], removes: Sequence[str], simulation: int | None = None
    ) -> tuple[bool, int, dict[str, str]]:
        self._check_simulation(simulation)
        if version != self._state_version:
            return False, self._state_version, dict(self._state)
        self.step_now(sets, removes)
        return True, self._state_version, dict(self._state)

    async def state_transition(
        self,
        requires: Mapping[str, str],
        sets: Mapping[str, str],
        removes: Sequence[str],
        simulation: int | None = None,
    ) -> bool:
        # no await in here: one step of the event loop, so atomic within the process
        self._check_simulation(simulation)
        if any(self._state.get(key) != value for key, value in requires.items()):
            return False
        self.step_now(sets, removes)
        return True

    async def cache_put(self, entries: Mapping[str, bytes], capacity: int) -> None:
        for key, value in entries.items():
            self._cache[key] = bytes(value)
            self._cache.move_to_end(key)
        while len(self._cache) > capacity:
            self._cache.popitem(last=False)

    async def cache_entries(self) -> dict[str, bytes]:
        return dict(self._cache)

    async def cache_clear(self) -> None:
        self._clear_cache()

    def _clear_cache(self) -> None:
        self._cache.clear()

    async def journal_append(
        self, entries: Sequence[JournalItem], index_keys: Mapping[str, Mapping[str, str]], limit: int
    ) -> None:
        ids, journal = self._journal_ids, self._journal
        if all(map(isinstance, entries, repeat(tuple))):  # no run given: appended in C
            pairs = cast("Sequence[tuple[str, JournalRecord]]", entries)
            ids.extend(map(itemgetter(0), pairs))
            journal.extend(map(itemgetter(1), pairs))
        else:
            for item in entries:
                known, kept = item if isinstance(item, tuple) else self._kept(item)
                ids.append(known)
                journal.append(kept)
        self._trim(len(journal) + self._journal_extra - max(limit, 0))
        for index, keys in index_keys.items():
            self._indexes.setdefault(index, {}).update(keys)

    def _trim(self, excess: int) -> None:
        """Drop the ``excess`` oldest entries, the oldest run cut when only part of it goes."""
        ids, journal = self._journal_ids, self._journal
        if not self._journal_extra:  # no run held: every item is one entry, dropped in C
            if excess > 0:
                _drop_oldest(ids, excess)
                _drop_oldest(journal, excess)
            return
        while excess > 0:
            oldest = journal[0]
            if isinstance(oldest, bytes | tuple):
                ids.popleft()
                journal.popleft()
                excess -= 1
                continue
            size = len(oldest)
            if size <= excess:
                ids.popleft()
                journal.popleft()
                self._journal_extra -= size - 1
                excess -= size
            else:
                ids[0], journal[0] = self._kept(oldest.part(excess, size))
                self._journal_extra -= size - 1
                excess = 0

    def _kept(self, run: JournalRun) -> tuple[str | JournalRun, JournalRecord | JournalRun]:
        """(id, item) to keep for ``run``: the run itself, counted in ``_journal_extra``, or, for a
        run of one entry, that entry alone."""
        if len(run) == 1:
            return run.entry_id(0), run.record(0)
        self._journal_extra += len(run) - 1
        return run, run

    def _find(self, entry_id: str) -> tuple[int, int] | None:
        """(item, position in its run or 0) of an entry, searched from the newest (what is amended
        or looked up is recent)."""
        ids = self._journal_ids
        for item in range(len(ids) - 1, -1, -1):
            known = ids[item]
            if isinstance(known, str):
                if known == entry_id:
                    return item, 0
            elif (position := known.position(entry_id)) is not None:
                return item, position
        return None

    def _record(self, found: tuple[int, int]) -> JournalRecord:
        kept = self._journal[found[0]]
        return kept if isinstance(kept, bytes | tuple) else kept.record(found[1])

    async def journal_amend(self, entry_id: str, entry: bytes) -> bool:
        found = self._find(entry_id)
        if found is None:
            return False
        item, position = found
        run = self._journal[item]
        if isinstance(run, bytes | tuple):
            self._journal[item] = entry
            return True
        # the run is split around the amended entry: what comes before, the entry, what comes after
        self._journal_extra -= len(run) - 1
        parts: list[tuple[str | JournalRun, JournalRecord | JournalRun]] = []
        if position:
            parts.append(self._kept(run.part(0, position)))
        parts.append((entry_id, entry))
        if position + 1 < len(run):
            parts.append(self._kept(run.part(position + 1, len(run))))
        del self._journal_ids[item]
        del self._journal[item]
        for offset, (known, kept) in enumerate(parts):
            self._journal_ids.insert(item + offset, known)
            self._journal.insert(item + offset, kept)
        return True

    async def journal_entries(self) -> list[JournalRecord]:
        if not self._journal_extra:
            return list(self._journal)  # type: ignore[arg-type]  # no run among them
        out: list[JournalRecord] = []
        for kept in self._journal:
            if isinstance(kept, bytes | tuple):
                out.append(kept)
            else:
                out += kept.records()
        return out

    async def journal_lookup(self, index: str, keys: Sequence[str]) -> list[JournalRecord | None]:
        ids = self._indexes.get(index, {})
        found: list[JournalRecord | None] = []
        for key in keys:
            at = self._find(ids[key]) if key in ids else None
            found.append(None if at is None else self._record(at))
        return found

    async def journal_set_index(self, index: str, keys: Mapping[str, str]) -> None:
        self._indexes[index] = dict(keys)

    async def journal_drop_index(self, index: str) -> None:
        self._indexes.pop(index, None)

    async def journal_clear(self, indexes: Sequence[str]) -> None:
        self._journal.clear()
        self._journal_ids.clear()
        self._journal_extra = 0
        for index in indexes:
            self._indexes.pop(index, None)

    async def diff_add(self, request_key: str, report: bytes) -> None:
        self._diff.setdefault(request_key, []).append(bytes(report))

    async def diff_reports(self) -> list[tuple[str, list[bytes]]]:
        return [(key, list(reports)) for key, reports in self._diff.items()]

    async def diff_clear(self) -> None:
        self._diff.clear()

    async def logs_append(self, records: Sequence[bytes], limit: int) -> None:
        self._logs.extend(records)
        while len(self._logs) > limit:
            self._logs.popleft()

    async def logs_records(self) -> list[bytes]:
        return list(self._logs)

    async def metrics_add(
        self,
        instance: str,
        increments: Mapping[str, float],
        traffic: tuple[int, Mapping[str, float]] | None = None,
        *,
        resumed: bool = False,
    ) -> bool:
        totals = self._metrics.setdefault(instance, {})
        for field, amount in increments.items():
            totals[field] = totals.get(field, 0) + amount
        if traffic is not None:
            second, counts = traffic
            if second not in self._traffic:  # a new second: forget the ones past the keep window
                for old in [s for s in self._traffic if s <= second - TRAFFIC_KEEP_S]:
                    del self._traffic[old]
            bucket = self._traffic.setdefault(second, {})
            for name, amount in counts.items():
                bucket[name] = bucket.get(name, 0) + amount
        return True  # the totals are never lost while the process lives

    async def traffic_read(self, since: int, until: int) -> dict[int, dict[str, float]]:
        return {second: dict(counts) for second, counts in self._traffic.items() if since <= second <= until}

    async def worker_heartbeats(self, alive_since_ms: int) -> dict[str, int]:
        return {wid: seen for wid, (seen, _) in self._workers.items() if seen >= alive_since_ms}

    async def metrics_read(self, instance: str) -> dict[str, float]:
        return dict(self._metrics.get(instance, {}))

    async def sizes(self) -> tuple[int, int]:
        return len(self._journal) + self._journal_extra, len(self._cache)

    async def login_locked(self, now_ms: int, window_ms: int, limit: int) -> bool:
        count, last = self._login_failures
        if now_ms - last >= window_ms:
            self._login_failures = (0, 0)
            return False
        if count >= limit:
            self._login_failures = (count, now_ms)
            return True
        return False

    async def login_failed(self, now_ms: int) -> None:
        self._login_failures = (self._login_failures[0] + 1, now_ms)

    async def revoke_token(self, digest: str, until_ms: int, now_ms: int) -> None:
        self._revoked = {d: until for d, until in self._revoked.items() if until > now_ms}
        if until_ms > now_ms:
            self._revoked[digest] = until_ms

    async def token_revoked(self, digest: str) -> bool:
        return digest in self._revoked

    async def aclose(self) -> None:
        self._closed.set()


def _drop_oldest(items: deque[Any], count: int) -> None:
    """Drop the ``count`` (at most ``len(items)``) oldest of ``items``, in a loop run in C."""
    if count >= len(items):
        items.clear()
    else:
        deque(starmap(items.popleft, repeat((), count)), maxlen=0)
