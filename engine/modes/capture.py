"""Capture: the pair a forwarded request and its real response make, and how it joins the simulation.

``captured_pair`` follows Hoverfly's construction (hoverfly-engine.md §11); ``merge_capture`` its
storing rules (§6.5, §10.2): the first recording wins, or ``overwriteDuplicate`` replaces it, or
``stateful`` turns identical requests into a ``sequence:<n>`` walk. ``Captures`` writes them into
the shared simulation with a compare-and-set, so captures from many workers and pods are each
stored once and sequences are numbered without gaps. The mode is ``CaptureMode``
(engine/modes/capture_mode.py); spy mode captures its misses through ``Captures`` too.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import orjson

from simproxy.engine.errors import CaptureConflict
from simproxy.engine.fleet.cas import until_written
from simproxy.engine.fleet.config import DEFAULT_MAX_PAIRS, ModeArguments
from simproxy.engine.outbound.upstream import UpstreamResponse
from simproxy.engine.simulation.codec import decode_simulation, storage_simulation
from simproxy.engine.simulation.importing import request_key, sequence_starts
from simproxy.engine.simulation.model import (
    JSON,
    Matcher,
    Matchers,
    NamedMatchers,
    Pair,
    RequestMatcher,
    Response,
    Simulation,
)
from simproxy.engine.wire.request import RequestDetails
from simproxy.store import Documents, SharedState, WriteEffects

if TYPE_CHECKING:
    from simproxy.engine.fleet.runtime import Runtime

CAPTURE_ATTEMPTS = 50

log = logging.getLogger(__name__)
_JSON = re.compile(r"[/+]json$")
_XML = re.compile(r"[/+]xml$")
_FORM = re.compile(r"form-\w+$")
SEQUENCE = "sequence:"
SAVE_CONTEXT = "There was an error when saving request and response"


def _exact(value: str) -> Matchers:
    return (Matcher("exact", value),)


def _values(values: Sequence[str]) -> Matchers:
    """One value: ``exact``; several: ``array`` of them all (no config)."""
    if len(values) == 1:
        return _exact(values[0])
    return (Matcher("array", list(values)),)


def _body_matchers(req: RequestDetails) -> Matchers:
    for content_type in req.headers.get("Content-Type", ()):
        if _JSON.search(content_type):
            return (Matcher("json", req.body),)
        if _XML.search(content_type):
            return (Matcher("xml", req.body),)
        if _FORM.search(content_type):
            if req.form:
                form: dict[str, JSON] = {
                    name: [{"matcher": "exact", "value": values[0]}] for name, values in sorted(req.form.items())
                }
                return (Matcher("form", form),)
            break
    return _exact(req.body)


def _headers(req: RequestDetails, whitelist: Sequence[str]) -> NamedMatchers:
    if not whitelist:
        return ()
    names = sorted(req.headers) if "*" in whitelist else sorted({n for n in whitelist if n in req.headers})
    return tuple((name, _values(req.headers[name])) for name in names)


def captured_pair(req: RequestDetails, resp: UpstreamResponse, args: ModeArguments) -> Pair:
    """The pair Hoverfly records for ``req`` answered by ``resp``."""
    query = tuple((name, _values(values)) for name, values in sorted(req.query.items())) if req.query else None
    return Pair(
        RequestMatcher(
            path=_exact(req.path),
            method=_exact(req.method),
            destination=_exact(req.destination),
            scheme=_exact(req.scheme),
            body=_body_matchers(req),
            headers=_headers(req, args.headers_whitelist),
            query=query,
        ),
        Response(
            status=resp.status,
            body=resp.body,
            headers=tuple(sorted(resp.headers)),
            fixed_delay=resp.elapsed_ms if args.capture_delay else 0,
            trailers=tuple(sorted(resp.trailers)),
        ),
    )


@dataclass(frozen=True, slots=True)
class Merged:
    simulation: Simulation
    sequence_starts: tuple[str, ...] = ()
    """Sequence keys this capture started: their live state becomes "1"."""


def merge_capture(sim: Simulation, pair: Pair, args: ModeArguments, state: Mapping[str, str]) -> Merged | None:
    """``sim`` with ``pair`` stored by the capture rules, or None when it is not stored (a duplicate)."""
    if args.stateful:
        return _merge_stateful(sim, pair, state)
    key = request_key(pair.request)
    for index, stored in enumerate(sim.pairs):
        if request_key(stored.request) == key:
            if not args.overwrite_duplicate:
                return None
            return Merged(replace(sim, pairs=(*sim.pairs[:index], pair, *sim.pairs[index + 1 :])))
    return Merged(replace(sim, pairs=(*sim.pairs, pair)))


def _stateless(request: RequestMatcher) -> bytes:
    return request_key(replace(request, requires_state=None))


def _merge_stateful(sim: Simulation, pair: Pair, state: Mapping[str, str]) -> Merged:
    key = _stateless(pair.request)
    equal = [i for i, stored in enumerate(sim.pairs) if _stateless(stored.request) == key]
    if not equal:
        return Merged(replace(sim, pairs=(*sim.pairs, pair)))
    pairs = list(sim.pairs)
    started: list[str] = []
    taken = {k for p in sim.pairs for k, _ in p.request.requires_state or () if SEQUENCE in k}
    sequence = ""
    for index in equal:
        stored = pairs[index]
        requires = dict(stored.request.requires_state or ())
        transitions = dict(stored.response.transitions_state or ())
        sequence = next((k for k in requires if SEQUENCE in k), "") or _free_sequence(state, taken)
        taken.add(sequence)
        if sequence not in requires:
            requires[sequence], transitions[sequence] = "1", "2"
            started.append(sequence)
        else:
            transitions[sequence] = str(int(requires[sequence]) + 1)
        pairs[index] = replace(
            stored,
            request=replace(stored.request, requires_state=tuple(sorted(requires.items()))),
            response=replace(stored.response, transitions_state=tuple(sorted(transitions.items()))),
        )
    requires = dict(pair.request.requires_state or ())
    requires[sequence] = str(len(equal) + 1)
    pairs.append(replace(pair, request=replace(pair.request, requires_state=tuple(sorted(requires.items())))))
    return Merged(replace(sim, pairs=tuple(pairs)), tuple(started))


def _free_sequence(state: Mapping[str, str], taken: set[str]) -> str:
    """The first ``sequence:<i>`` with no live value (and, here, not already used by a stored pair)."""
    i = 1
    while state.get(f"{SEQUENCE}{i}") or f"{SEQUENCE}{i}" in taken:
        i += 1
    return f"{SEQUENCE}{i}"


_Pending = tuple[Pair, ModeArguments, "asyncio.Future[bool]"]


class Captures:
    """Stores captured pairs into the fleet's simulation, batching the ones that arrive together.

    A capture waits until its pair is stored (a ``GET /simulation`` right after the response shows
    it): whoever finds the writer free writes every pair waiting at that moment, in one
    compare-and-set that is retried on a concurrent write, so nothing runs in the background.
    """

    def __init__(self, runtime: Runtime, max_pairs: int = DEFAULT_MAX_PAIRS) -> None:
        self.runtime = runtime
        self._documents: Documents = runtime.store.documents
        self._state: SharedState = runtime.store.state
        self.max_pairs = max_pairs
        """A capture into a simulation this large is answered but not stored (logged once a batch)."""
        self._waiting: list[_Pending] = []
        self._lock = asyncio.Lock()

    async def add(self, pair: Pair, args: ModeArguments) -> bool:
        """Store ``pair``; True when it was added (False: a duplicate the rules leave out)."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting.append((pair, args, future))
        async with self._lock:
            if not future.done():
                batch, self._waiting = self._waiting, []
                try:
                    added = await self._store(batch)
                except BaseException as exc:
                    for _, _, waiting in batch:
                        if not waiting.done():
                            waiting.set_exception(exc)
                    raise
                for (_, _, waiting), result in zip(batch, added, strict=True):
                    waiting.set_result(result)
        return await future

    async def _store(self, batch: Sequence[_Pending]) -> list[bool]:
        conflict = "the simulation kept changing while captured pairs were being stored"
        return await until_written(
            lambda: self._store_once(batch), conflict, attempts=CAPTURE_ATTEMPTS, error=CaptureConflict
        )

    async def _store_once(self, batch: Sequence[_Pending]) -> list[bool] | None:
        """Which pairs of ``batch`` were added (all False: nothing to write), or None when another
        write of the simulation came first."""
        doc = await self._documents.read_document("simulation")
        version, data = (0, {}) if doc is None else (doc[0], orjson.loads(doc[1]))
        sim = decode_simulation(data) if data else Simulation()
        stateful = any(args.stateful for _, args, _ in batch)
        state = await self._state.state_get() if stateful else {}
        added: list[bool] = []
        starts: list[str] = []
        full = False
        for pair, args, _ in batch:
            if len(sim.pairs) >= self.max_pairs:
                added.append(False)
                full = True
                continue
            merged = merge_capture(sim, pair, args, state)
            added.append(merged is not None)
            if merged is not None:
                sim = merged.simulation
                starts.extend(merged.sequence_starts)
                state = {**state, **dict(sequence_starts(merged.sequence_starts))}
        if full:
            log.warning("simulation holds -max-pairs %d pairs: captured pairs are not stored", self.max_pairs)
        if not any(added):
            return added
        body = orjson.dumps({**storage_simulation(sim), "lineage": str(data.get("lineage", ""))})
        effects = WriteEffects(state=sequence_starts(starts))  # a new sequence starts with its pair
        if await self._documents.write_document("simulation", body, version, effects) is None:
            return None
        return added
