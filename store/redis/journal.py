"""``JournalStore`` on Redis, and its batched write: the entries in pages, one page per batch, and a
hash per index (index key -> entry id). The layout is in scripts.py (``JOURNAL_PAGES``): Redis keeps
each batch as two strings, and reads split them here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simproxy.store.base import JournalItem
from simproxy.store.batches import BatchId
from simproxy.store.redis import scripts
from simproxy.store.redis.link import RedisLink, RedisRole, encoded, text, translate


def _split(page: bytes) -> list[bytes]:
    """The parts of a head (its ids, after their count) or a page (its entries): ``l1,...|`` and
    the parts, each as long as its length says."""
    bar = page.index(b"|")
    lengths = page[:bar].split(b",") if bar else []
    parts: list[bytes] = []
    at = bar + 1
    for length in lengths:
        end = at + int(length)
        parts.append(page[at:end])
        at = end
    return parts


def _as_bytes(value: object) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


class RedisJournal(RedisRole):
    def __init__(self, link: RedisLink) -> None:
        super().__init__(link)
        self._heads, self._pages, self._meta, self._amended = link.keys.journal
        self._index_prefix = link.keys.index_prefix
        self._append_script = self._client.register_script(scripts.JOURNAL_APPEND)
        self._read_script = self._client.register_script(scripts.JOURNAL_READ)
        self._find_script = self._client.register_script(scripts.JOURNAL_FIND)
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
        id_lengths: list[str] = [str(len(entries))]
        ids: list[bytes] = []
        entry_lengths: list[str] = []
        bodies: list[bytes] = []
        for item in entries:
            if not isinstance(item, tuple):
                raise TypeError(f"a shared store keeps journal entries as bytes, not {type(item).__name__}")
            entry_id, body = item
            if not isinstance(body, bytes):
                raise TypeError(f"a shared store keeps journal entries as bytes, not {type(body).__name__}")
            raw_id = entry_id.encode()
            id_lengths.append(str(len(raw_id)))
            ids.append(raw_id)
            entry_lengths.append(str(len(body)))
            bodies.append(body)
        head = b"".join([",".join(id_lengths).encode(), b"|", *ids])
        page = b"".join([",".join(entry_lengths).encode(), b"|", *bodies])
        batch_key, opening = self.link.opening("journal", batch)
        args: list[str | bytes] = [*opening, str(limit), str(len(entries)), head, page]
        keys = [batch_key, self._heads, self._pages, self._meta, self._amended]
        for index, mapping in index_keys.items():
            keys.append(self._index_prefix + index)
            args.append(str(len(mapping)))
            for key, entry_id in mapping.items():
                args += [key, entry_id]
        async with self.link.sized(len(page), self._append_script) as client:
            await self._append_script(keys=keys, args=args, client=client)

    @translate
    async def journal_amend(self, entry_id: str, entry: bytes) -> bool:
        keys = [self._heads, self._meta, self._amended]
        return bool(await self._amend_script(keys=keys, args=[entry_id, entry]))

    @translate
    async def journal_entries(self) -> list[bytes]:
        skip, heads, pages, flat = await self._read_script(keys=[self._heads, self._pages, self._meta, self._amended])
        amended = {text(flat[i]): _as_bytes(flat[i + 1]) for i in range(0, len(flat), 2)}
        out: list[bytes] = []
        for n, (head, page) in enumerate(zip(heads, pages, strict=True)):
            bodies = _split(_as_bytes(page))
            if amended:
                ids = [text(raw) for raw in _split(_as_bytes(head).split(b",", 1)[1])]
                bodies = [amended.get(entry_id, body) for entry_id, body in zip(ids, bodies, strict=True)]
            out += bodies[int(skip) :] if n == 0 else bodies
        return out

    @translate
    async def journal_lookup(self, index: str, keys: Sequence[str]) -> list[bytes | None]:
        if not keys:
            return []
        ids = await self._client.hmget(self._index_prefix + index, list(keys))
        found: list[bytes | None] = [None] * len(keys)
        wanted = [(i, entry_id) for i, entry_id in enumerate(ids) if entry_id is not None]
        if wanted:
            bodies = await self._find_script(
                keys=[self._heads, self._pages, self._meta, self._amended], args=[entry_id for _, entry_id in wanted]
            )
            for (i, _), body in zip(wanted, bodies, strict=True):
                found[i] = None if body is None else _as_bytes(body)
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
        journal = (self._heads, self._pages, self._meta, self._amended)
        await self._client.delete(*journal, *(self._index_prefix + index for index in indexes))
