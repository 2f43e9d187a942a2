"""Writing an answer as its fault asks (the simulation's ``fault``, simproxy's own, not Hoverfly's).

Functions over the connection's transport. The dispatcher decides whether an answer gets its
fault (engine/modes/dispatch.py ``with_fault_decided``); the protocol (engine/server/protocol.py)
calls ``write_fault`` for one it is handed, in the answer's turn, every answer before it written: a timed fault
(dribble, bandwidth) is awaited before the answers after it are written, so pipelined answers
stay in order, it waits for room whenever the client does not read (``Room``), and it ends at once
when the connection is lost (``lost``). The other faults end the connection.

What a client sees, and the same fault elsewhere:

==================== ============================================= ===================================
type                 on the wire                                   WireMock / Mountebank / Toxiproxy
==================== ============================================= ===================================
connectionReset      RST (SO_LINGER on, 0 s; then abort), once     CONNECTION_RESET_BY_PEER (both)
                     the answers before it have reached the client
emptyResponse        FIN, nothing written                          EMPTY_RESPONSE
malformedChunk       the head, chunked, then bytes that are no     MALFORMED_RESPONSE_CHUNK
                     chunk, then FIN
randomDataThenClose  256 B to 2 KB of random bytes, then FIN       RANDOM_DATA_THEN_CLOSE (both)
dribble              the head at once, the body in ``chunks``      chunkedDribbleDelay
                     pieces, the last after ``durationMs`` (no
                     body: the head after ``durationMs``)
bandwidth            the whole answer at ``bytesPerSecond`` at     Toxiproxy's bandwidth toxic
                     most
==================== ============================================= ===================================
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import random
import socket
import struct
import sys
import termios
from collections.abc import Awaitable, Callable

from simproxy.engine.simulation.model import TIMED_FAULTS, Fault, FaultKind
from simproxy.engine.wire.golayout import written_head
from simproxy.engine.wire.response import Wire

log = logging.getLogger(__name__)

Room = Callable[[], Awaitable[bool]]
"""Waits while the connection's write buffer is full; False once the connection is gone or closing."""

RANDOM_SIZE = (256, 2048)
"""The least and most random bytes ``randomDataThenClose`` sends."""
NOT_A_CHUNK = b"zz\r\nthis is not chunked framing\r\n"
"""What ``malformedChunk`` sends after its head: ``zz`` is no chunk size."""
SLICE_SECONDS = 0.05
"""``bandwidth`` sends a slice of about this many seconds' worth of bytes at a time."""
MAX_SLICE = 64 * 1024
POLL_SECONDS = 0.01
"""How often a reset looks whether the client has acknowledged what was sent before it."""
STALL_SECONDS = 2.0
"""A reset waits for the client's acknowledgements while they keep coming, and this long without one."""
_LINGER_NOW = struct.pack("ii", 1, 0)
"""SO_LINGER on with a 0 s timeout: closing the socket sends RST and drops what is unsent."""
_OUTQ = getattr(termios, "TIOCOUTQ", None) if sys.platform == "linux" else None
"""``SIOCOUTQ``: the bytes of a TCP socket's send queue the peer has not acknowledged (Linux)."""
_FRAMING = (b"content-length:", b"transfer-encoding:")


def head_bytes(wire: Wire, keep: bool, date: bytes) -> bytes:
    """The status line and headers as the protocol writes them (``Date``, ``Connection: close``)."""
    if wire.tail is not None:
        return written_head(wire, wire.tail, date, keep, False)
    parts = [wire.head] if wire.dated else [wire.head, b"Date: ", date, b"\r\n"]
    if not keep:
        parts.append(b"Connection: close\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


async def write_fault(
    fault: Fault,
    transport: asyncio.Transport,
    wire: Wire,
    keep: bool,
    head_only: bool,
    date: bytes,
    rng: random.Random,
    room: Room,
    lost: asyncio.Event,
) -> bool:
    """Write ``wire`` as ``fault`` asks, in its turn; True when the connection stays open for the
    next answer (a timed fault, written whole, ``keep`` being true). Whatever goes wrong (a bug, a
    transport refusing a write) is logged and aborts the connection: the answers after it are
    never written out of turn, and the caller always gets its answer."""
    if transport.is_closing() or lost.is_set():
        return False
    try:
        if fault.kind is FaultKind.CONNECTION_RESET:
            await reset_when_delivered(transport, room, lost)
            return False
        if fault.kind not in TIMED_FAULTS:
            break_off(fault, transport, wire, date, rng)
            return False
        body = b"" if head_only else wire.body
        if not await send_slowly(fault, transport, head_bytes(wire, keep, date), body, room, lost):
            return False
        if not keep:
            transport.close()
        return keep
    except Exception:
        log.exception("writing a %s fault failed", fault.kind.value)
        transport.abort()
        return False


def break_off(fault: Fault, transport: asyncio.Transport, wire: Wire, date: bytes, rng: random.Random) -> None:
    """The faults that close the connection at once: with nothing, or garbage, written first."""
    if fault.kind is FaultKind.MALFORMED_CHUNK:
        transport.write(chunked_head(wire, date) + NOT_A_CHUNK)
    elif fault.kind is FaultKind.RANDOM_DATA_THEN_CLOSE:
        transport.write(random_data(rng))
    transport.close()  # what was written first still goes out, then FIN


async def reset_when_delivered(transport: asyncio.Transport, room: Room, lost: asyncio.Event) -> None:
    """Reset the connection once the answers written before the reset have reached the client: an
    abort drops what the transport still holds, and the RST makes the kernel drop what the client
    has not acknowledged. The transport's buffer is waited for as long as the client reads (a
    client that stops reading meets the idle timeout); then the kernel's send queue (Linux), while
    the client keeps acknowledging, and at most ``STALL_SECONDS`` without an acknowledgement."""
    if transport.get_write_buffer_size():
        # pause_writing at once, resume_writing once the buffer is empty (high 1: asyncio's TLS
        # transport pauses at size >= high, which 0 would make true of an empty buffer)
        transport.set_write_buffer_limits(high=1, low=0)
        await room()
    await acknowledged(transport, lost)
    if not lost.is_set():
        reset(transport)


async def acknowledged(transport: asyncio.Transport, lost: asyncio.Event) -> None:
    """Wait while bytes written to ``transport`` are still unacknowledged, as long as that count
    goes down at least once every ``STALL_SECONDS``, or until the connection is lost."""
    loop = asyncio.get_running_loop()
    left, since = unacknowledged(transport), loop.time()
    while left and loop.time() - since < STALL_SECONDS:
        if not await pause(POLL_SECONDS, lost):
            return
        now = unacknowledged(transport)
        if now < left:
            since = loop.time()
        left = now


def unacknowledged(transport: asyncio.Transport) -> int:
    """Bytes written to ``transport`` the client has not acknowledged: those it still holds, and on
    Linux those in the kernel's send queue (inside a TLS tunnel, the TCP connection's under it;
    elsewhere the kernel's are not known, and not waited for)."""
    held = transport.get_write_buffer_size()
    sock = transport.get_extra_info("socket")
    if sock is None or _OUTQ is None:
        return held
    try:
        queued: int = struct.unpack("i", fcntl.ioctl(sock.fileno(), _OUTQ, b"\0\0\0\0"))[0]
    except (OSError, AttributeError, TypeError, ValueError):
        return held
    return held + max(queued, 0)


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


async def pause(seconds: float, lost: asyncio.Event) -> bool:
    """Let ``seconds`` pass, and at least one turn of the loop (the worker's other connections go
    on); False, as soon as it is, once the connection is lost."""
    if seconds <= 0:
        await asyncio.sleep(0)
    elif not lost.is_set():
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await lost.wait()
    return not lost.is_set()


async def send_slowly(
    fault: Fault, transport: asyncio.Transport, head: bytes, body: bytes, room: Room, lost: asyncio.Event
) -> bool:
    """A timed fault: the whole answer, dribbled or paced; False when the connection went first."""
    if fault.kind is FaultKind.DRIBBLE:
        return await dribble(transport, head, body, fault.chunks, fault.duration_ms / 1000, room, lost)
    return await paced(transport, head + body, fault.bytes_per_second, room, lost)


async def dribble(
    transport: asyncio.Transport, head: bytes, body: bytes, chunks: int, seconds: float, room: Room, lost: asyncio.Event
) -> bool:
    """The head at once, then ``body`` in ``chunks`` pieces (fewer when it has fewer bytes) evenly
    spread over ``seconds``: the last goes out ``seconds`` after the head (later when the client
    does not read). The pieces due by the time the loop comes back go out in one write, and the
    loop turns between writes, so a dribble of many small pieces never holds up the worker. With
    no body to send (an empty one, a HEAD) the answer is complete with its head: the head waits
    ``seconds`` instead."""
    if not body and not await pause(seconds, lost):
        return False
    if not await room() or transport.is_closing():
        return False
    transport.write(head)
    loop = asyncio.get_running_loop()
    start, pieces, sent = loop.time(), min(chunks, len(body)), 0
    while sent < pieces:
        if not await pause(start + seconds * (sent + 1) / pieces - loop.time(), lost):
            return False
        elapsed = loop.time() - start
        due = pieces if elapsed >= seconds else max(sent + 1, min(pieces, int(elapsed * pieces / seconds)))
        if not await room() or transport.is_closing():
            return False
        transport.write(body[len(body) * sent // pieces : len(body) * due // pieces])
        sent = due
    return True


async def paced(transport: asyncio.Transport, data: bytes, rate: int, room: Room, lost: asyncio.Event) -> bool:
    """``data`` at no more than ``rate`` bytes a second: each slice is written when the bytes up
    to its end are due, so the whole takes about ``len(data) / rate`` seconds. After a wait for
    the client to read (or for the worker), the schedule goes on from then: never a burst to catch
    up, so the rate is never exceeded, and a loaded worker only makes the answer slower."""
    loop = asyncio.get_running_loop()
    size = max(1, min(MAX_SLICE, int(rate * SLICE_SECONDS)))
    start, sent = loop.time(), 0
    view = memoryview(data)
    while sent < len(data):
        end = min(sent + size, len(data))
        due = start + end / rate
        if not await pause(due - loop.time(), lost):
            return False
        if not await room() or transport.is_closing():
            return False
        late = loop.time() - due
        if late > SLICE_SECONDS:  # the client stopped reading for a while: go on from now
            start += late
        transport.write(bytes(view[sent:end]))
        sent = end
    return True
