"""The Redis store (redis.asyncio): what lets many workers and pods share one view.

Atomic units are single round trips: a Lua script for compare-and-set document writes and for each
batch of buffered writes, which records the batch's id in the same step (store/batches.py).
Connection failures surface as ``StoreUnavailable``. A reply that does not come does not make
anything happen twice, nor an admin write answered 503 happen later: see store/redis/once.py.

One module per role of store/base.py (documents.py, workers.py, state.py, cache.py, journal.py,
telemetry.py, diff.py, auth.py; batch.py for ``BatchWriter``), each sharing the handle's
``RedisLink`` (link.py). ``RedisStore`` composes them.
"""

from __future__ import annotations

from typing import cast

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

from simproxy.store.batches import BatchId
from simproxy.store.redis.auth import RedisAuth
from simproxy.store.redis.batch import RedisBatch
from simproxy.store.redis.cache import RedisCache
from simproxy.store.redis.diff import RedisDiffs
from simproxy.store.redis.documents import RedisDocuments
from simproxy.store.redis.journal import RedisJournal
from simproxy.store.redis.keys import Keys, key_prefix
from simproxy.store.redis.link import SOCKET_TIMEOUT, RedisLink, translate
from simproxy.store.redis.state import RedisState
from simproxy.store.redis.telemetry import RedisTelemetry
from simproxy.store.redis.workers import RedisWorkers

__all__ = ("CLUSTER_SCHEMES", "RedisStore", "key_prefix")

CLUSTER_SCHEMES = ("redis+cluster://", "rediss+cluster://")
"""A ``-redis-url`` naming a node of a Redis Cluster: the store then follows the cluster's slots."""


class RedisStore:
    """Every role on one Redis handle. The roles are attributes (``documents``, ``state``, ...),
    which a caller on the request path holds; and each role's calls are also the store's own,
    bound here once (no frame of the store's in between)."""

    shared = True

    def __init__(self, client: aioredis.Redis, prefix: str = "simproxy:", bulk: aioredis.Redis | None = None) -> None:
        """``bulk``: a client without a socket timeout, for large transfers (``RedisLink.sized``);
        ``client`` by default."""
        self.link = link = RedisLink(client, Keys.of(prefix), bulk)
        self.channel = link.keys.channel
        self.state = state = RedisState(link)
        self.documents = documents = RedisDocuments(link, state)
        self.read_versions = documents.read_versions
        self.read_document = documents.read_document
        self.write_document = documents.write_document
        self.bump_generation = documents.bump_generation
        self.publish = documents.publish
        self.subscribe = documents.subscribe
        self.workers = workers = RedisWorkers(link)
        self.heartbeat = workers.heartbeat
        self.registry_since = workers.registry_since
        self.worker_acks = workers.worker_acks
        self.worker_heartbeats = workers.worker_heartbeats
        self.unregister = workers.unregister
        self.held_state = state.held_state
        self.state_get = state.state_get
        self.state_replace = state.state_replace
        self.state_update = state.state_update
        self.state_copy = state.state_copy
        self.state_fit = state.state_fit
        self.state_advance = state.state_advance
        self.state_moved = state.state_moved
        self.eras = state
        """The state in groups of their own slots, and its eras (store/redis/eras.py)."""
        self.cache = cache = RedisCache(link)
        self.cache_put = cache.cache_put
        self.cache_entries = cache.cache_entries
        self.cache_clear = cache.cache_clear
        self.journal = journal = RedisJournal(link)
        self.journal_append = journal.journal_append
        self.journal_amend = journal.journal_amend
        self.journal_entries = journal.journal_entries
        self.journal_lookup = journal.journal_lookup
        self.journal_set_index = journal.journal_set_index
        self.journal_drop_index = journal.journal_drop_index
        self.journal_clear = journal.journal_clear
        self.telemetry = telemetry = RedisTelemetry(link)
        self.add_counters = telemetry.add_counters
        self.read_counters = telemetry.read_counters
        self.logs_append = telemetry.logs_append
        self.logs_records = telemetry.logs_records
        self.metrics_add = telemetry.metrics_add
        self.metrics_read = telemetry.metrics_read
        self.traffic_read = telemetry.traffic_read
        self.sizes = telemetry.sizes
        self.diffs = diffs = RedisDiffs(link)
        self.diff_add = diffs.diff_add
        self.diff_reports = diffs.diff_reports
        self.diff_clear = diffs.diff_clear
        self.auth = auth = RedisAuth(link)
        self.login_locked = auth.login_locked
        self.login_failed = auth.login_failed
        self.revoke_token = auth.revoke_token
        self.token_revoked = auth.token_revoked

    @classmethod
    def from_url(cls, url: str, prefix: str = "simproxy:") -> RedisStore:
        if url.startswith(CLUSTER_SCHEMES):
            return cls.from_cluster_url(url, prefix)

        # One retry policy for every command: a pooled connection that died with a restarted server
        # is replaced transparently; only a server that stays away surfaces as StoreUnavailable.
        # A server that accepts but does not answer (paused, overloaded) is given up on after a
        # second, not retried: admin calls then answer 503 at once rather than hang with it.
        def connect(timeout: float | None) -> aioredis.Redis:
            retry = Retry(ExponentialBackoff(cap=0.25, base=0.01), retries=3, supported_errors=(RedisConnectionError,))
            return aioredis.Redis.from_url(
                url,
                socket_timeout=timeout,
                socket_connect_timeout=SOCKET_TIMEOUT,
                health_check_interval=10,
                retry=retry,
                retry_on_error=[RedisConnectionError],
            )

        return cls(connect(SOCKET_TIMEOUT), prefix, bulk=connect(None))

    @classmethod
    def from_cluster_url(cls, url: str, prefix: str = "simproxy:") -> RedisStore:
        """A store on a Redis Cluster, from ``redis+cluster://host:port`` (any node: the client
        learns the others and the slots from it). The cluster client answers the same commands as a
        client of one Redis, routing each to the primary of its keys' slot (store/redis/keys.py)."""
        plain = url.replace("+cluster", "", 1)

        def connect(timeout: float | None) -> aioredis.Redis:
            client = RedisCluster.from_url(plain, socket_timeout=timeout, socket_connect_timeout=SOCKET_TIMEOUT)
            return cast(aioredis.Redis, client)  # the same commands, routed by slot

        return cls(connect(SOCKET_TIMEOUT), prefix, bulk=connect(None))

    @property
    def errors(self) -> int:
        """Calls of this handle that failed so far, whichever role made them."""
        return self.link.errors

    def batch(self, batch: BatchId) -> RedisBatch:
        return RedisBatch(self.telemetry, self.cache, self.journal, batch)

    @translate
    async def ping(self) -> None:
        await self.link.client.ping()

    async def aclose(self) -> None:
        await self.link.aclose()
