"""Playbooks: a scripted conversation with one proxy connection, without a socket.

A playbook is a list of steps played in order against a ``ProxyProtocol`` on a transport that
stands for the client (``Client``) and a dispatcher that answers from a table (``Script``): what the
client sends (``Send``), what the connection must have written by then (``Expect``), whether it
closed or reads its client, what the dispatcher was asked, an answer completed later
(``Complete``), a client that stops reading its answers and reads them again, the sweep of
timeouts. A step that finds what it did not expect fails the test, naming itself and its place.

    play(
        Send(get("/1"), get("/2")),
        Complete("/2", ok("two")),
        Expect(),  # the second answer waits for the first
        Complete("/1", ok("one")),
        Expect(written("one"), written("two")),
        answers={"/1": LATER, "/2": LATER},
    )

Nothing waits on a clock but the faults that are made of time (a dribble): ``Expect`` waits for
the bytes it wants as they are written, at most ``WAIT`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any, cast

from simproxy.engine.fleet.config import ProxyLimits
from simproxy.engine.server.certs import CertificateAuthority, Interception
from simproxy.engine.server.protocol import ProxyProtocol
from simproxy.engine.server.state import HttpDate, ServerState
from simproxy.engine.wire.request import Received, RequestDetails
from simproxy.engine.wire.response import Wire, plain_error

CLOCK = 1_700_000_000.0
DATE = formatdate(CLOCK, usegmt=True)
"""Every answer's ``Date``: the connection's clock stands still."""
PORT = 8500
WAIT = 2.0
"""Seconds ``Expect`` waits at most for bytes still to come (a dribble's)."""
TURNS = 10
"""Turns of the event loop every step lets pass first: what is ready has been written by then."""
LATER = "later"
"""An answer the dispatcher owes until a ``Complete`` step gives it."""

Answer = Wire | str | Callable[[RequestDetails], Wire]


def get(
    target: str, *headers: str, method: str = "GET", host: str = "h.test", body: bytes = b"", origin: bool = False
) -> bytes:
    """A request through the proxy for ``http://{host}{target}``, with ``headers`` (``"Name: value"``)
    and ``body``; ``origin``: for ``target`` alone, as inside a tunnel."""
    lines = [f"{method} {target if origin else f'http://{host}{target}'} HTTP/1.1", f"Host: {host}", *headers]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def ok(body: str) -> Wire:
    """A plain-text ``200`` with ``body``."""
    return plain_error(200, body)


def written(body: str | bytes, *, status: str = "200 OK", close: bool = False, head_only: bool = False) -> bytes:
    """The bytes of a plain-text answer (``ok``, or one of the connection's own errors) as written."""
    data = body.encode() if isinstance(body, str) else body
    lines = [f"HTTP/1.1 {status}", "Content-Type: text/plain", f"Content-Length: {len(data)}", f"Date: {DATE}"]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (b"" if head_only else data)


class Script:
    """The dispatcher: answers each request from ``answers`` by its target (``/path?query``): a wire,
    ``LATER`` (owed until ``Complete``), or a function of the request; a target not in the table is
    answered ``200`` with the target as its body."""

    def __init__(self, answers: Mapping[str, Answer], rng: random.Random, intercept: bool) -> None:
        self.answers = answers
        self.rng = rng
        self.webserver = False
        self.intercept = intercept
        self.asked: list[RequestDetails] = []
        self.told: list[tuple[Wire, Received]] = []
        """What the connection told of each answer it wrote (``served``), in order."""
        self.owed: dict[str, asyncio.Future[Wire]] = {}

    @staticmethod
    def target(req: RequestDetails) -> str:
        return f"{req.path}?{req.raw_query}" if req.raw_query else req.path

    def handle(self, req: RequestDetails) -> Wire | Coroutine[Any, Any, Wire]:
        self.asked.append(req)
        target = self.target(req)
        answer = self.answers.get(target, plain_error(200, target))
        if answer == LATER:
            self.owed[target] = asyncio.get_running_loop().create_future()
            return self._later(self.owed[target])
        return answer(req) if callable(answer) else cast(Wire, answer)

    @staticmethod
    async def _later(owed: asyncio.Future[Wire]) -> Wire:
        return await owed

    def served(self, wire: Wire, received: Received) -> None:
        self.told.append((wire, received))

    def intercepts(self, authority: str) -> bool:
        return self.intercept


class ProxyCredentials:
    """``-auth``: the ``Proxy-Authorization`` values in ``valid`` pass, after a check that takes a turn
    of the loop (a value that passed a moment ago passes at once, as with the real one)."""

    def __init__(self, *valid: str) -> None:
        self.valid = valid
        self.passed: set[str] = set()
        self.checked: list[str | None] = []

    def proxy_passed(self, header: str | None) -> bool:
        return header in self.passed

    async def proxy_check(self, header: str | None) -> str | None:
        self.checked.append(header)
        await asyncio.sleep(0)
        if header not in self.valid:
            return "407 Proxy Authentication Required"
        self.passed.add(header)
        return None


class Client:
    """The transport of the connection, as its client sees it: what was written, whether it closed,
    whether the connection reads it, and asyncio's flow control (``pause_writing`` past the high
    mark while the client does not read; ``resume_writing`` once it reads)."""

    def __init__(self, protocol: ProxyProtocol) -> None:
        self.protocol = protocol
        self.written = bytearray()
        self.buffered = 0
        self.high = 64 * 1024
        self.reads = True
        """The client reads what it is sent (else it stays in the buffer)."""
        self.paused = False
        self.reading = True
        """The connection reads the client."""
        self.closed = self.aborted = False
        self.grew = asyncio.Event()

    def set_write_buffer_limits(self, high: int, low: int) -> None:
        self.high = high

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default

    def write(self, data: bytes) -> None:
        self.written += data
        self.grew.set()
        if self.reads:
            return
        self.buffered += len(data)
        if self.buffered > self.high and not self.paused:
            self.paused = True
            self.protocol.pause_writing()

    def read_all(self) -> None:
        self.reads, self.buffered = True, 0
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
        self._lose()

    def abort(self) -> None:
        self.aborted = True
        self._lose()

    def _lose(self) -> None:
        if not self.closed:
            self.closed = True
            asyncio.get_running_loop().call_soon(self.protocol.connection_lost, None)


@dataclass
class Conversation:
    """One playbook being played: the connection, its client, its dispatcher."""

    script: Script
    state: ServerState
    protocol: ProxyProtocol
    client: Client
    seen: int = 0
    """Bytes written that an ``Expect`` has already accounted for."""
    errors: list[logging.LogRecord] = field(default_factory=list)

    async def settle(self) -> None:
        for _ in range(TURNS):
            await asyncio.sleep(0)


class Step:
    async def play(self, talk: Conversation) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class Send(Step):
    """The client sends ``requests``, in one read."""

    data: bytes

    def __init__(self, *requests: bytes) -> None:
        object.__setattr__(self, "data", b"".join(requests))

    async def play(self, talk: Conversation) -> None:
        talk.protocol.data_received(self.data)


@dataclass(frozen=True)
class Expect(Step):
    """The connection has written exactly ``answers`` since the last ``Expect`` (nothing: ``Expect()``)."""

    data: bytes

    def __init__(self, *answers: bytes) -> None:
        object.__setattr__(self, "data", b"".join(answers))

    async def play(self, talk: Conversation) -> None:
        client, want = talk.client, talk.seen + len(self.data)
        await talk.settle()
        with contextlib.suppress(TimeoutError):  # then what was written tells what is missing
            async with asyncio.timeout(WAIT):
                while len(client.written) < want:
                    client.grew.clear()
                    await client.grew.wait()
        await talk.settle()
        got = bytes(client.written[talk.seen :])
        talk.seen = len(client.written)
        assert got == self.data, f"written:\n{got!r}\nexpected:\n{self.data!r}"


@dataclass(frozen=True)
class Closed(Step):
    """The connection closed (``aborted``: at once, with nothing more sent); or is still open."""

    closed: bool = True
    aborted: bool = False

    async def play(self, talk: Conversation) -> None:
        await talk.settle()
        assert (talk.client.closed, talk.client.aborted) == (self.closed, self.aborted)


@dataclass(frozen=True)
class Reading(Step):
    """The connection reads its client (or has stopped: ``Reading(False)``)."""

    reading: bool = True

    async def play(self, talk: Conversation) -> None:
        await talk.settle()
        assert talk.client.reading is self.reading


@dataclass(frozen=True)
class Asked(Step):
    """The dispatcher has been asked for exactly these targets so far, in this order."""

    targets: tuple[str, ...]

    def __init__(self, *targets: str) -> None:
        object.__setattr__(self, "targets", targets)

    async def play(self, talk: Conversation) -> None:
        await talk.settle()
        assert tuple(map(Script.target, talk.script.asked)) == self.targets


@dataclass(frozen=True)
class Complete(Step):
    """The answer the dispatcher owes for ``target`` (``LATER``) is ready now."""

    target: str
    wire: Wire

    async def play(self, talk: Conversation) -> None:
        await talk.settle()
        assert self.target in talk.script.owed, f"{self.target} was not asked for"
        talk.script.owed.pop(self.target).set_result(self.wire)


@dataclass(frozen=True)
class StopReading(Step):
    """The client stops reading its answers: what is written from now on stays in the buffer."""

    async def play(self, talk: Conversation) -> None:
        talk.client.reads = False


@dataclass(frozen=True)
class ReadAll(Step):
    """The client reads what waits for it, and everything written from now on."""

    async def play(self, talk: Conversation) -> None:
        await talk.settle()
        talk.client.read_all()


@dataclass(frozen=True)
class Sweep(Step):
    """The sweep of timeouts looks at the connection, ``at`` seconds on its clock."""

    at: float

    async def play(self, talk: Conversation) -> None:
        await talk.settle()
        talk.protocol.check_timeouts(self.at, talk.state.limits)


@dataclass(frozen=True)
class Check(Step):
    """Anything else the playbook wants true at this point (``what`` says what, on failure); ``at_once``:
    before the loop turns, as the step before it left the connection."""

    what: str
    holds: Callable[[Conversation], bool]
    at_once: bool = False

    async def play(self, talk: Conversation) -> None:
        if not self.at_once:
            await talk.settle()
        assert self.holds(talk), self.what


class _Errors(logging.Handler):
    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__(logging.ERROR)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record)


def play(
    *steps: Step,
    answers: Mapping[str, Answer] | None = None,
    limits: ProxyLimits | None = None,
    auth: ProxyCredentials | None = None,
    plain_http_tunneling: bool = False,
    ca: bool = True,
    intercept: bool = True,
    rng: random.Random | None = None,
    logged: tuple[str, ...] = (),
) -> Conversation:
    """Play ``steps`` against a new connection; the conversation, for what the test asks of it after.
    The errors the connection logs (a bug, a failed task) must be ``logged``, no more, no fewer."""

    async def main() -> Conversation:
        script = Script(answers or {}, rng or random.Random(1), intercept)
        state = ServerState(
            script,
            limits or ProxyLimits(),
            PORT,
            internal_error=plain_error(500, "Internal error in simproxy\n"),
            max_connections=16,
            note_answered=lambda: None,
            tls=Interception(_no_ca) if ca else None,
            auth=auth,
            plain_http_tunneling=plain_http_tunneling,
            date=HttpDate(clock=lambda: CLOCK),
        )
        protocol = ProxyProtocol(state)
        client = Client(protocol)
        talk = Conversation(script, state, protocol, client)
        handler = _Errors(talk.errors)
        logging.getLogger("simproxy").addHandler(handler)
        try:
            protocol.connection_made(cast(asyncio.Transport, client))
            for number, step in enumerate(steps, 1):
                try:
                    await step.play(talk)
                except (AssertionError, TimeoutError) as exc:
                    raise AssertionError(f"step {number}, {step}: {exc}") from exc
            await state.tasks.aclose()
        finally:
            logging.getLogger("simproxy").removeHandler(handler)
        found = tuple(record.getMessage() for record in talk.errors)
        assert found == logged, "\n".join(map(logging.Formatter().format, talk.errors))
        return talk

    return asyncio.run(main())


async def _no_ca() -> CertificateAuthority:
    raise AssertionError("a playbook has no CA: it intercepts no TLS")
