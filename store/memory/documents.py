"""``Documents`` in process: the generation counter and each document's (version, body). A write
applies its ``WriteEffects`` to the cache and the state in the same step (no await in between)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from simproxy.store.base import DOCUMENTS, NO_EFFECTS, Versions, WriteEffects
from simproxy.store.memory.cache import MemoryCache
from simproxy.store.memory.state import MemoryState


class MemoryDocuments:
    def __init__(self, cache: MemoryCache, state: MemoryState) -> None:
        self._generation = 0
        self._documents: dict[str, tuple[int, bytes]] = {}
        self._cache = cache
        self._state = state
        self._closed = asyncio.Event()

    def close(self) -> None:
        """End the subscriptions."""
        self._closed.set()

    async def read_versions(self) -> Versions:
        return Versions(self._generation, {name: self._documents.get(name, (0, b""))[0] for name in DOCUMENTS})

    async def read_document(self, name: str) -> tuple[int, bytes] | None:
        return self._documents.get(name)

    async def write_document(
        self, name: str, body: bytes, expected_version: int | None = None, effects: WriteEffects = NO_EFFECTS
    ) -> int | None:
        current = self._documents.get(name, (0, b""))[0]
        if expected_version is not None and current != expected_version:
            return None
        self._generation += 1
        self._documents[name] = (self._generation, bytes(body))
        if name == "simulation":
            self._state.simulation_written(self._generation, effects.state)
        if effects.clear_cache:
            self._cache.clear_now()
        return self._generation

    async def bump_generation(self) -> int:
        self._generation += 1
        return self._generation

    async def publish(self, generation: int) -> None:
        return None  # one process: there is nobody else to tell

    async def subscribe(self) -> AsyncIterator[int]:
        await self._closed.wait()
        published: list[int] = []  # one process: nothing is ever published to it
        for generation in published:
            yield generation
