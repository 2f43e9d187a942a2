"""Faults in the simulation format (codec, storage form, global rules) and how the server writes them."""

from __future__ import annotations

import asyncio
import random
from typing import Any, cast

import orjson
import pytest

from engine.errors import SimulationError
from engine.matching.scoring import compile_simulation
from engine.modes.dispatch import with_global_fault
from engine.server.faults import NOT_A_CHUNK, chunked_head, dribble, paced, random_data, rolled
from engine.simulation.codec import decode_simulation, export_simulation, storage_simulation
from engine.simulation.faults import global_fault
from engine.simulation.model import Fault, FaultKind, GlobalFault, Response
from engine.wire.response import render_wire
from tests.engine.conftest import REGISTRY, exact, pair, request

DRIBBLE = {"type": "dribble", "chunks": 4, "durationMs": 200, "fraction": 0.5}


def _rules(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"pairs": [], "globalActions": {"faults": list(entries)}}


# -- codec ------------------------------------------------------------------------------------------


def test_a_pair_fault_is_decoded_and_exported_as_written() -> None:
    sim = decode_simulation({"pairs": [pair(body="x", fault=DRIBBLE)]})
    assert sim.pairs[0].response.fault == Fault(FaultKind.DRIBBLE, chunks=4, duration_ms=200, fraction=0.5)
    assert export_simulation(sim)["pairs"][0]["response"]["fault"] == DRIBBLE


def test_a_fraction_of_one_is_the_default_and_left_out() -> None:
    sim = decode_simulation({"pairs": [pair(fault={"type": "bandwidth", "bytesPerSecond": 10, "fraction": 1})]})
    assert sim.pairs[0].response.fault == Fault(FaultKind.BANDWIDTH, bytes_per_second=10)
    assert export_simulation(sim)["pairs"][0]["response"]["fault"] == {"type": "bandwidth", "bytesPerSecond": 10}


def test_simulations_without_faults_export_no_fault_members() -> None:
    data = export_simulation(decode_simulation({"pairs": [pair(body="x")]}))
    assert "fault" not in data["pairs"][0]["response"]
    assert data["globalActions"] == {"delays": [], "delaysLogNormal": []}


def test_global_faults_are_decoded_and_exported() -> None:
    entry = {"urlPattern": "api\\.test", "httpMethod": "GET", "fault": {"type": "emptyResponse", "fraction": 0.05}}
    sim = decode_simulation(_rules(entry))
    assert sim.faults == (GlobalFault("api\\.test", "GET", Fault(FaultKind.EMPTY_RESPONSE, fraction=0.05)),)
    assert export_simulation(sim)["globalActions"]["faults"] == [entry]


def test_the_storage_form_keeps_every_fault() -> None:
    faults = [
        {"type": kind.value, **({"chunks": 2, "durationMs": 0} if kind is FaultKind.DRIBBLE else {})}
        | ({"bytesPerSecond": 3} if kind is FaultKind.BANDWIDTH else {})
        | {"fraction": 0.25}
        for kind in FaultKind
    ]
    sim = decode_simulation(
        {
            "pairs": [pair({"path": [exact(f"/{i}")]}, fault=f) for i, f in enumerate(faults)],
            "globalActions": {"faults": [{"urlPattern": ".", "fault": {"type": "connectionReset"}}]},
        }
    )
    assert decode_simulation(orjson.loads(orjson.dumps(storage_simulation(sim)))) == sim


@pytest.mark.parametrize(
    ("fault", "path"),
    [
        pytest.param({"type": "teleport"}, "data.pairs[0].response.fault.type", id="unknown-type"),
        pytest.param({"type": "dribble", "durationMs": 1}, "data.pairs[0].response.fault.chunks", id="no-chunks"),
        pytest.param({"type": "dribble", "chunks": 1, "durationMs": -1}, "data.pairs[0].response.fault.durationMs"),
        pytest.param({"type": "bandwidth", "bytesPerSecond": True}, "data.pairs[0].response.fault.bytesPerSecond"),
        pytest.param({"type": "emptyResponse", "fraction": -0.1}, "data.pairs[0].response.fault.fraction"),
        pytest.param({"type": "emptyResponse", "chunks": 1}, "data.pairs[0].response.fault.chunks", id="foreign"),
        pytest.param([], "data.pairs[0].response.fault", id="not-an-object"),
    ],
)
def test_a_bad_fault_is_a_simulation_error_naming_its_place(fault: Any, path: str) -> None:
    """The schema refuses these at upload; the codec refuses them too (a stored form read back)."""
    with pytest.raises(SimulationError) as caught:
        decode_simulation({"pairs": [pair(fault=fault)]})
    assert caught.value.path == path


def test_a_bad_global_pattern_is_refused_when_compiled_naming_its_place() -> None:
    sim = decode_simulation(
        _rules(
            {"urlPattern": ".", "fault": {"type": "emptyResponse"}},
            {"urlPattern": "(", "fault": {"type": "emptyResponse"}},
        )
    )
    with pytest.raises(SimulationError) as caught:
        compile_simulation(sim, REGISTRY)
    assert caught.value.path == "data.globalActions.faults[1].urlPattern"


# -- which fault an answer gets ---------------------------------------------------------------------------


def test_the_first_global_rule_that_applies_gives_the_fault_and_a_pairs_own_wins() -> None:
    reset = {"type": "connectionReset"}
    sim = decode_simulation(
        _rules(
            {"urlPattern": "api\\.test/first", "httpMethod": "post", "fault": reset},
            {"urlPattern": "api\\.test", "fault": {"type": "emptyResponse"}},
        )
    )
    rules = compile_simulation(sim, REGISTRY).faults
    assert global_fault(rules, "api.test", "/first", "POST") == Fault(FaultKind.CONNECTION_RESET)
    assert global_fault(rules, "api.test", "/first", "GET") == Fault(FaultKind.EMPTY_RESPONSE)
    assert global_fault(rules, "other.test", "/first", "POST") is None
    plain = render_wire(Response(body=b"ok"), "test")
    assert with_global_fault(rules, request("/x", destination="api.test"), plain).fault == Fault(
        FaultKind.EMPTY_RESPONSE
    )
    own = render_wire(Response(body=b"ok", fault=Fault(FaultKind.DRIBBLE, chunks=1)), "test")
    assert with_global_fault(rules, request("/x", destination="api.test"), own) is own


def test_the_fraction_is_the_probability_a_request_gets_the_fault() -> None:
    rng = random.Random(7)
    assert all(rolled(Fault(FaultKind.EMPTY_RESPONSE), rng) for _ in range(100))
    assert not any(rolled(Fault(FaultKind.EMPTY_RESPONSE, fraction=0), rng) for _ in range(100))
    hits = sum(rolled(Fault(FaultKind.EMPTY_RESPONSE, fraction=0.3), rng) for _ in range(10_000))
    assert 2700 < hits < 3300


# -- what the server writes -----------------------------------------------------------------------------


def test_random_data_is_never_taken_for_an_http_answer() -> None:
    rng = random.Random(1)
    for _ in range(300):
        data = random_data(rng)
        assert 256 <= len(data) <= 2048 and data[:1] != b"H"


def test_a_malformed_chunk_follows_a_head_declaring_a_chunked_body() -> None:
    wire = render_wire(Response(status=200, body=b"abc", headers=(("X-A", ("1",)),)), "test")
    head = chunked_head(wire, b"Mon, 01 Jan 2024 00:00:00 GMT")
    assert head.startswith(b"HTTP/1.1 200 OK\r\nX-A: 1\r\n") and head.endswith(b"\r\n\r\n")
    assert b"Transfer-Encoding: chunked\r\n" in head and b"Content-Length" not in head
    assert b"Connection: close\r\n" in head
    assert not NOT_A_CHUNK.split(b"\r\n")[0].isdigit()


class _Recorder:
    """A transport that notes when each write came, for the timed faults."""

    def __init__(self) -> None:
        self.writes: list[tuple[float, bytes]] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.writes.append((asyncio.get_running_loop().time(), bytes(data)))

    def is_closing(self) -> bool:
        return self.closing


def _t(recorder: _Recorder) -> asyncio.Transport:
    return cast(asyncio.Transport, recorder)


async def _room() -> bool:
    return True


def test_dribble_spreads_the_pieces_over_the_duration() -> None:
    async def run() -> tuple[float, _Recorder]:
        out = _Recorder()
        start = asyncio.get_running_loop().time()
        assert await dribble(_t(out), b"HEAD", b"0123456789", 5, 0.25, _room)
        return start, out

    start, out = asyncio.run(run())
    assert [data for _, data in out.writes] == [b"HEAD", b"01", b"23", b"45", b"67", b"89"]
    assert out.writes[0][0] - start < 0.03 and out.writes[-1][0] - start >= 0.24


def test_a_body_shorter_than_its_chunks_still_ends_after_the_duration() -> None:
    async def run() -> tuple[float, _Recorder]:
        out = _Recorder()
        start = asyncio.get_running_loop().time()
        assert await dribble(_t(out), b"H", b"ab", 10, 0.2, _room)
        return start, out

    start, out = asyncio.run(run())
    assert [data for _, data in out.writes] == [b"H", b"a", b"b"]
    assert out.writes[-1][0] - start >= 0.19


def test_pacing_never_bursts_to_catch_up_after_the_client_stopped_reading() -> None:
    rate = 20_000
    waits = iter([0.0, 0.3])

    async def room() -> bool:
        await asyncio.sleep(next(waits, 0.0))
        return True

    async def run() -> _Recorder:
        out = _Recorder()
        assert await paced(_t(out), b"x" * 10_000, rate, room)
        return out

    out = asyncio.run(run())
    assert b"".join(data for _, data in out.writes) == b"x" * 10_000
    first, last = out.writes[0], out.writes[-1]
    sent_after_first = sum(len(data) for _, data in out.writes[1:])
    assert sent_after_first / (last[0] - first[0]) <= rate * 1.1  # never faster than the rate
    assert last[0] - first[0] >= 0.3 + 0.45 - 0.05  # the 0.3 s wait came on top of the schedule


def test_a_timed_fault_stops_quietly_once_the_connection_is_gone() -> None:
    async def run() -> tuple[bool, _Recorder]:
        out = _Recorder()

        async def gone() -> bool:
            out.closing = True
            return False

        return await paced(_t(out), b"x" * 1000, 100_000, gone), out

    sent, out = asyncio.run(run())
    assert not sent and out.writes == []
