"""The in-process store: the embedded default for a single worker; plain dicts, no I/O.

It is only correct inside one process, which is why settings refuse it with several workers.
One module per role of store/base.py (documents.py, workers.py, state.py, cache.py, journal.py,
telemetry.py, diff.py, auth.py); ``MemoryStore`` composes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simproxy.store.base import JournalItem
from simproxy.store.batches import BatchId
from simproxy.store.memory.auth import MemoryAuth
from simproxy.store.memory.cache import MemoryCache
from simproxy.store.memory.diff import MemoryDiffs
from simproxy.store.memory.documents import MemoryDocuments
from simproxy.store.memory.journal import MemoryJournal
from simproxy.store.memory.state import MemoryState
from simproxy.store.memory.telemetry import MemoryTelemetry
from simproxy.store.memory.workers import MemoryWorkers

__all__ = ("MemoryStore",)


class MemoryStore:
    """Every role in this process. The roles are attributes (``documents``, ``state``, ...), which
    a caller on the request path holds; and each role's calls are also the store's own, bound here
    once (no frame of the store's in between). The batch writes are methods instead: ``batch()``
    hands back the store itself (no reply of it is ever lost), whose writes a test double may extend."""

    shared = False
    errors = 0
    """No call of the in-process store fails."""

    def __init__(self) -> None:
        self.cache = cache = MemoryCache()
        self.cache_entries = cache.cache_entries
        self.cache_clear = cache.cache_clear
        self.state = state = MemoryState()
        self.held_state = state.held_state
        self.state_get = state.state_get
        self.state_replace = state.state_replace
        self.state_update = state.state_update
        self.state_copy = state.state_copy
        self.state_fit = state.state_fit
        self.state_advance = state.state_advance
        self.state_moved = state.state_moved
        self.documents = documents = MemoryDocuments(cache, state)
        self.read_versions = documents.read_versions
        self.read_document = documents.read_document
        self.write_document = documents.write_document
        self.bump_generation = documents.bump_generation
        self.publish = documents.publish
        self.subscribe = documents.subscribe
        self.workers = workers = MemoryWorkers()
        self.heartbeat = workers.heartbeat
        self.registry_since = workers.registry_since
        self.worker_acks = workers.worker_acks
        self.worker_heartbeats = workers.worker_heartbeats
        self.unregister = workers.unregister
        self.journal = journal = MemoryJournal()
        self.journal_amend = journal.journal_amend
        self.journal_entries = journal.journal_entries
        self.journal_lookup = journal.journal_lookup
        self.journal_set_index = journal.journal_set_index
        self.journal_drop_index = journal.journal_drop_index
        self.journal_clear = journal.journal_clear
        self.telemetry = telemetry = MemoryTelemetry(journal, cache)
        self.read_counters = telemetry.read_counters
        self.logs_records = telemetry.logs_records
        self.metrics_read = telemetry.metrics_read
        self.traffic_read = telemetry.traffic_read
        self.sizes = telemetry.sizes
        self.diffs = diffs = MemoryDiffs()
        self.diff_add = diffs.diff_add
        self.diff_reports = diffs.diff_reports
        self.diff_clear = diffs.diff_clear
        self.auth = auth = MemoryAuth()
        self.login_locked = auth.login_locked
        self.login_failed = auth.login_failed
        self.revoke_token = auth.revoke_token
        self.token_revoked = auth.token_revoked

    def batch(self, batch: BatchId) -> MemoryStore:
        return self  # a call that returns was applied, once: no reply is ever lost

    async def add_counters(self, counts: Mapping[str, int]) -> None:
        await self.telemetry.add_counters(counts)

    async def cache_put(self, entries: Mapping[str, bytes], capacity: int) -> None:
        await self.cache.cache_put(entries, capacity)

    async def journal_append(
        self, entries: Sequence[JournalItem], index_keys: Mapping[str, Mapping[str, str]], limit: int
    ) -> None:
        await self.journal.journal_append(entries, index_keys, limit)

    async def logs_append(self, records: Sequence[bytes], limit: int) -> None:
        await self.telemetry.logs_append(records, limit)

    async def metrics_add(
        self,
        instance: str,
        increments: Mapping[str, float],
        traffic: tuple[int, Mapping[str, float]] | None = None,
        *,
        resumed: bool = False,
    ) -> bool:
        return await self.telemetry.metrics_add(instance, increments, traffic, resumed=resumed)

    async def ping(self) -> None:
        return None

    async def aclose(self) -> None:
        self.documents.close()
