"""Shared state behind one interface: ``Store``, with an in-process and a Redis implementation;
consumers are typed against the resources they use (``Documents``, ``SharedState``, ``JournalStore``, ...).
Each implementation is a package with a module per resource (store/memory/, store/redis/), whose
store (``MemoryStore``, ``RedisStore``) composes them and holds each as an attribute.

Each implementation is imported only when asked for: the Redis one (``simproxy.store.redis``, and
redis-py with it) by ``open_store`` given a URL or by the first use of ``RedisStore`` or
``key_prefix``, so a start on the in-process store never loads redis-py; the in-process one
(``simproxy.store.memory``, and asyncio with it) by ``open_store`` without one or by the first use
of ``MemoryStore``, so what needs only the error tree (the admin client) never loads asyncio.
"""

from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import TYPE_CHECKING

from simproxy.store.base import (
    DOCUMENTS,
    METRICS_KEEP_S,
    NO_EFFECTS,
    TRAFFIC_KEEP_S,
    AuthStore,
    BatchedStore,
    BatchWriter,
    CacheStore,
    DiffStore,
    Documents,
    HeldState,
    JournalItem,
    JournalRecord,
    JournalRun,
    JournalStore,
    SharedState,
    StateCopy,
    Store,
    Telemetry,
    Versions,
    Workers,
    WriteEffects,
)
from simproxy.store.batches import Batch, BatchId, BatchIds, Outbox
from simproxy.store.errors import (
    EraChanged,
    SimproxyError,
    SimulationChanged,
    StoreError,
    StoreUnavailable,
    WriteUnconfirmed,
)

if TYPE_CHECKING:
    from simproxy.store.memory import MemoryStore
    from simproxy.store.redis import RedisStore, key_prefix

__all__ = (
    "DOCUMENTS",
    "METRICS_KEEP_S",
    "NO_EFFECTS",
    "TRAFFIC_KEEP_S",
    "AuthStore",
    "Batch",
    "BatchId",
    "BatchIds",
    "BatchWriter",
    "BatchedStore",
    "CacheStore",
    "DiffStore",
    "Documents",
    "EraChanged",
    "HeldState",
    "JournalItem",
    "JournalRecord",
    "JournalRun",
    "JournalStore",
    "MemoryStore",
    "Outbox",
    "RedisStore",
    "SharedState",
    "SimproxyError",
    "SimulationChanged",
    "StateCopy",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "Telemetry",
    "Versions",
    "Workers",
    "WriteEffects",
    "WriteUnconfirmed",
    "key_prefix",
    "open_store",
)

_LAZY = MappingProxyType(
    {"RedisStore": "simproxy.store.redis", "key_prefix": "simproxy.store.redis", "MemoryStore": "simproxy.store.memory"}
)


def __getattr__(name: str) -> object:
    """``RedisStore``, ``key_prefix`` and ``MemoryStore``, from their modules imported on first use."""
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


def open_store(redis_url: str, prefix: str = "simproxy:") -> Store:
    """A ``RedisStore`` for a URL, or the in-process store when the URL is empty."""
    if redis_url:
        from simproxy.store.redis import RedisStore

        return RedisStore.from_url(redis_url, prefix)
    from simproxy.store.memory import MemoryStore

    return MemoryStore()
