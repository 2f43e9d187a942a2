"""The engine a worker runs for every proxied request: the current mode applied to one request.

Framework-free: it takes a ``RequestDetails`` and returns the ``Wire`` to send, synchronously
when it can (simulate mode never waits on anything), or as a coroutine when it must wait.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Coroutine, Mapping
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from engine.actions import ActionRunner, Served
from engine.cache import CacheEntry, FastKey
from engine.config import DEFAULT_MAX_PAIRS
from engine.cors import allow_origin, is_preflight, preflight
from engine.errors import SimulationError
from engine.forwarding import Forwarder
from engine.goregex import GoRegex, InvalidPattern, compile_go
from engine.matching import CompiledPair, MatchResult, Strategy, match
from engine.middleware import DEFAULT_TIMEOUT as DEFAULT_MIDDLEWARE_TIMEOUT
from engine.middleware import MiddlewareRunner
from engine.miss import MATCHING_CONTEXT, NO_MATCH, error_text, miss_text
from engine.model import Response
from engine.request import RequestDetails
from engine.responses import Wire, plain_error, render_response
from engine.runtime import Runtime, Snapshot
from engine.templated import Rendered, render_pair
from engine.templating import CsvTables
from engine.upstream import Upstream
from store import SimulationChanged, StoreError

log = logging.getLogger(__name__)

Outcome = Wire | Coroutine[Any, Any, Wire]

Received = tuple[RequestDetails, float, float, bytes | None, bytes]
"""What the proxy knows of a request it answers: the request, the wall-clock time it was received,
``perf_counter`` then, the bytes it came in when they held exactly that request (the journal keeps
them; None otherwise), and the encoded ``http_request.Arrival``."""

Probe = tuple[FastKey, str]
"""A match-cache lookup that found nothing: (fast key, md5 key), to store the result under."""
STATE_ATTEMPTS = 50
_ACTION_MODES = frozenset({"simulate", "synthesize"})
"""Where Hoverfly runs post-serve actions (not spy hits, whatever its docs say)."""
_NO_STATE: Mapping[str, str] = MappingProxyType({})  # what simulations without requiresState match against


def _state_unavailable(exc: StoreError) -> Wire:
    """The 502 of a request that needs the shared state while the store cannot be reached."""
    return plain_error(502, error_text(MATCHING_CONTEXT, f"the shared state is unavailable: {exc}"))


def _strategy(snap: Snapshot) -> Strategy:
    return "strongest" if snap.config.strategy == "strongest" else "first"


class Engine:
    def __init__(
        self,
        runtime: Runtime,
        *,
        webserver: bool = False,
        rng: random.Random | None = None,
        upstream: Upstream | None = None,
        own_ports: frozenset[int] = frozenset(),
        cors: bool = False,
        middleware_timeout: float = DEFAULT_MIDDLEWARE_TIMEOUT,
        max_pairs: int = DEFAULT_MAX_PAIRS,
    ) -> None:
        self.runtime = runtime
        self.webserver = webserver
        self.cors = cors
        self.rng = rng or random.Random()
        self.upstream = upstream or Upstream()
        self.middleware = MiddlewareRunner(self.upstream, timeout=middleware_timeout)
        self.actions = ActionRunner(self.upstream, runtime.store, runtime.records)
        self.forwarder = Forwarder(
            runtime,
            self.upstream,
            self.middleware,
            webserver=webserver,
            own_ports=own_ports,
            rng=self.rng,
            max_pairs=max_pairs,
        )
        self._destinations: dict[str, GoRegex] = {}
        self._state_turn = asyncio.Lock()
        self._state_seen: tuple[int, dict[str, str]] | None = None
        """(version, state) as this worker last saw it in the store (stateful requests decide on it)."""

    async def aclose(self) -> None:
        await self.actions.aclose()
        await self.forwarder.pac.aclose()
        await self.upstream.aclose()
        self.middleware.close()

    def handle(self, req: RequestDetails) -> Outcome:
        snap = self.runtime.snapshot
        config = snap.config
        if not self.webserver and not self._in_destination(config.destination, req):
            return self.forwarder.relay(req)
        mode = config.mode
        self.runtime.count(mode)
        if self.cors:
            return self._with_cors(snap, req)
        return self._run_mode(snap, req)

    def _with_cors(self, snap: Snapshot, req: RequestDetails) -> Outcome:
        if is_preflight(req):
            return preflight(req)  # journaled and counted, never matched or forwarded
        outcome = self._run_mode(snap, req)
        if isinstance(outcome, Wire):
            return allow_origin(req, outcome)
        return self._cors_after(req, outcome)

    async def _cors_after(self, req: RequestDetails, outcome: Coroutine[Any, Any, Wire]) -> Wire:
        return allow_origin(req, await outcome)

    def _run_mode(self, snap: Snapshot, req: RequestDetails) -> Outcome:
        config = snap.config
        mode = config.mode
        if mode == "simulate":
            served = self._simulate(snap, req, delay=not config.middleware.enabled)
            return self._middleware(snap, req, served) if config.middleware.enabled else served
        if mode == "spy":
            served = self._spy(snap, req, delay=not config.middleware.enabled)
            return self._middleware(snap, req, served) if config.middleware.enabled else served
        if mode == "capture":
            return self.forwarder.capture(snap, req)
        if mode == "diff":
            return self._diff(snap, req)
        if mode == "modify":
            return self.forwarder.modify(snap, req)
        return self.forwarder.synthesize(snap, req)

    async def _middleware(self, snap: Snapshot, req: RequestDetails, served: Outcome) -> Wire:
        wire = served if isinstance(served, Wire) else await served
        return await self.forwarder.apply(snap, req, wire)

    def _spy(self, snap: Snapshot, req: RequestDetails, delay: bool = True) -> Outcome:
        """Simulate; a miss goes to the real service (Hoverfly's spy applies no post-serve action)."""
        capture = snap.config.args("spy").capture_on_miss
        outcome = self._simulate(snap, req, cache_misses=not capture, delay=delay)
        if isinstance(outcome, Wire):
            return self.forwarder.spy(snap, req) if outcome.outcome == "miss" else outcome
        return self._spy_after(snap, req, outcome)

    async def _spy_after(self, snap: Snapshot, req: RequestDetails, simulated: Coroutine[Any, Any, Wire]) -> Wire:
        wire = await simulated
        return await self.forwarder.spy(snap, req) if wire.outcome == "miss" else wire

    async def _diff(self, snap: Snapshot, req: RequestDetails) -> Wire:
        """The simulation's answer (state steps included, its delay not) against the real one."""
        expected = self._simulate(snap, req, delay=False)
        if not isinstance(expected, Wire):
            expected = await expected
        return await self.forwarder.diff(snap, req, expected)

    def record(self, wire: Wire, received: Received) -> None:
        """The proxy wrote ``wire`` for a request: journal it (latency includes any delay)."""
        if wire.outcome in ("relayed", "refused"):
            return  # outside the destination filter, or no proxy credentials: not journaled or counted
        req, received_at, received_perf, raw, arrival = received
        runtime = self.runtime
        records = runtime.records
        seconds = time.perf_counter() - received_perf
        config = runtime.snapshot.config
        mode = config.mode
        runtime.metrics.request(mode, wire.outcome, seconds, wire.pair)
        sequence = 0
        if records.journal_size:
            sequence = records.record(req, wire, received_at, seconds * 1000, mode, raw, arrival)
        if wire.post_serve_action and wire.outcome == "hit" and mode in _ACTION_MODES:
            action = config.action(wire.post_serve_action)
            if action is not None:  # the response is out: the action cannot delay it
                entry_id = records.entry_id(sequence) if sequence else ""
                served = Served(wire.post_serve_action, req, wire, entry_id, received_at, seconds * 1000, mode)
                self.actions.schedule(action, served)

    def _simulate(
        self, snap: Snapshot, req: RequestDetails, *, cache_misses: bool = True, delay: bool = True
    ) -> Outcome:
        """Simulate mode's answer; a miss is a Wire whose outcome is ``miss`` (spy and diff look)."""
        probe: Probe | None = None
        cache = self.runtime.cache
        if cache.enabled:
            generation = (snap.lineage, snap.config.cache_epoch)
            if cache.generation != generation:
                cache.reset(generation)  # this worker wrote the change itself; sync catches up the rest
            fast, key, entry = cache.lookup(req, self.webserver)
            probe = (fast, key)
            if entry is not None:
                if entry.pair is None:
                    return entry.miss or plain_error(502, error_text(MATCHING_CONTEXT, NO_MATCH), outcome="miss")
                return self._serve(snap, entry.pair, req, delay, cache_misses)  # a cached pair never requires state
        if snap.simulation.writes_state:
            return self._simulate_with_state(snap, req, probe, cache_misses, delay)
        result = match(snap.simulation, req, _NO_STATE, _strategy(snap), self.webserver)
        if result.pair is None:
            return self._miss(result, req, probe if cache_misses else None)
        self._remember(result, probe)
        return self._serve(snap, result.pair, req, delay, cache_misses)

    def _remember(self, result: MatchResult, probe: Probe | None, miss: Wire | None = None) -> None:
        """Keep the result (a hit, or the 502 of a miss) in the match cache when Hoverfly would."""
        if probe is not None and result.cacheable:
            entry = CacheEntry(probe[1], result.pair, miss, result.closest if miss else None)
            self.runtime.cache.put(entry, fast=probe[0])

    def _miss(self, result: MatchResult, req: RequestDetails, probe: Probe | None) -> Wire:
        """The 502 of a miss, logged as Hoverfly logs it and remembered in the cache."""
        log.warning(
            "Failed to find matching request from simulation",
            extra={"fields": {"destination": req.destination, "method": req.method, "path": req.path,
                              "query": req.query, "error": NO_MATCH}},
        )  # fmt: skip
        wire = plain_error(502, miss_text(req, result.closest), outcome="miss")
        self._remember(result, probe, wire)
        return wire

    def _serve(
        self, snap: Snapshot, pair: CompiledPair, req: RequestDetails, delayed: bool = True, cache_misses: bool = True
    ) -> Outcome:
        """Answer with a chosen pair: templates, state steps and delay, then the wire.

        Synchronous when nothing needs the store or a timer (the common case).
        """
        response = pair.pair.response
        delay = self._delay(snap, response, req) if delayed else 0.0
        step = snap.simulation.writes_state and bool(response.transitions_state or response.removes_state)
        templates = pair.templates
        if templates is not None and not (templates.uses_state or templates.uses_csv or step or delay > 0):
            rendered = self._render(snap, pair, req, _NO_STATE, CsvTables({}))
            return self._wire_of(rendered.response, pair.rendered.proxy.pair)
        if templates is None and not step and delay <= 0:
            return self._wire(pair)
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
                state = await self.runtime.store.state_get() if pair.templates.uses_state else _NO_STATE
                rendered = await self._render_shared(snap, pair, req, state)
                if rendered is None:
                    return self._conflict()
                wire, transitions = self._wire_of(rendered.response, pair.rendered.proxy.pair), rendered.transitions
            if step:
                sets, removes = dict(transitions or ()), response.removes_state or ()
                await self.runtime.store.state_transition({}, sets, removes, simulation=snap.simulation_version)
        except SimulationChanged:
            return await self._simulate_again(req, *again)
        except StoreError as exc:
            return _state_unavailable(exc)
        if delay > 0:
            await asyncio.sleep(delay)
        return wire or self._wire(pair)

    def _delay(self, snap: Snapshot, response: Response, req: RequestDetails) -> float:
        return snap.simulation.delays.for_response(response, req.destination, req.path, req.method, self.rng)

    async def _simulate_with_state(
        self, snap: Snapshot, req: RequestDetails, probe: Probe | None, cache_misses: bool, delayed: bool
    ) -> Wire:
        """Match against the shared state, then take the pair's state step atomically.

        Another request may change the state between our read and our step (on any worker or
        pod): then the step is refused and we match again, so each step is taken once. Within a
        worker the steps take turns (as Hoverfly's do), so only other workers can make one retry;
        the response's delay is waited after the turn.
        """
        try:
            async with self._state_turn:
                outcome = await self._step_state(snap, req, probe, cache_misses)
        except SimulationChanged:
            self._state_seen = None
            return await self._simulate_again(req, delayed, cache_misses)
        if isinstance(outcome, Wire):
            return outcome
        wire, response = outcome
        delay = self._delay(snap, response, req) if delayed else 0.0
        if delay > 0:
            await asyncio.sleep(delay)
        return wire

    async def _step_state(
        self, snap: Snapshot, req: RequestDetails, probe: Probe | None, cache_misses: bool
    ) -> Wire | tuple[Wire, Response]:
        """Decide on this worker's last copy of the state and let the store check, in the same
        round trip as the step, that the state is still that version; a refused step hands back
        the current state to decide on again. A miss is only answered on a state just read."""
        store = self.runtime.store
        sim = snap.simulation
        reads = sim.reads_state or sim.templates_read_state
        try:
            if reads and self._state_seen is None:
                self._state_seen = await store.state_read()
            version, state = self._state_seen if reads and self._state_seen is not None else (0, {})
            fresh = not reads
            for _ in range(STATE_ATTEMPTS):
                result = match(sim, req, state, _strategy(snap), self.webserver)
                if result.pair is None:
                    if not fresh:  # our copy may be old: decide a miss on the current state
                        version, state = self._state_seen = await store.state_read()
                        fresh = True
                        continue
                    return self._miss(result, req, probe if cache_misses else None)
                pair = result.pair
                response = pair.pair.response
                wire, transitions = None, response.transitions_state
                if pair.templates is not None:  # Hoverfly renders before it changes the state
                    rendered = await self._render_shared(snap, pair, req, state)
                    if rendered is None:
                        return self._conflict()
                    wire, transitions = self._wire_of(rendered.response, pair.rendered.proxy.pair), rendered.transitions
                sets, removes = dict(transitions or ()), response.removes_state or ()
                at = snap.simulation_version  # a step decided on a replaced simulation is refused
                if not reads:  # nothing was decided on the state: the step needs no check
                    applied = await store.state_transition({}, sets, removes, simulation=at)
                else:
                    applied, version, state = await store.state_step(version, sets, removes, simulation=at)
                    self._state_seen = (version, state)
                    fresh = True
                if applied:
                    self._remember(result, probe)
                    return wire or self._wire(pair), response
        except SimulationChanged:
            raise
        except StoreError as exc:
            self._state_seen = None
            return self._without_state(snap, req, exc)
        return self._conflict()

    async def _simulate_again(self, req: RequestDetails, delayed: bool, cache_misses: bool) -> Wire:
        """The simulation was replaced while this request was answered on it (its state step was
        refused): load the new one and answer the request from it, as if it had come after."""
        try:
            await self.runtime.sync()
        except StoreError as exc:
            return _state_unavailable(exc)
        outcome = self._simulate(self.runtime.snapshot, req, cache_misses=cache_misses, delay=delayed)
        return outcome if isinstance(outcome, Wire) else await outcome

    def _without_state(self, snap: Snapshot, req: RequestDetails, exc: StoreError) -> Wire | tuple[Wire, Response]:
        """The store is away: a request is still answered when the pair it matches, the state left
        out, needs neither the state nor a step; any other gets 502. A pair requiring some state
        cannot match then, so the answer is what the simulation gives a request needing none."""
        result = match(snap.simulation, req, {}, _strategy(snap), self.webserver)
        pair = result.pair
        if pair is not None and not pair.requires_state:
            response = pair.pair.response
            templates = pair.templates
            stepless = not (response.transitions_state or response.removes_state)
            if stepless and (templates is None or not (templates.uses_state or templates.uses_csv)):
                if templates is None:
                    return self._wire(pair), response
                rendered = self._render(snap, pair, req, _NO_STATE, CsvTables({}))
                return self._wire_of(rendered.response, pair.rendered.proxy.pair), response
        return _state_unavailable(exc)

    async def _render_shared(
        self, snap: Snapshot, pair: CompiledPair, req: RequestDetails, state: Mapping[str, str]
    ) -> Rendered | None:
        """Render against the fleet's data sources; a render that changed them commits its changes
        with a compare-and-set, and renders again on a fresher copy if another write came first."""
        templates = pair.templates
        assert templates is not None
        if not templates.uses_csv:
            return self._render(snap, pair, req, state, CsvTables({}))
        for _ in range(STATE_ATTEMPTS):
            base = await self.runtime.fresh_csv()
            tables = base.copy()
            rendered = self._render(snap, pair, req, state, tables)
            if not tables.mutations or await self.runtime.commit_csv(base, tables.mutations):
                return rendered
        return None

    def _render(
        self, snap: Snapshot, pair: CompiledPair, req: RequestDetails, state: Mapping[str, str], tables: CsvTables
    ) -> Rendered:
        sim = snap.simulation
        assert pair.templates is not None and sim.variables is not None
        return render_pair(pair.templates, pair.pair.response, req, state, sim.literals, sim.variables, tables)

    def _conflict(self) -> Wire:
        return plain_error(502, error_text(MATCHING_CONTEXT, "the shared state kept changing; try again"))

    def _wire_of(self, response: Response, pair: str = "") -> Wire:
        try:
            rendered = render_response(response, "a templated response", pair)
        except SimulationError as exc:  # a template wrote a line break into a header
            return plain_error(502, error_text("There was an error when rendering the response", str(exc)))
        return rendered.webserver if self.webserver else rendered.proxy

    def _wire(self, pair: CompiledPair) -> Wire:
        rendered = pair.rendered
        return rendered.webserver if self.webserver else rendered.proxy

    def intercepts(self, authority: str) -> bool:
        """Whether a CONNECT to ``authority`` is intercepted: always, unless the destination names a
        scheme and host (``https://api.example.com``) that the tunnel's does not match (Hoverfly)."""
        destination = self.runtime.snapshot.config.destination
        if "://" not in destination:
            return True
        parsed = urlsplit(destination)
        if not parsed.netloc:
            return True
        key = f"{parsed.scheme}://{parsed.netloc}"
        pattern = self._destinations.get(key)
        if pattern is None:
            try:
                pattern = self._destinations[key] = compile_go(key)
            except InvalidPattern:
                return True
        return pattern.search(f"https://{authority}") is not None

    def _in_destination(self, destination: str, req: RequestDetails) -> bool:
        """Hoverfly's filter: the regex may match the path, host+path or scheme://host+path."""
        if destination in (".", ""):
            return True
        pattern = self._destinations.get(destination)
        if pattern is None:
            pattern = self._destinations[destination] = compile_go(destination)
        host_path = req.destination + req.path
        return bool(
            pattern.search(req.path) or pattern.search(host_path) or pattern.search(f"{req.scheme}://{host_path}")
        )
