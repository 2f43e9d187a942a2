"""The Redis store (redis.asyncio): what lets many workers and pods share one view.

Atomic units are single round trips: a Lua script for compare-and-set document writes and for each
batch of buffered writes, which records the batch's id in the same step (store/batches.py).
Connection failures surface as ``StoreUnavailable``. A reply that does not come does not make
anything happen twice, nor an admin write answered 503 happen later: see store/redis_once.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from functools import wraps
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.typing import EncodableT, FieldT

from simproxy.store import redis_scripts as scripts
from simproxy.store.base import (
    DOCUMENTS,
    METRICS_KEEP_S,
    NO_EFFECTS,
    TRAFFIC_KEEP_S,
    JournalItem,
    Versions,
    WriteEffects,
)
from simproxy.store.batches import BatchId
from simproxy.store.errors import SimulationChanged, StoreError, StoreUnavailable
from simproxy.store.redis_once import (
    LOST,
    WRITE_OUTCOME_KEEP_MS,
    RedisBatch,
    take_lease,
    transfer_allowance,
    write_lease,
    write_outcome,
)

SOCKET_TIMEOUT = 1.0
"""Seconds a command may wait for the server's first reply byte (or a connection to open)."""

P = ParamSpec("P")
T = TypeVar("T")


def key_prefix(prefix: str) -> str:
    """``simproxy:`` -> ``simproxy:{simproxy}:``: the prefix plus a Cluster hash tag derived from it."""
    tag = prefix.rstrip(":") or "simproxy"
    return f"{prefix}{{{tag}}}:"


def _translate(
    func: Callable[Concatenate[RedisStore, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[RedisStore, P], Coroutine[Any, Any, T]]:
    @wraps(func)
    async def wrapper(store: RedisStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await func(store, *args, **kwargs)
        except StoreError:
            raise  # already translated (and counted) inside
        except LOST as exc:
            store.errors += 1
            raise StoreUnavailable(f"the store cannot be reached: {exc}") from exc
        except RedisError as exc:
            store.errors += 1
            raise StoreError(f"store operation failed: {exc}") from exc

    return wrapper


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def _mapping(values: Mapping[str, str]) -> dict[FieldT, EncodableT]:
    return {
        key.encode("utf-8", "surrogateescape"): value.encode("utf-8", "surrogateescape")
        for key, value in values.items()
    }


def _simulation_arg(simulation: int | None) -> str:
    return "" if simulation is None else str(simulation)


def _frame(key: str, value: bytes) -> bytes:
    """``<n>:<key (n bytes)><value>``: a key and a value in one list item, whatever bytes either holds."""
    raw = key.encode("utf-8", "surrogateescape")
    return b"%d:%b%b" % (len(raw), raw, value)


def _unframe(item: bytes) -> tuple[str, bytes]:
    size, _, rest = item.partition(b":")
    n = int(size)
    return _text(rest[:n]), rest[n:]


class RedisStore:
    shared = True

    def __init__(self, client: aioredis.Redis, prefix: str = "simproxy:", bulk: aioredis.Redis | None = None) -> None:
        """``bulk``: a client without a socket timeout, for large transfers (``_sized``); ``client``
        by default."""
        self._client = client
        self._bulk = bulk or client
        self.errors = 0
        base = key_prefix(prefix)
        self._batches = f"{base}batch:"
        self._writes = f"{base}write:"
        self._gen = f"{base}gen"
        self._docs = {name: f"{base}doc:{name}" for name in DOCUMENTS}
        self._workers = f"{base}workers"
        self._acks = f"{base}acks"
        self._counters = f"{base}counters"
        self._meta = f"{base}meta"
        self._state = f"{base}state"
        self._state_version = f"{base}state:v"
        self._cache = (f"{base}cache", f"{base}cache:lru", f"{base}cache:seq")
        self._journal = (f"{base}journal", f"{base}journal:entries")
        self._index_prefix = f"{base}journal:index:"
        self._logs = f"{base}logs"
        self._diff = f"{base}diff"
        self._metrics_prefix = f"{base}metrics:"
        self._traffic_prefix = f"{base}traffic:"
        self._login_failures = f"{base}auth:failures"
        self._revoked_prefix = f"{base}revoked:"
        self._closed = False
        self.channel = f"{base}events"
        self._bump_script = client.register_script(scripts.BUMP_ONE)
        self._login_locked_script = client.register_script(scripts.LOGIN_LOCKED)
        self._write_script = client.register_script(scripts.WRITE_DOCUMENT)
        self._transition_script = client.register_script(scripts.STATE_TRANSITION)
        self._step_script = client.register_script(scripts.STATE_STEP)
        self._counters_script = client.register_script(scripts.ADD_COUNTERS)
        self._cache_put_script = client.register_script(scripts.CACHE_PUT)
        self._journal_append_script = client.register_script(scripts.JOURNAL_APPEND)
        self._logs_append_script = client.register_script(scripts.LOGS_APPEND)
        self._metrics_add_script = client.register_script(scripts.METRICS_ADD)
        self._journal_entries_script = client.register_script(scripts.JOURNAL_ENTRIES)
        self._journal_amend_script = client.register_script(scripts.JOURNAL_AMEND)

    @classmethod
    def from_url(cls, url: str, prefix: str = "simproxy:") -> RedisStore:
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

    @contextlib.asynccontextmanager
    async def _sized(self, size: int, script: AsyncScript | None = None) -> AsyncIterator[aioredis.Redis]:
        """The client for a command carrying or fetching ``size`` bytes, within a time limit that
        fits them (a timeout raises ``TimeoutError``, one of ``LOST``). A large ``script`` call is
        preceded by loading the script: redis-py sends its arguments again when Redis lacks it."""
        allowance = transfer_allowance(size)
        if not allowance:
            yield self._client
            return
        if script is not None:
            await self._client.script_load(script.script)
        async with asyncio.timeout(SOCKET_TIMEOUT + allowance):
            yield self._bulk

    def batch(self, batch: BatchId) -> RedisBatch:
        return RedisBatch(self, batch)

    def _count_error(self) -> None:
        self.errors += 1

    def _batch(self, kind: str, batch: BatchId | None) -> tuple[str, list[str]]:
        """The key and the arguments that open a batched write (``scripts.BATCH``)."""
        if batch is None:
            return self._batches, [kind, "0"]
        return self._batches + batch.writer, [kind, str(batch.seq)]

    @_translate
    async def ping(self) -> None:
        await self._client.ping()

    @_translate
    async def read_versions(self) -> Versions:
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.get(self._gen)
            for name in DOCUMENTS:
                pipe.hget(self._docs[name], "v")
            results = await pipe.execute()
        return Versions(
            int(results[0] or 0), {name: int(v or 0) for name, v in zip(DOCUMENTS, results[1:], strict=True)}
        )

    @_translate
    async def read_document(self, name: str) -> tuple[int, bytes] | None:
        key = self._docs[name]
        async with self._sized(await self._client.hstrlen(key, "body")) as client:
            version, body = await client.hmget(key, ["v", "body"])
        if version is None or body is None:
            return None
        return int(version), body if isinstance(body, bytes) else body.encode()

    @_translate
    async def write_document(
        self, name: str, body: bytes, expected_version: int | None = None, effects: WriteEffects = NO_EFFECTS
    ) -> int | None:
        marker = self._writes + secrets.token_hex(8)
        expected = "" if expected_version is None else str(expected_version)
        lease = write_lease(len(body))
        leased = await take_lease(self._client, marker, lease)
        try:
            async with self._sized(len(body), self._write_script) as client:
                keys = [self._docs[name], self._gen, marker, *self._cache, self._state, self._state_version]
                args: list[EncodableT] = [body, expected, WRITE_OUTCOME_KEEP_MS, "1" if effects.clear_cache else ""]
                for key, value in effects.state:
                    args += [key.encode("utf-8", "surrogateescape"), value.encode("utf-8", "surrogateescape")]
                result = int(await self._write_script(keys=keys, args=args, client=client))
        except LOST as exc:
            self.errors += 1
            result = await write_outcome(self._client, marker, leased, lease, exc, self._count_error)
            if result < 0:
                raise StoreUnavailable(f"the store did not answer a write in time ({exc}); it was not applied") from exc
        if result < 0:
            self.errors += 1
            raise StoreUnavailable("the store took the write after its lease: it was not applied")
        return result or None

    @_translate
    async def bump_generation(self) -> int:
        return int(await self._bump_script(keys=[self._gen]))

    @_translate
    async def publish(self, generation: int) -> None:
        await self._client.publish(self.channel, str(generation))

    async def subscribe(self) -> AsyncIterator[int]:
        pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(self.channel)
            while not self._closed:
                # a bounded wait, so that closing the store also ends its subscriptions
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.5)
                if message is None:
                    continue
                try:
                    yield int(cast(dict[str, Any], message)["data"])
                except (KeyError, TypeError, ValueError):
                    continue
            raise StoreUnavailable("the store was closed")
        except LOST as exc:
            self.errors += 1
            raise StoreUnavailable(f"lost the store's event channel: {exc}") from exc
        except RedisError as exc:
            self.errors += 1
            raise StoreError(f"cannot follow the store's event channel: {exc}") from exc
        finally:
            await pubsub.aclose()  # type: ignore[no-untyped-call]

    @_translate
    async def heartbeat(self, worker_id: str, acked: int, now_ms: int, instance: str = "") -> None:
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.hset(self._workers, worker_id, now_ms)
            pipe.hset(self._acks, worker_id, acked)
            pipe.hsetnx(self._meta, "registry_since", now_ms)
            if instance:
                pipe.expire(self._metrics_prefix + instance, METRICS_KEEP_S)
            await pipe.execute()

    @_translate
    async def registry_since(self) -> int | None:
        value = await self._client.hget(self._meta, "registry_since")
        return None if value is None else int(value)

    @_translate
    async def worker_acks(self, alive_since_ms: int) -> dict[str, int]:
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hgetall(self._workers)
            pipe.hgetall(self._acks)
            seen, acks = await pipe.execute()
        alive = {k.decode(): int(v) for k, v in seen.items() if int(v) >= alive_since_ms}
        return {wid: int(acks.get(wid.encode(), 0)) for wid in alive}

    @_translate
    async def unregister(self, worker_id: str) -> None:
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.hdel(self._workers, worker_id)
            pipe.hdel(self._acks, worker_id)
            await pipe.execute()

    @_translate
    async def add_counters(self, counts: Mapping[str, int], batch: BatchId | None = None) -> None:
        if not counts:
            return
        key, args = self._batch("counters", batch)
        for mode, value in counts.items():
            args += [mode, str(value)]
        await self._counters_script(keys=[key, self._counters], args=args)

    @_translate
    async def read_counters(self) -> dict[str, int]:
        raw = await self._client.hgetall(self._counters)
        return {(k.decode() if isinstance(k, bytes) else k): int(v) for k, v in raw.items()}

    @_translate
    async def state_get(self) -> dict[str, str]:
        raw = await self._client.hgetall(self._state)
        return {_text(k): _text(v) for k, v in raw.items()}

    @_translate
    async def state_replace(self, values: Mapping[str, str]) -> None:
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.delete(self._state)
            if values:
                pipe.hset(self._state, mapping=_mapping(values))
            await self._bump_script(keys=[self._state_version], client=pipe)
            await pipe.execute()

    @_translate
    async def state_update(self, values: Mapping[str, str]) -> None:
        if values:
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.hset(self._state, mapping=_mapping(values))
                await self._bump_script(keys=[self._state_version], client=pipe)
                await pipe.execute()

    def held_state(self) -> None:
        """Redis's state is a round trip away: a request steps it with an await."""
        return None

    @_translate
    async def state_read(self) -> tuple[int, dict[str, str]]:
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.get(self._state_version)
            pipe.hgetall(self._state)
            version, raw = await pipe.execute()
        return int(version or 0), {_text(k): _text(v) for k, v in raw.items()}

    @_translate
    async def state_step(
        self, version: int, sets: Mapping[str, str], removes: Sequence[str], simulation: int | None = None
    ) -> tuple[bool, int, dict[str, str]]:
        args: list[str] = [_simulation_arg(simulation), str(version), str(len(sets))]
        for key, value in sets.items():
            args += [key, value]
        args += list(removes)
        reply = await self._step_script(keys=[self._state, self._state_version, self._docs["simulation"]], args=args)
        if reply == -1:
            raise SimulationChanged("the simulation was replaced since this step was decided")
        applied, now, flat = reply
        state = {_text(flat[i]): _text(flat[i + 1]) for i in range(0, len(flat), 2)}
        return bool(applied), int(now), state

    @_translate
    async def state_transition(
        self,
        requires: Mapping[str, str],
        sets: Mapping[str, str],
        removes: Sequence[str],
        simulation: int | None = None,
    ) -> bool:
        args: list[str] = [_simulation_arg(simulation), str(len(requires))]
        for key, value in requires.items():
            args += [key, value]
        args.append(str(len(sets)))
        for key, value in sets.items():
            args += [key, value]
        args += list(removes)
        keys = [self._state, self._state_version, self._docs["simulation"]]
        applied = int(await self._transition_script(keys=keys, args=args))
        if applied == -1:
            raise SimulationChanged("the simulation was replaced since this step was decided")
        return bool(applied)

    @_translate
    async def cache_put(self, entries: Mapping[str, bytes], capacity: int, batch: BatchId | None = None) -> None:
        if not entries:
            return
        key, opening = self._batch("cache", batch)
        args: list[str | bytes] = [*opening, str(capacity)]
        for entry_key, value in entries.items():
            args += [entry_key, value]
        await self._cache_put_script(keys=[key, *self._cache], args=args)

    @_translate
    async def cache_entries(self) -> dict[str, bytes]:
        raw = await self._client.hgetall(self._cache[0])
        return {_text(k): v if isinstance(v, bytes) else v.encode() for k, v in raw.items()}

    @_translate
    async def cache_clear(self) -> None:
        await self._client.delete(*self._cache)

    @_translate
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
        batch_key, opening = self._batch("journal", batch)
        payload = b"".join(parts)
        args: list[str | bytes] = [*opening, str(limit), str(len(entries)), ",".join(lengths), payload]
        keys = [batch_key, *self._journal]
        for index, mapping in index_keys.items():
            keys.append(self._index_prefix + index)
            args.append(str(len(mapping)))
            for key, entry_id in mapping.items():
                args += [key, entry_id]
        async with self._sized(len(payload), self._journal_append_script) as client:
            await self._journal_append_script(keys=keys, args=args, client=client)

    @_translate
    async def journal_amend(self, entry_id: str, entry: bytes) -> bool:
        return bool(await self._journal_amend_script(keys=[self._journal[1]], args=[entry_id, entry]))

    @_translate
    async def journal_entries(self) -> list[bytes]:
        raw = await self._journal_entries_script(keys=list(self._journal))
        return [v if isinstance(v, bytes) else str(v).encode() for v in raw or () if v is not None]

    @_translate
    async def journal_lookup(self, index: str, keys: Sequence[str]) -> list[bytes | None]:
        if not keys:
            return []
        ids = await self._client.hmget(self._index_prefix + index, list(keys))
        found: list[bytes | None] = [None] * len(keys)
        wanted = [(i, entry_id) for i, entry_id in enumerate(ids) if entry_id is not None]
        if wanted:
            bodies = await self._client.hmget(self._journal[1], [entry_id for _, entry_id in wanted])
            for (i, _), body in zip(wanted, bodies, strict=True):
                found[i] = body if body is None or isinstance(body, bytes) else str(body).encode()
        return found

    @_translate
    async def journal_set_index(self, index: str, keys: Mapping[str, str]) -> None:
        name = self._index_prefix + index
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.delete(name)
            if keys:
                pipe.hset(name, mapping=_mapping(keys))
            await pipe.execute()

    @_translate
    async def journal_drop_index(self, index: str) -> None:
        await self._client.delete(self._index_prefix + index)

    @_translate
    async def journal_clear(self, indexes: Sequence[str]) -> None:
        await self._client.delete(*self._journal, *(self._index_prefix + index for index in indexes))

    # Diff reports: one list of framed (request key, report) items, so that an append is a single
    # RPUSH (atomic, one round trip) and the groups' first-seen order is the list's order.

    @_translate
    async def diff_add(self, request_key: str, report: bytes) -> None:
        await self._client.rpush(self._diff, _frame(request_key, report))

    @_translate
    async def diff_reports(self) -> list[tuple[str, list[bytes]]]:
        groups: dict[str, list[bytes]] = {}
        for item in await self._client.lrange(self._diff, 0, -1):
            key, report = _unframe(item if isinstance(item, bytes) else str(item).encode())
            groups.setdefault(key, []).append(report)
        return list(groups.items())

    @_translate
    async def diff_clear(self) -> None:
        await self._client.delete(self._diff)

    @_translate
    async def logs_append(self, records: Sequence[bytes], limit: int, batch: BatchId | None = None) -> None:
        if not records:
            return
        key, opening = self._batch("logs", batch)
        await self._logs_append_script(keys=[key, self._logs], args=[*opening, str(limit), *records])

    @_translate
    async def metrics_add(
        self,
        instance: str,
        increments: Mapping[str, float],
        traffic: tuple[int, Mapping[str, float]] | None = None,
        *,
        resumed: bool = False,
        batch: BatchId | None = None,
    ) -> bool:
        if not increments and traffic is None:
            return True
        keys = [self._metrics_prefix + instance]
        mark = "" if batch is None else f"batch|{batch.writer}"
        args: list[str | float] = [mark, 0 if batch is None else batch.seq, "1" if resumed else "0", len(increments)]
        for field, amount in increments.items():
            args += [field, amount]
        if traffic is not None:
            # one hash a minute, fields "<second of the minute>|<name>": a read of the last
            # minutes is a few HGETALLs, and each minute expires as a whole
            second, counts = traffic
            keys.append(f"{self._traffic_prefix}{second // 60}")
            for name, amount in counts.items():
                args += [f"{second % 60}|{name}", amount]
        return int(await self._metrics_add_script(keys=keys, args=args)) != 2

    @_translate
    async def traffic_read(self, since: int, until: int) -> dict[int, dict[str, float]]:
        minutes = range(max(since, until - TRAFFIC_KEEP_S) // 60, until // 60 + 1)
        async with self._client.pipeline(transaction=False) as pipe:
            for minute in minutes:
                pipe.hgetall(f"{self._traffic_prefix}{minute}")
            hashes = await pipe.execute()
        out: dict[int, dict[str, float]] = {}
        for minute, raw in zip(minutes, hashes, strict=True):
            for field, amount in raw.items():
                offset, _, name = _text(field).partition("|")
                second = minute * 60 + int(offset)
                if since <= second <= until:
                    out.setdefault(second, {})[name] = float(amount)
        return out

    @_translate
    async def worker_heartbeats(self, alive_since_ms: int) -> dict[str, int]:
        seen = await self._client.hgetall(self._workers)
        return {_text(k): int(v) for k, v in seen.items() if int(v) >= alive_since_ms}

    @_translate
    async def metrics_read(self, instance: str) -> dict[str, float]:
        raw = await self._client.hgetall(self._metrics_prefix + instance)
        fields = {_text(k): v for k, v in raw.items()}
        return {field: float(v) for field, v in fields.items() if not field.startswith("batch|")}

    @_translate
    async def sizes(self) -> tuple[int, int]:
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.llen(self._journal[0])
            pipe.hlen(self._cache[0])
            journal, cache = await pipe.execute()
        return int(journal), int(cache)

    @_translate
    async def logs_records(self) -> list[bytes]:
        raw = await self._client.lrange(self._logs, 0, -1)
        return [v if isinstance(v, bytes) else str(v).encode() for v in raw]

    @_translate
    async def login_locked(self, now_ms: int, window_ms: int, limit: int) -> bool:
        return bool(await self._login_locked_script(keys=[self._login_failures], args=[now_ms, window_ms, limit]))

    @_translate
    async def login_failed(self, now_ms: int) -> None:
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.hincrby(self._login_failures, "count", 1)
            pipe.hset(self._login_failures, "last", now_ms)
            await pipe.execute()

    @_translate
    async def revoke_token(self, digest: str, until_ms: int, now_ms: int) -> None:
        if until_ms > now_ms:
            await self._client.set(self._revoked_prefix + digest, b"1", px=until_ms - now_ms)

    @_translate
    async def token_revoked(self, digest: str) -> bool:
        return bool(await self._client.exists(self._revoked_prefix + digest))

    async def aclose(self) -> None:
        self._closed = True
        await self._client.aclose()
        if self._bulk is not self._client:
            await self._bulk.aclose()
