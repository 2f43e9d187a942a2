"""Each mode driven directly, in the style of mitmproxy's playbook tests: a worker's dispatcher over
the in-process store, a fake real service, and no process, socket or timer of its own.

``World`` is one worker: ``await world.answer(request)`` is what the proxy would send back, and
``await world.journal()`` what it journaled (the observers run as after a real write).
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import replace
from typing import Any

import orjson
import pytest

from simproxy.engine.errors import UpstreamError
from simproxy.engine.fleet.config import MiddlewareSpec, ModeArguments
from simproxy.engine.fleet.runtime import Runtime
from simproxy.engine.journal.entries import JournalEntry, decode_entry
from simproxy.engine.journal.recorder import Recorder
from simproxy.engine.matching.cache import MatchCache
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.matching.scoring import compile_simulation
from simproxy.engine.modes.dispatch import Dispatcher
from simproxy.engine.outbound.upstream import UpstreamResponse
from simproxy.engine.simulation.codec import decode_simulation
from simproxy.engine.simulation.importing import sequence_keys, sequence_starts
from simproxy.engine.simulation.model import Pair
from simproxy.engine.wire.request import Received, RequestDetails
from simproxy.engine.wire.response import Wire
from simproxy.store import MemoryStore, WriteEffects

Answer = Callable[[RequestDetails], UpstreamResponse]
MIDDLEWARE_URL = "http://middleware.test/"


def request(
    path: str = "/",
    method: str = "GET",
    *,
    destination: str = "api.test",
    query: str = "",
    body: str = "",
    headers: dict[str, list[str]] | None = None,
) -> RequestDetails:
    return RequestDetails.build(method, "http", destination, path, query, body, headers or {})


def pair(path: str, body: str = "simulated", status: int = 200, **response: Any) -> dict[str, Any]:
    return {
        "request": {"path": [{"matcher": "exact", "value": path}]},
        "response": {"status": status, "body": body, **response},
    }


def real(status: int = 200, body: bytes = b"real", headers: Sequence[tuple[str, tuple[str, ...]]] = ()) -> Answer:
    """A real service that answers every request the same."""
    all_headers = (("Content-Type", ("text/plain",)), *headers)
    return lambda req: UpstreamResponse(status, all_headers, body, 1)


def unreachable(req: RequestDetails) -> UpstreamResponse:
    raise UpstreamError(f"Get http://{req.destination}{req.path}: dial tcp: connection refused")


class FakeUpstream:
    """The real services and remote middleware, answered in process; remembers what was sent."""

    def __init__(self, answer: Answer, middleware: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.answer = answer
        self.middleware = middleware
        self.sent: list[tuple[RequestDetails, bool]] = []
        """(request, marked with ``Hoverfly: Was-Here``) per forwarded request."""
        self.posted: list[tuple[str, Any]] = []

    async def forward(self, req: RequestDetails, *, proxy: str | None = None, mark: bool = True) -> UpstreamResponse:
        self.sent.append((req, mark))
        return self.answer(req)

    async def send(self, method: str, url: str, headers: Any, body: bytes, **_: Any) -> UpstreamResponse:
        """Remote middleware (``MIDDLEWARE_URL``) answers through ``middleware``; any other URL (a
        remote post-serve action) is remembered in ``posted`` and answered 200."""
        if url != MIDDLEWARE_URL:
            self.posted.append((url, orjson.loads(body)))
            return UpstreamResponse(200, (), b"", 1)
        assert self.middleware is not None
        reply = orjson.dumps(self.middleware(orjson.loads(body)))
        return UpstreamResponse(200, (("Content-Type", ("application/json",)),), reply, 1)

    async def aclose(self) -> None:
        return None


class World:
    """One worker over the in-process store, with a fake real service."""

    def __init__(self, upstream: FakeUpstream, *, webserver: bool = False, cors: bool = False) -> None:
        ticks = itertools.count(int(time.time() * 1000), 1_000)
        self.store = MemoryStore()
        self.runtime = Runtime(
            self.store,
            MatcherRegistry(),
            worker_id="w1",
            clock_ms=lambda: next(ticks),
            records=Recorder(journal_size=100, logs_size=10),
            registry_settle_ms=0,
            webserver=webserver,
            cache=MatchCache(1000, mirrored=False),  # as admin/api/app.py makes it for the in-process store
        )
        self.upstream = upstream
        self.dispatcher = Dispatcher(
            self.runtime,
            webserver=webserver,
            rng=random.Random(7),
            upstream=upstream,
            cors=cors,  # type: ignore[arg-type]
        )

    async def setup(
        self, pairs: Sequence[dict[str, Any]], mode: str, arguments: ModeArguments, middleware: bool, **data: Any
    ) -> None:
        runtime = self.runtime
        await runtime.sync()
        if pairs or data:
            sim = decode_simulation({"pairs": list(pairs), **data})
            effects = WriteEffects(state=sequence_starts(sequence_keys(sim)))
            await runtime.write_simulation(
                sim, compile_simulation(sim, runtime.registry), None, wait=False, effects=effects
            )
        config = runtime.snapshot.config.with_mode(mode, arguments)
        if middleware:
            config = replace(config, middleware=MiddlewareSpec(remote=MIDDLEWARE_URL))
        await runtime.write_config(config, None, wait=False)

    async def answer(self, req: RequestDetails) -> Wire:
        """What the proxy writes for ``req``; the observers are told, as after a real write."""
        received = Received(req, time.time(), time.perf_counter(), None, b"")
        outcome = self.dispatcher.handle(req)
        wire = outcome if isinstance(outcome, Wire) else await outcome
        self.dispatcher.served(wire, received)
        return wire

    async def journal(self) -> list[JournalEntry]:
        await self.runtime.flush()
        return [decode_entry(raw) for raw in await self.store.journal_entries()]

    async def pairs(self) -> tuple[Pair, ...]:
        """The pairs of the shared simulation, as the store holds them now."""
        doc = await self.store.read_document("simulation")
        return () if doc is None else decode_simulation(orjson.loads(doc[1])).pairs

    async def aclose(self) -> None:
        await self.dispatcher.aclose()
        await self.runtime.aclose()


Scenario = Callable[[World], Coroutine[Any, Any, None]]


@pytest.fixture
def world() -> Iterator[Callable[..., None]]:
    """``world(scenario, pairs=..., mode=..., upstream=...)`` runs ``scenario`` on a fresh worker."""

    def run(
        scenario: Scenario,
        *pairs: dict[str, Any],
        mode: str = "simulate",
        upstream: FakeUpstream | None = None,
        arguments: ModeArguments | None = None,
        middleware: bool = False,
        webserver: bool = False,
        cors: bool = False,
        **data: Any,
    ) -> None:
        async def main() -> None:
            w = World(upstream or FakeUpstream(real()), webserver=webserver, cors=cors)
            try:
                await w.setup(pairs, mode, arguments or ModeArguments(), middleware, **data)
                await scenario(w)
            finally:
                await w.aclose()

        asyncio.run(main())

    yield run
