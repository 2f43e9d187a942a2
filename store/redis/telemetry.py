"""``Telemetry`` on Redis, and its batched writes: usage counters, log records, each instance's
metric totals, and the fleet's per-second traffic (one hash a minute, expiring as a whole)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simproxy.store.base import TRAFFIC_KEEP_S
from simproxy.store.batches import BatchId
from simproxy.store.redis import scripts
from simproxy.store.redis.link import RedisLink, RedisRole, text, translate


class RedisTelemetry(RedisRole):
    def __init__(self, link: RedisLink) -> None:
        super().__init__(link)
        keys = link.keys
        self._counters = keys.counters
        self._logs = keys.logs
        self._metrics_prefix = keys.metrics_prefix
        self._traffic_prefix = keys.traffic_prefix
        self._sized = (keys.journal[2], keys.cache[0])
        """The journal's meta hash (its ``total``) and the match cache's hash (its length), which
        ``sizes`` reads."""
        self._counters_script = self._client.register_script(scripts.ADD_COUNTERS)
        self._logs_append_script = self._client.register_script(scripts.LOGS_APPEND)
        self._metrics_add_script = self._client.register_script(scripts.METRICS_ADD)

    @translate
    async def add_counters(self, counts: Mapping[str, int], batch: BatchId | None = None) -> None:
        if not counts:
            return
        key, args = self.link.opening("counters", batch)
        for mode, value in counts.items():
            args += [mode, str(value)]
        await self._counters_script(keys=[key, self._counters], args=args)

    @translate
    async def read_counters(self) -> dict[str, int]:
        raw = await self._client.hgetall(self._counters)
        return {(k.decode() if isinstance(k, bytes) else k): int(v) for k, v in raw.items()}

    @translate
    async def logs_append(self, records: Sequence[bytes], limit: int, batch: BatchId | None = None) -> None:
        if not records:
            return
        key, opening = self.link.opening("logs", batch)
        await self._logs_append_script(keys=[key, self._logs], args=[*opening, str(limit), *records])

    @translate
    async def logs_records(self) -> list[bytes]:
        raw = await self._client.lrange(self._logs, 0, -1)
        return [v if isinstance(v, bytes) else str(v).encode() for v in raw]

    @translate
    async def metrics_add(
        self,
        instance: str,
        increments: Mapping[str, float],
        traffic: tuple[int, Mapping[str, float]] | None = None,
        *,
        resumed: bool = False,
        batch: BatchId | None = None,
    ) -> bool:
        if not increments and traffic is None:
            return True
        keys = [self._metrics_prefix + instance]
        mark = "" if batch is None else f"batch|{batch.writer}"
        args: list[str | float] = [mark, 0 if batch is None else batch.seq, "1" if resumed else "0", len(increments)]
        for field, amount in increments.items():
            args += [field, amount]
        if traffic is not None:
            # one hash a minute, fields "<second of the minute>|<name>": a read of the last
            # minutes is a few HGETALLs, and each minute expires as a whole
            second, counts = traffic
            keys.append(f"{self._traffic_prefix}{second // 60}")
            for name, amount in counts.items():
                args += [f"{second % 60}|{name}", amount]
        return int(await self._metrics_add_script(keys=keys, args=args)) != 2

    @translate
    async def metrics_read(self, instance: str) -> dict[str, float]:
        raw = await self._client.hgetall(self._metrics_prefix + instance)
        fields = {text(k): v for k, v in raw.items()}
        return {field: float(v) for field, v in fields.items() if not field.startswith("batch|")}

    @translate
    async def traffic_read(self, since: int, until: int) -> dict[int, dict[str, float]]:
        minutes = range(max(since, until - TRAFFIC_KEEP_S) // 60, until // 60 + 1)
        async with self._client.pipeline(transaction=False) as pipe:
            for minute in minutes:
                pipe.hgetall(f"{self._traffic_prefix}{minute}")
            hashes = await pipe.execute()
        out: dict[int, dict[str, float]] = {}
        for minute, raw in zip(minutes, hashes, strict=True):
            for field, amount in raw.items():
                offset, _, name = text(field).partition("|")
                second = minute * 60 + int(offset)
                if since <= second <= until:
                    out.setdefault(second, {})[name] = float(amount)
        return out

    @translate
    async def sizes(self) -> tuple[int, int]:
        journal, cache = self._sized
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hget(journal, "total")
            pipe.hlen(cache)
            journal_size, cache_size = await pipe.execute()
        return int(journal_size or 0), int(cache_size)
