"""Shared state behind one interface: ``Store``, with an in-process and a Redis implementation."""

from store.base import DOCUMENTS, TRAFFIC_KEEP_S, JournalRecord, Store, Versions
from store.errors import SimproxyError, StoreError, StoreUnavailable
from store.memory import MemoryStore
from store.redis import RedisStore, key_prefix

__all__ = [
    "DOCUMENTS",
    "TRAFFIC_KEEP_S",
    "JournalRecord",
    "MemoryStore",
    "RedisStore",
    "SimproxyError",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "Versions",
    "key_prefix",
    "open_store",
]


def open_store(redis_url: str, prefix: str = "simproxy:") -> Store:
    """A ``RedisStore`` for a URL, or the in-process store when the URL is empty."""
    if redis_url:
        return RedisStore.from_url(redis_url, prefix)
    return MemoryStore()
