"""When a proxy connection is read: only while nothing holds it, a read parsed a slice at a time.

A connection stops reading while its client does not read its answers (the write buffer is above
``ProxyLimits.write_buffer``), while ``max_pipelined`` answers are owed, while a CONNECT's tunnel is
set up, and, in a blind tunnel, while the host does not read. A read already taken from the socket
is parsed ``FEED_SLICE`` bytes at a time, so a hold stops the parsing too: the rest of the read
waits, unparsed, until the last hold is released. What one connection makes a worker hold is so
bounded by the buffers, whatever its client does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

FEED_SLICE = 4096
"""Bytes of a read parsed at a time: a hold stops the parsing of a longer read within this."""

# Why a connection is not read, any number of them at once
HOLD_CONNECT = 1  # a CONNECT's tunnel is being set up
HOLD_PIPELINE = 2  # max_pipelined answers are owed
HOLD_WRITE = 4  # the write buffer is above its high-water mark: the client does not read its answers
HOLD_RELAY = 8  # a blind tunnel's host does not read what the client sends
HOLD_FAILED = 16  # a request failed while answers were still owed: they come first, then the error, then the close


def limit_writes(transport: asyncio.Transport, high: int) -> None:
    """The write buffer's high-water mark, and a quarter of it for the low one (``resume_writing``)."""
    transport.set_write_buffer_limits(high=high, low=high // 4)


class ReadGate:
    """Pauses and resumes reading a transport for any number of reasons, and keeps what a hold
    stopped parsing until the last one is released.

    The parsing itself is the connection's (``ProxyProtocol.data_received``, a ``FEED_SLICE`` at a
    time): it looks at ``holds`` after each slice and leaves the rest of the read in ``unparsed``."""

    def __init__(self, feed: Callable[[memoryview], None]) -> None:
        self.feed = feed
        """The parser, handed what waited unparsed once reading goes on."""
        self.transport: asyncio.Transport | None = None
        self.holds = 0
        """Why reading is paused (``HOLD_*`` bits); read only while none."""
        self.unparsed: memoryview | None = None
        """The rest of a read that a hold stopped parsing: parsed once every hold is released."""

    def hold(self, reason: int) -> None:
        """Stop reading for ``reason`` (a ``HOLD_*`` bit) until it is released."""
        if not self.holds and self.transport is not None:
            self.transport.pause_reading()
        self.holds |= reason

    def release(self, reason: int) -> None:
        """``reason`` no longer holds: once none does, parse what waits unparsed, then read again."""
        if not self.holds & reason:
            return
        self.holds &= ~reason
        if not self.holds:
            self._read_on()

    def open(self, transport: asyncio.Transport) -> None:
        """Read ``transport`` from now on (a new one, or a tunnel's): no hold of before is left."""
        self.transport, self.holds, self.unparsed = transport, 0, None
        transport.resume_reading()

    def keep(self, data: bytes | memoryview) -> None:
        """Keep ``data`` for later, after what already waits: a read that came while reading is held
        or bytes wait (not expected: nothing is read meanwhile; kept in order all the same)."""
        self.unparsed = memoryview(bytes(self.unparsed or b"") + data)

    def _read_on(self) -> None:
        """No hold is left: parse what waits unparsed, then read again unless that held once more.
        The parser sets ``unparsed`` only as it stops, so a release from within it finds none."""
        if self.unparsed is not None:
            view, self.unparsed = self.unparsed, None
            self.feed(view)  # when a hold stops it again, what is left waits once more
        if not self.holds and self.transport is not None:
            self.transport.resume_reading()
