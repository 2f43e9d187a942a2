"""``CacheStore`` in process, and its batched write: entries by recency, the least recently put
dropped beyond the capacity."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping


class MemoryCache:
    def __init__(self) -> None:
        self._entries: OrderedDict[str, bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def clear_now(self) -> None:
        self._entries.clear()

    async def cache_put(self, entries: Mapping[str, bytes], capacity: int) -> None:
        for key, value in entries.items():
            self._entries[key] = bytes(value)
            self._entries.move_to_end(key)
        while len(self._entries) > capacity:
            self._entries.popitem(last=False)

    async def cache_entries(self) -> dict[str, bytes]:
        return dict(self._entries)

    async def cache_clear(self) -> None:
        self.clear_now()
