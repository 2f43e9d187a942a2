"""The answers one proxy connection owes, in the order of its requests: the answer queue.

Every request the connection reads, and every error it answers, goes through ``AnswerQueue.answer``:
asked of the dispatcher there, written at once when it is ready, nothing is owed before it and the
client reads; otherwise it joins ``owed`` and ``_drain`` writes it in its turn, once it is ready and
the write buffer has room. A request that comes while ``max_pipelined`` answers are owed waits in
``waiting``, not yet asked of the dispatcher, and reading stops (``HOLD_PIPELINE``) until fewer are
owed. An answer with a fault (engine/server/faults.py) is written in its turn as the fault asks,
and the answers after a timed one wait for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, cast

from simproxy.engine.server.faults import write_fault
from simproxy.engine.server.flow import HOLD_FAILED, HOLD_PIPELINE, ReadGate
from simproxy.engine.server.state import ServerState
from simproxy.engine.simulation.model import TIMED_FAULTS
from simproxy.engine.wire.golayout import as_go, go_tunnelled, written_head
from simproxy.engine.wire.hot import hot_value
from simproxy.engine.wire.request import Received, RequestDetails
from simproxy.engine.wire.response import Wire, as_hoverfly_tunnels_it, chunked_instead, plain_error

log = logging.getLogger(__name__)

JOIN_LIMIT = 64 * 1024
"""Bodies longer than this are written apart from their head: the transport keeps the body itself,
shared by every answer of the pair, instead of a copy joined to the head."""


@dataclass(frozen=True, slots=True)
class OnTurn:
    """An answer begun only once its request's turn comes (a proxy-auth check, then the dispatcher)."""

    begin: Callable[[], Coroutine[Any, Any, Wire]]


Answer = Wire | asyncio.Future[Wire]
"""An answer ready, or to come."""
Item = Answer | RequestDetails | OnTurn
"""What ``AnswerQueue.answer`` is handed: an answer, or a request still to be asked of the dispatcher."""


@hot_value
class Owed:
    """One request's place in the queue: its answer (or, while it waits, the request) and how to write it."""

    item: Item
    keep_alive: bool
    head_only: bool
    received: Received | None


class AnswerQueue:
    """Owns a connection's writing: the order of its answers, their faults, the transport's room."""

    __slots__ = (
        "_draining",
        "_resumed",
        "closing",
        "gate",
        "lost",
        "max_pipelined",
        "owed",
        "paused",
        "state",
        "transport",
        "tunnelled",
        "waiting",
    )

    def __init__(self, state: ServerState, gate: ReadGate) -> None:
        self.state = state
        self.gate = gate
        self.max_pipelined = state.limits.max_pipelined
        self.transport: asyncio.Transport | None = None
        """Where answers are written (a TLS transport inside an intercepted tunnel); None once lost."""
        self.owed: deque[Owed] = deque()
        """Answers owed, in request order, ready or to come; ``_drain`` writes the first."""
        self.waiting: deque[Owed] = deque()
        """Requests that came while ``max_pipelined`` answers were owed, not yet asked, in order."""
        self.closing = False
        """The connection ends after what is written: nothing more is read or written."""
        self.paused = False
        """The write buffer is above its high-water mark (``pause_writing``)."""
        self.tunnelled = False
        """Answers go inside a CONNECT tunnel: framed as ``_tunnelled`` says."""
        self.lost = asyncio.Event()
        """Set once the connection is lost: a fault waiting (a dribble's pause, a reset's) ends at once."""
        self._resumed: asyncio.Future[None] | None = None
        """Set by ``resumed``, for an answer waiting for room in the write buffer."""
        self._draining = False

    @property
    def busy(self) -> bool:
        """Answers are still owed on a connection not lost."""
        return self.transport is not None and bool(self.owed or self.waiting)

    def answer(
        self, item: Item, keep_alive: bool, head_only: bool, received: Received | None = None, turn: bool = False
    ) -> None:
        """Answer a request (``item``: its answer, or the request itself) after those before it.
        ``turn``: it waited (``waiting``) and its turn has come, whatever waits after it."""
        owed = self.owed
        if owed and not turn and (self.waiting or len(owed) >= self.max_pipelined):
            self.waiting.append(Owed(item, keep_alive, head_only, received))  # reading is held already
            return
        answer: Answer | Coroutine[Any, Any, Wire]
        if type(item) is RequestDetails:
            try:
                answer = self.state.dispatcher.handle(item)
            except Exception:
                log.exception("request handling failed")
                answer = self.state.internal_error
        elif type(item) is OnTurn:
            answer = item.begin()
        else:
            answer = cast(Answer, item)
        if type(answer) is Wire:
            if not owed and answer.fault is None and not self.paused:
                self.write(answer, keep_alive, head_only, received)
                return
        elif not isinstance(answer, asyncio.Future):
            answer = asyncio.ensure_future(cast("Coroutine[Any, Any, Wire]", answer))
        owed.append(Owed(answer, keep_alive, head_only, received))
        if len(owed) >= self.max_pipelined:
            self.gate.hold(HOLD_PIPELINE)  # a client pipelining without reading its answers waits for them
        if not self._draining:
            self._draining = True
            self.state.tasks.spawn(self._drain(), name="proxy-drain")

    def fail(self, status: int, text: str) -> None:
        """Answer ``status`` and close: after the answers still owed (in order), nothing more read."""
        wire = plain_error(status, text + "\n")
        if not self.owed and not self.waiting:
            self.write(wire, False, False)
            return
        self.gate.hold(HOLD_FAILED)
        self.answer(wire, False, False)

    async def _drain(self) -> None:
        """Write the answers owed, in order, each once it is ready and the write buffer has room."""
        owed, waiting = self.owed, self.waiting
        try:
            while owed and not self.closing:
                first = owed[0]
                try:
                    wire = first.item if type(first.item) is Wire else await cast("asyncio.Future[Wire]", first.item)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("request handling failed")
                    wire = self.state.internal_error
                if self.paused:
                    await self.room()
                if wire.fault is not None:
                    await self._write_fault(wire, first)  # still first in the queue
                if owed:
                    owed.popleft()
                if wire.fault is None:
                    self.write(wire, first.keep_alive, first.head_only, first.received)
                while waiting and len(owed) < self.max_pipelined and not self.closing:
                    later = waiting.popleft()  # oldest first: asked of the dispatcher now
                    self.answer(later.item, later.keep_alive, later.head_only, later.received, turn=True)
                if len(owed) + len(waiting) < self.max_pipelined // 2:
                    self.gate.release(HOLD_PIPELINE)
        finally:
            self._draining = False
            self.state.note_answered()

    async def room(self) -> bool:
        """Wait while the write buffer is full; False once the connection is gone or closing."""
        while self.paused and self.transport is not None and not self.closing:
            self._resumed = self._resumed or asyncio.get_running_loop().create_future()
            await self._resumed  # resolved by resumed (ended too when the connection is lost)
        return self.transport is not None and not self.closing

    def resumed(self) -> None:
        """The write buffer drained to its low-water mark: an answer waiting for room goes on."""
        self.paused = False
        if self._resumed is not None:
            if not self._resumed.done():
                self._resumed.set_result(None)
            self._resumed = None

    def end(self) -> None:
        """The connection is lost: the answers owed are dropped, those to come cancelled."""
        self.transport = None
        for owed in self.owed:
            if isinstance(owed.item, asyncio.Future):
                owed.item.cancel()
        self.owed.clear()
        self.waiting.clear()
        self.resumed()  # an answer waiting for room ends its wait, and is not written
        self.lost.set()

    async def _write_fault(self, wire: Wire, owed: Owed) -> None:
        """Write ``wire`` as its fault asks (engine/server/faults.py); the observers are told as for any other."""
        transport, fault, state = self.transport, wire.fault, self.state
        if transport is None or self.closing or fault is None:
            return
        if owed.received is not None:
            state.dispatcher.served(wire, owed.received)
        if self.tunnelled and not owed.head_only and fault.kind in TIMED_FAULTS:
            wire = self._tunnelled(wire)
        keep, date, rng = owed.keep_alive and wire.keep_alive, state.date.value(), state.dispatcher.rng
        if not await write_fault(fault, transport, wire, keep, owed.head_only, date, rng, self.room, self.lost):
            self.closing = True

    def write(self, wire: Wire, keep_alive: bool, head_only: bool, received: Received | None = None) -> None:
        """Write ``wire`` now, and close after it unless the connection is kept alive."""
        transport = self.transport
        if transport is None or self.closing:
            return
        state = self.state
        if wire.tail is None and state.go_layout:
            wire = as_go(wire)  # an error or a forwarded answer: pairs are compiled in Go's layout
        if received is not None:
            state.dispatcher.served(wire, received)
        if self.tunnelled and not head_only:
            wire = self._tunnelled(wire)
        keep = keep_alive and wire.keep_alive
        body = b"" if head_only else wire.body
        date = state.date.kept or state.date.value()
        parts: tuple[bytes, ...]
        if wire.tail is not None:
            parts = (written_head(wire, wire.tail, date, keep_alive or not wire.keep_alive, head_only), body)
        else:
            end = b"\r\n" if keep else b"Connection: close\r\n\r\n"
            parts = (wire.head, end, body) if wire.dated else (wire.head, b"Date: ", date, b"\r\n", end, body)
        if len(body) <= JOIN_LIMIT:
            transport.write(b"".join(parts))
        else:
            transport.write(b"".join(parts[:-1]))
            transport.write(body)
        if not keep:
            self.closing = True
            transport.close()

    def _tunnelled(self, wire: Wire) -> Wire:
        """Inside a tunnel: never a length that disagrees with the body (chunked instead), and
        every answer chunked and closing under ``-compat hoverfly``."""
        if wire.tail is not None:
            return go_tunnelled(wire)
        if self.state.chunked_tunnel:
            return as_hoverfly_tunnels_it(wire)
        return wire if wire.keep_alive else chunked_instead(wire)
