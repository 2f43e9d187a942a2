"""The simulator simulate, spy and diff share: the match cache, matching, the shared state's steps,
templates, and the pair's delay, for one request.

Synchronous when nothing needs a store round trip or a timer (a stateless pair, cached or matched
through the candidate index; a state step on the in-process store, which holds the state in this
process); a coroutine otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import random
import weakref
from collections.abc import Coroutine, Mapping
from types import MappingProxyType
from typing import Any

from simproxy.engine.errors import SimulationError
from simproxy.engine.fleet.runtime import Runtime, Snapshot
from simproxy.engine.journal.logs import log_fields
from simproxy.engine.journal.lookup import FetchedJournal
from simproxy.engine.matching.cache import CacheEntry, FastKey, HeldKey, cache_key
from simproxy.engine.matching.scoring import CompiledPair, CompiledSimulation, MatchResult, Strategy, match
from simproxy.engine.modes.failures import MATCHING_CONTEXT, NO_MATCH, PairTexts, failure_wire, miss_text
from simproxy.engine.modes.stateturns import Conflict, Decision, StateTurns
from simproxy.engine.simulation.model import Response
from simproxy.engine.templating import CsvTables, JournalLookup, NoJournal
from simproxy.engine.templating.pairs import Rendered, render_pair
from simproxy.engine.wire.parse import MEMO_BYTES
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire, plain_error
from simproxy.store import HeldState, JournalStore, SharedState, SimulationChanged, StoreError

log = logging.getLogger(__name__)

Outcome = Wire | Coroutine[Any, Any, Wire]
Probe = tuple[FastKey, str, int, Snapshot]
"""A match-cache lookup that found nothing: (fast key, md5 key, the cache's ``changes`` then, the
snapshot the request is answered on), to store the result under."""
STATE_ATTEMPTS = 50
"""Times a data-source write is tried again when another request changed it first."""
_NO_STATE: Mapping[str, str] = MappingProxyType({})  # what simulations without requiresState match against
_NO_JOURNAL = NoJournal()
SLOTS = 17
"""Match results, and answers, a worker keeps by request object (``Simulator._match``,
``Simulator._answered``). A prime: objects of one size lie a fixed stride apart in memory (144
bytes for a request), which would leave most of a power of two's slots unused."""
ANSWER_BYTES = 64 * 1024
"""The longest answer body kept there: the table outlives the snapshot it answered for (until the
next answer is kept, which may be never after a switch to a mode that does not simulate: at most
``SLOTS`` such answers stay alive), and beside a long body's write the work saved is nothing."""
Answered = tuple[RequestDetails, int, HeldKey | None, Wire]
"""(request, the match cache's ``changes`` then, the md5 key of the cache entry served from, answer)."""


def slot(req: RequestDetails) -> int:
    """The place of ``req`` in the worker's tables kept by request object."""
    return id(req) % SLOTS


class Simulator:
    def __init__(self, runtime: Runtime, *, webserver: bool, rng: random.Random) -> None:
        self.runtime = runtime
        self._state: SharedState = runtime.store.state
        """The state a request requires and steps: the store's resource itself, held from here."""
        self._journal: JournalStore = runtime.store.journal
        """The journal a request's templates may read."""
        self.webserver = webserver
        self.rng = rng
        self.product = runtime.dialect.product
        """The name failures are signed with (``-compat``)."""
        self.hoverfly_helpers = runtime.dialect.is_hoverfly
        """Templates call helpers as Hoverfly's raymond does (``-compat``: ``concat`` fails there)."""
        self._pair_texts = PairTexts()
        self._turns: StateTurns[Wire | tuple[Wire, Response]] = StateTurns(self._state)
        """The turns of this worker's stateful requests at a state other processes share, with its
        copy of that state (engine/modes/stateturns.py)."""
        self._matched: list[tuple[RequestDetails, Strategy, MatchResult] | None] = [None] * SLOTS
        """The last match results, by request object, of stateless matching against ``_matched_in``."""
        self._matched_in: weakref.ref[CompiledSimulation] | None = None
        """Weakly: a simulation replaced while nothing is matched statelessly (a stateful one came,
        or a mode that does not simulate) is not kept alive by the table."""
        self._answered: list[Answered | None] = [None] * SLOTS
        """The last settled answers (``_settles``), by request object, in ``_answered_in``."""
        self._answered_in: weakref.ref[Snapshot] | None = None
        """Weakly, as ``_matched_in``: a snapshot replaced keeps no simulation alive through here."""

    def simulate(
        self, snap: Snapshot, req: RequestDetails, *, cache_misses: bool = True, delay: bool = True
    ) -> Outcome:
        """The simulation's answer; a miss is a Wire whose outcome is ``miss`` (spy and diff look).

        ``cache_misses``: remember a miss in the match cache (spy capturing its misses does not);
        ``delay``: wait the pair's delay (not when middleware or a comparison comes after).
        """
        probe: Probe | None = None
        cache = self.runtime.cache
        known = self._answered[id(req) % SLOTS]  # slot(req), without the call
        answered_in = self._answered_in
        if (
            known is not None
            and known[0] is req
            and known[1] == cache.changes
            and answered_in
            and answered_in() is snap
        ):
            if known[2] is not None:
                cache.touch(known[2])  # as its lookup would: the entry is the most recently used
            return known[3]
        if cache.enabled:
            generation = (snap.lineage, snap.config.cache_epoch)
            if cache.generation != generation:
                cache.reset(generation)  # this worker wrote the change itself; sync catches up the rest
            fast, key, entry = cache.lookup(req, self.webserver)
            probe = (fast, key, cache.changes, snap)
            if entry is not None:
                if entry.pair is None:
                    log_fields(
                        log, logging.INFO, "Response found interface{} cache",  # sic: Hoverfly's words
                        {"destination": req.destination, "key": key, "method": req.method, "path": req.path,
                         "rawQuery": dict(sorted(req.query.items()))},
                    )  # fmt: skip
                    return entry.miss or self.failure(MATCHING_CONTEXT, NO_MATCH, outcome="miss")
                outcome = self._serve(snap, entry.pair, req, delay, cache_misses)  # a cached pair never requires state
                if isinstance(outcome, Wire) and self._settles(snap, entry.pair):
                    self._answer_again(snap, req, cache.recent, outcome)
                return outcome
        if snap.simulation.writes_state:
            held = self._held(snap)
            if held is not None:
                stepped = self._step_held(snap, req, probe, cache_misses, delay, held)
                if stepped is not None:
                    return stepped
            return self._simulate_with_state(snap, req, probe, cache_misses, delay)
        result = self._match(snap.simulation, req, snap.config.strategy)
        if result.pair is None:
            return self._miss(result, req, probe if cache_misses else None)
        changes = cache.changes
        self._remember(result, req, probe)
        outcome = self._serve(snap, result.pair, req, delay, cache_misses)
        # kept unless the cache took the result: the next lookup finds it, and keeps the answer then
        if cache.changes == changes and isinstance(outcome, Wire) and self._settles(snap, result.pair):
            self._answer_again(snap, req, None, outcome)
        return outcome

    @staticmethod
    def _settles(snap: Snapshot, pair: CompiledPair) -> bool:
        """``_serve``'s answer with ``pair`` in ``snap`` is a function of the request alone: no delay
        (a log-normal one is rolled each time), no state step, no template but one that prints
        request fields only (``DirectAnswer``)."""
        response, sim = pair.pair.response, snap.simulation
        if response.fixed_delay > 0 or response.log_normal_delay is not None or sim.delays:
            return False
        if sim.writes_state and (response.transitions_state or response.removes_state):
            return False
        templates = pair.templates
        if templates is None:
            return True
        waits = templates.uses_state or templates.uses_csv or templates.uses_journal
        return templates.direct is not None and not waits and not sim.simulation.variables

    def _answer_again(self, snap: Snapshot, req: RequestDetails, key: HeldKey | None, wire: Wire) -> None:
        """Keep ``wire`` as the answer to the request object ``req`` (the proxy hands the same object
        for the same bytes: engine/wire/parse.py ``RequestMemo``) while ``snap`` is the snapshot and
        the match cache takes no entry and no reset (any of them ends every answer kept); ``key``:
        what the cache holds the entry it came from under, which each answer given again makes the
        most recently used, as a lookup would."""
        if len(req.body) > MEMO_BYTES or len(wire.body) > ANSWER_BYTES:  # never handed again; not worth it
            return
        if self._answered_in is None or self._answered_in() is not snap:
            self._answered = [None] * SLOTS
            self._answered_in = weakref.ref(snap)
        self._answered[slot(req)] = (req, self.runtime.cache.changes, key, wire)

    def _match(self, sim: CompiledSimulation, req: RequestDetails, strategy: Strategy) -> MatchResult:
        """``match`` without state, for a request the match cache does not hold (Hoverfly keeps no
        result that depends on headers). The proxy hands the same ``RequestDetails`` object for the
        same bytes (engine/wire/parse.py ``RequestMemo``), and without state the same request meets
        the same simulation with the same result: the last few are kept, by the object itself (held
        here, so its ``id`` is not another's), for as long as the simulation is the same."""
        if self._matched_in is None or self._matched_in() is not sim:
            self._matched = [None] * SLOTS
            self._matched_in = weakref.ref(sim)
        place = slot(req)
        known = self._matched[place]
        if known is not None and known[0] is req and known[1] == strategy:
            return known[2]
        result = match(sim, req, _NO_STATE, strategy, self.webserver)
        if len(req.body) <= MEMO_BYTES:  # a longer request is never handed again (nor kept here)
            self._matched[place] = (req, strategy, result)
        return result

    def _remember(
        self, result: MatchResult, req: RequestDetails, probe: Probe | None, miss: Wire | None = None
    ) -> None:
        """Keep the result (a hit, or the 502 of a miss) in the match cache when Hoverfly would;
        else note that the cache has nothing for this request (its next lookup skips the md5)."""
        if probe is None:
            return
        fast, key, seen, snap = probe
        if self.runtime.snapshot is not snap and not self._still_current(snap):
            return  # worked out across an await on a simulation since appended to, or replaced
        cache = self.runtime.cache
        if cache.changes != seen:  # worked out across an await, while entries came
            if not result.cacheable:
                return  # a note that nothing is held may be wrong now
            # Hoverfly keeps each result, whatever was kept meanwhile: its save overwrites what the
            # request's key finds now (a preloaded pair's entry, that of a request of the same key
            # that came and went while this one waited)
            _, key, found = cache.lookup(req, self.webserver)
            if found is not None:
                self._overwrite(cache.recent, result, fast, miss)
                return
        if result.cacheable:
            # a lone worker holds a plain request's entry by its fast key, its md5 worked out only
            # if it is listed; any other entry by its md5 (the lookup's, unless it skipped it)
            key = "" if cache.holds_by_fast(fast, req) else key or cache_key(req, self.webserver)
            cache.put(CacheEntry(key, result.pair, miss, result.closest if miss else None), fast=fast)
        else:
            cache.unkept(fast)

    def _still_current(self, snap: Snapshot) -> bool:
        """Whether a result worked out on ``snap`` is the one a request would get now: the same
        simulation (not appended to), strategy and cache generation (not flushed)."""
        now = self.runtime.snapshot
        return (
            now.simulation is snap.simulation
            and now.config.strategy == snap.config.strategy
            and self.runtime.cache.generation == (snap.lineage, snap.config.cache_epoch)
        )

    def _overwrite(self, held: HeldKey | None, result: MatchResult, fast: FastKey, miss: Wire | None) -> None:
        """Put the result of the request of ``fast`` in place of the entry held under ``held``."""
        closest = result.closest if miss else None
        if isinstance(held, str):  # by md5 key, aliased to ``fast``
            self.runtime.cache.put(CacheEntry(held, result.pair, miss, closest), fast=fast)
        else:  # by a plain request's fast key: this one's, or that of one spelled otherwise
            assert held is not None
            self.runtime.cache.put(CacheEntry("", result.pair, miss, closest), fast=held)

    def _miss(self, result: MatchResult, req: RequestDetails, probe: Probe | None) -> Wire:
        """The 502 of a miss, logged as Hoverfly logs it and remembered in the cache."""
        log_fields(
            log, logging.WARNING, "Failed to find matching request from simulation",
            {"destination": req.destination, "method": req.method, "path": req.path, "query": req.query,
             "error": "No match found"},
        )  # fmt: skip
        wire = plain_error(
            502, miss_text(req, result.closest, product=self.product, texts=self._pair_texts), outcome="miss"
        )
        self._remember(result, req, probe, wire)
        return wire

    def _serve(
        self, snap: Snapshot, pair: CompiledPair, req: RequestDetails, delayed: bool = True, cache_misses: bool = True
    ) -> Outcome:
        """Answer with a chosen pair: templates, state steps and delay, then the wire.

        Synchronous when nothing needs a store round trip or a timer (the common case).
        """
        response = pair.pair.response
        delays = snap.simulation.delays
        delay = delays.for_response(response, req.destination, req.path, req.method, self.rng) if delayed else 0.0
        step = snap.simulation.writes_state and bool(response.transitions_state or response.removes_state)
        templates = pair.templates
        waits = templates is not None and (templates.uses_state or templates.uses_csv or templates.uses_journal)
        if templates is not None and not (waits or step or delay > 0):
            quick = self._quick(snap, pair, req, _NO_STATE)
            if quick is not None:
                return quick[0]
            rendered = self._render(snap, pair, req, _NO_STATE, CsvTables({}))
            return self._wire_of(rendered, pair)
        if templates is None and not step and delay <= 0:
            return self._wire(pair)
        held = self._held(snap)
        if held is not None:  # the state in this process: only a delay to wait
            state = held.state_now() if templates is not None and templates.uses_state else _NO_STATE
            wire = self._answer_held(snap, pair, req, state, step, held)
            if wire is None:
                return self._simulate_again(req, delayed, cache_misses)
            return self._delayed(wire, delay) if delay > 0 else wire
        return self._finish(snap, pair, req, delay, step, (delayed, cache_misses))

    async def _finish(
        self,
        snap: Snapshot,
        pair: CompiledPair,
        req: RequestDetails,
        delay: float,
        step: bool,
        again: tuple[bool, bool],
    ) -> Wire:
        """``again``: (delayed, cache_misses), to simulate the request again if need be."""
        response = pair.pair.response
        wire: Wire | None = None
        transitions = response.transitions_state
        try:
            if pair.templates is not None:
                state = await self._state.state_get() if pair.templates.uses_state else _NO_STATE
                answered = await self._templated(snap, pair, req, state)
                if answered is None:
                    return self._conflict()
                wire, transitions = answered
            if step:  # a step that depends on no state: taken in this worker's turn, whatever the state
                answer = wire or self._wire(pair)
                group = snap.simulation.state_layout.group_at(pair.index)
                sets, removes = dict(transitions or ()), response.removes_state or ()
                blind: Decision[Wire | tuple[Wire, Response]] = Decision(
                    sets, removes, lambda: answer, reads=False, group=group
                )

                async def decide(_: Mapping[str, str]) -> Decision[Wire | tuple[Wire, Response]]:
                    return blind

                await self._turns.take(decide, snap.simulation_version, False, snap.simulation.state_layout)
        except SimulationChanged:
            return await self._simulate_again(req, *again)
        except Conflict:
            return self._conflict()
        except StoreError as exc:
            return self._state_unavailable(exc)
        if delay > 0:
            await asyncio.sleep(delay)
        return wire or self._wire(pair)

    def _delay(self, snap: Snapshot, response: Response, req: RequestDetails) -> float:
        return snap.simulation.delays.for_response(response, req.destination, req.path, req.method, self.rng)

    async def _simulate_with_state(
        self, snap: Snapshot, req: RequestDetails, probe: Probe | None, cache_misses: bool, delayed: bool
    ) -> Wire:
        """Match against the shared state, then take the pair's state step atomically.

        The request is decided on this worker's copy of the state in its turn, with the requests
        that wait alongside, and their steps go to the store in one round trip that holds only if
        the state is still the copy's version (``StateTurns``); another request that changed it
        first (on any worker or pod) makes them decide again on the state handed back, so each
        step is taken once. The response's delay is waited after the turn.
        """
        try:
            outcome = await self._turns.take(
                lambda state: self._decide(snap, req, probe, cache_misses, state),
                snap.simulation_version,
                snap.simulation.reads_state or snap.simulation.templates_read_state,
                snap.simulation.state_layout,
            )
        except SimulationChanged:
            return await self._simulate_again(req, delayed, cache_misses)
        except Conflict:
            return self._conflict()
        except StoreError as exc:
            outcome = self._without_state(snap, req, exc)
        if isinstance(outcome, Wire):
            return outcome
        wire, response = outcome
        delay = self._delay(snap, response, req) if delayed else 0.0
        if delay > 0:
            await asyncio.sleep(delay)
        return wire

    async def _decide(
        self, snap: Snapshot, req: RequestDetails, probe: Probe | None, cache_misses: bool, state: Mapping[str, str]
    ) -> Decision[Wire | tuple[Wire, Response]]:
        """The request's match on ``state``, its answer and its step; the answer (and the match
        cache's entry) is given only once the step holds. A miss decided on a state the store
        confirms is answered as such."""
        sim = snap.simulation
        reads = sim.reads_state or sim.templates_read_state
        result = match(sim, req, state if reads else _NO_STATE, snap.config.strategy, self.webserver)
        pair = result.pair
        if pair is None:
            return Decision({}, (), lambda: self._miss(result, req, probe if cache_misses else None), False, reads)
        # a hit that depends on neither headers nor state (the cache's rule), rendered without the state
        reads = reads and not (result.cacheable and (pair.templates is None or not pair.templates.uses_state))
        response = pair.pair.response
        wire, transitions = None, response.transitions_state
        if pair.templates is not None:  # Hoverfly renders before it changes the state
            answered = await self._templated(snap, pair, req, state)
            if answered is None:
                return Decision({}, (), self._conflict)
            wire, transitions = answered

        def finish() -> tuple[Wire, Response]:
            self._remember(result, req, probe)
            return wire or self._wire(pair), response

        group = sim.state_layout.group_at(pair.index)
        # a pair of no group shares no request with a pair naming a key: its hit depends on no state
        reads = reads and group is not None
        return Decision(dict(transitions or ()), response.removes_state or (), finish, reads=reads, group=group)

    def _held(self, snap: Snapshot) -> HeldState | None:
        """The state, when this process holds it and no template of ``snap``'s simulation may fetch
        (a CSV data source, the journal): then a request has nothing to wait for."""
        return None if snap.simulation.templates_fetch else self._state.held_state()

    def _step_held(
        self,
        snap: Snapshot,
        req: RequestDetails,
        probe: Probe | None,
        cache_misses: bool,
        delayed: bool,
        held: HeldState,
    ) -> Outcome | None:
        """``_simulate_with_state`` without an await, on the state this process holds (the
        in-process store): nothing else runs between the read and the step, so the step is never
        refused, and it comes after every step of the requests handled before it (none of this
        simulation waits for its turn: none has a template that may fetch). None when the
        simulation was replaced since ``snap`` and a step was decided on it: the awaited path then
        answers from the new one."""
        sim = snap.simulation
        state = held.state_now() if sim.reads_state or sim.templates_read_state else _NO_STATE
        result = match(sim, req, state, snap.config.strategy, self.webserver)
        pair = result.pair
        if pair is None:  # answered as of ``snap``, as the awaited path answers a miss: no step to refuse
            return self._miss(result, req, probe if cache_misses else None)
        wire = self._answer_held(snap, pair, req, state, True, held)
        if wire is None:
            return None
        self._remember(result, req, probe)
        delay = self._delay(snap, pair.pair.response, req) if delayed else 0.0
        return self._delayed(wire, delay) if delay > 0 else wire

    def _quick(
        self, snap: Snapshot, pair: CompiledPair, req: RequestDetails, state: Mapping[str, str]
    ) -> tuple[Wire, tuple[tuple[str, str], ...] | None] | None:
        """``pair``'s templated answer and transitions on ``state`` without the general render: its
        direct or stated answer, or its closures when they take this request; None when the general
        render must answer (as ``render_pair`` would, none reads a CSV source or the journal)."""
        templates = pair.templates
        if templates is None or snap.simulation.simulation.variables:
            return None
        direct = templates.direct
        if direct is not None:  # only without transitions
            return direct.wire(req, self.webserver), pair.pair.response.transitions_state
        stated = templates.stated
        if stated is not None:
            return stated.wire(req, state, self.webserver), stated.transitions
        closed = templates.closed
        if closed is not None:
            wire = closed.wire(req, self.webserver, self.hoverfly_helpers, state)
            if wire is not None:
                return wire, closed.transitions
        return None

    def _answer_held(
        self,
        snap: Snapshot,
        pair: CompiledPair,
        req: RequestDetails,
        state: Mapping[str, str],
        step: bool,
        held: HeldState,
    ) -> Wire | None:
        """``pair``'s answer, rendered on ``state``, and (``step``) its state step taken on the state
        this process holds; None, with nothing stepped, when the simulation was replaced since ``snap``."""
        response = pair.pair.response
        wire, transitions = None, response.transitions_state
        templates = pair.templates
        if templates is not None:  # Hoverfly renders, then steps
            quick = self._quick(snap, pair, req, state)
            if quick is not None:
                wire, transitions = quick
            else:
                rendered = self._render(snap, pair, req, state, CsvTables({}))
                wire, transitions = self._wire_of(rendered, pair), rendered.transitions
        if step:
            try:
                held.step_now(dict(transitions or ()), response.removes_state or (), snap.simulation_version)
            except SimulationChanged:
                return None
            self._turns.forget()  # the awaited path's copy may be old now: it reads the state again
        return wire or self._wire(pair)

    @staticmethod
    async def _delayed(wire: Wire, delay: float) -> Wire:
        await asyncio.sleep(delay)
        return wire

    async def _simulate_again(self, req: RequestDetails, delayed: bool, cache_misses: bool) -> Wire:
        """The simulation was replaced while this request was answered on it (its state step was
        refused): load the new one and answer the request from it, as if it had come after."""
        try:
            await self.runtime.sync()
        except StoreError as exc:
            return self._state_unavailable(exc)
        outcome = self.simulate(self.runtime.snapshot, req, cache_misses=cache_misses, delay=delayed)
        return outcome if isinstance(outcome, Wire) else await outcome

    def _without_state(self, snap: Snapshot, req: RequestDetails, exc: StoreError) -> Wire | tuple[Wire, Response]:
        """The store is away: a request is still answered when the pair it matches, the state left
        out, needs neither the state nor a step; any other gets 502. A pair requiring some state
        cannot match then, so the answer is what the simulation gives a request needing none."""
        result = match(snap.simulation, req, {}, snap.config.strategy, self.webserver)
        pair = result.pair
        if pair is not None and not pair.requires_state:
            response = pair.pair.response
            templates = pair.templates
            stepless = not (response.transitions_state or response.removes_state)
            if stepless and (templates is None or not (templates.uses_state or templates.uses_csv)):
                if templates is None:
                    return self._wire(pair), response
                rendered = self._render(snap, pair, req, _NO_STATE, CsvTables({}))
                return self._wire_of(rendered, pair), response
        return self._state_unavailable(exc)

    async def _templated(
        self, snap: Snapshot, pair: CompiledPair, req: RequestDetails, state: Mapping[str, str]
    ) -> tuple[Wire, tuple[tuple[str, str], ...] | None] | None:
        """``pair``'s templated answer and transitions on ``state``: ``_quick``'s, else the general
        render's against the fleet's data sources; None when those kept changing."""
        quick = self._quick(snap, pair, req, state)
        if quick is not None:
            return quick
        rendered = await self._render_shared(snap, pair, req, state)
        if rendered is None:
            return None
        return self._wire_of(rendered, pair), rendered.transitions

    async def _render_shared(
        self, snap: Snapshot, pair: CompiledPair, req: RequestDetails, state: Mapping[str, str]
    ) -> Rendered | None:
        """Render against the fleet's data sources; a render that changed them commits its changes
        with a compare-and-set, and renders again on a fresher copy if another write came first."""
        templates = pair.templates
        assert templates is not None
        journal = FetchedJournal() if templates.uses_journal else _NO_JOURNAL
        for _ in range(STATE_ATTEMPTS):
            base = await self.runtime.fresh_csv() if templates.uses_csv else None
            tables = base.copy() if base is not None else CsvTables({})
            rendered = self._render(snap, pair, req, state, tables, journal)
            if isinstance(journal, FetchedJournal) and journal.asked and await self._fetched(journal):
                continue  # rendered without entries it asked for: again, with them
            if base is None or not tables.mutations or await self.runtime.commit_csv(base, tables.mutations):
                return rendered
        return None

    async def _fetched(self, journal: FetchedJournal) -> bool:
        """Bring the journal entries a render asked for, this worker's latest included; False when
        the store cannot be reached (the render stands, as if the journal had none of them)."""
        runtime = self.runtime
        try:
            if runtime.records.pending:
                await runtime.flush()
            await journal.fetch(self._journal)
        except StoreError as exc:
            log.warning("The journal is unavailable to a template", extra={"fields": {"error": str(exc)}})
            return False
        return True

    def _render(
        self,
        snap: Snapshot,
        pair: CompiledPair,
        req: RequestDetails,
        state: Mapping[str, str],
        tables: CsvTables,
        journal: JournalLookup = _NO_JOURNAL,
    ) -> Rendered:
        sim = snap.simulation
        assert pair.templates is not None and sim.variables is not None
        response = pair.pair.response
        return render_pair(
            pair.templates,
            response,
            req,
            state,
            sim.literals,
            sim.variables,
            tables,
            journal,
            hoverfly=self.hoverfly_helpers,
        )

    def failure(self, context: str, error: str, outcome: str = "error") -> Wire:
        return failure_wire(context, error, product=self.product, outcome=outcome)

    def _state_unavailable(self, exc: StoreError) -> Wire:
        """The 502 of a request that needs the shared state while the store cannot be reached."""
        return self.failure(MATCHING_CONTEXT, f"the shared state is unavailable: {exc}")

    def _conflict(self) -> Wire:
        return self.failure(MATCHING_CONTEXT, "the shared state kept changing; try again")

    def _wire_of(self, rendered: Rendered, pair: CompiledPair) -> Wire:
        try:
            return rendered.wire(pair.rendered.proxy.pair, webserver=self.webserver)
        except SimulationError as exc:  # a template wrote a line break into a header
            return self.failure("There was an error when rendering the response", str(exc))

    def _wire(self, pair: CompiledPair) -> Wire:
        rendered = pair.rendered
        return rendered.webserver if self.webserver else rendered.proxy
