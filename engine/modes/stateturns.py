"""A worker's turns at the shared state when the state is a round trip away (Redis).

The worker keeps a copy of the state and the version it is of. The requests that wait for a turn
are decided together, in the order they came, each on the copy with the steps of those before it
applied; their steps, merged, go to the store as one ``state_advance``: one script call that holds
only when the stored state is still the copy's version, and that then sends back nothing but the new
version. A refused advance hands back the current state, on which every request of the turn is
decided again. So a request costs at most one round trip, and the requests that came while one was
in flight share the next one (a group commit): the store sees the steps one after the other, as
if each request had stepped on its own, and across workers and pods exactly one of two steps
decided on the same version holds.

A copy that is old costs a refused advance, which brings the state with it: the copy is kept
current by the versions, with no reads of its own. A turn whose requests read no state and step
nothing does not touch the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from simproxy.store import SharedState, StoreUnavailable

T = TypeVar("T")

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
    """The decision depends on the state: it holds only if the state is still the copy's version.
    A turn whose decisions read nothing and step nothing does not touch the store."""


Decide = Callable[[Mapping[str, str]], Awaitable[Decision[T]]]
"""A request's decision on a state: matching, rendering, its step. It may be called again, on a
newer state, when the turn's step is refused."""


class _Waiting(Generic[T]):
    """One request waiting for its turn; ``outcome`` is resolved by whichever request serves it."""

    __slots__ = ("decide", "outcome", "reads", "simulation")

    def __init__(self, decide: Decide[T], simulation: int | None, reads: bool) -> None:
        self.decide = decide
        self.simulation = simulation
        self.reads = reads
        self.outcome: asyncio.Future[T] = asyncio.get_running_loop().create_future()


class StateTurns(Generic[T]):
    """The turns of one worker's requests at a ``SharedState`` other processes share."""

    def __init__(self, state: SharedState) -> None:
        self._state = state
        self._turn = asyncio.Lock()
        self._waiting: list[_Waiting[T]] = []
        self._seen: tuple[int, dict[str, str]] | None = None
        """(version, state) as this worker last knew the store's; None: read it before deciding."""

    def forget(self) -> None:
        """The copy may be old in a way its version cannot tell (the store failed, the simulation
        changed): the next turn that reads the state reads it first."""
        self._seen = None

    async def take(self, decide: Decide[T], simulation: int | None, reads: bool) -> T:
        """Decide with the requests waiting alongside and step the state, once; the request's outcome.

        ``simulation``: the version of the simulation decided on (a step on another one raises
        ``SimulationChanged``, nothing changed); ``reads``: the simulation's decisions may depend on
        the state (a worker without a copy then reads it first). Raises ``StoreError`` when the
        store failed."""
        mine = _Waiting(decide, simulation, reads)
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
            await self._run(turn, mine.simulation, sent)
        except asyncio.CancelledError:  # the request serving the turn went away (its client did)
            others = [w for w in turn if w is not mine and not w.outcome.done()]
            if sent[0]:  # the step may have been applied: deciding them again could step twice
                self._seen = None
                for waiting in others:
                    waiting.outcome.set_exception(StoreUnavailable("the state step's outcome is unknown"))
            else:  # nothing sent: their turn comes again
                self._waiting[:0] = others
            raise
        except Exception as exc:  # every request of the turn fails with it
            self._seen = None
            for waiting in turn:
                if not waiting.outcome.done():
                    waiting.outcome.set_exception(exc)

    async def _run(self, turn: list[_Waiting[T]], simulation: int | None, sent: list[bool]) -> None:
        reads = any(w.reads for w in turn)
        for _ in range(ATTEMPTS):
            if reads and self._seen is None:
                self._seen = await self._state.state_read()
            version, state = self._seen if self._seen is not None else (0, {})
            working = dict(state)
            sets: dict[str, str] = {}
            removes: set[str] = set()
            decided: list[tuple[_Waiting[T], Decision[T]]] = []
            for waiting in turn:
                try:
                    decision = await waiting.decide(dict(working))
                except Exception as exc:  # that request's failure, not its neighbours'
                    waiting.outcome.set_exception(exc)
                    continue
                for key, value in decision.sets.items():
                    working[key] = sets[key] = value
                    removes.discard(key)
                for key in decision.removes:
                    working.pop(key, None)
                    sets.pop(key, None)
                    removes.add(key)
                decided.append((waiting, decision))
            turn = [waiting for waiting, _ in decided]
            if not decided:
                return
            if sets or removes or any(d.reads for _, d in decided):
                sent[0] = True
                checked = simulation if any(d.on_simulation for _, d in decided) else None
                now, current = await self._state.state_advance(version, sets, sorted(removes), simulation=checked)
                sent[0] = False
                if current is not None:  # refused: decide again on the state handed back
                    self._seen = (now, current)
                    continue
                self._seen = (now, working)
            for waiting, decision in decided:
                try:
                    waiting.outcome.set_result(decision.finish())
                except Exception as exc:  # as above
                    waiting.outcome.set_exception(exc)
            return
        raise Conflict("the shared state kept changing")


class Conflict(Exception):
    """The state changed under a turn ``ATTEMPTS`` times in a row."""
