"""Shared state behind one interface: ``Store``, with an in-process and a Redis implementation;
consumers are typed against the resources they use (``Documents``, ``SharedState``, ``JournalStore``, ...).

The Redis one (``store.redis``, and redis-py with it) is imported only when asked for: by
``open_store`` given a URL, or by the first use of ``store.RedisStore`` or ``store.key_prefix``, so
a start on the in-process store never loads redis-py.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from simproxy.store.base import (
    DOCUMENTS,
    METRICS_KEEP_S,
    NO_EFFECTS,
    TRAFFIC_KEEP_S,
    AuthStore,
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
    Store,
    Telemetry,
    Versions,
    Workers,
    WriteEffects,
)
from simproxy.store.batches import Batch, BatchId, BatchIds, Outbox
from simproxy.store.errors import SimproxyError, SimulationChanged, StoreError, StoreUnavailable, WriteUnconfirmed
from simproxy.store.memory import MemoryStore

if TYPE_CHECKING:
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
    "CacheStore",
    "DiffStore",
    "Documents",
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

_FROM_REDIS = frozenset({"RedisStore", "key_prefix"})


def __getattr__(name: str) -> object:
    """``RedisStore`` and ``key_prefix``, from ``store.redis`` imported on first use."""
    if name in _FROM_REDIS:
        return getattr(importlib.import_module("simproxy.store.redis"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_store(redis_url: str, prefix: str = "simproxy:") -> Store:
    """A ``RedisStore`` for a URL, or the in-process store when the URL is empty."""
    if redis_url:
        from simproxy.store.redis import RedisStore

        return RedisStore.from_url(redis_url, prefix)
    return MemoryStore()
