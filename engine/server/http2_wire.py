"""HTTP/2 messages in and out of simproxy's own forms: a stream's header block to the raw HTTP/1.1
target and headers ``build_request`` takes (engine/wire/parse.py), and a ``Wire`` answer (rendered
as HTTP/1.1 bytes) to the header list and body of HEADERS and DATA frames.

Only the framing differs from HTTP/1.1: ``:authority`` becomes ``Host``, ``:path`` the target
(path and query), the answer keeps its status, headers and body. What HTTP/2 forbids is left out
of an answer (RFC 9113 §8.2.2: ``Connection``, ``Keep-Alive``, ``Proxy-Connection``,
``Transfer-Encoding``, ``Upgrade``), names are written lower-case, and a chunked body is sent as
its content (DATA frames are the framing).

And the first bytes of a connection: ``Sniffer`` tells the HTTP/2 client preface from HTTP/1.1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire, bodyless

MEMO_SIZE = 16
"""Requests a connection remembers by their header list at most (``KnownRequests``, all forgotten
when full)."""
MEMO_BYTES = 2048
"""Blocks, and header lists, larger than this are never remembered (``KnownRequests``, and
``FrameServer``'s last block in engine/server/http2_frames.py), whatever header lists
``-max-header-size`` lets in."""


def small(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """The header list is small enough to be remembered (``MEMO_BYTES``)."""
    return sum(len(name) + len(value) for name, value in headers) <= MEMO_BYTES


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
"""The client connection preface: the first bytes of an HTTP/2 connection (RFC 9113 §3.4)."""
PREFACE_LINE = PREFACE[:16]
"""``PRI * HTTP/2.0``: only an HTTP/2 client sends it, so a preface that goes wrong after it is
answered as HTTP/2 answers a bad preface (``GOAWAY``, ``PROTOCOL_ERROR``), not as HTTP/1.1."""
CONNECTION_SPECIFIC = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"})
"""Response headers HTTP/2 forbids (RFC 9113 §8.2.2): an answer that declares them loses them."""

Headers = list[tuple[bytes, bytes]]


@dataclass(frozen=True, slots=True)
class StreamHead:
    """A request's header block as HTTP/1.1 would have carried it."""

    method: bytes
    target: bytes
    """``:path``: the path and query, as an origin-form HTTP/1.1 target."""
    scheme: bytes
    headers: Headers
    """``Host`` (from ``:authority``) first, then the regular headers; ``Cookie`` pieces joined."""


def stream_head(block: Headers) -> StreamHead:
    """The pseudo-headers and headers of a request's header list as ``request_fields``
    (engine/server/http2_fields.py) checked it: the ``Cookie`` pieces already joined."""
    method = target = scheme = authority = b""
    headers: Headers = []
    host = False
    for name, value in block:
        if name[:1] == b":":
            if name == b":method":
                method = value
            elif name == b":path":
                target = value
            elif name == b":authority":
                authority = value
            elif name == b":scheme":
                scheme = value
        else:
            host = host or name == b"host"
            headers.append((name, value))
    if authority and not host:
        headers.insert(0, (b"host", authority))
    return StreamHead(method, target or b"/", scheme, headers)


class KnownRequests:
    """The requests a connection built from header blocks that came before, without a body: a
    client sends the same request on stream after stream, and the same block builds the same
    ``RequestDetails`` (immutable, so the streams share it, as HTTP/1.1's ``RequestMemo`` lets the
    requests from the same bytes share theirs; the dispatcher then knows it again at once).
    ``MEMO_SIZE`` small blocks at most, all forgotten when full."""

    __slots__ = ("_known", "_last")

    def __init__(self) -> None:
        self._known: dict[tuple[tuple[bytes, bytes], ...], tuple[StreamHead, RequestDetails]] = {}
        self._last: tuple[Headers | None, tuple[StreamHead, RequestDetails] | None] = (None, None)
        """The block last looked up or kept, and what it built: the same list again (engine/server/
        http2_frames.py hands a repeated block's fields over as the same list) is known at once."""

    def get(self, block: Headers) -> tuple[StreamHead, RequestDetails] | None:
        """The head and request ``block`` was built into before, if kept."""
        last = self._last
        if block is last[0]:
            return last[1]
        found = self._known.get(tuple(block))
        if found is not None:
            self._last = (block, found)
        return found

    def keep(self, block: Headers, head: StreamHead, request: RequestDetails) -> None:
        """``request`` (and ``head``) built from ``block``, a request without a body."""
        if small(block):
            if len(self._known) >= MEMO_SIZE:
                self._known.clear()
            found = (head, request)
            self._known[tuple(block)] = found
            self._last = (block, found)


def response_headers(wire: Wire, date: bytes, head_only: bool) -> tuple[Headers, bytes]:
    """The header list (``:status`` first) and body of ``wire`` as an HTTP/2 answer; ``head_only``
    (a HEAD): no body, the headers as a GET would get them."""
    lines = wire.head.split(b"\r\n")
    headers: Headers = [(b":status", str(wire.status).encode())]
    no_body = bodyless(wire.status)
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon:
            continue
        lower = name.strip().lower()
        if lower in CONNECTION_SPECIFIC:
            continue
        if lower == b"content-length" and (not wire.keep_alive or no_body):
            continue  # a declared length the body disagrees with: DATA frames say how long it is
        headers.append((lower, value.strip()))
    if not wire.dated:
        headers.append((b"date", date))
    body = b"" if head_only or no_body else wire.raw_body
    return headers, body


ANSWERS = 1024
"""Answers whose HTTP/2 header block a worker keeps (``AnswerBlocks``), all forgotten when full."""


class AnswerBlocks:
    """One worker's answers as HTTP/2 writes them: a simulation's answer (the same ``Wire``) in the
    same second (the same ``Date``) is the same header block and body on every connection, its
    block made once (``encode``: engine/server/http2_hpack.py's ``encode_block``, which leaves the
    peer's dynamic table alone, so the block means the same on any connection). Kept by the wire's
    identity (held, so the id stays its own), ``ANSWERS`` at most."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[int, tuple[Wire, bytes, bool, bytes, bytes]] = {}

    def get(self, wire: Wire, date: bytes, head_only: bool, encode: Callable[[Headers], bytes]) -> tuple[bytes, bytes]:
        """``wire``'s header block (``date`` its ``Date`` unless it has its own) and body; ``head_only``:
        a HEAD's (no body)."""
        known = self._known.get(id(wire))
        if known is not None and known[0] is wire and known[1] is date and known[2] is head_only:
            return known[3], known[4]
        headers, body = response_headers(wire, date, head_only)
        block = encode(headers)
        if len(self._known) >= ANSWERS:
            self._known.clear()
        self._known[id(wire)] = (wire, date, head_only, block, body)
        return block, body


def trailer_fields(wire: Wire) -> Headers:
    """``wire``'s trailer fields as the last HEADERS frame of its stream carries them."""
    return [(name.lower().encode("latin-1"), value.encode()) for name, values in wire.trailers for value in values]


class Sniffer:
    """A new connection's first bytes: the client preface makes it HTTP/2 (``to_h2``), anything
    else HTTP/1.1 (``to_h1``). Only the first read is looked at, unless it is a beginning of the
    preface, when the next ones are too until it is known."""

    __slots__ = ("_seen", "to_h1", "to_h2")

    busy = False

    def __init__(self, to_h1: Callable[[bytes], None], to_h2: Callable[[bytes], None]) -> None:
        self.to_h1 = to_h1
        self.to_h2 = to_h2
        self._seen = b""

    def send(self, data: bytes | memoryview) -> None:
        seen = self._seen + data if self._seen else data
        if len(seen) < len(PREFACE) and PREFACE.startswith(seen):
            self._seen = bytes(seen)
            return
        if seen[: len(PREFACE_LINE)] == PREFACE_LINE:  # the preface, or one gone wrong after its request line
            self.to_h2(bytes(seen))
        else:
            self.to_h1(seen if type(seen) is bytes else bytes(seen))

    def pause_reading(self) -> None:
        """Nothing is written before the first request: nothing to hold."""

    def resume_reading(self) -> None:
        """See ``pause_reading``."""

    def close(self) -> None:
        """The connection is lost before it said what it speaks: nothing to end."""
