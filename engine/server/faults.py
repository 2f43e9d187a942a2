"""Writing an answer as its fault asks (the simulation's ``fault``, simproxy's own, not Hoverfly's).

Small functions over the connection's transport. The protocol (engine/server/protocol.py) calls
them in the answer's turn: a timed fault (dribble, bandwidth) is awaited before the answers after
it are written, so pipelined answers stay in order, and it waits for room whenever the client does
not read (``Room``). The other faults end the connection at once.

What a client sees, and the same fault elsewhere:

==================== ============================================= ===================================
type                 on the wire                                   WireMock / Mountebank / Toxiproxy
==================== ============================================= ===================================
connectionReset      RST (SO_LINGER on, 0 s; then abort)           CONNECTION_RESET_BY_PEER (both)
emptyResponse        FIN, nothing written                          EMPTY_RESPONSE
malformedChunk       the head, chunked, then bytes that are no     MALFORMED_RESPONSE_CHUNK
                     chunk, then FIN
randomDataThenClose  256 B to 2 KB of random bytes, then FIN       RANDOM_DATA_THEN_CLOSE (both)
dribble              the head at once, the body in ``chunks``      chunkedDribbleDelay
                     pieces, the last after ``durationMs``
bandwidth            the whole answer at ``bytesPerSecond`` at     Toxiproxy's bandwidth toxic
                     most
==================== ============================================= ===================================
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import struct
from collections.abc import Awaitable, Callable

from engine.simulation.model import Fault, FaultKind
from engine.wire.response import Wire

Room = Callable[[], Awaitable[bool]]
"""Waits while the connection's write buffer is full; False once the connection is gone or closing."""

RANDOM_SIZE = (256, 2048)
"""The least and most random bytes ``randomDataThenClose`` sends."""
NOT_A_CHUNK = b"zz\r\nthis is not chunked framing\r\n"
"""What ``malformedChunk`` sends after its head: ``zz`` is no chunk size."""
SLICE_SECONDS = 0.05
"""``bandwidth`` sends a slice of about this many seconds' worth of bytes at a time."""
MAX_SLICE = 64 * 1024
_LINGER_NOW = struct.pack("ii", 1, 0)
"""SO_LINGER on with a 0 s timeout: closing the socket sends RST and drops what is unsent."""
_FRAMING = (b"content-length:", b"transfer-encoding:")


def rolled(fault: Fault, rng: random.Random) -> bool:
    """Whether this request gets ``fault``: its ``fraction`` is the probability."""
    return fault.fraction >= 1 or rng.random() < fault.fraction


def head_bytes(wire: Wire, keep: bool, date: bytes) -> bytes:
    """The status line and headers as the protocol writes them (``Date``, ``Connection: close``)."""
    parts = [wire.head] if wire.dated else [wire.head, b"Date: ", date, b"\r\n"]
    if not keep:
        parts.append(b"Connection: close\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


def break_off(fault: Fault, transport: asyncio.Transport, wire: Wire, date: bytes, rng: random.Random) -> None:
    """The faults that end the connection at once: reset, close, or garbage and close."""
    if fault.kind is FaultKind.CONNECTION_RESET:
        reset(transport)
        return
    if fault.kind is FaultKind.MALFORMED_CHUNK:
        transport.write(chunked_head(wire, date) + NOT_A_CHUNK)
    elif fault.kind is FaultKind.RANDOM_DATA_THEN_CLOSE:
        transport.write(random_data(rng))
    transport.close()  # what was written first still goes out, then FIN


def reset(transport: asyncio.Transport) -> None:
    """Abort the connection with RST (inside a TLS tunnel, the TCP connection under it). When the
    socket's linger cannot be set, the abort still closes the connection at once."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError, AttributeError, TypeError, ValueError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_NOW)
    transport.abort()


def chunked_head(wire: Wire, date: bytes) -> bytes:
    """``wire``'s head declaring a chunked body (its own length or framing left out), closing."""
    lines = [line for line in wire.head.split(b"\r\n") if line and not line.lower().startswith(_FRAMING)]
    head = b"\r\n".join(lines) + b"\r\nTransfer-Encoding: chunked\r\n"
    return head_bytes(Wire(head, b"", dated=wire.dated), False, date)


def random_data(rng: random.Random) -> bytes:
    """Random bytes that no client can take for an HTTP answer (they never start with ``H``)."""
    data = bytearray(rng.randbytes(rng.randint(*RANDOM_SIZE)))
    if data[0] == ord("H"):
        data[0] = ord("h")
    return bytes(data)


async def send_slowly(fault: Fault, transport: asyncio.Transport, head: bytes, body: bytes, room: Room) -> bool:
    """A timed fault: the whole answer, dribbled or paced; False when the connection went first."""
    if fault.kind is FaultKind.DRIBBLE:
        return await dribble(transport, head, body, fault.chunks, fault.duration_ms / 1000, room)
    return await paced(transport, head + body, fault.bytes_per_second, room)


async def dribble(
    transport: asyncio.Transport, head: bytes, body: bytes, chunks: int, seconds: float, room: Room
) -> bool:
    """The head at once, then ``body`` in ``chunks`` pieces (fewer when it has fewer bytes) evenly
    spread over ``seconds``: the last goes out ``seconds`` after the head (later when the client
    does not read)."""
    if not await room() or transport.is_closing():
        return False
    transport.write(head)
    loop = asyncio.get_running_loop()
    start, pieces = loop.time(), min(chunks, len(body))
    for index in range(pieces):
        wait = start + seconds * (index + 1) / pieces - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        if not await room() or transport.is_closing():
            return False
        transport.write(body[len(body) * index // pieces : len(body) * (index + 1) // pieces])
    return True


async def paced(transport: asyncio.Transport, data: bytes, rate: int, room: Room) -> bool:
    """``data`` at no more than ``rate`` bytes a second: each slice is written when the bytes up
    to its end are due, so the whole takes about ``len(data) / rate`` seconds. After a wait for
    the client to read, the schedule goes on from then (never a burst to catch up)."""
    loop = asyncio.get_running_loop()
    size = max(1, min(MAX_SLICE, int(rate * SLICE_SECONDS)))
    start, sent = loop.time(), 0
    view = memoryview(data)
    while sent < len(data):
        end = min(sent + size, len(data))
        due = start + end / rate
        wait = due - loop.time()
        if wait > 0:
            await asyncio.sleep(wait)
        if not await room() or transport.is_closing():
            return False
        late = loop.time() - due
        if late > SLICE_SECONDS:  # the client stopped reading for a while: go on from now
            start += late
        transport.write(bytes(view[sent:end]))
        sent = end
    return True
