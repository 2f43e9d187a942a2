"""Playbooks of the order of answers on one connection: pipelining, answers that come later, the
requests read beyond ``max_pipelined``, errors behind answers still owed, and the close."""

from __future__ import annotations

from simproxy.engine.fleet.config import ProxyLimits
from simproxy.engine.server.flow import FEED_SLICE
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire, plain_error
from tests.engine.server.playbook import (
    LATER,
    Asked,
    Check,
    Closed,
    Complete,
    Conversation,
    Expect,
    ReadAll,
    Reading,
    Send,
    StopReading,
    get,
    ok,
    play,
    written,
)

FOUR = ProxyLimits(max_pipelined=4)


def _gets(first: int, count: int) -> bytes:
    return b"".join(get(f"/p?{n}") for n in range(first, first + count))


SLICE_REQUESTS = FEED_SLICE // len(get("/p?0"))
"""About as many of ``_gets``' requests as a slice of a read holds."""


def _taken_in(talk: Conversation) -> int:
    """The requests the connection has parsed: answered, owed, or waiting for their turn."""
    return len(talk.script.asked) + len(talk.protocol.answers.waiting)


def test_pipelined_answers_are_written_in_request_order_when_a_later_one_is_ready_first() -> None:
    play(
        Send(get("/one"), get("/two"), get("/three")),
        Asked("/one", "/two", "/three"),  # all asked at once: only the writing waits
        Complete("/three", ok("3")),
        Complete("/two", ok("22")),
        Expect(),  # nothing overtakes the first
        Complete("/one", ok("1")),
        Expect(written("1"), written("22"), written("3")),
        Closed(False),
        answers={"/one": LATER, "/two": LATER, "/three": LATER},
    )


def test_ready_answers_pipelined_in_one_read_are_written_in_order() -> None:
    """Moved here from tests/integration/test_startup.py: the last asks for the close."""
    play(
        Send(get("/one"), get("/two"), get("/one", "Connection: close")),
        Expect(written("1"), written("22"), written("1", close=True)),
        Closed(),
        answers={"/one": ok("1"), "/two": ok("22")},
    )


def test_requests_beyond_max_pipelined_are_not_asked_until_fewer_are_owed_and_reading_stops() -> None:
    play(
        Send(_gets(0, 10)),  # one read; no answer ready yet
        Asked("/p?0", "/p?1", "/p?2", "/p?3"),  # max_pipelined 4: the six others wait, unasked
        Reading(False),
        Complete("/p?0", ok("0")),
        Expect(written("0")),
        Asked("/p?0", "/p?1", "/p?2", "/p?3", "/p?4"),  # one more asked as one is written, oldest first
        Reading(False),  # reading goes on only once fewer than half are owed
        *(Complete(f"/p?{n}", ok(str(n))) for n in range(1, 10)),
        Expect(*(written(str(n)) for n in range(1, 10))),
        Asked(*(f"/p?{n}" for n in range(10))),
        Reading(True),
        answers={f"/p?{n}": LATER for n in range(10)},
        limits=FOUR,
    )


def test_a_long_read_is_parsed_no_further_than_a_hold_and_the_rest_follows_in_order() -> None:
    """Moved here from tests/engine/test_proxy_flow.py: a read of 400 requests (many ``FEED_SLICE``s)
    is parsed only until a hold comes (a full write buffer, or ``max_pipelined`` answers owed); the
    rest waits unparsed, and is parsed, in order, as the answers are written."""
    requests = _gets(0, 400)
    assert len(requests) > 3 * FEED_SLICE
    big = plain_error(200, "b" * 40_000)
    play(
        StopReading(),
        Send(requests),
        Reading(False),
        Check("the rest of the read waits, unparsed", lambda talk: len(talk.script.asked) < 400),
        Check("no more than a slice is taken in past the hold", lambda talk: _taken_in(talk) < 2 * SLICE_REQUESTS),
        ReadAll(),
        Expect(*(written(big.body) for _ in range(400))),
        Asked(*(f"/p?{n}" for n in range(400))),
        Reading(True),
        answers={f"/p?{n}": big for n in range(400)},
        limits=ProxyLimits(max_pipelined=8, write_buffer=64 * 1024),
    )
    play(
        Send(requests),
        Asked("/p?0", "/p?1", "/p?2", "/p?3"),  # the first one later: a hold in the first slice
        Reading(False),
        Check("no more than a slice is taken in past the hold", lambda talk: _taken_in(talk) < 2 * SLICE_REQUESTS),
        Complete("/p?0", ok("first")),
        Expect(written("first"), *(written(f"/p?{n}") for n in range(1, 400))),
        Asked(*(f"/p?{n}" for n in range(400))),
        Reading(True),
        answers={"/p?0": LATER},
        limits=FOUR,
    )


def test_a_request_that_fails_behind_answers_still_owed_is_answered_after_them_and_the_connection_closes() -> None:
    """Moved here from tests/integration/test_startup.py: garbage pipelined behind a request whose
    answer takes time is answered 400 after that answer, then the close (it once overtook it)."""
    play(
        Send(get("/slow"), b"this is not HTTP\r\n\r\n"),
        Expect(),
        Reading(False),  # nothing more is read from a connection that failed
        Complete("/slow", ok("worth the wait")),
        Expect(
            written("worth the wait"),
            written("Bad Request: Invalid method encountered\n", status="400 Bad Request", close=True),
        ),
        Closed(),
        answers={"/slow": LATER},
    )


def test_connection_close_ends_the_conversation_after_its_answer() -> None:
    play(
        Send(get("/last", "Connection: close"), get("/never")),
        Expect(written("/last", close=True)),
        Closed(),
        Asked("/last"),  # what came after it is not even asked
        Send(get("/again")),
        Expect(),
        Asked("/last"),
    )


def test_an_http_1_0_request_without_keep_alive_is_answered_and_closed() -> None:
    play(
        Send(b"GET http://h.test/old HTTP/1.0\r\nHost: h.test\r\n\r\n"),
        Expect(written("/old", close=True)),
        Closed(),
    )


def test_a_head_request_is_answered_without_the_body() -> None:
    play(
        Send(get("/page", method="HEAD"), get("/page")),
        Expect(written("the page", head_only=True), written("the page")),
        Closed(False),
        answers={"/page": ok("the page")},
    )


def test_a_request_whose_handling_raises_is_a_500_in_its_turn_and_the_connection_goes_on() -> None:
    def broken(_: RequestDetails) -> Wire:
        raise RuntimeError("a bug")

    play(
        Send(get("/first"), get("/broken"), get("/after")),
        Expect(
            written("1"), written("Internal error in simproxy\n", status="500 Internal Server Error"), written("/after")
        ),
        Closed(False),
        answers={"/first": ok("1"), "/broken": broken},
        logged=("request handling failed",),  # a bug, logged as one
    )
