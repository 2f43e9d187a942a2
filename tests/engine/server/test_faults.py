"""Faults in the simulation format (codec, storage form, global rules) and how the server writes them."""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any, cast

import orjson
import pytest

from simproxy.engine.errors import SimulationError
from simproxy.engine.matching.scoring import compile_simulation
from simproxy.engine.modes.dispatch import with_fault_decided
from simproxy.engine.server.faults import (
    NOT_A_CHUNK,
    chunked_head,
    dribble,
    paced,
    random_data,
    reset_when_delivered,
    write_fault,
)
from simproxy.engine.simulation.codec import decode_simulation, export_simulation, storage_simulation
from simproxy.engine.simulation.faults import global_fault, rolled
from simproxy.engine.simulation.model import MAX_CHUNKS, Fault, FaultKind, GlobalFault, Response
from simproxy.engine.wire.response import render_wire
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
        pytest.param({"type": "dribble", "chunks": 0, "durationMs": 1}, "data.pairs[0].response.fault.chunks"),
        pytest.param(
            {"type": "dribble", "chunks": MAX_CHUNKS + 1, "durationMs": 1},
            "data.pairs[0].response.fault.chunks",
            id="too-many-chunks",
        ),
        pytest.param(
            {"type": "dribble", "chunks": 1, "durationMs": 1e20},
            "data.pairs[0].response.fault.durationMs",
            id="duration-beyond-int32",
        ),
        pytest.param({"type": "bandwidth", "bytesPerSecond": True}, "data.pairs[0].response.fault.bytesPerSecond"),
        pytest.param(
            {"type": "bandwidth", "bytesPerSecond": 2**64},
            "data.pairs[0].response.fault.bytesPerSecond",
            id="rate-beyond-64-bits",
        ),
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


@pytest.mark.parametrize(
    ("kind", "parameters", "wrong"),
    [
        pytest.param(FaultKind.BANDWIDTH, {}, "bytesPerSecond", id="no-rate"),
        pytest.param(FaultKind.DRIBBLE, {"duration_ms": 10}, "chunks", id="no-pieces"),
        pytest.param(FaultKind.DRIBBLE, {"chunks": MAX_CHUNKS + 1}, "chunks", id="too-many-pieces"),
        pytest.param(FaultKind.DRIBBLE, {"chunks": 1, "duration_ms": -1}, "durationMs", id="negative-duration"),
        pytest.param(FaultKind.EMPTY_RESPONSE, {"fraction": 1.5}, "fraction", id="fraction-above-1"),
    ],
)
def test_a_fault_that_could_not_be_written_is_refused_when_made(
    kind: FaultKind, parameters: dict[str, Any], wrong: str
) -> None:
    """The model refuses what the codec refuses, for a fault made in code: a bandwidth of 0 would
    divide by zero when written, a dribble of no pieces would send no body."""
    with pytest.raises(ValueError, match=wrong):
        Fault(kind, **parameters)
    assert Fault(FaultKind.DRIBBLE, chunks=MAX_CHUNKS, duration_ms=0).chunks == MAX_CHUNKS
    assert Fault(FaultKind.BANDWIDTH, bytes_per_second=1, fraction=0).fraction == 0


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


class Rolls(random.Random):
    """A random source that counts the rolls and gives the values it is handed, in turn."""

    def __init__(self, *values: float) -> None:
        super().__init__(0)
        self.values = list(values)
        self.rolls = 0

    def random(self) -> float:
        self.rolls += 1
        return self.values.pop(0) if self.values else 0.0


def test_the_first_global_rule_that_applies_gives_the_fault_and_a_pairs_own_wins() -> None:
    reset = {"type": "connectionReset"}
    sim = decode_simulation(
        _rules(
            {"urlPattern": "api\\.test/first", "httpMethod": "post", "fault": reset},
            {"urlPattern": "api\\.test", "fault": {"type": "emptyResponse"}},
        )
    )
    rules = compile_simulation(sim, REGISTRY).faults
    rng = random.Random(3)
    assert global_fault(rules, "api.test", "/first", "POST", rng) == Fault(FaultKind.CONNECTION_RESET)
    assert global_fault(rules, "api.test", "/first", "GET", rng) == Fault(FaultKind.EMPTY_RESPONSE)
    assert global_fault(rules, "other.test", "/first", "POST", rng) is None
    plain = render_wire(Response(body=b"ok"), "test")
    assert with_fault_decided(rules, request("/x", destination="api.test"), plain, rng).fault == Fault(
        FaultKind.EMPTY_RESPONSE
    )
    own = render_wire(Response(body=b"ok", fault=Fault(FaultKind.DRIBBLE, chunks=1)), "test")
    assert with_fault_decided(rules, request("/x", destination="api.test"), own, rng) is own


def test_a_global_fraction_is_rolled_once_where_the_rule_applies() -> None:
    """The dispatcher rolls a global fault's fraction: a spared answer is the plain wire (written on
    the fast path), a chosen one carries the fault as certain, so the server does not roll again."""
    sim = decode_simulation(_rules({"urlPattern": "api", "fault": {"type": "emptyResponse", "fraction": 0.3}}))
    rules = compile_simulation(sim, REGISTRY).faults
    plain = render_wire(Response(body=b"ok"), "test")
    rng = Rolls(0.9, 0.1)
    assert with_fault_decided(rules, request("/x", destination="api.test"), plain, rng) is plain
    chosen = with_fault_decided(rules, request("/x", destination="api.test"), plain, rng)
    assert chosen.fault == Fault(FaultKind.EMPTY_RESPONSE) and chosen.fault.fraction == 1
    assert with_fault_decided(rules, request("/x", destination="elsewhere.test"), plain, rng) is plain
    assert rng.rolls == 2  # none where no rule applies
    assert rolled(cast(Fault, chosen.fault), rng) and rng.rolls == 2  # a chosen fault takes no second roll


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
    """A transport that notes when each write came, for the timed faults (``log`` is shared with
    whatever else runs meanwhile)."""

    def __init__(self, log: list[Any] | None = None) -> None:
        self.writes: list[tuple[float, bytes]] = []
        self.log = log if log is not None else []
        self.closing = False
        self.aborted = False
        self.buffered = 0
        self.limits: tuple[int, int] | None = None

    def write(self, data: bytes) -> None:
        self.writes.append((asyncio.get_running_loop().time(), bytes(data)))
        self.log.append(("write", len(data)))

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = self.aborted = True
        self.log.append("abort")

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def set_write_buffer_limits(self, high: int, low: int) -> None:
        self.limits = (high, low)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


def _t(recorder: _Recorder) -> asyncio.Transport:
    return cast(asyncio.Transport, recorder)


async def _room() -> bool:
    return True


def _bodies(out: _Recorder) -> list[bytes]:
    return [data for _, data in out.writes[1:]]


def test_dribble_spreads_the_pieces_over_the_duration() -> None:
    """The head at once, then pieces of whole chunks, the last not before the duration. (Only lower
    bounds on the times: a loaded machine may write later, and then writes the pieces due at once.)"""

    async def run() -> tuple[float, _Recorder]:
        out = _Recorder()
        start = asyncio.get_running_loop().time()
        task = asyncio.ensure_future(dribble(_t(out), b"HEAD", b"0123456789", 5, 0.25, _room, asyncio.Event()))
        await asyncio.sleep(0)
        assert [data for _, data in out.writes] == [b"HEAD"]  # before any wait
        assert await task
        return start, out

    start, out = asyncio.run(run())
    assert b"".join(_bodies(out)) == b"0123456789" and all(len(piece) % 2 == 0 for piece in _bodies(out))
    sent = 0
    for when, piece in out.writes[1:]:
        sent += len(piece)
        assert when - start >= 0.25 * sent / 10 - 0.01  # never before its last piece is due
    assert out.writes[-1][0] - start >= 0.24


def test_a_body_shorter_than_its_chunks_still_ends_after_the_duration() -> None:
    async def run() -> tuple[float, _Recorder]:
        out = _Recorder()
        start = asyncio.get_running_loop().time()
        assert await dribble(_t(out), b"H", b"ab", 10, 0.2, _room, asyncio.Event())
        return start, out

    start, out = asyncio.run(run())
    assert out.writes[0][1] == b"H" and b"".join(_bodies(out)) == b"ab" and len(_bodies(out)) <= 2
    assert out.writes[-1][0] - start >= 0.19


def test_without_a_body_the_dribbled_head_comes_after_the_duration() -> None:
    """An empty body, or a HEAD: the answer is complete with its head, so the head waits."""

    async def run() -> tuple[float, _Recorder]:
        out = _Recorder()
        start = asyncio.get_running_loop().time()
        assert await dribble(_t(out), b"HEAD", b"", 5, 0.2, _room, asyncio.Event())
        return start, out

    start, out = asyncio.run(run())
    assert [data for _, data in out.writes] == [b"HEAD"]
    assert out.writes[0][0] - start >= 0.19


def test_a_dribble_of_many_pieces_lets_the_other_connections_go_on() -> None:
    """10,000 pieces due at once (duration 0) go out in one write, after the loop has turned: a
    dribble never holds the worker for a write per piece."""
    body = bytes(range(256)) * 4096  # 1 MB

    async def run() -> list[Any]:
        log: list[Any] = []
        out = _Recorder(log)

        async def other_connection() -> None:
            log.append("other")

        other = asyncio.ensure_future(other_connection())
        assert await dribble(_t(out), b"HEAD", body, MAX_CHUNKS, 0, _room, asyncio.Event())
        await other
        assert b"".join(_bodies(out)) == body
        return log

    assert asyncio.run(run()) == [("write", 4), "other", ("write", len(body))]


@pytest.mark.parametrize("kind", ["dribble", "bandwidth"])
def test_a_timed_fault_ends_at_once_when_the_connection_is_lost(kind: str) -> None:
    """A client gone in the middle of a minute-long fault: the fault's task ends now, not after its
    pause (a worker keeps nothing for a client that left)."""

    async def run() -> tuple[bool, float, _Recorder]:
        out, lost = _Recorder(), asyncio.Event()
        if kind == "dribble":
            fault = dribble(_t(out), b"HEAD", b"x" * 10, 2, 60, _room, lost)
        else:
            fault = paced(_t(out), b"x" * 1000, 10, _room, lost)
        task = asyncio.ensure_future(fault)
        await asyncio.sleep(0.05)
        loop = asyncio.get_running_loop()
        lost_at = loop.time()
        lost.set()
        sent = await asyncio.wait_for(task, 5)
        return sent, loop.time() - lost_at, out

    sent, took, out = asyncio.run(run())
    assert not sent and took < 1
    assert len(out.writes) <= 1  # the head, or the first slice, at most


def test_pacing_never_bursts_to_catch_up_after_the_client_stopped_reading() -> None:
    rate = 20_000
    waits = iter([0.0, 0.3])

    async def room() -> bool:
        await asyncio.sleep(next(waits, 0.0))
        return True

    async def run() -> _Recorder:
        out = _Recorder()
        assert await paced(_t(out), b"x" * 10_000, rate, room, asyncio.Event())
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

        return await paced(_t(out), b"x" * 1000, 100_000, gone, asyncio.Event()), out

    sent, out = asyncio.run(run())
    assert not sent and out.writes == []


def test_a_reset_waits_until_the_answers_before_it_are_written() -> None:
    """What the transport still holds of the answers before a reset goes out first: the reset
    (an abort) comes once the buffer is empty."""

    async def run() -> list[Any]:
        out = _Recorder()
        out.buffered = 5_000_000
        read = asyncio.get_running_loop().create_future()

        async def room() -> bool:  # the protocol's: waits for resume_writing
            await read
            return True

        task = asyncio.ensure_future(reset_when_delivered(_t(out), room, asyncio.Event()))
        await asyncio.sleep(0.05)
        assert not out.aborted and out.limits == (1, 0)  # resume_writing only once the buffer is empty
        out.log.append("client read everything")
        out.buffered = 0
        read.set_result(None)
        await asyncio.wait_for(task, 5)
        return out.log

    assert asyncio.run(run()) == ["client read everything", "abort"]


class _Failing(_Recorder):
    def write(self, data: bytes) -> None:
        raise RuntimeError("the transport refused the write")


def test_a_fault_that_fails_to_write_aborts_the_connection_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    wire = render_wire(Response(body=b"ok"), "test")
    fault = Fault(FaultKind.MALFORMED_CHUNK)

    async def run(out: _Recorder) -> bool:
        return await write_fault(fault, _t(out), wire, True, False, b"date", random.Random(1), _room, asyncio.Event())

    failing = _Failing()
    with caplog.at_level(logging.ERROR, logger="simproxy.engine.server.faults"):
        assert not asyncio.run(run(failing))
    assert failing.aborted and "writing a malformedChunk fault failed" in caplog.text
    closing = _Recorder()
    closing.closing = True
    assert not asyncio.run(run(closing))
    assert closing.writes == [] and not closing.aborted  # a closing connection is left to close
