"""A write answers once every live worker applies it, however long a worker takes to apply it.

Two runtimes (workers) on one real Redis: one writes a simulation, the other takes seconds to
compile it, as workers do with a simulation of a hundred megabytes.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from simproxy.engine.fleet import runtime as runtime_module
from simproxy.engine.fleet.runtime import Runtime
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.matching.scoring import compile_simulation
from simproxy.engine.simulation.codec import decode_simulation
from tests.store.conftest import Backend

COMPILE_S = 4.5
"""How long the slow worker compiles: past the alive window (3 s) of a worker that stopped beating."""


def test_a_write_waits_for_a_worker_still_compiling_it(
    redis_backend: Backend, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime_module, "LOAD_RATE", 100)  # a few hundred bytes get seconds, as 100 MB do
    registry = MatcherRegistry()
    writer = Runtime(redis_backend.open(), registry, registry_settle_ms=0)
    slow = Runtime(redis_backend.open(), registry, registry_settle_ms=0)
    compile_stored = slow._compile_stored

    def slow_compile(body: bytes) -> Any:
        time.sleep(COMPILE_S)  # in the offload thread: the worker's loop goes on (and beats)
        return compile_stored(body)

    monkeypatch.setattr(slow, "_compile_stored", slow_compile)
    sim = decode_simulation({"pairs": [{"request": {"path": [{"matcher": "exact", "value": "/p"}]},
                                         "response": {"status": 200, "body": "new"}}]})  # fmt: skip

    async def body() -> None:
        await writer.start()
        await slow.start()
        try:
            started = time.monotonic()
            assert await writer.write_simulation(sim, compile_simulation(sim, registry), None)
            waited = time.monotonic() - started
            assert slow.snapshot.simulation_version == writer.snapshot.simulation_version, waited
            assert [cp.pair for cp in slow.snapshot.simulation.pairs] == list(sim.pairs)
            assert waited >= COMPILE_S - 0.5
        finally:
            await slow.aclose()
            await writer.aclose()

    run(body())
