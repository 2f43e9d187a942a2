"""Flow control of one proxy connection, against a transport that stands for a client: what it is sent,
and whether it is read, as the client reads its answers or does not."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from types import SimpleNamespace
from typing import Any

from simproxy.engine.fleet.config import ProxyLimits
from simproxy.engine.server.flow import FEED_SLICE
from simproxy.engine.server.listener import ProxyServer
from simproxy.engine.server.protocol import ProxyProtocol
from simproxy.engine.server.tunnel import split_authority
from simproxy.engine.wire.response import Wire, plain_error

LIMITS = ProxyLimits(max_pipelined=8, write_buffer=64 * 1024)
BIG = plain_error(200, "b" * 40_000)


class Client:
    """A transport whose far end reads only when told to (``read``), with asyncio's write flow control."""

    def __init__(self, protocol: ProxyProtocol) -> None:
        self.protocol = protocol
        self.buffered = 0
        self.received = bytearray()
        self.reading = True
        self.high, self.low = 64 * 1024, 16 * 1024
        self.paused = False
        self.closed = False
        protocol.connection_made(self)  # type: ignore[arg-type]

    def set_write_buffer_limits(self, high: int, low: int) -> None:
        self.high, self.low = high, low

    def write(self, data: bytes) -> None:
        self.received += data
        self.buffered += len(data)
        if self.buffered > self.high and not self.paused:
            self.paused = True
            self.protocol.pause_writing()

    def read(self) -> None:
        """The client reads everything sent so far."""
        self.buffered = 0
        if self.paused:
            self.paused = False
            self.protocol.resume_writing()

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def answers(self) -> list[bytes]:
        """The bodies of the answers sent so far, in order."""
        return [part.split(b"\r\n\r\n", 1)[1] for part in bytes(self.received).split(b"HTTP/1.1 ")[1:]]


def _engine(answer: Callable[[Any], Any]) -> Any:
    handled: list[str] = []

    def handle(req: Any) -> Any:
        handled.append(req.raw_query)
        return answer(req)

    return SimpleNamespace(
        webserver=False, handle=handle, handled=handled,
        served=lambda *_: None, intercepts=lambda _: True,
    )  # fmt: skip


def _run(answer: Callable[[Any], Any], scenario: Callable[[Any, Client], Coroutine[Any, Any, None]]) -> None:
    async def main() -> None:
        engine = _engine(answer)
        server = ProxyServer(engine, port=1, limits=LIMITS)
        client = Client(ProxyProtocol(server.state))
        await scenario(engine, client)
        await server.tasks.aclose()

    asyncio.run(main())


def _requests(first: int, count: int) -> bytes:
    return b"".join(b"GET http://h/p?%d HTTP/1.1\r\nHost: h\r\n\r\n" % n for n in range(first, first + count))


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_requests_beyond_max_pipelined_wait_unanswered_until_fewer_are_owed() -> None:
    pending: dict[str, asyncio.Future[Wire]] = {}

    def later(req: Any) -> asyncio.Future[Wire]:
        pending[req.raw_query] = asyncio.get_running_loop().create_future()
        return pending[req.raw_query]

    async def scenario(engine: Any, client: Client) -> None:
        client.protocol.data_received(_requests(0, 30))  # one read, its answers still to come
        assert len(engine.handled) == 8 and not client.reading
        for n in range(30):
            pending[str(n)].set_result(plain_error(200, str(n)))
            await _settle()
        assert client.answers() == [str(n).encode() for n in range(30)] and client.reading
        assert engine.handled == [str(n) for n in range(30)]

    _run(later, scenario)


def test_a_client_that_does_not_read_is_not_read_and_its_answers_wait() -> None:
    async def scenario(engine: Any, client: Client) -> None:
        client.protocol.data_received(_requests(0, 40))  # 40 answers of 40 KB, the buffer takes 64 KB
        await _settle()
        assert not client.reading and client.buffered <= LIMITS.write_buffer + len(BIG.body) + 200
        assert len(engine.handled) <= LIMITS.max_pipelined + 2
        while not client.reading:
            client.read()
            await _settle()
        assert len(client.answers()) == len(engine.handled) == 40

    _run(lambda _: BIG, scenario)


def test_a_long_read_is_parsed_no_further_than_a_hold() -> None:
    async def scenario(engine: Any, client: Client) -> None:
        requests = _requests(0, 400)  # many slices of FEED_SLICE bytes
        assert len(requests) > 3 * FEED_SLICE
        client.protocol.data_received(requests)
        await _settle()
        first = len(engine.handled)
        assert first < 400 and not client.reading  # the rest of the read waits, unparsed
        while len(client.answers()) < 400:
            client.read()
            await _settle()
        client.read()
        assert engine.handled == [str(n) for n in range(400)] and client.reading

    _run(lambda _: BIG, scenario)


def test_connect_targets() -> None:
    assert split_authority("api.example.com:8443") == ("api.example.com", 8443)
    assert split_authority("api.example.com") == ("api.example.com", 443)
    # Go's client through a proxy may send an absolute URI: its host, and its scheme's port
    assert split_authority("http://hoverfly.io/") == ("hoverfly.io", 80)
    assert split_authority("https://api.example.com:8443/x") == ("api.example.com", 8443)
    assert split_authority("http://[::1]/") == ("::1", 80)
    assert split_authority("ftp://files.example.com/") is None
    assert split_authority("10.0.0.1:1") == ("10.0.0.1", 1)
    assert split_authority("[::1]:65535") == ("::1", 65535)
    assert split_authority("[2001:db8::1]") == ("2001:db8::1", 443)
    for malformed in ("", "::::", "::1", ":443", "host:", "host:0", "host:65536", "host:+80", "host:1:2", "[::1"):
        assert split_authority(malformed) is None, malformed
    for malformed in ("[::1]x", "[::1]:", "[v1.x]:443", "[host]:443", "user@host:443", "host/path:443", "h st:1"):
        assert split_authority(malformed) is None, malformed
