"""The ``Store`` protocol: everything workers share, behind one interface.

Values cross the boundary as bytes, str and int, so the store knows nothing of engine types.
Key layout (Redis; ``P`` is the prefix, default ``simproxy:``, and ``{T}`` a Cluster hash tag
made from it, so that the keys a script or MULTI touches together share a slot on a Cluster; the
journal, logs and diff reports, written and read on their own, have tags of their own, ``{T:journal}``,
``{T:logs}``, ``{T:diff}``, with their writers' batch numbers: store/redis/keys.py):

    P{T}:gen              generation counter; every write and every barrier bumps it. It never goes
                          back: when missing (Redis restarted empty) it starts again from the
                          server clock in microseconds, so a version is never reused
    P{T}:doc:<name>       hash {v: generation of the last write, body: bytes}  (simulation, config, csv, ca, auth)
    P{T}:write:<id>       one document write: "pending" for 3 s, its lease (the write is only applied while
                          it is there), then its outcome for a minute ("0": the compare-and-set failed;
                          else the generation written), read back when the write's reply is lost
                          (store/redis/once.py)
    P{T}:batch:<writer>   hash kind -> the highest batch number of that writer and kind applied (counters,
                          cache; P{T:journal}:batch:<writer> and P{T:logs}:batch:<writer> for the journal
                          and logs; see store/batches.py); a writer is a worker's runtime or its journal
                          recorder, named at random; expires a day after its last batch
    P{T}:workers          hash worker id -> last heartbeat (ms since the epoch)
    P{T}:acks             hash worker id -> highest generation that worker has applied
    P{T}:meta             hash {registry_since: ms of the first heartbeat this Redis has seen}
    P{T}:counters         hash mode -> requests served
    P{T}:state:eras       hash: the state's current era and each era's record (its layout: group id ->
                          keys, its base: the keys of no group, its simulation); store/redis/eras.py
    P{T:s:<group>}:state  hash state key -> value of one group of keys (requiresState / transitionsState /
                          removesState) a request reads or steps together, in a slot of its own;
    P{T:s:<group>}:meta   hash {e: its era, s: seeded, v: its version}. A worker keeps a copy of each
                          group at a version and steps one with one script call that holds only on that
                          version (``state_advance``, engine/modes/stateturns.py)
    P{T}:cache            hash cache key -> entry (engine/matching/cache.py's JSON); P{T}:cache:lru zset of
                          the same keys by recency, P{T}:cache:seq its counter: bounded fleet-wide
    P{T:diff}:diff        list of diff reports, oldest first, each ``<n>:<request key (n bytes)><report>``;
                          read back grouped per request key, groups in first-seen order (engine/modes/diff_report.py)
    P{T:journal}:heads    the journal in pages, one per batch, oldest first: a list of their ids, and
    P{T:journal}:pages    a list of their entries (store/redis/scripts.py JOURNAL_PAGES); P{T:journal}:meta
                          hash {total, skip: entries of the first page dropped, counts: each page's
                          entry count, amended: entries in P{T:journal}:amended, hash id -> entry written again}
    P{T:journal}:index:<name>  hash index key -> entry id (the latest entry with that key)
    P{T:logs}:logs        list of log records (JSON), oldest first
    P{T}:metrics:<instance>  hash metric field -> total, one per simproxy instance (see engine/fleet/metrics.py),
                          and batch|<writer> -> the highest metrics batch number of that worker applied:
                          kept with the totals it guards, so a Redis that lost them loses it too;
                          expiring METRICS_KEEP_S after the instance's last write or heartbeat
    P{T}:auth:failures    hash {count, last}: failed logins fleet-wide and the ms of the last one
    P{T}:revoked:<digest> a logged-out token (by its digest), expiring when the token would
    P{T}:events           pub/sub channel; messages are generations
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from simproxy.store.batches import BatchId

TRAFFIC_KEEP_S = 900
"""Seconds of per-second traffic the store keeps (the dashboard's chart reads the last minutes)."""
METRICS_KEEP_S = 3600
"""Seconds an instance's metrics hash outlives its last write or heartbeat: instance ids are new
at every start, so the hashes of instances that stopped would otherwise pile up in a Redis that
outlives them (``-db``, or a Redis service across pod restarts)."""
DOCUMENTS = ("simulation", "config", "csv", "ca", "auth", "startup")

JournalRecord = bytes | tuple[object, ...]
"""A stored journal entry: bytes, or, in a store that is not ``shared``, a tuple of immutable
values, kept as given (the engine's unpacked form of an entry, which never leaves the process)."""


class JournalRun(Protocol):
    """Consecutive entries of one exchange served again and again (the same request, answer and
    mode; only the times differ), which a store that is not ``shared`` keeps as one object: each
    entry's record and id are made when read (the engine's ``RepeatedEntries``)."""

    def __len__(self) -> int: ...

    def entry_id(self, position: int) -> str: ...

    def record(self, position: int) -> JournalRecord: ...

    def records(self) -> Iterator[JournalRecord]: ...

    def position(self, entry_id: str) -> int | None:
        """Where the entry of ``entry_id`` is in the run; None when it is not one of its entries."""

    def part(self, start: int, stop: int) -> JournalRun:
        """The entries from ``start`` to before ``stop`` (at least one), as a run of their own."""


JournalItem = tuple[str, JournalRecord] | JournalRun
"""What ``journal_append`` takes: an (id, entry) pair, or, for a store that is not ``shared``, a run."""


@dataclass(frozen=True, slots=True)
class WriteEffects:
    """What a document write changes with it, in the same atomic step: an import clears the match
    cache and starts its ``sequence:`` state again, so that no worker can see the new simulation
    with the old cache or the old sequence state."""

    clear_cache: bool = False
    state: tuple[tuple[str, str], ...] = ()
    """State values set with a write of the simulation, over the state carried into the era of the
    state that the write starts (store/redis/eras.py)."""


NO_EFFECTS = WriteEffects()


@dataclass(frozen=True, slots=True)
class StateCopy:
    """A worker's copy of a state kept in groups (store/redis/eras.py): the era it is of, the
    era's layout, each group's version, and the values of every key."""

    era: int
    """The era (0: none was ever started)."""
    simulation: int | None
    """The version of the simulation stored when the era started (None: not known)."""
    fit: bool
    """The layout is that simulation's: steps may be taken in it. An import starts an era in the
    old layout; the first worker to step on the new simulation starts one in its layout."""
    layout: Mapping[str, frozenset[str]]
    """The era's groups: id -> keys. A key of no group lives in the era's base, which changes only
    with the era."""
    versions: Mapping[str, int]
    """By group id: the version of that group the values are of."""
    values: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Versions:
    """The generation counter and the generation at which each document was last written (0: never)."""

    generation: int
    documents: Mapping[str, int]


class BatchWriter(Protocol):
    """The writes a worker buffers and flushes in batches (see store/batches.py)."""

    async def add_counters(self, counts: Mapping[str, int]) -> None:
        """Add to the usage counters (one round trip)."""

    async def cache_put(self, entries: Mapping[str, bytes], capacity: int) -> None:
        """Add or refresh entries, then drop the least recently put ones beyond ``capacity``."""

    async def journal_append(
        self, entries: Sequence[JournalItem], index_keys: Mapping[str, Mapping[str, str]], limit: int
    ) -> None:
        """Append (id, entry) pairs and runs in order, point each index's keys at their entries, and
        drop the oldest entries beyond ``limit`` (one atomic step). A ``shared`` store takes pairs
        with bytes only. An in-process store keeps the entries as given: bytes should be exact-size
        copies (``orjson.dumps`` hands back 4 KB buffers)."""

    async def logs_append(self, records: Sequence[bytes], limit: int) -> None: ...

    async def metrics_add(
        self,
        instance: str,
        increments: Mapping[str, float],
        traffic: tuple[int, Mapping[str, float]] | None = None,
        *,
        resumed: bool = False,
    ) -> bool:
        """Add to an instance's metric totals, and ``traffic`` (epoch second, counts) to the
        fleet's per-second traffic, kept ``TRAFFIC_KEEP_S`` seconds (one round trip).

        ``resumed``: earlier batches of this writer were applied. A store that no longer holds
        them (a Redis that restarted empty) then adds nothing and returns False, and the writer
        sends its whole totals instead (``resumed=False``); otherwise True."""


class Documents(Protocol):
    """The versioned documents (simulation, configuration, data sources, CA, auth secret, last start-up),
    the generation counter they share, and its announcements."""

    async def read_versions(self) -> Versions:
        """The generation and every document's version, in one round trip."""

    async def read_document(self, name: str) -> tuple[int, bytes] | None:
        """(version, body) of a document, or None when it was never written."""

    async def write_document(
        self, name: str, body: bytes, expected_version: int | None = None, effects: WriteEffects = NO_EFFECTS
    ) -> int | None:
        """Store ``body`` and apply ``effects`` atomically, bumping the generation; returns the new
        generation.

        With ``expected_version`` (0 = never written) the write only happens if the document is
        still at that version; otherwise nothing changes and None is returned.
        ``StoreUnavailable`` means nothing was written, and nothing will be: a write whose reply is
        lost cannot be applied later, and its outcome is read back. Only ``WriteUnconfirmed`` (the
        store stopped answering for longer) leaves it open whether it was applied before that.
        """

    async def bump_generation(self) -> int:
        """Bump the generation without changing a document (a barrier); returns it."""

    async def publish(self, generation: int) -> None:
        """Tell every subscribed worker that ``generation`` exists."""

    def subscribe(self) -> AsyncIterator[int]:
        """Generations published by any worker; ends when the connection is lost."""


class Workers(Protocol):
    """The fleet's registry: which workers are alive and which generation each has applied."""

    async def heartbeat(self, worker_id: str, acked: int, now_ms: int, instance: str = "") -> None:
        """Register ``worker_id`` as alive at ``now_ms`` having applied generation ``acked``; keep
        ``instance``'s metrics (when given) for another ``METRICS_KEEP_S``."""

    async def registry_since(self) -> int | None:
        """When (ms) the first worker registered with this store; None if none has yet.

        A Redis that restarted empty has a young registry: workers may not have re-registered.
        """

    async def worker_acks(self, alive_since_ms: int) -> dict[str, int]:
        """The acked generation of every worker whose heartbeat is not older than ``alive_since_ms``."""

    async def worker_heartbeats(self, alive_since_ms: int) -> dict[str, int]:
        """{worker id: its last heartbeat in epoch ms} of the workers alive since ``alive_since_ms``."""

    async def unregister(self, worker_id: str) -> None: ...


class HeldState(Protocol):
    """The state map when this very process holds it: read and stepped without an await, so that
    nothing else runs between a request's read and its step."""

    def state_now(self) -> Mapping[str, str]:
        """The state as it is now: a read-only view, to read before anything else runs (a step
        changes it, a replace of the whole state leaves it behind)."""

    def step_now(self, sets: Mapping[str, str], removes: Sequence[str], simulation: int | None = None) -> None:
        """Set ``sets`` and delete ``removes``; ``SimulationChanged``, nothing changed, when the
        stored simulation is not version ``simulation``."""


class SharedState(Protocol):
    """The state map pairs require and change (``requiresState``, ``transitionsState``), kept in
    groups (engine/matching/stategroups.py) within eras (store/redis/eras.py): a request steps one
    group, with one call that holds only on the version of that group the caller's copy is of."""

    def held_state(self) -> HeldState | None:
        """The state itself when this process holds it (the in-process store); None when it is a
        round trip away (a store other processes share)."""

    async def state_get(self) -> dict[str, str]:
        """The whole state map, as it was at one moment."""

    async def state_replace(self, values: Mapping[str, str]) -> None:
        """Make the state exactly ``values`` (one atomic step: a new era)."""

    async def state_update(self, values: Mapping[str, str]) -> None:
        """Set the given keys, keep the others (one atomic step: a new era)."""

    async def state_copy(self) -> StateCopy:
        """The current era, its layout, every group's version and the whole state, for a caller
        that keeps a copy; the values are those of each group at its version."""

    async def state_fit(self, layout: Mapping[str, frozenset[str]], simulation: int) -> None:
        """When the current era is of an older simulation than version ``simulation``, of none, or
        of that one in a layout not its own, start one in ``layout`` (that simulation's), the state
        carried over; else nothing."""

    async def state_advance(
        self, era: int, group: str, version: int, sets: Mapping[str, str], removes: Sequence[str]
    ) -> tuple[int, dict[str, str] | None]:
        """For a caller that holds a copy of ``group`` at ``version`` in ``era``: when the group is
        still at that version, set ``sets``, delete ``removes`` (keys of that group) and return (its
        version now, None): the caller's copy with the step applied is the group now, and nothing
        else is sent back; otherwise change nothing and return (its current version, its current
        state). ``EraChanged``, nothing changed, when ``era`` has ended. A copy of the same call that
        reaches the store again after it was applied finds the version moved on and changes nothing."""

    async def state_moved(self, copy: StateCopy, skip: str | None = None) -> frozenset[str] | None:
        """The groups of ``copy`` (but ``skip``) no longer at the copy's versions; None when its era
        ended. None moved: the copy's values were the whole state at one moment (a miss decided on
        them holds). A group that moved is read again with an ``state_advance`` that steps nothing."""


class CacheStore(Protocol):
    """The fleet-wide match cache (entries written in batches, ``BatchWriter.cache_put``)."""

    async def cache_entries(self) -> dict[str, bytes]: ...

    async def cache_clear(self) -> None: ...


class JournalStore(Protocol):
    """The journal and its indexes (entries appended in batches, ``BatchWriter.journal_append``)."""

    async def journal_amend(self, entry_id: str, entry: bytes) -> bool:
        """Replace a stored entry; False (nothing written) when there is none with that id."""

    async def journal_entries(self) -> Sequence[JournalRecord]:
        """Every entry, oldest first."""

    async def journal_lookup(self, index: str, keys: Sequence[str]) -> Sequence[JournalRecord | None]:
        """The entry each key of ``index`` points at (None when none, or when it was dropped)."""

    async def journal_set_index(self, index: str, keys: Mapping[str, str]) -> None:
        """Replace an index's key -> entry id map (building a new index over existing entries)."""

    async def journal_drop_index(self, index: str) -> None: ...

    async def journal_clear(self, indexes: Sequence[str]) -> None:
        """Delete every entry and the given indexes' maps."""


class Telemetry(Protocol):
    """What the fleet counted and logged: usage counters, log records, metrics and per-second traffic,
    and the sizes of the journal and cache (all written in batches through ``BatchWriter``)."""

    async def read_counters(self) -> dict[str, int]: ...

    async def logs_records(self) -> list[bytes]: ...

    async def metrics_read(self, instance: str) -> dict[str, float]: ...

    async def traffic_read(self, since: int, until: int) -> dict[int, dict[str, float]]:
        """The fleet's per-second traffic in epoch seconds ``since``..``until``: {second: {name: count}}."""

    async def sizes(self) -> tuple[int, int]:
        """(journal entries, cache entries), fleet-wide."""


class DiffStore(Protocol):
    """Diff mode's reports, grouped per request."""

    async def diff_add(self, request_key: str, report: bytes) -> None:
        """Append ``report`` to the group of ``request_key`` (one atomic step)."""

    async def diff_reports(self) -> list[tuple[str, list[bytes]]]:
        """Every group as (request key, reports oldest first), groups in the order their first report came."""

    async def diff_clear(self) -> None: ...


class AuthStore(Protocol):
    """Authentication's fleet-wide memory: the login lock-out and logged-out tokens."""

    async def login_locked(self, now_ms: int, window_ms: int, limit: int) -> bool:
        """The fleet-wide lock-out: True when ``limit`` logins or more failed and the last one less than
        ``window_ms`` ago (the lock then lasts from ``now_ms``); a last failure older than that clears
        the count."""

    async def login_failed(self, now_ms: int) -> None:
        """Count a failed login at ``now_ms``."""

    async def revoke_token(self, digest: str, until_ms: int, now_ms: int) -> None:
        """Remember a logged-out token until ``until_ms`` (its expiry; it is refused anyway after)."""

    async def token_revoked(self, digest: str) -> bool: ...


class BatchedStore(Protocol):
    """Where a worker's buffered writes are flushed to: a ``BatchWriter`` per batch."""

    shared: bool
    """True when other processes can use this store too (Redis); False for the in-process store,
    whose only user is the one worker that holds it, so nothing needs mirroring to it for others."""

    def batch(self, batch: BatchId) -> BatchWriter:
        """The writes of batch ``batch``: a ``shared`` store applies each kind of write at most once
        per batch id, and drops a copy of an older batch of the same writer and kind (one sent again
        after its reply was lost). The in-process store loses no reply: it is its own batch writer."""


class Store(
    BatchedStore,
    BatchWriter,
    Documents,
    Workers,
    SharedState,
    CacheStore,
    JournalStore,
    Telemetry,
    DiffStore,
    AuthStore,
    Protocol,
):
    """Everything workers share, one connection behind the resources above; each consumer is typed
    against the resources it uses. Each implementation has a module per resource (store/memory/,
    store/redis/), and its store composes them: the store's calls are its resources' calls, and
    each resource is an attribute too, for a consumer to hold the one it uses (the request path
    then calls the resource itself, nothing in between)."""

    @property
    def documents(self) -> Documents: ...

    @property
    def workers(self) -> Workers: ...

    @property
    def state(self) -> SharedState: ...

    @property
    def cache(self) -> CacheStore: ...

    @property
    def journal(self) -> JournalStore: ...

    @property
    def telemetry(self) -> Telemetry: ...

    @property
    def diffs(self) -> DiffStore: ...

    @property
    def auth(self) -> AuthStore: ...

    @property
    def errors(self) -> int:
        """Calls of this store (this handle) that failed so far, whatever failed: it only grows."""

    async def ping(self) -> None:
        """Raise ``StoreUnavailable`` when the backing server cannot be reached."""

    async def aclose(self) -> None: ...
