"""The runtime configuration every worker shares: mode, each mode's arguments, destination, middleware.

It is a versioned document in the store (see engine/fleet/runtime.py), changed through the admin API;
start-up knobs live in admin/settings.py instead. This module owns its persisted JSON shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal


class Mode(StrEnum):
    """The proxy modes by the names the API, the flags and the store use: the one place they are
    spelled (engine/modes/table.py gives each its class). Members are strings: ``Mode.SPY == "spy"``."""

    SIMULATE = "simulate"
    CAPTURE = "capture"
    SPY = "spy"
    SYNTHESIZE = "synthesize"
    MODIFY = "modify"
    DIFF = "diff"


MODES: tuple[str, ...] = tuple(mode.value for mode in Mode)
COUNTERS: tuple[str, ...] = tuple(sorted(MODES))
"""The usage counters, one per mode, in the order Hoverfly's JSON lists them (by name)."""
_SIMULATE = Mode.SIMULATE.value
"""A plain string: a ``Mode`` key hashes through Python code, four times slower on the hot path."""
DEFAULT_MAX_PAIRS = 100_000
"""Pairs a simulation may hold (``-max-pairs``): imports beyond it are refused, captures not stored."""


@dataclass(frozen=True, slots=True)
class ModeArguments:
    """Arguments of one mode, as ``PUT .../mode`` sets them (Hoverfly core/modes)."""

    headers_whitelist: tuple[str, ...] = ()
    matching_strategy: str | None = None
    """Stored as sent (GET echoes ``FIRST``); None when never set."""
    stateful: bool = False
    overwrite_duplicate: bool = False
    capture_on_miss: bool = False
    capture_delay: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.headers_whitelist:
            out["headersWhitelist"] = list(self.headers_whitelist)
        if self.matching_strategy is not None:
            out["matchingStrategy"] = self.matching_strategy
        for key, value in (
            ("stateful", self.stateful),
            ("overwriteDuplicate", self.overwrite_duplicate),
            ("captureOnMiss", self.capture_on_miss),
            ("captureDelay", self.capture_delay),
        ):
            if value:
                out[key] = True
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ModeArguments:
        return cls(
            headers_whitelist=tuple(raw.get("headersWhitelist") or ()),
            matching_strategy=raw.get("matchingStrategy"),
            stateful=bool(raw.get("stateful")),
            overwrite_duplicate=bool(raw.get("overwriteDuplicate")),
            capture_on_miss=bool(raw.get("captureOnMiss")),
            capture_delay=bool(raw.get("captureDelay")),
        )


MAX_BODY = 64 * 1024 * 1024
BACKLOG = 2048
"""Connections the kernel queues on a listening socket (admin and proxy ports) before one is accepted."""


@dataclass(frozen=True, slots=True)
class ProxyLimits:
    """What one client may hold of a worker: every buffer and wait on the proxy port is bounded."""

    max_body: int = MAX_BODY
    """Bytes of a request body (413 beyond)."""
    max_head: int = 1024 * 1024
    """Bytes of a request's target and headers together (431 beyond; Go's default, as in Hoverfly)."""
    read_timeout: float = 60.0
    """Seconds a request may take to arrive once it has begun (408 beyond): a slow client's limit."""
    idle_timeout: float = 120.0
    """Seconds a kept-alive connection may wait for its next request before it is closed."""
    max_pipelined: int = 64
    """Requests of one connection waiting for their answers before simproxy stops reading more (the
    requests already read beyond them wait unanswered until fewer are owed)."""
    write_buffer: int = 256 * 1024
    """Bytes of answers (or of a tunnel's traffic) a connection may hold unsent, over and above the
    answer being written, before simproxy stops reading what would add to them; it reads again once
    a quarter of that is left."""


@dataclass(frozen=True, slots=True)
class MiddlewareSpec:
    """The middleware every worker runs (``PUT .../middleware``, ``-middleware``).

    ``script`` is the script's text (each worker writes it to a file of its own to run it);
    ``remote`` wins over ``binary`` when both are set, as in Hoverfly. A ``binary`` of the form
    ``python:package.module:function`` is an in-process hook. ``pool`` above 0: the program is
    long-lived, ``pool`` processes per worker, one JSON document per line (0: a process per call).
    """

    binary: str = ""
    script: str = ""
    remote: str = ""
    pool: int = 0
    enabled: bool = field(init=False, repr=False, compare=False)
    """Either set: read on every request, so worked out once."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "enabled", bool(self.remote or self.binary))

    def to_json(self) -> dict[str, Any]:
        return {"binary": self.binary, "script": self.script, "remote": self.remote, "pool": self.pool}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> MiddlewareSpec:
        pool = raw.get("pool")
        return cls(
            str(raw.get("binary") or ""),
            str(raw.get("script") or ""),
            str(raw.get("remote") or ""),
            pool if isinstance(pool, int) and pool > 0 else 0,
        )


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """A post-serve action (``PUT .../post-serve-action``, ``-post-serve-action``); the empty name is
    the fallback, run for any name a response gives that no action has."""

    name: str = ""
    binary: str = ""
    script: str = ""
    remote: str = ""
    delay_ms: int = 0
    pool: int = 0
    """Above 0: the program is long-lived, this many processes per worker, one line in and one line
    out per action (as for middleware); a ``binary`` of the ``python:`` form is an in-process hook."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "binary": self.binary, "script": self.script,
            "remote": self.remote, "delayInMs": self.delay_ms, "pool": self.pool,
        }  # fmt: skip

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ActionSpec:
        pool = raw.get("pool")
        return cls(
            str(raw.get("name") or ""), str(raw.get("binary") or ""), str(raw.get("script") or ""),
            str(raw.get("remote") or ""), int(raw.get("delayInMs") or 0),
            pool if isinstance(pool, int) and pool > 0 else 0,
        )  # fmt: skip


def _ordered(actions: list[ActionSpec]) -> tuple[ActionSpec, ...]:
    """Named actions by name (byte order), then the fallback: the order GET lists them in."""
    return tuple(sorted(actions, key=lambda a: (not a.name, a.name.encode())))


def _default_arguments() -> dict[str, ModeArguments]:
    return {Mode.SIMULATE.value: ModeArguments(matching_strategy="strongest")}


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    mode: str = Mode.SIMULATE.value
    arguments: dict[str, ModeArguments] = field(default_factory=_default_arguments)
    """Each mode keeps its own argument set; spy matches with simulate's strategy (as Hoverfly)."""
    destination: str = "."
    cache_epoch: int = 0
    """Bumped to empty every worker's match cache (DELETE /api/v2/cache, switching to capture)."""
    preload_epoch: int = 0
    """Bumped to preload the cache (switching to simulate or spy, a start-up import) ..."""
    preload_lineage: str = ""
    """... for the simulation of this lineage only: a later replace is not preloaded (Hoverfly)."""
    journal_indexes: tuple[str, ...] = ()
    """Journal index expressions as given (``Request.Body 'jsonpath' '$.id'``), in the order they were
    created; an index is named and stored without the quotes (``engine.journal.entries.index_key``)."""
    middleware: MiddlewareSpec = field(default_factory=MiddlewareSpec)
    actions: tuple[ActionSpec, ...] = ()
    """Post-serve actions sorted by name, the fallback (empty name) last."""
    pac: str = ""
    """The PAC file that chooses the upstream proxy of forwarded requests (empty: none)."""
    strategy: Literal["strongest", "first"] = field(init=False, repr=False, compare=False)
    """The matching strategy used by simulate and spy: ``strongest`` unless simulate says ``first``
    (worked out once: every request simulated asks for it)."""

    def __post_init__(self) -> None:
        value = self.args(_SIMULATE).matching_strategy or "strongest"
        object.__setattr__(self, "strategy", "strongest" if value.lower() == "strongest" else "first")

    def args(self, mode: str | None = None) -> ModeArguments:
        return self.arguments.get(mode or self.mode) or ModeArguments()

    def with_mode(self, mode: str, arguments: ModeArguments) -> RuntimeConfig:
        name = str(mode)  # a plain string (a ``Mode`` is one too, but not to JSON encoders as a key)
        return replace(self, mode=name, arguments={**self.arguments, name: arguments})

    def action(self, name: str) -> ActionSpec | None:
        """The action a response naming ``name`` runs: that one, else the fallback, else None."""
        fallback = None
        for action in self.actions:
            if action.name == name:
                return action
            if not action.name:
                fallback = action
        return fallback

    def with_action(self, action: ActionSpec) -> RuntimeConfig:
        kept = [a for a in self.actions if a.name != action.name]
        return replace(self, actions=_ordered([*kept, action]))

    def without_action(self, name: str) -> RuntimeConfig:
        return replace(self, actions=tuple(a for a in self.actions if a.name != name))

    @property
    def action_names(self) -> frozenset[str]:
        """Names a simulation may give in ``postServeAction`` ("" in it: a fallback takes any name)."""
        return frozenset(a.name for a in self.actions)

    def with_journal_indexes(self, names: tuple[str, ...]) -> RuntimeConfig:
        return replace(self, journal_indexes=names)

    def flushing_cache(self) -> RuntimeConfig:
        return replace(self, cache_epoch=self.cache_epoch + 1)

    def preloading(self, lineage: str) -> RuntimeConfig:
        return replace(self, preload_epoch=self.preload_epoch + 1, preload_lineage=lineage)

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "arguments": {name: args.to_json() for name, args in sorted(self.arguments.items())},
            "destination": self.destination,
            "cacheEpoch": self.cache_epoch,
            "preloadEpoch": self.preload_epoch,
            "preloadLineage": self.preload_lineage,
            "journalIndexes": list(self.journal_indexes),
            "middleware": self.middleware.to_json(),
            "actions": [action.to_json() for action in self.actions],
            "pac": self.pac,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> RuntimeConfig:
        return cls(
            mode=raw.get("mode") or Mode.SIMULATE.value,
            arguments={k: ModeArguments.from_json(v) for k, v in (raw.get("arguments") or {}).items()},
            destination=raw.get("destination", "."),
            cache_epoch=int(raw.get("cacheEpoch") or 0),
            preload_epoch=int(raw.get("preloadEpoch") or 0),
            preload_lineage=str(raw.get("preloadLineage") or ""),
            journal_indexes=tuple(str(n) for n in raw.get("journalIndexes") or ()),
            middleware=MiddlewareSpec.from_json(raw.get("middleware") or {}),
            actions=tuple(ActionSpec.from_json(a) for a in raw.get("actions") or ()),
            pac=str(raw.get("pac") or ""),
        )
