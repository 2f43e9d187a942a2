"""``DiffStore`` on Redis: one list of framed (request key, report) items, so that an append is a
single RPUSH (atomic, one round trip) and the groups' first-seen order is the list's order."""

from __future__ import annotations

from simproxy.store.redis.link import RedisLink, RedisRole, text, translate


def _frame(key: str, value: bytes) -> bytes:
    """``<n>:<key (n bytes)><value>``: a key and a value in one list item, whatever bytes either holds."""
    raw = key.encode("utf-8", "surrogateescape")
    return b"%d:%b%b" % (len(raw), raw, value)


def _unframe(item: bytes) -> tuple[str, bytes]:
    size, _, rest = item.partition(b":")
    n = int(size)
    return text(rest[:n]), rest[n:]


class RedisDiffs(RedisRole):
    def __init__(self, link: RedisLink) -> None:
        super().__init__(link)
        self._diff = link.keys.diff

    @translate
    async def diff_add(self, request_key: str, report: bytes) -> None:
        await self._client.rpush(self._diff, _frame(request_key, report))

    @translate
    async def diff_reports(self) -> list[tuple[str, list[bytes]]]:
        groups: dict[str, list[bytes]] = {}
        for item in await self._client.lrange(self._diff, 0, -1):
            key, report = _unframe(item if isinstance(item, bytes) else str(item).encode())
            groups.setdefault(key, []).append(report)
        return list(groups.items())

    @translate
    async def diff_clear(self) -> None:
        await self._client.delete(self._diff)
