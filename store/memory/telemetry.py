"""``Telemetry`` in process, and its batched writes: usage counters, log records, each instance's
metric totals and the per-second traffic of the last ``TRAFFIC_KEEP_S`` seconds."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence

from simproxy.store.base import TRAFFIC_KEEP_S
from simproxy.store.memory.cache import MemoryCache
from simproxy.store.memory.journal import MemoryJournal


class MemoryTelemetry:
    def __init__(self, journal: MemoryJournal, cache: MemoryCache) -> None:
        self._journal = journal
        self._cache = cache
        """Whose sizes ``sizes`` reads."""
        self._counters: dict[str, int] = {}
        self._logs: deque[bytes] = deque()
        self._metrics: dict[str, dict[str, float]] = {}
        self._traffic: dict[int, dict[str, float]] = {}

    async def add_counters(self, counts: Mapping[str, int]) -> None:
        for key, value in counts.items():
            self._counters[key] = self._counters.get(key, 0) + value

    async def read_counters(self) -> dict[str, int]:
        return dict(self._counters)

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

    async def metrics_read(self, instance: str) -> dict[str, float]:
        return dict(self._metrics.get(instance, {}))

    async def traffic_read(self, since: int, until: int) -> dict[int, dict[str, float]]:
        return {second: dict(counts) for second, counts in self._traffic.items() if since <= second <= until}

    async def sizes(self) -> tuple[int, int]:
        return len(self._journal), len(self._cache)
