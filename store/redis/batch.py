"""``BatchWriter`` on Redis: the writes of one batch, each kind applied at most once per batch id
(``scripts.BATCH``), through the roles that own the data they write."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from simproxy.store.base import JournalItem
from simproxy.store.batches import BatchId
from simproxy.store.redis.cache import RedisCache
from simproxy.store.redis.journal import RedisJournal
from simproxy.store.redis.telemetry import RedisTelemetry


@dataclass(frozen=True, slots=True)
class RedisBatch:
    telemetry: RedisTelemetry
    cache: RedisCache
    journal: RedisJournal
    id: BatchId

    async def add_counters(self, counts: Mapping[str, int]) -> None:
        await self.telemetry.add_counters(counts, self.id)

    async def cache_put(self, entries: Mapping[str, bytes], capacity: int) -> None:
        await self.cache.cache_put(entries, capacity, self.id)

    async def journal_append(
        self, entries: Sequence[JournalItem], index_keys: Mapping[str, Mapping[str, str]], limit: int
    ) -> None:
        await self.journal.journal_append(entries, index_keys, limit, self.id)

    async def logs_append(self, records: Sequence[bytes], limit: int) -> None:
        await self.telemetry.logs_append(records, limit, self.id)

    async def metrics_add(
        self,
        instance: str,
        increments: Mapping[str, float],
        traffic: tuple[int, Mapping[str, float]] | None = None,
        *,
        resumed: bool = False,
    ) -> bool:
        return await self.telemetry.metrics_add(instance, increments, traffic, resumed=resumed, batch=self.id)
