"""A worker's turns at the shared state when the state is a round trip away (Redis).

The state is kept in groups (engine/matching/stategroups.py): a hit reads and steps the keys of its
pair's group only, a miss reads them all. The worker keeps a copy of the state: the era it is of,
and each group at a version (``StateCopy``). The requests that wait for a turn are decided
together, in the order they came, each on the copy with the steps of those before it applied;
their steps, merged by group, go to the store as one ``state_advance`` per group touched (one,
nearly always): one script call that holds only when the group is still at the copy's version, and
that then sends back nothing but the new version. A refused advance hands back the group's current
state, on which the requests of that group are decided again. So a request costs at most one round
trip, and the requests that came while one was in flight share the next one (a group commit): the
store sees the steps one after the other, as if each request had stepped on its own, and across
workers and pods exactly one of two steps decided on the same version holds. A miss holds when
every group is still at the copy's versions (``state_moved``): it then saw the whole state as it
was at one moment; the groups that moved are read again and the miss decided again.

The copy is of an era whose layout is that of the simulation decided on: the first worker that
steps on a new simulation brings its layout (``state_fit``). An era that ended (an import, a write
of the state) refuses the step (``EraChanged``): the copy is read again, and a newer simulation
than the one decided on raises ``SimulationChanged``. A copy that is old costs a refused advance,
which brings the group with it: the copy is kept current by the versions, with no reads of its
own. A turn whose requests read no state and step nothing does not touch the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from simproxy.engine.matching.stategroups import StateLayout
from simproxy.store import EraChanged, SharedState, SimulationChanged, StateCopy, StoreError, StoreUnavailable

T = TypeVar("T")
R = TypeVar("R")

ATTEMPTS = 50
"""Times a turn's requests are decided again when another worker changed the state first."""


@dataclass(frozen=True, slots=True)
class Decision(Generic[T]):
    """What a request decided on a state: its step, and how to answer once the step holds."""

    sets: Mapping[str, str]
    removes: Sequence[str]
    finish: Callable[[], T]
    """The request's outcome, called once, when the turn's step held (or needed no store)."""
    on_simulation: bool = True
    """The answer holds only on the simulation it was decided on (a miss is answered as of it)."""
    reads: bool = True
    """The decision depends on the state: it holds only if its group (all of them: ``group`` None)
    is still at the copy's version. A turn whose decisions read nothing and step nothing does not
    touch the store."""
    group: str | None = None
    """The group the decision reads and steps (its pair's); None: a miss, or a pair of no state."""


Decide = Callable[[Mapping[str, str]], Awaitable[Decision[T]]]
"""A request's decision on a state: matching, rendering, its step. It may be called again, on a
newer state, when the turn's step is refused."""


class _Waiting(Generic[T]):
    """One request waiting for its turn; ``outcome`` is resolved by whichever request serves it."""

    __slots__ = ("decide", "layout", "outcome", "reads", "simulation")

    def __init__(self, decide: Decide[T], simulation: int, reads: bool, layout: StateLayout) -> None:
        self.decide = decide
        self.simulation = simulation
        self.reads = reads
        self.layout = layout
        self.outcome: asyncio.Future[T] = asyncio.get_running_loop().create_future()


class _Copy:
    """This worker's copy of the state: a ``StateCopy`` it keeps current with its own steps."""

    __slots__ = ("era", "layout", "newer", "values", "versions")

    def __init__(self, copy: StateCopy, newer: bool) -> None:
        self.newer = newer
        """The era is of a newer simulation than the one decided on: only a miss holds on it."""
        self.era = copy.era
        self.layout = copy.layout
        self.versions = dict(copy.versions)
        self.values = dict(copy.values)

    def frozen(self) -> StateCopy:
        return StateCopy(self.era, None, True, self.layout, self.versions, self.values)

    def stepped(self, group: str, version: int, sets: Mapping[str, str], removes: Sequence[str]) -> None:
        self.versions[group] = version
        self.values.update(sets)
        for key in removes:
            self.values.pop(key, None)

    def refreshed(self, group: str, version: int, values: Mapping[str, str]) -> None:
        self.versions[group] = version
        keys = self.layout.get(group, frozenset())
        self.values = {key: value for key, value in self.values.items() if key not in keys}
        self.values.update(values)


class StateTurns(Generic[T]):
    """The turns of one worker's requests at a ``SharedState`` other processes share."""

    def __init__(self, state: SharedState) -> None:
        self._state = state
        self._turn = asyncio.Lock()
        self._waiting: list[_Waiting[T]] = []
        self._seen: _Copy | None = None
        """The state as this worker last knew the store's; None: read it before deciding."""
        self._of = 0
        """The simulation ``_seen`` was read for."""

    def forget(self) -> None:
        """The copy may be old in a way its versions cannot tell (the store failed, the simulation
        changed): the next turn that reads the state reads it first."""
        self._seen = None

    async def take(self, decide: Decide[T], simulation: int, reads: bool, layout: StateLayout) -> T:
        """Decide with the requests waiting alongside and step the state, once; the request's outcome.

        ``simulation``: the version of the simulation decided on, and ``layout`` its state's groups
        (a newer one stored raises ``SimulationChanged``, nothing changed); ``reads``: the
        simulation's decisions may depend on the state (a worker without a copy then reads it
        first). Raises ``StoreError`` when the store failed."""
        mine = _Waiting(decide, simulation, reads, layout)
        self._waiting.append(mine)
        try:
            async with self._turn:
                if not mine.outcome.done():  # not served yet by a request whose turn came first
                    await self._serve(mine)
        except asyncio.CancelledError:  # gone before its turn (its client went): it steps nothing
            if mine in self._waiting:
                self._waiting.remove(mine)
            raise
        return mine.outcome.result()

    async def _serve(self, mine: _Waiting[T]) -> None:
        """Serve every waiting request decided on the same simulation as ``mine``."""
        turn = [w for w in self._waiting if w.simulation == mine.simulation]
        self._waiting = [w for w in self._waiting if w.simulation != mine.simulation]
        sent = [False]
        try:
            await self._run(turn, mine.simulation, mine.layout, sent)
        except asyncio.CancelledError:  # the request serving the turn went away (its client did)
            others = [w for w in turn if w is not mine and not w.outcome.done()]
            if sent[0]:  # the step may have been applied: deciding them again could step twice
                self._seen = None
                for waiting in others:
                    waiting.outcome.set_exception(StoreUnavailable("the state step's outcome is unknown"))
            else:  # nothing sent: their turn comes again
                self._waiting[:0] = others
            raise
        except Exception as exc:  # every request of the turn not served yet fails with it
            self._seen = None
            for waiting in turn:
                if not waiting.outcome.done():
                    waiting.outcome.set_exception(exc)

    async def _read(self, simulation: int, layout: StateLayout) -> _Copy:
        """A copy of an era in the layout of ``simulation``, bringing that layout when the store
        has another; or of an era of a newer simulation (``_Copy.newer``)."""
        fitted = False
        self._of = simulation
        groups = layout.mapping()
        for _ in range(ATTEMPTS):
            copy = await self._state.state_copy()
            if copy.simulation is not None and copy.simulation > simulation:
                return _Copy(copy, True)
            if copy.fit and copy.simulation == simulation and copy.layout == groups:
                return _Copy(copy, False)
            if not fitted:
                await self._state.state_fit(groups, simulation)
                fitted = True
                continue
            await asyncio.sleep(0)  # another worker's era started meanwhile
        raise Conflict("the state's layout kept changing")

    async def _run(self, turn: list[_Waiting[T]], simulation: int, layout: StateLayout, sent: list[bool]) -> None:
        reads = any(w.reads for w in turn)
        if self._seen is not None and self._of != simulation:
            self._seen = None
        last: str | None = None
        """The one group read again after the last check of a miss: the others held still across
        its read, so the next check leaves it out (a group stepped without pause elsewhere does not
        keep a miss from being answered)."""
        for _ in range(ATTEMPTS):
            if self._seen is None and reads:
                self._seen = await self._read(simulation, layout)
            decided = await self._decide(turn)
            if not decided:
                return
            steps: dict[str, tuple[dict[str, str], set[str]]] = {}
            misses = False
            for _waiting, decision in decided:
                if decision.group is not None and _needs(decision):
                    sets, removes = steps.setdefault(decision.group, ({}, set()))
                    for key, value in decision.sets.items():
                        sets[key] = value
                        removes.discard(key)
                    for key in decision.removes:
                        sets.pop(key, None)
                        removes.add(key)
                elif decision.reads:
                    misses = True
            if not steps and not misses:
                self._finish(decided)
                return
            if self._seen is None:  # a step decided without a copy: read one, decide again
                self._seen = await self._read(simulation, layout)
                continue
            if steps and self._seen.newer and any(d.on_simulation for _, d in decided):
                raise SimulationChanged("the simulation was replaced since this request was decided")
            try:
                held = await self._advance(steps, sent)
            except _Partial as partial:  # the requests whose step held are answered; the others fail
                self._finish([(w, d) for w, d in decided if d.group in partial.held])
                raise partial.failure from None
            done = [(w, d) for w, d in decided if d.group in held or not _needs(d)]
            if misses and len(held) == len(steps):
                moved = await self._state.state_moved(self._seen.frozen(), None if steps else last)
                last = None
                if moved is None:  # another era: read it all again
                    self._seen = None
                elif not moved:
                    done += [(w, d) for w, d in decided if d.group is None and d.reads]
                else:  # read the groups that moved again; one read alone is left out of the next check
                    await self._refresh(moved)
                    last = next(iter(moved)) if len(moved) == 1 else None
            self._finish(done)
            turn = [w for w, _ in decided if not w.outcome.done()]
            if not turn:
                return
            reads = True
        raise Conflict("the shared state kept changing")

    async def _decide(self, turn: list[_Waiting[T]]) -> list[tuple[_Waiting[T], Decision[T]]]:
        """Each request's decision, in order, on the copy with the steps of those before it."""
        working = dict(self._seen.values) if self._seen is not None else {}
        decided: list[tuple[_Waiting[T], Decision[T]]] = []
        for waiting in turn:
            try:
                decision = await waiting.decide(dict(working))
            except Exception as exc:  # that request's failure, not its neighbours'
                waiting.outcome.set_exception(exc)
                continue
            working.update(decision.sets)
            for key in decision.removes:
                working.pop(key, None)
            decided.append((waiting, decision))
        return decided

    async def _advance(self, steps: Mapping[str, tuple[dict[str, str], set[str]]], sent: list[bool]) -> set[str]:
        """Send each group's merged step; the groups whose step held. A group refused brings its
        state into the copy; an era that ended drops the copy (read again next)."""
        seen = self._seen
        assert seen is not None
        groups = list(steps)
        sent[0] = True
        replies = await _settled_all(
            [
                self._state.state_advance(seen.era, g, seen.versions.get(g, 0), steps[g][0], sorted(steps[g][1]))
                for g in groups
            ]
        )
        sent[0] = False
        held: set[str] = set()
        failure: BaseException | None = None
        for group, reply in zip(groups, replies, strict=True):
            if isinstance(reply, EraChanged):
                self._seen = None
            elif isinstance(reply, BaseException):
                failure = failure or reply
            elif reply[1] is None:
                seen.stepped(group, reply[0], steps[group][0], sorted(steps[group][1]))
                held.add(group)
            else:
                seen.refreshed(group, reply[0], reply[1])
        if failure is not None:
            if held:  # the steps that held are answered; the others fail with the store
                raise _Partial(held, failure)
            raise failure
        return held

    async def _refresh(self, groups: frozenset[str]) -> None:
        """Read ``groups`` into the copy again: a step of nothing at the copy's version is refused
        with the group's state. An era that ended drops the copy."""
        seen = self._seen
        assert seen is not None
        names = list(groups)
        replies = await _settled_all(
            [self._state.state_advance(seen.era, g, seen.versions.get(g, 0), {}, ()) for g in names]
        )
        for group, reply in zip(names, replies, strict=True):
            if isinstance(reply, EraChanged):
                self._seen = None
            elif isinstance(reply, BaseException):
                raise reply
            elif reply[1] is not None:
                seen.refreshed(group, reply[0], reply[1])

    @staticmethod
    def _finish(done: Sequence[tuple[_Waiting[T], Decision[T]]]) -> None:
        for waiting, decision in done:
            if waiting.outcome.done():
                continue
            try:
                waiting.outcome.set_result(decision.finish())
            except Exception as exc:  # that request's failure, not its neighbours'
                waiting.outcome.set_exception(exc)


async def _settled(call: Awaitable[R]) -> R | Exception:
    try:
        return await call
    except Exception as exc:  # the caller sorts the replies from the failures
        return exc


async def _settled_all(calls: list[Coroutine[Any, Any, R]]) -> list[R | Exception]:
    """Each call's reply or failure, every call run to its end: one call is awaited in the
    caller's own task, several each in a task of a group the caller waits for (cancelling the
    caller cancels them all, and waits for them)."""
    if len(calls) == 1:
        return [await _settled(calls[0])]
    async with asyncio.TaskGroup() as group:
        running = [group.create_task(_settled(call)) for call in calls]
    return [task.result() for task in running]


def _needs(decision: Decision[T]) -> bool:
    """Whether the decision holds only once the store confirms it (it reads or steps the state)."""
    return decision.reads or bool(decision.sets or decision.removes)


class _Partial(StoreError):
    """Some groups' steps held and another's call failed."""

    def __init__(self, held: set[str], failure: BaseException) -> None:
        super().__init__(str(failure))
        self.held = held
        self.failure = failure


class Conflict(Exception):
    """The state changed under a turn ``ATTEMPTS`` times in a row."""
