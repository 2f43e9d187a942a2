"""The state in groups, each in a Redis Cluster slot of its own, and the eras that move it between
layouts (the scripts are store/redis/erascripts.py).

A simulation's state keys fall into groups (engine/matching/stategroups.py): a request reads and
steps the keys of one group only. Each group is a state hash and a meta hash {e: era, s: seeded,
v: version} under a hash tag of its own (``Keys.group_keys``), so a step is one script call on one
slot. What ties the groups together is the era, in the fleet's slot (the eras hash): its layout
(group id -> keys), and its base, the keys no group holds (a key set by a write of the state that
no pair names), which change only with the era.

An era ends when another starts: with every write of the simulation (started in the document's
own write script, in the old layout: store/redis/documents.py), with the first step of a worker
on a new simulation (it brings that simulation's layout, ``begin(..., fitting=True)``), and with
every write of the whole state. It starts as one write of the eras hash, which is all of the
change: its overlay (the values set), whether the old state carries over, its layout. Then it is
drained: every group of the old layout is sealed for the new era and hands back its state (a step
decided in the old era is refused from then on), the new state is worked out (the old base and the
sealed groups' states when carried, then the overlay), each group of the new layout is seeded with
its keys, and the era is marked ready with its base. Draining is idempotent (a group already
sealed or seeded for the era is left as it is), and whoever finds the current era not ready
drains it: a drainer that died leaves nothing stuck. An era may start while the one before is
still draining; it is drained after that one, since it carries from it. A group of a ready era
that Redis lost (Redis restarted empty loses the eras too, and the state reads empty, as before)
is seeded again, by a new era, with what is left.

A step names its group and the era it was decided in, and holds only when the group is seeded in
that era and still at the version the caller's copy is of. A read of the whole state reads the
era and every group; it is a state the store was in when every group's version is the same when
read again (``check``): each group holds one version from its read to its check, and those
intervals all contain the first check.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError
from redis.typing import EncodableT

from simproxy.store.base import StateCopy
from simproxy.store.errors import EraChanged, StoreError
from simproxy.store.redis import erascripts
from simproxy.store.redis.link import RedisLink, RedisRole, text, translate
from simproxy.store.redis.once import LOST

T = TypeVar("T")

ATTEMPTS = 50
"""Times a read of the state starts again when an era started or a group stepped under it."""
ROUNDS = 8
"""Checks a read of the whole state on a Cluster makes for a moment no group moved (``view``)."""
TOMBSTONE_MS = 3_600_000
"""How long a dropped group's meta hash is kept: a drainer of an older era that comes later than
this (stalled for an hour) could seed the group again, left over."""
FAN_OUT = 64
"""Group calls in flight at once while draining or reading every group."""

NO_ERA = StateCopy(0, None, False, {}, {}, {})


def _values(flat: Sequence[bytes | str]) -> dict[str, str]:
    return {text(flat[i]): text(flat[i + 1]) for i in range(0, len(flat), 2)}


def _layout(raw: str) -> dict[str, frozenset[str]]:
    return {gid: frozenset(keys) for gid, keys in json.loads(raw or "{}").items()}


def _raw(value: str) -> bytes:
    """A key or value as sent to Redis: a str read from Redis goes back as the bytes it was read
    from. ``UnicodeEncodeError`` for a lone surrogate no UTF-8 carries (a JSON ``"\\ud800"``)."""
    return value.encode("utf-8", "surrogateescape")


def _seedable(value: str) -> bytes:
    """``_raw``, but a lone surrogate becomes U+FFFD, as Go's JSON decoder makes it: a value an
    era already holds always drains (``encodable`` keeps such values out of new eras)."""
    try:
        return _raw(value)
    except UnicodeEncodeError:
        return "".join(c if _raw_char(c) else "\ufffd" for c in value).encode("utf-8", "surrogateescape")


def _raw_char(char: str) -> bool:
    try:
        _raw(char)
    except UnicodeEncodeError:
        return False
    return True


def encodable(values: Mapping[str, str] | Iterable[tuple[str, str]]) -> None:
    """Raise ``UnicodeEncodeError`` when a key or value cannot be sent to Redis, before anything
    is: a write of the state (or a document's) with such a value changes nothing."""
    for key, value in values.items() if isinstance(values, Mapping) else values:
        _raw(key)
        _raw(value)


def layout_json(layout: Mapping[str, Iterable[str]]) -> str:
    """A layout as the eras hash keeps it."""
    return json.dumps({gid: sorted(keys) for gid, keys in sorted(layout.items())})


async def _each(call: Callable[[str], Awaitable[T]], groups: Iterable[str]) -> list[T]:
    """``call`` of each group, in order, ``FAN_OUT`` at a time (one group: awaited right here).
    When one fails, the others of its batch are cancelled and awaited before its error is raised:
    no call is left running behind the caller."""
    pending = list(groups)
    out: list[T] = []
    for at in range(0, len(pending), FAN_OUT):
        batch = pending[at : at + FAN_OUT]
        if len(batch) == 1:
            out.append(await call(batch[0]))
            continue
        try:
            async with asyncio.TaskGroup() as tasks:
                running = [tasks.create_task(_awaited(call, gid)) for gid in batch]
        except ExceptionGroup as failed:
            raise failed.exceptions[0] from None
        out += [task.result() for task in running]
    return out


async def _awaited(call: Callable[[str], Awaitable[T]], gid: str) -> T:
    return await call(gid)


async def _each_to_the_end(call: Callable[[str], Awaitable[T]], groups: Iterable[str]) -> list[T]:
    """``_each``, but every group's call is made and ends even when another's fails; the first
    failure is raised once all have ended."""
    failures: list[Exception] = []

    async def settled(gid: str) -> T | None:
        try:
            return await call(gid)
        except Exception as exc:  # raised once every other call has ended
            failures.append(exc)
            return None

    out = await _each(settled, groups)
    if failures:
        raise failures[0]
    return cast(list[T], out)  # no None: a call that failed raised above


@dataclass(frozen=True, slots=True)
class _Known:
    """The last ready era this handle read: its layout and base change only with the era."""

    era: int
    layout: Mapping[str, frozenset[str]]
    base: Mapping[str, str]


class _Era:
    """What ``ERA_READ`` gives of an era."""

    __slots__ = (
        "base",
        "carry",
        "era",
        "fit",
        "layout",
        "overlay",
        "prev",
        "prev_base",
        "prev_layout",
        "prev_ready",
        "ready",
        "sim",
    )

    def __init__(self, reply: Sequence[bytes | str]) -> None:
        f = [text(part) for part in reply]
        self.era = int(f[0])
        self.ready = f[1] == "1"
        self.layout = _layout(f[2])
        self.overlay: dict[str, str] = json.loads(f[3] or "{}")
        self.carry = f[4] == "1"
        self.sim = int(f[5]) if f[5] else None
        self.prev = f[6]
        self.prev_layout = _layout(f[7])
        self.prev_base: dict[str, str] = json.loads(f[8] or "{}")
        self.base: dict[str, str] = json.loads(f[9] or "{}")
        self.fit = f[10] == "1"
        self.prev_ready = f[11] == "1"


class RedisEras(RedisRole):
    def __init__(self, link: RedisLink) -> None:
        super().__init__(link)
        self._eras = link.keys.eras
        self._group_keys = link.keys.group_keys
        register = self._client.register_script
        self._start = register(erascripts.ERA_START)
        self._read = register(erascripts.ERA_READ)
        self._ready = register(erascripts.ERA_READY)
        self._seal = register(erascripts.GROUP_SEAL)
        self._seed = register(erascripts.GROUP_SEED)
        self._group_read = register(erascripts.GROUP_READ)
        self._advance = register(erascripts.GROUP_ADVANCE)
        self._drop = register(erascripts.GROUP_DROP)
        self._single = not isinstance(link.client, RedisCluster)
        """One Redis (not a Cluster): a transaction may read the eras hash and every group at once."""
        self._known: _Known | None = None
        """The last ready era read (``copy``), whose layout a read of the whole state reads in."""

    @translate
    async def begin(
        self,
        layout: Mapping[str, Iterable[str]] | None,
        overlay: Mapping[str, str],
        carry: bool,
        simulation: int | None = None,
        *,
        fitting: bool = False,
        above: int = 0,
    ) -> int:
        """Start a new era and drain it: its state is the old one (``carry``) or nothing, with
        ``overlay`` set over it, kept in ``layout``'s groups (None: the current era's layout, of
        the current era's simulation). ``fitting``: ``layout`` is that of simulation ``simulation``,
        and the era starts only when the current one is of an older simulation, of none, or of that
        one in another layout (``state_fit``); ``above``: the new era's number is above it.
        Returns the new era once it is ready (0 when ``fitting`` found nothing to do)."""
        encodable(overlay)
        fit = fitting and layout is not None
        args = [
            "" if layout is None else layout_json(layout),
            json.dumps(dict(overlay)),
            "1" if carry else "",
            "" if simulation is None else str(simulation),
            "1" if fit else "",
            "1" if fitting else "",
            str(above) if above else "",
        ]
        await self._drain("")  # the era before first: chains of eras not ready stay short
        started, era = await self._start(keys=[self._eras], args=args)
        await self._drain(text(era))
        return int(era) if started else 0

    @translate
    async def drain(self, era: int) -> None:
        """Finish draining ``era`` if it is not ready yet."""
        await self._drain(str(era))

    @translate
    async def drain_current(self) -> None:
        """Finish draining the current era if it is not ready yet."""
        await self._drain("")

    async def _drain(self, era: str) -> None:
        """Drain ``era`` ("" = the current one) and, first, every era before it not ready yet,
        oldest first (each carries from the one before): the chain is walked in a loop, however
        long it grew."""
        chain: list[int] = []
        at = era
        while True:
            reply = await self._read(keys=[self._eras], args=[at])
            if not reply:
                break
            record = _Era(reply)
            if record.ready or not reply[2]:  # ready, or its record is gone (a later era forgot it)
                break
            chain.append(record.era)
            if not record.prev or record.prev_ready:
                break
            at = record.prev
        for number in reversed(chain):  # read again: the one before became ready meanwhile
            reply = await self._read(keys=[self._eras], args=[str(number)])
            if reply and reply[2]:
                record = _Era(reply)
                if not record.ready:
                    await self._finish(record)

    async def _finish(self, record: _Era) -> None:
        """Drain the era of ``record``, as read before it was ready."""
        era = str(record.era)
        # every group that can be sealed is, even when one cannot: no step of the old era holds on it
        sealed = await _each_to_the_end(
            lambda gid: self._seal(keys=self._group_keys(gid), args=[era]), record.prev_layout
        )
        values: dict[str, str] = {}
        if record.carry:
            values.update(record.prev_base)
            for flat in sealed:
                values.update(_values(flat))
        values.update(record.overlay)
        held: dict[str, str] = {}
        seeds: dict[str, list[EncodableT]] = {}
        for gid, keys in record.layout.items():
            args: list[EncodableT] = [era]
            seeds[gid] = args
            for key in sorted(keys):
                if key in values:
                    held[key] = values[key]
                    args += [_seedable(key), _seedable(values[key])]
        await _each(lambda gid: self._seed(keys=self._group_keys(gid), args=seeds[gid]), seeds)
        base = {key: value for key, value in values.items() if key not in held}
        await self._ready(keys=[self._eras], args=[era, json.dumps(base)])
        gone = [gid for gid in record.prev_layout if gid not in record.layout]
        try:  # every group the era has no more that can be dropped is
            await _each_to_the_end(lambda gid: self._drop(keys=self._group_keys(gid), args=[era, TOMBSTONE_MS]), gone)
        except (RedisError, *LOST):  # the era is ready and its state whole: a group left over is all
            self.link.failed()

    @translate
    async def copy(self) -> StateCopy:
        """The era, its layout, every group's version and the whole state, as of one era; draining
        the era first when it is not ready. ``NO_ERA`` when no era was ever started."""
        for _ in range(ATTEMPTS):
            reply = await self._read(keys=[self._eras], args=[""])
            if not reply:
                return NO_ERA
            record = _Era(reply)
            if not record.ready:
                await self._drain(str(record.era))
                continue
            gids = list(record.layout)
            groups = await _each(lambda gid: self._group_read(keys=self._group_keys(gid)), gids)
            era = str(record.era)
            if any(text(g[0]) != era or text(g[1]) != "1" for g in groups):
                eras = [int(text(g[0]) or 0) for g in groups]
                if any(e != record.era for e in eras) and (
                    text(await self._client.hget(self._eras, "current") or b"") == era
                ):
                    # a group of the current ready era is never behind it unless Redis lost it (a
                    # later era may have dropped it meanwhile: then read that one), nor ahead of it
                    # unless the eras hash lost the era it was sealed for (a Cluster's failover):
                    # carry what is left, in an era above every group's
                    await self.begin(None, {}, True, above=max(eras))
                continue  # sealed for a later era meanwhile: read that one
            values = dict(record.base)
            for group in groups:
                values.update(_values(group[3]))
            versions = {gid: int(g[2]) for gid, g in zip(gids, groups, strict=True)}
            self._known = _Known(record.era, record.layout, record.base)
            return StateCopy(record.era, record.sim, record.fit, record.layout, versions, values)
        raise StoreError("the state's eras kept changing")

    @translate
    async def check(self, copy: StateCopy) -> bool:
        """True when the era and every group are still as ``copy`` has them: the state is then the
        copy's values, now as when the copy was read."""
        return await self._moved(copy.era, copy.versions) == set()

    @translate
    async def moved(self, copy: StateCopy, skip: str | None = None) -> frozenset[str] | None:
        """The groups of ``copy`` (but ``skip``) that moved since; None when its era ended."""
        moved = await self._moved(copy.era, copy.versions, skip)
        return None if moved is None else frozenset(moved)

    async def _moved(self, era: int, versions: Mapping[str, int], skip: str | None = None) -> set[str] | None:
        """The groups (but ``skip``) no longer at ``versions`` in ``era``; None when the era ended."""
        gids = [gid for gid in versions if gid != skip]
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hget(self._eras, "current")
            for gid in gids:
                pipe.hmget(self._group_keys(gid)[1], ["e", "s", "v"])
            replies = await pipe.execute()
        current = str(era)
        if text(replies[0] or b"0") != current:
            return None
        moved = set()
        for gid, meta in zip(gids, replies[1:], strict=True):
            e, seeded, v = (text(part or b"") for part in meta)
            if e != current or seeded != "1" or v != str(versions[gid]):
                moved.add(gid)
        return moved

    @translate
    async def view(self) -> dict[str, str]:
        """The whole state, as it was at one moment. On one Redis: one transaction reads the
        current era's number and every group of the last era read (``_at_once``), which is the
        state at that moment when the era is still current; the era is read again (``copy``) only
        when it changed. On a Cluster: ``copy``, then the groups that moved since read again until
        a check finds none moved. A group read again alone is left out of the next check: the
        others held still from before its read to after it, so the values are the state at its
        read (one group stepped without pause does not keep the read from ending). When groups
        still moved after ``ROUNDS`` checks (several stepped without pause), the answer has each
        group as it was at its last read, every read within the one era: a read of the state is
        bounded, and no request reads two groups, so none could tell such a state apart."""
        if self._single:
            for _ in range(ATTEMPTS):
                values = await self._at_once()
                if values is not None:
                    return values
                if (await self.copy()).era == 0:
                    return {}
            raise StoreError("the state's eras kept changing")
        for _ in range(ATTEMPTS):
            copy = await self.copy()
            values, versions, era = dict(copy.values), dict(copy.versions), copy.era
            last: str | None = None
            for _ in range(ROUNDS):
                moved = await self._moved(era, versions, last)
                if moved is None:
                    break  # another era: read it
                if not moved:
                    return values
                groups = list(moved)
                again = await _each(lambda gid: self._group_read(keys=self._group_keys(gid)), groups)
                if any(text(g[0]) != str(era) or text(g[1]) != "1" for g in again):
                    break
                for gid, group in zip(groups, again, strict=True):
                    keys = copy.layout[gid]
                    values = {key: value for key, value in values.items() if key not in keys}
                    values.update(_values(group[3]))
                    versions[gid] = int(group[2])
                last = groups[0] if len(groups) == 1 else None
            else:  # groups kept stepping: each as at its own last read, all within the era
                return values
        raise StoreError("the state's eras kept changing while it was read")

    async def _at_once(self) -> dict[str, str] | None:
        """The whole state read in one transaction (one Redis only), in the layout of the last era
        read; None when that era is no longer current, or a group of it is not seeded in it (read
        the era again: ``copy`` drains it, or seeds again a group Redis lost)."""
        known = self._known
        if known is None:
            return None
        gids = list(known.layout)
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.hget(self._eras, "current")
            for gid in gids:
                state, meta = self._group_keys(gid)
                pipe.hgetall(state)
                pipe.hmget(meta, ["e", "s"])
            replies = await pipe.execute()
        era = str(known.era)
        if text(replies[0] or b"") != era:
            return None
        values = dict(known.base)
        for at in range(len(gids)):
            e, seeded = (text(part or b"") for part in replies[2 + 2 * at])
            if e != era or seeded != "1":
                return None
            values.update({text(key): text(value) for key, value in replies[1 + 2 * at].items()})
        return values

    @translate
    async def advance(
        self, era: int, group: str, version: int, sets: Mapping[str, str], removes: Sequence[str]
    ) -> tuple[int, dict[str, str] | None]:
        """For a caller holding a copy of ``group`` at ``version`` in ``era``: when the group is
        still there, set ``sets``, delete ``removes`` (keys of that group) and return (its version
        now, None); otherwise change nothing and return (its version, its state). ``EraChanged``
        when the group is not seeded in ``era`` (a later era started). The step carries an id of
        its own: the same call sent again by the client (a Cluster client does, when a node was
        slow to answer) answers as applied and is not taken twice."""
        args: list[EncodableT] = [str(era), str(version), secrets.token_hex(8), str(len(sets))]
        for key, value in sets.items():
            args += [_raw(key), _raw(value)]
        args += [_raw(key) for key in removes]
        reply = await self._advance(keys=self._group_keys(group), args=args)
        if reply == -1:
            raise EraChanged("the state's era ended since this step was decided")
        if reply[0]:
            return int(reply[1]), None
        return int(reply[1]), _values(reply[2])
