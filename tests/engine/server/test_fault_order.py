"""Playbooks of answers with a fault (engine/server/faults.py) among pipelined ones: each is written
in its turn, those before it first, and the answers after a timed one wait for it."""

from __future__ import annotations

from dataclasses import replace

from simproxy.engine.fleet.config import ProxyLimits
from simproxy.engine.modes.dispatch import with_fault_decided
from simproxy.engine.server.faults import NOT_A_CHUNK
from simproxy.engine.simulation.model import Fault, FaultKind
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire
from tests.engine.server.playbook import (
    DATE,
    LATER,
    Asked,
    Check,
    Closed,
    Complete,
    Expect,
    ReadAll,
    Send,
    StopReading,
    get,
    ok,
    play,
    written,
)
from tests.engine.server.test_faults import Rolls


def _faulty(body: str, kind: FaultKind, **parameters: int) -> Wire:
    return replace(ok(body), fault=Fault(kind, **parameters))


def test_a_dribble_at_the_head_of_the_queue_is_written_whole_before_the_answer_after_it() -> None:
    """Moved here from tests/integration/test_faults.py, without a clock to race: the client stops
    reading, so the dribble waits for room after its head, and the ready answer after it waits too."""
    dribble = _faulty("DDDD", FaultKind.DRIBBLE, chunks=4, duration_ms=40)
    play(
        StopReading(),
        Send(get("/dribble"), get("/plain")),
        Expect(written("DDDD", head_only=True)),  # the head at once; it fills the buffer
        Asked("/dribble", "/plain"),  # the next answer is ready, and waits all the same
        ReadAll(),
        Expect(written("DDDD")[-4:], written("/plain")),  # the pieces, then the next answer
        Closed(False),
        answers={"/dribble": dribble},
        limits=ProxyLimits(write_buffer=16),
    )


def test_a_reset_comes_after_the_answers_before_it_and_nothing_after_it_is_written() -> None:
    play(
        Send(get("/first"), get("/reset"), get("/never")),
        Expect(written("/first")),
        Closed(True, aborted=True),
        Asked("/first", "/reset", "/never"),
        answers={"/reset": _faulty("r", FaultKind.CONNECTION_RESET)},
    )


def test_an_empty_response_waits_for_the_answer_owed_before_it_then_closes() -> None:
    play(
        Send(get("/slow"), get("/empty"), get("/never")),
        Expect(),
        Closed(False),  # the fault's turn has not come
        Complete("/slow", ok("slow")),
        Expect(written("slow")),  # and nothing for the empty one
        Closed(),
        answers={"/slow": LATER, "/empty": _faulty("e", FaultKind.EMPTY_RESPONSE)},
    )


def test_a_malformed_chunk_at_the_head_of_the_queue_breaks_off_the_connection() -> None:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nDate: {DATE}\r\n"
    play(
        Send(get("/broken"), get("/never")),
        Expect((head + "Connection: close\r\n\r\n").encode() + NOT_A_CHUNK),
        Closed(),
        answers={"/broken": _faulty("b", FaultKind.MALFORMED_CHUNK)},
    )


def test_an_answer_its_fraction_spares_is_written_at_once_like_any_other() -> None:
    """Moved here from test_faults.py. A spared answer is written as the request is
    read, as an answer without a fault is (no turn in the queue, no task); an answer that gets its
    fault is written as the fault asks."""
    rolls = Rolls(0.9, 0.1)
    wire = replace(ok("ok"), fault=Fault(FaultKind.EMPTY_RESPONSE, fraction=0.5))

    def rolled(req: RequestDetails) -> Wire:
        return with_fault_decided((), req, wire, rolls)

    play(
        Send(get("/p")),
        Check("written as it is read", lambda t: bytes(t.client.written) == written("ok"), at_once=True),
        Check("no task waits to write it", lambda t: len(t.state.tasks) == 0, at_once=True),
        Expect(written("ok")),
        Send(get("/p")),
        Expect(),  # the second got its fault: closed, nothing sent
        Closed(),
        answers={"/p": rolled},
        rng=rolls,
    )
    assert rolls.rolls == 2


def test_every_answer_is_rolled_once_pipelined_or_not() -> None:
    """Moved here from test_faults.py: pipelined answers, queued behind the first, are
    rolled once each, as a lone one is, so the share of requests that get the fault is the fraction."""
    rolls = Rolls(0.9, 0.9, 0.9, 0.9)
    wire = replace(ok("ok"), fault=Fault(FaultKind.EMPTY_RESPONSE, fraction=0.5))

    def rolled(req: RequestDetails) -> Wire:
        return with_fault_decided((), req, wire, rolls)

    play(
        StopReading(),  # the client does not read yet: the answers queue
        Send(get("/p"), get("/p"), get("/p")),
        ReadAll(),
        Expect(written("ok"), written("ok"), written("ok")),
        Send(get("/p")),
        Expect(written("ok")),
        Closed(False),
        answers={"/p": rolled},
        rng=rolls,
        limits=ProxyLimits(write_buffer=16),
    )
    assert rolls.rolls == 4
