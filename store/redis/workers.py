"""``Workers`` on Redis: the fleet's registry, two hashes (heartbeats, acks) and when it began."""

from __future__ import annotations

from simproxy.store.base import METRICS_KEEP_S
from simproxy.store.redis.link import RedisLink, RedisRole, text, translate


class RedisWorkers(RedisRole):
    def __init__(self, link: RedisLink) -> None:
        super().__init__(link)
        keys = link.keys
        self._workers = keys.workers
        self._acks = keys.acks
        self._meta = keys.meta
        self._metrics_prefix = keys.metrics_prefix
        """A heartbeat keeps its instance's metrics (``METRICS_KEEP_S``)."""

    @translate
    async def heartbeat(self, worker_id: str, acked: int, now_ms: int, instance: str = "") -> None:
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.hset(self._workers, worker_id, now_ms)
            pipe.hset(self._acks, worker_id, acked)
            pipe.hsetnx(self._meta, "registry_since", now_ms)
            if instance:
                pipe.expire(self._metrics_prefix + instance, METRICS_KEEP_S)
            await pipe.execute()

    @translate
    async def registry_since(self) -> int | None:
        value = await self._client.hget(self._meta, "registry_since")
        return None if value is None else int(value)

    @translate
    async def worker_acks(self, alive_since_ms: int) -> dict[str, int]:
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hgetall(self._workers)
            pipe.hgetall(self._acks)
            seen, acks = await pipe.execute()
        alive = {k.decode(): int(v) for k, v in seen.items() if int(v) >= alive_since_ms}
        return {wid: int(acks.get(wid.encode(), 0)) for wid in alive}

    @translate
    async def worker_heartbeats(self, alive_since_ms: int) -> dict[str, int]:
        seen = await self._client.hgetall(self._workers)
        return {text(k): int(v) for k, v in seen.items() if int(v) >= alive_since_ms}

    @translate
    async def unregister(self, worker_id: str) -> None:
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.hdel(self._workers, worker_id)
            pipe.hdel(self._acks, worker_id)
            await pipe.execute()
