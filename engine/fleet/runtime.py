"""One worker's view of the shared state, and how it stays the same view as everyone else's.

Each worker holds the compiled simulation and the runtime config in memory, keyed by the
generation at which they were written. A write stores the new document (bumping the store's
generation in the same atomic step), publishes the generation and waits, bounded, until every
live worker has applied it and said so (heartbeat + ack). So once an admin write answers, every
worker serves it, and the hot path never asks the store whether something changed.
Counters are buffered per worker and flushed every few milliseconds, and before every ack, in
batches the store applies once however often they are sent (store/batches.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
import zlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import orjson

from simproxy.engine.execution.offload import Offloader
from simproxy.engine.execution.tasks import TaskSet
from simproxy.engine.fleet.config import RuntimeConfig
from simproxy.engine.fleet.datasources import CsvSources, decode_sources, encode_sources, replay
from simproxy.engine.fleet.metrics import MetricsBatch, MetricsBuffer
from simproxy.engine.gocompat.dialect import SPEC, Dialect
from simproxy.engine.journal.recorder import Recorder
from simproxy.engine.matching.cache import MatchCache, load_entry, preload_entries
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.matching.scoring import CompiledSimulation, compile_simulation
from simproxy.engine.simulation.codec import decode_simulation, storage_simulation
from simproxy.engine.simulation.importing import sequence_keys, sequence_starts
from simproxy.engine.simulation.model import EMPTY_SIMULATION, Simulation
from simproxy.engine.templating.csv_store import CsvMutation
from simproxy.store import NO_EFFECTS, Batch, BatchIds, Outbox, Store, StoreError, Versions, WriteEffects

log = logging.getLogger(__name__)

FLUSH_INTERVAL = 0.02
"""Seconds between a busy worker's flushes to a shared store. Every read that must see what was
buffered (the journal, logs, usage, metrics) flushes every worker first, so this sets how many
requests a batch carries, and how soon another worker's template sees a journal entry: each flush
costs about as much as a few requests, and at 5 ms it took 4-5% of a worker serving one stub (side
by side against 20 ms, W1, W2r and W7 alike)."""
LONE_FLUSH_INTERVAL = 0.1
"""The same for a worker alone on the in-process store, whose every read flushes first anyway. A
flush of 20 ms of one stub's traffic took 0.3 ms; flushing every 100 ms instead measured W1 1.07x,
W2r 1.05x, W3 1.04x and W7 1.02x side by side (stop 33). Both intervals divide a second: the
traffic counts go by second (``until_tick``)."""
TICK_LATE_MS = 2
"""How long after its mark on the clock a flush is timed: a timer may fire up to a millisecond early."""
HEARTBEAT_INTERVAL = 1.0
ALIVE_WINDOW_MS = 3_000
BARRIER_TIMEOUT = 3.0
"""Seconds a write waits for a live worker that has not applied it (a frozen one), plus
``LOAD_RATE``'s allowance for a large document."""
LOAD_RATE = 10 << 20
"""Bytes of a document a worker is given a second to fetch and compile, on top of BARRIER_TIMEOUT:
a 120 MB simulation took its workers 3-5 s on the 2-core machine."""
RETRY_INTERVAL = 0.2
"""How often a worker tries the store again while it is unavailable."""
REGISTRY_SETTLE_MS = 1_500
"""A registry younger than this (a Redis that restarted empty) may still miss live workers. A store
private to one instance starts with its registry complete (every worker registers before the
admin port opens) and is never restarted: its workers are given 0."""


def until_tick(now_ms: int, interval: float, phase_ms: int = 0) -> float:
    """Seconds from ``now_ms`` to the next flush: flushes fall ``phase_ms`` after the wall clock's
    multiples of ``interval`` (which divides a second). With no phase, one falls just after each
    second starts, and a batch of traffic lies within one second (``traffic_second``)."""
    step = max(round(interval * 1000), 1)
    return (step - (now_ms - phase_ms) % step + TICK_LATE_MS) / 1000


def traffic_second(since_ms: int, now_ms: int) -> int:
    """The second a batch of requests counted from ``since_ms`` to ``now_ms`` is shown in: the one
    that holds most of that time (a flush that fired just before its mark, a read's flush between
    two marks); the last one when ``since_ms`` is unknown (0) or more than a second back."""
    last = now_ms // 1000
    if since_ms <= 0 or now_ms - since_ms > 1000 or since_ms // 1000 == last:
        return last
    started = last * 1000
    return last - 1 if started - since_ms > now_ms - started else last


def new_lineage() -> str:
    return secrets.token_hex(8)


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Snapshot:
    """What the hot path reads: one attribute load, always consistent with itself."""

    simulation: CompiledSimulation
    simulation_version: int
    config: RuntimeConfig
    config_version: int
    lineage: str = ""
    """Changes when the simulation is replaced (PUT, DELETE), kept when it is appended to (POST)."""
    csv: CsvSources = field(default_factory=CsvSources)


class Runtime:
    def __init__(
        self,
        store: Store,
        registry: MatcherRegistry,
        *,
        worker_id: str | None = None,
        clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
        default_config: RuntimeConfig | None = None,
        cache: MatchCache | None = None,
        webserver: bool = False,
        records: Recorder | None = None,
        instance: str = "",
        registry_settle_ms: int = REGISTRY_SETTLE_MS,
        dialect: Dialect = SPEC,
    ) -> None:
        self.store = store
        self.registry = registry
        self.worker_id = worker_id or new_worker_id()
        self._clock_ms = clock_ms
        self._default_config = default_config or RuntimeConfig()
        self.snapshot = Snapshot(
            compile_simulation(EMPTY_SIMULATION, registry, go=dialect.go_layout), 0, self._default_config, 0
        )
        self.counts: dict[str, int] = {}
        self.cache = cache if cache is not None else MatchCache(1000)
        self.records = records if records is not None else Recorder(journal_size=0, logs_size=0)
        self.metrics = MetricsBuffer()
        self.offload = Offloader()
        """Runs this worker's heavy work off its event loop: one per process (engine/execution/offload.py)."""
        self.instance = instance or self.worker_id
        self.webserver = webserver
        self.dialect = dialect
        """The spec's answers or Hoverfly's where they differ (``-compat``): texts, framing."""
        self._settle_ms = registry_settle_ms
        self._preloaded = 0
        self._acked = 0
        self._sync_lock = asyncio.Lock()
        self._flush_lock = asyncio.Lock()
        self._tasks = TaskSet()
        ids = BatchIds()
        self._counts_out: Outbox[dict[str, int]] = Outbox(ids)
        self._cache_out: Outbox[dict[str, bytes]] = Outbox(ids)
        self._metrics_out: Outbox[MetricsBatch] = Outbox(ids)
        self._metrics_resumed = False
        """A metrics batch of this worker was applied: the store holds its share of the totals."""
        self._metrics_since = 0
        """When (epoch ms) the requests in the metrics buffer began to be counted: its last take, or
        a flush tick that found none; 0 before either."""
        self._errors_seen = 0
        self._prepare: Callable[[Snapshot], Awaitable[None]] | None = None
        """Called with each new configuration before the worker acknowledges it (given to ``start``)."""

    # -- life cycle -----------------------------------------------------------------------

    async def start(self, prepare: Callable[[Snapshot], Awaitable[None]] | None = None) -> None:
        """Load the shared documents and start following changes (raises if the store is down).

        ``prepare`` readies what each new configuration needs before this worker acknowledges it (the
        dispatcher's ``prepare``: a mode that forwards gets its HTTP client); it is called once here,
        for the configuration the worker starts with."""
        await self.sync()
        if prepare is not None:
            await prepare(self.snapshot)
        self._prepare = prepare
        self._tasks.spawn(self._follow_events(), name="runtime-events")
        self._tasks.spawn(self._housekeeping(), name="runtime-housekeeping")
        self._tasks.spawn(self._keep_alive(), name="runtime-keep-alive")

    async def aclose(self) -> None:
        await self._tasks.aclose()
        with contextlib.suppress(StoreError):
            await self.flush()
            await self.store.unregister(self.worker_id)

    # -- following other workers --------------------------------------------------------------

    async def sync(self) -> int:
        """Apply every document that changed in the store, flush buffers, and ack the generation."""
        async with self._sync_lock:
            versions = await self.store.read_versions()
            snap = self.snapshot
            versions = await self._restore_lost_documents(versions, snap)
            simulation, sim_version, lineage = snap.simulation, snap.simulation_version, snap.lineage
            config, config_version = snap.config, snap.config_version
            if versions.documents["simulation"] != sim_version:
                simulation, sim_version, lineage = await self._load_simulation()
            if versions.documents["config"] != config_version:
                config, config_version = await self._load_config()
            csv = snap.csv
            if versions.documents["csv"] != csv.version:
                csv = await self._load_csv()
            if (sim_version, config_version, csv.version) != (
                snap.simulation_version,
                snap.config_version,
                snap.csv.version,
            ):
                self.snapshot = Snapshot(simulation, sim_version, config, config_version, lineage, csv)
            await self._settle(snap)
            await self.flush()
            # The generation just read, not a running maximum: a Redis that restarted empty counts
            # from 0 again, and an old high ack would let writers think this worker is up to date.
            self._acked = versions.generation
            await self.store.heartbeat(self.worker_id, self._acked, self._clock_ms(), self.instance)
            return versions.generation

    async def _settle(self, old: Snapshot) -> None:
        """Ready what the new snapshot needs before it is acknowledged: the match cache, the journal
        indexes, and what ``prepare`` does for a new configuration."""
        await self._refresh_cache(old, self.snapshot)
        self.records.use_indexes(self.snapshot.config.journal_indexes)
        if self._prepare is not None and self.snapshot.config is not old.config:
            try:
                await self._prepare(self.snapshot)
            except Exception:  # a readiness step must never stop the worker's sync or heartbeat
                log.exception("preparing the new configuration failed")

    async def _restore_lost_documents(self, versions: Versions, snap: Snapshot) -> Versions:
        restored = False
        if versions.documents["simulation"] == 0 and snap.simulation_version and snap.simulation.simulation.pairs:
            sim = snap.simulation.simulation
            body = await self.offload.run(_simulation_body, sim, snap.lineage)
            # the state went with it: every sequence starts again at its first step, as after an import
            await self._reseed("simulation", body, WriteEffects(state=sequence_starts(sequence_keys(sim))))
            restored = True
        if versions.documents["config"] == 0 and snap.config_version:
            await self._reseed("config", orjson.dumps(snap.config.to_json()))
            restored = True
        return await self.store.read_versions() if restored else versions

    async def _refresh_cache(self, old: Snapshot, new: Snapshot) -> None:
        """Keep this worker's match cache in step with the fleet's (see engine/matching/cache.py)."""
        cache = self.cache
        if not cache.enabled:
            return
        generation = (new.lineage, new.config.cache_epoch)
        if cache.generation != generation:
            cache.reset(generation)
            await self._load_shared_cache(new)
        elif new.simulation_version != old.simulation_version or new.config.strategy != old.config.strategy:
            # An append or a new strategy keeps the cache, as in Hoverfly: so that every worker
            # then answers alike, each takes in the entries the others made before the change.
            await self._load_shared_cache(new)
        config = new.config
        if config.preload_epoch != self._preloaded and config.preload_lineage == new.lineage:
            self._preloaded = config.preload_epoch
            for entry in preload_entries(new.simulation, self.webserver):
                cache.put(entry)

    async def _load_shared_cache(self, snap: Snapshot) -> None:
        generation = self.cache.generation
        for raw in (await self.store.cache_entries()).values():
            entry = load_entry(raw, snap.simulation, generation)
            if entry is not None and self.cache.generation == generation:
                self.cache.put(entry, mirror=False)

    async def _reseed(self, name: str, body: bytes, effects: WriteEffects = NO_EFFECTS) -> bool:
        """The store lost a document this worker still holds (Redis restarted empty): put it back,
        with ``effects`` in the same step.

        Compare-and-set against "never written", so of all workers doing this only the first wins;
        it tells the others at once (a worker that started meanwhile found the store empty).
        """
        generation = await self.store.write_document(name, body, 0, effects)
        if generation is None:
            return False
        await self.store.publish(generation)
        log.warning("the store had lost the %s; restored it from this worker's copy", name)
        return True

    async def _load_simulation(self) -> tuple[CompiledSimulation, int, str]:
        doc = await self.store.read_document("simulation")
        if doc is None:
            return compile_simulation(EMPTY_SIMULATION, self.registry, go=self.dialect.go_layout), 0, ""
        version, body = doc
        compiled, lineage = await self.offload.run(self._compile_stored, body)  # seconds at 50,000 pairs
        return compiled, version, lineage

    def _compile_stored(self, body: bytes) -> tuple[CompiledSimulation, str]:
        data = orjson.loads(body)
        return compile_simulation(decode_simulation(data), self.registry, go=self.dialect.go_layout), str(
            data.get("lineage", "")
        )

    async def _load_csv(self) -> CsvSources:
        doc = await self.store.read_document("csv")
        return CsvSources() if doc is None else decode_sources(*doc)

    # -- CSV data sources written by templates (no wait: readers check the version per render) ----

    async def fresh_csv(self) -> CsvSources:
        """The data sources as the store has them now (one round trip; reloaded only when changed)."""
        versions = await self.store.read_versions()
        if versions.documents["csv"] == self.snapshot.csv.version:
            return self.snapshot.csv
        csv = await self._load_csv()
        async with self._sync_lock:
            if csv.version > self.snapshot.csv.version:
                self.snapshot = replace(self.snapshot, csv=csv)
        return csv

    async def commit_csv(self, base: CsvSources, mutations: Sequence[CsvMutation]) -> bool:
        """Store ``mutations`` made on ``base``; False (nothing stored) when another write came first."""
        generation = await self.store.write_document("csv", encode_sources(replay(base, mutations)), base.version)
        if generation is None:
            return False
        await self.fresh_csv()
        return True

    async def write_csv(
        self, tables: Mapping[str, Sequence[Sequence[str]]], expected: int | None, *, wait: bool = True
    ) -> bool:
        """An admin write of every data source, then wait for every worker (like the simulation)."""
        body = encode_sources(tables)

        def apply(snap: Snapshot, generation: int) -> Snapshot:
            if generation <= snap.csv.version:
                return snap
            return replace(snap, csv=decode_sources(generation, body))

        return await self._write("csv", body, expected, apply, wait)

    async def _load_config(self) -> tuple[RuntimeConfig, int]:
        doc = await self.store.read_document("config")
        if doc is None:
            return self._default_config, 0
        version, body = doc
        return RuntimeConfig.from_json(orjson.loads(body)), version

    async def _follow_events(self) -> None:
        while True:
            try:
                async for _generation in self.store.subscribe():
                    await self.sync()
            except StoreError as exc:
                log.warning("store event channel lost (%s); retrying", exc)
            await asyncio.sleep(0.5)
            with contextlib.suppress(StoreError):
                await self.sync()  # catch up on whatever was published while disconnected

    async def _keep_alive(self) -> None:
        """Beat while a sync is under way, whichever task runs it: applying a large simulation takes
        seconds, and a worker that stops beating for ALIVE_WINDOW_MS is taken for gone, so a
        write's barrier would stop waiting for it while it still serves the old simulation."""
        while True:
            await asyncio.sleep(HEARTBEAT_INTERVAL)
            if self._sync_lock.locked():
                with contextlib.suppress(StoreError):
                    await self.store.heartbeat(self.worker_id, self._acked, self._clock_ms(), self.instance)

    async def _housekeeping(self) -> None:
        last_beat = 0.0
        failing = False
        loop = asyncio.get_running_loop()
        if self.store.shared:
            # each worker at its own phase: a fleet's flushes all at once would queue behind one
            # another in Redis, and the requests that wait on it with them; a batch then strays
            # from its second by less than half an interval (``traffic_second``)
            interval, phase = FLUSH_INTERVAL, zlib.crc32(self.worker_id.encode()) % round(FLUSH_INTERVAL * 1000)
        else:
            interval, phase = LONE_FLUSH_INTERVAL, 0
        while True:
            await asyncio.sleep(until_tick(self._clock_ms(), interval, phase))
            if not self.metrics.requests:
                self._metrics_since = self._clock_ms()
            try:
                if failing or loop.time() - last_beat >= HEARTBEAT_INTERVAL:
                    last_beat = loop.time()
                    await self.sync()  # heartbeat, and a safety net for a missed event
                    if failing:
                        log.warning("store available again")
                    failing = False
                elif self.pending:
                    await self.flush()
            except StoreError as exc:
                if not failing:
                    log.warning("store unavailable: %s", exc)
                failing = True
                self.records.settle(reached=False)  # a heartbeat that failed says so too
                # retry soon: a store that comes back must see this worker registered again well
                # within REGISTRY_SETTLE_MS, or a write could stop waiting for it
                await asyncio.sleep(RETRY_INTERVAL)

    # -- writes ---------------------------------------------------------------------------

    async def write_simulation(
        self,
        sim: Simulation,
        compiled: CompiledSimulation,
        expected: int | None,
        *,
        lineage: str | None = None,
        wait: bool = True,
        effects: WriteEffects = NO_EFFECTS,
    ) -> bool:
        """Store ``sim`` (compare-and-set against ``expected`` when given) and apply ``effects`` in
        the same atomic step, then wait for every worker.

        ``lineage`` continues the current simulation (an append); None starts a new one (a replace).
        ``wait=False`` skips the wait: for start-up, before any worker exists.
        """
        lineage = lineage or new_lineage()
        body = await self.offload.run(_simulation_body, sim, lineage)

        def apply(snap: Snapshot, generation: int) -> Snapshot:
            if generation <= snap.simulation_version:
                return snap
            return Snapshot(compiled, generation, snap.config, snap.config_version, lineage, snap.csv)

        return await self._write("simulation", body, expected, apply, wait, effects)

    async def write_config(self, config: RuntimeConfig, expected: int | None, *, wait: bool = True) -> bool:
        """Store ``config`` like ``write_simulation`` stores a simulation."""

        def apply(snap: Snapshot, generation: int) -> Snapshot:
            if generation <= snap.config_version:
                return snap
            return Snapshot(snap.simulation, snap.simulation_version, config, generation, snap.lineage, snap.csv)

        return await self._write("config", orjson.dumps(config.to_json()), expected, apply, wait)

    async def _write(
        self,
        name: str,
        body: bytes,
        expected: int | None,
        apply: Callable[[Snapshot, int], Snapshot],
        wait: bool,
        effects: WriteEffects = NO_EFFECTS,
    ) -> bool:
        generation = await self.store.write_document(name, body, expected, effects)
        if generation is None:
            return False
        async with self._sync_lock:  # this worker serves the new document before the others ack
            old = self.snapshot
            self.snapshot = apply(old, generation)
            await self._settle(old)
        if wait:
            await self._barrier(generation, len(body))
        return True

    async def barrier(self) -> None:
        """Make every worker flush what it buffered (counters) before a fleet-wide read."""
        await self.flush()
        await self._barrier(await self.store.bump_generation())

    async def cache_entries(self) -> list[bytes]:
        """The fleet's match cache in its mirrored form (engine/matching/cache.py), after a barrier."""
        await self.barrier()  # every worker mirrors what it cached so far
        if not self.cache.mirrored:
            return [self.cache.dump(entry) for entry in self.cache.entries()]
        return list((await self.store.cache_entries()).values())

    async def traffic(self, seconds: int) -> tuple[int, dict[int, dict[str, float]]]:
        """(the last second, {second: {"<mode>|<outcome>": requests}}) over the last ``seconds``. A
        worker alone on the in-process store flushes first: its buffers wait LONE_FLUSH_INTERVAL
        otherwise. A fleet's reads go without a barrier, each worker at most FLUSH_INTERVAL behind."""
        if not self.store.shared:
            await self.flush()
        now = self._clock_ms() // 1000
        return now, await self.store.traffic_read(now - seconds + 1, now)

    async def workers(self) -> dict[str, int]:
        """{worker id: last heartbeat in epoch ms} of the fleet's live workers."""
        return await self.store.worker_heartbeats(self._clock_ms() - ALIVE_WINDOW_MS)

    async def sizes(self) -> tuple[int, int]:
        """(journal entries, match cache entries), fleet-wide."""
        journal, cache = await self.store.sizes()
        return journal, cache if self.cache.mirrored else self.cache.listed()

    async def _barrier(self, generation: int, size: int = 0) -> None:
        """Wait until every live worker has applied ``generation`` (a document of ``size`` bytes)."""
        await self.store.publish(generation)
        await self.sync()
        if not self.store.shared:
            return  # this worker is the only one
        loop = asyncio.get_running_loop()
        timeout = BARRIER_TIMEOUT + size / LOAD_RATE
        deadline = loop.time() + timeout
        since = await self.store.registry_since()
        settled_at = (since if since is not None else self._clock_ms()) + self._settle_ms
        while True:
            acks = await self.store.worker_acks(self._clock_ms() - ALIVE_WINDOW_MS)
            lagging = [wid for wid, acked in acks.items() if acked < generation]
            if not lagging and self._clock_ms() >= settled_at:
                return
            if loop.time() >= deadline:
                log.warning(
                    "workers %s did not apply generation %d within %.1fs",
                    lagging,
                    generation,
                    timeout,
                )
                return
            await asyncio.sleep(0.002)

    # -- counters -------------------------------------------------------------------------

    def count(self, mode: str) -> None:
        self.counts[mode] = self.counts.get(mode, 0) + 1

    @property
    def pending(self) -> bool:
        """Something is buffered or sent without an answer yet: a flush has work to do."""
        return bool(
            self.counts
            or self.cache.pending
            or self.records.pending
            or self.metrics
            or self._counts_out
            or self._cache_out
            or self._metrics_out
        )

    async def flush(self) -> None:
        """Store the buffered counts, cache entries, records and metrics; returns once all taken so
        far are stored. Each kind goes in batches the store applies once: a batch whose reply was
        lost is sent again as it was, before anything newer (store/batches.py).

        The lock matters: a flush that finds the buffers empty because another flush just took
        them must still wait for that one, or an ack could overtake data not stored yet.
        """
        async with self._flush_lock:
            try:
                await self._flush()
            except Exception:
                self.records.settle(reached=False)
                raise
            self.records.settle(reached=True)

    async def _flush(self) -> None:
        """The flush itself, under the lock (``flush``)."""
        for kind, count in self.records.take_dropped().items():  # counted first: the rest may fail
            self.metrics.dropped(kind, count)
        if dropped := self.cache.take_dropped():
            self.metrics.dropped("cache", dropped)
        if self.counts or self._counts_out:
            await self._counts_out.send(self._write_counts, self._take_counts)
        if self.cache.pending or self._cache_out:
            await self._cache_out.send(self._write_cache, self._take_cache)
        if self.records.pending:
            await self.records.flush(self.store)
        if self.store.errors > self._errors_seen:  # every failed call, whichever path made it
            self.metrics.store_errors(self.store.errors - self._errors_seen)
            self._errors_seen = self.store.errors
        if self.metrics or self._metrics_out:
            await self._metrics_out.send(self._write_metrics, self._take_metrics)

    def _take_counts(self) -> dict[str, int] | None:
        counts, self.counts = self.counts, {}
        return counts or None

    async def _write_counts(self, batch: Batch[dict[str, int]]) -> None:
        await self.store.batch(batch.id).add_counters(batch.items)

    def _take_cache(self) -> dict[str, bytes] | None:
        if not self.cache.pending:
            return None
        return {key: self.cache.dump(entry) for key, entry in self.cache.take_pending().items()}

    async def _write_cache(self, batch: Batch[dict[str, bytes]]) -> None:
        await self.store.batch(batch.id).cache_put(batch.items, self.cache.capacity)

    def _take_metrics(self) -> MetricsBatch | None:
        now = self._clock_ms()
        second = traffic_second(self._metrics_since, now)
        self._metrics_since = now
        return self.metrics.batch(second)

    async def _write_metrics(self, batch: Batch[MetricsBatch]) -> None:
        writer, metrics = self.store.batch(batch.id), batch.items
        started = time.perf_counter()
        try:
            if not await writer.metrics_add(
                self.instance, metrics.increments, metrics.traffic, resumed=self._metrics_resumed
            ):
                # the store lost the totals (Redis restarted empty): add this worker's share whole
                whole = self.metrics.whole(metrics)
                await writer.metrics_add(self.instance, whole.increments, whole.traffic)
            self._metrics_resumed = True
        finally:
            self.metrics.store_call(time.perf_counter() - started)


def _simulation_body(sim: Simulation, lineage: str) -> bytes:
    return orjson.dumps({**storage_simulation(sim), "lineage": lineage})
