"""``CacheStore`` on Redis, and its batched write: entries in a hash, kept bounded fleet-wide by a
recency zset (the least recently put go first)."""

from __future__ import annotations

from collections.abc import Mapping

from simproxy.store.batches import BatchId
from simproxy.store.redis import scripts
from simproxy.store.redis.link import RedisLink, RedisRole, text, translate


class RedisCache(RedisRole):
    def __init__(self, link: RedisLink) -> None:
        super().__init__(link)
        self._keys = link.keys.cache
        self._put_script = self._client.register_script(scripts.CACHE_PUT)

    @translate
    async def cache_put(self, entries: Mapping[str, bytes], capacity: int, batch: BatchId | None = None) -> None:
        if not entries:
            return
        key, opening = self.link.opening("cache", batch)
        args: list[str | bytes] = [*opening, str(capacity)]
        for entry_key, value in entries.items():
            args += [entry_key, value]
        await self._put_script(keys=[key, *self._keys], args=args)

    @translate
    async def cache_entries(self) -> dict[str, bytes]:
        raw = await self._client.hgetall(self._keys[0])
        return {text(k): v if isinstance(v, bytes) else v.encode() for k, v in raw.items()}

    @translate
    async def cache_clear(self) -> None:
        await self._client.delete(*self._keys)
