"""``JournalStore`` on Redis, and its batched write: a list of entry ids, a hash of entries by id,
and a hash per index (index key -> entry id)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simproxy.store.base import JournalItem
from simproxy.store.batches import BatchId
from simproxy.store.redis import scripts
from simproxy.store.redis.link import RedisLink, RedisRole, encoded, translate


class RedisJournal(RedisRole):
    def __init__(self, link: RedisLink) -> None:
        super().__init__(link)
        self._ids, self._entries = link.keys.journal
        self._index_prefix = link.keys.index_prefix
        self._append_script = self._client.register_script(scripts.JOURNAL_APPEND)
        self._entries_script = self._client.register_script(scripts.JOURNAL_ENTRIES)
        self._amend_script = self._client.register_script(scripts.JOURNAL_AMEND)

    @translate
    async def journal_append(
        self,
        entries: Sequence[JournalItem],
        index_keys: Mapping[str, Mapping[str, str]],
        limit: int,
        batch: BatchId | None = None,
    ) -> None:
        if not entries and not index_keys:
            return
        lengths: list[str] = []
        parts: list[bytes] = []
        for item in entries:
            if not isinstance(item, tuple):
                raise TypeError(f"a shared store keeps journal entries as bytes, not {type(item).__name__}")
            entry_id, body = item
            if not isinstance(body, bytes):
                raise TypeError(f"a shared store keeps journal entries as bytes, not {type(body).__name__}")
            raw_id = entry_id.encode()
            lengths += (str(len(raw_id)), str(len(body)))
            parts += (raw_id, body)
        batch_key, opening = self.link.opening("journal", batch)
        payload = b"".join(parts)
        args: list[str | bytes] = [*opening, str(limit), str(len(entries)), ",".join(lengths), payload]
        keys = [batch_key, self._ids, self._entries]
        for index, mapping in index_keys.items():
            keys.append(self._index_prefix + index)
            args.append(str(len(mapping)))
            for key, entry_id in mapping.items():
                args += [key, entry_id]
        async with self.link.sized(len(payload), self._append_script) as client:
            await self._append_script(keys=keys, args=args, client=client)

    @translate
    async def journal_amend(self, entry_id: str, entry: bytes) -> bool:
        return bool(await self._amend_script(keys=[self._entries], args=[entry_id, entry]))

    @translate
    async def journal_entries(self) -> list[bytes]:
        raw = await self._entries_script(keys=[self._ids, self._entries])
        return [v if isinstance(v, bytes) else str(v).encode() for v in raw or () if v is not None]

    @translate
    async def journal_lookup(self, index: str, keys: Sequence[str]) -> list[bytes | None]:
        if not keys:
            return []
        ids = await self._client.hmget(self._index_prefix + index, list(keys))
        found: list[bytes | None] = [None] * len(keys)
        wanted = [(i, entry_id) for i, entry_id in enumerate(ids) if entry_id is not None]
        if wanted:
            bodies = await self._client.hmget(self._entries, [entry_id for _, entry_id in wanted])
            for (i, _), body in zip(wanted, bodies, strict=True):
                found[i] = body if body is None or isinstance(body, bytes) else str(body).encode()
        return found

    @translate
    async def journal_set_index(self, index: str, keys: Mapping[str, str]) -> None:
        name = self._index_prefix + index
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.delete(name)
            if keys:
                pipe.hset(name, mapping=encoded(keys))
            await pipe.execute()

    @translate
    async def journal_drop_index(self, index: str) -> None:
        await self._client.delete(self._index_prefix + index)

    @translate
    async def journal_clear(self, indexes: Sequence[str]) -> None:
        await self._client.delete(self._ids, self._entries, *(self._index_prefix + index for index in indexes))
