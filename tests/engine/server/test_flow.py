"""Playbooks of what one client may hold of a connection: a client that does not read its answers,
the size of a request, and the time it may take to arrive or to come back."""

from __future__ import annotations

from simproxy.engine.fleet.config import ProxyLimits
from simproxy.engine.wire.response import plain_error
from tests.engine.server.playbook import (
    Asked,
    Check,
    Closed,
    Expect,
    ReadAll,
    Reading,
    Send,
    StopReading,
    Sweep,
    get,
    play,
    written,
)

BIG = plain_error(200, "b" * 40_000)
LIMITS = ProxyLimits(max_pipelined=8, write_buffer=64 * 1024)
SMALL = ProxyLimits(max_body=8, max_head=200, read_timeout=1.0, idle_timeout=2.0)


def _gets(count: int) -> bytes:
    return b"".join(get(f"/big?{n}") for n in range(count))


def test_a_client_that_does_not_read_its_answers_is_not_read_and_they_wait_then_flow_in_order() -> None:
    """Moved here from tests/engine/test_proxy_flow.py: 40 answers of 40 KB for a 64 KB buffer."""
    answers = {f"/big?{n}": BIG for n in range(40)}
    talk = play(
        StopReading(),
        Send(_gets(40)),
        Reading(False),  # its write buffer is full: the connection stops reading the client
        Check("the buffer holds one answer past its limit at most", lambda t: t.client.buffered <= 64 * 1024 + 40_200),
        Check("answers are asked no further ahead than max_pipelined", lambda t: len(t.script.asked) <= 8 + 2),
        ReadAll(),
        Expect(*(written(BIG.body) for _ in range(40))),
        Reading(True),
        Asked(*answers),
        answers=answers,
        limits=LIMITS,
    )
    assert len(talk.script.told) == 40


def test_the_connection_pauses_and_resumes_with_the_clients_reading() -> None:
    """Flow control, answer by answer: an answer that fills the buffer stops the reading, and the
    answers owed meanwhile wait for room; once the client reads, they are written and it is read."""
    play(
        StopReading(),
        Send(get("/big")),
        Expect(written(BIG.body)),  # written whole: the buffer fills past its mark only with it
        Reading(False),
        Send(get("/small")),  # a read that was already on its way: kept, not parsed
        Expect(),
        Asked("/big"),
        ReadAll(),
        Expect(written("/small")),
        Reading(True),
        answers={"/big": BIG},
        limits=ProxyLimits(write_buffer=16 * 1024),
    )


def test_a_body_over_max_body_is_413_and_the_connection_closes() -> None:
    play(
        Send(get("/fits", method="POST", body=b"12345678")),
        Expect(written("/fits")),
        Send(get("/over", method="POST", body=b"123456789")),
        Expect(written("request body larger than 8 bytes\n", status="413 Request Entity Too Large", close=True)),
        Closed(),
        Asked("/fits"),
        limits=SMALL,
    )


def test_a_head_over_max_head_is_431_even_when_it_comes_a_few_bytes_at_a_time() -> None:
    head = get("/p", "X-Long: " + "y" * 300)
    play(
        *(Send(head[n : n + 10]) for n in range(0, 250, 10)),
        Expect(
            written(
                "request target and headers larger than 200 bytes\n",
                status="431 Request Header Fields Too Large",
                close=True,
            )
        ),
        Closed(),
        Asked(),
        limits=SMALL,
    )


def test_a_request_that_stalls_is_408_at_the_sweep_after_read_timeout() -> None:
    play(
        Send(b"GET http://h.test/p HTTP/1.1\r\nHost: h.test\r\n"),  # its head never ends
        Sweep(100.0),
        Sweep(100.9),
        Expect(),
        Closed(False),
        Sweep(101.1),
        Expect(
            written("Request Timeout: the request did not arrive in time\n", status="408 Request Timeout", close=True)
        ),
        Closed(),
        limits=SMALL,
    )


def test_an_idle_connection_is_closed_and_one_still_owed_answers_is_not() -> None:
    play(
        Send(get("/p")),
        Expect(written("/p")),
        Sweep(100.0),
        Sweep(102.5),
        Expect(),  # closed without a word
        Closed(),
        limits=SMALL,
    )
    play(
        StopReading(),
        Send(get("/big")),
        Expect(written(BIG.body)),
        Sweep(100.0),
        Sweep(101.9),
        Closed(False),  # an answer the client has not read for less than idle_timeout
        Sweep(102.1),
        Closed(True, aborted=True),  # nor read for longer: its buffers are bounded, its descriptor is not
        answers={"/big": BIG},
        limits=ProxyLimits(write_buffer=16 * 1024, idle_timeout=2.0),
    )


def test_a_request_that_expects_100_continue_gets_it_once_its_head_is_read_and_before_its_answer() -> None:
    head = b"POST http://h.test/up HTTP/1.1\r\nHost: h.test\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"
    talk = play(
        Send(head[:30]),
        Expect(),
        Send(head[30:]),
        Expect(b"HTTP/1.1 100 Continue\r\n\r\n"),  # the client sends its body only now
        Send(b"data"),
        Expect(written("/up")),
        Send(get("/p", "Expect: something-else", method="POST", body=b"1")),
        Expect(written("/p")),
    )
    assert talk.script.asked[0].body == "data"
