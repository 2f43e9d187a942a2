"""Answers laid out as Go's HTTP server writes them for Hoverfly's handler (``-compat hoverfly``).

Hoverfly hands Go's server a header map and a body; the server writes the map's headers sorted by
name (canonical case, values trimmed, invalid names dropped), then what it adds itself: ``Date``
(when the map has none), a ``Content-Length`` it computed (the map has none and the whole body fit
in its 2048-byte buffer), a sniffed ``Content-Type`` (the map has none, nor a ``Content-Encoding``
or ``Transfer-Encoding``), ``Connection: close`` (when it closes) and ``Transfer-Encoding: chunked``
(no length known: a body over 2048 bytes, or a map declaring chunked). Hoverfly's own handler sets
``Content-Length`` for a non-empty simulated or middleware body that declares neither framing header,
so that one sorts among the pair's headers; a 502 and a forwarded chunked answer get Go's.

Everything here is decided once per wire (per pair at compile time, per render for a templated
body): the wire's ``head`` holds the status line and the sorted headers, its ``tail`` the lines Go
adds after ``Date`` (engine/server/protocol.py writes ``Date`` and ``Connection: close`` between).
"""

from __future__ import annotations

import re
from dataclasses import replace

from simproxy.engine.gocompat.sniff import detect_content_type
from simproxy.engine.simulation.model import Response
from simproxy.engine.wire.request import canonical_header
from simproxy.engine.wire.response import (
    RenderedResponse,
    Wire,
    WireShape,
    bodyless,
    check_headers,
    journal_parts,
    status_line,
    wire_shape,
)

Headers = tuple[tuple[str, tuple[str, ...]], ...]

BUFFERED = 2048
"""Go's ``bufferBeforeChunkingSize``: a body up to this long is buffered whole, so the server knows
its length; a longer one reaches the connection before the handler returns and goes chunked."""
TE_LINE = b"Transfer-Encoding: chunked\r\n"
CLOSE_LINE = b"Connection: close\r\n"
EMPTY_LENGTH = b"Content-Length: 0\r\n"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_DECIMAL = re.compile(r"[+-]?[0-9]+")
_SPACE = " \t\r\n"


def go_wire(resp: Response, pair: str = "", *, handler_length: bool = True, outcome: str = "hit") -> Wire:
    """``resp`` as Hoverfly's proxy port writes it. ``handler_length``: Hoverfly's handler sets
    ``Content-Length`` for a non-empty body declaring no framing (a simulated, templated or
    middleware answer); a forwarded answer carries the real service's headers only."""
    headers, body = resp.headers, resp.body
    set_length = handler_length and bool(body) and not _declares_framing(headers)
    if set_length:
        headers = (*headers, ("Content-Length", (str(len(body)),)))
    head, tail, framed, keep_alive, dated = frame(resp.status, merged(headers), body)
    return Wire(
        head, framed, keep_alive, resp.status, resp.headers, None if framed is body else body,
        go_journal_parts(body, headers), outcome, pair, resp.post_serve_action, dated, resp.fault, b"", tail,
        set_length,
    )  # fmt: skip


def go_plain_error(status: int, text: str, *, content_type: str = "text/plain", outcome: str = "error") -> Wire:
    """goproxy's ``NewResponse`` (Hoverfly's 502s): ``Content-Type`` set, the length Go's own."""
    body = text.encode("utf-8", "surrogateescape")
    headers = (("Content-Type", (content_type,)),)
    head, tail, framed, keep_alive, _ = frame(status, merged(headers), body)
    return Wire(
        head, framed, keep_alive, status, headers, None if framed is body else body, go_journal_parts(body, headers),
        outcome, "", "", False, None, b"", tail,
    )  # fmt: skip


def merged(headers: Headers) -> dict[str, list[str]]:
    """The header map Go's server gets: each name canonical, values of names that differ only in
    case under one name, in the order they come."""
    block: dict[str, list[str]] = {}
    for name, values in headers:
        block.setdefault(canonical_header(name), []).extend(values)
    return block


def _declares_framing(headers: Headers) -> bool:
    return any(name.lower() in ("content-length", "transfer-encoding") for name, _ in headers)


def _first(block: dict[str, list[str]], name: str) -> str:
    values = block.get(name)
    return values[0] if values else ""


def header_lines(block: dict[str, list[str]]) -> bytes:
    """Go's ``Header.Write``: sorted by name, each value trimmed, names that are no token left out."""
    return b"".join(
        f"{name}: {value.strip(_SPACE)}\r\n".encode("utf-8", "surrogateescape")
        for name in sorted(block)
        if _TOKEN.fullmatch(name)
        for value in block[name]
    )


def frame(status: int, block: dict[str, list[str]], body: bytes) -> tuple[bytes, bytes, bytes, bool, bool]:
    """(head, tail, body as framed, keep the connection, the map has its own ``Date``) for a handler
    that sets ``block`` and writes ``body`` in one write, as Go's server (``chunkWriter.writeHeader``)
    turns them into bytes; ``block`` is consumed."""
    no_body = bodyless(status)
    te = _first(block, "Transfer-Encoding")
    declared: int | None = None
    if "Content-Length" in block:
        text = _first(block, "Content-Length")
        if _DECIMAL.fullmatch(text) and int(text) >= 0:
            declared = int(text)
        else:
            del block["Content-Length"]  # Go logs an invalid length and drops it
    # the body's one write: refused for a status without a body, and when longer than declared
    written = b"" if no_body or (declared is not None and len(body) > declared) else body
    tail: list[bytes] = []
    computed = not te and not no_body and declared is None and len(written) <= BUFFERED
    if computed:
        tail.append(b"Content-Length: %d\r\n" % len(written))
    if no_body:
        for name in ("Content-Type", "Content-Length", "Transfer-Encoding") if status == 304 else ("Content-Length",):
            block.pop(name, None)
    elif "Content-Type" not in block and not _first(block, "Content-Encoding") and not te and written:
        tail.append(f"Content-Type: {detect_content_type(written)}\r\n".encode())
    dated = "Date" in block
    has_length = declared is not None or computed
    if has_length and te and te != "identity":
        block.pop("Content-Length", None)
        has_length = False
    chunked = keep_alive = False
    if no_body or has_length:
        block.pop("Transfer-Encoding", None)
        keep_alive = no_body or declared is None or declared == len(body)
    elif te == "identity":
        block.pop("Transfer-Encoding", None)  # the end of the body is the end of the connection
    else:
        chunked = keep_alive = True
        tail.append(TE_LINE)
        if te == "chunked":
            del block["Transfer-Encoding"]
    if chunked:
        written = (b"%x\r\n" % len(written) + written + b"\r\n" if written else b"") + b"0\r\n\r\n"
    head = status_line(status) + header_lines(block)
    return head, b"".join(tail), written, keep_alive, dated


def go_journal_parts(body: bytes, headers: Headers) -> bytes | None:
    """``journal_parts`` with the headers in the order Hoverfly's journal writes them: its map's
    names sorted, as Go encodes a map."""
    return journal_parts(body, tuple(sorted(headers_map(headers).items())))


def headers_map(headers: Headers) -> dict[str, tuple[str, ...]]:
    """The headers as Hoverfly's header map holds them: a name spelled twice keeps both values."""
    out: dict[str, tuple[str, ...]] = {}
    for name, values in headers:
        out[name] = (*out.get(name, ()), *values)
    return out


def go_rendered(resp: Response, path: str, pair: str = "") -> RenderedResponse:
    """``render_response`` in Go's layout: one wire for both modes (Go's server canonicalises the
    names either way)."""
    check_headers(resp, path)
    wire = go_wire(resp, pair)
    return RenderedResponse(wire, wire)


def as_go(wire: Wire) -> Wire:
    """A wire made in the spec's layout (an error, a forwarded or middleware answer, a templated
    one rendered per request) in Go's: a hit's length set by Hoverfly's handler, the others Go's."""
    resp = Response(wire.status, wire.raw_body, headers=wire.headers, post_serve_action=wire.post_serve_action)
    go = go_wire(resp, wire.pair, handler_length=wire.outcome == "hit", outcome=wire.outcome)
    return replace(go, fault=wire.fault) if wire.fault is not None else go


def go_tunnelled(wire: Wire) -> Wire:
    """``wire`` as Hoverfly writes it inside an intercepted tunnel, where goproxy writes the
    response itself: the handler's header map sorted as stored (no canonical names), its
    ``Content-Length`` dropped for ``Transfer-Encoding: chunked`` (not for a 204), ``Connection:
    close``, no ``Date`` and no sniffed type; the body in one chunk. Written as it is (``tail``
    empty, ``dated``), and the connection closed after it."""
    block = headers_map(wire.journaled_headers)
    if wire.status != 204:
        block.pop("Content-Length", None)
        block["Transfer-Encoding"] = ("chunked",)
    block["Connection"] = ("close",)
    lines = b"".join(
        f"{name}: {value.strip(_SPACE)}\r\n".encode("utf-8", "surrogateescape")
        for name in sorted(block)
        if _TOKEN.fullmatch(name)
        for value in block[name]
    )
    body = wire.raw_body
    framed = b"" if wire.status == 204 else (b"%x\r\n" % len(body) + body + b"\r\n" if body else b"") + b"0\r\n\r\n"
    return replace(wire, head=status_line(wire.status) + lines, body=framed, content=body, keep_alive=False,
                   dated=True, tail=b"")  # fmt: skip


class GoShape(WireShape):
    """``WireShape`` in Go's layout: the sorted headers split where Hoverfly's ``Content-Length``
    goes, set per body (an empty body gets Go's ``Content-Length: 0`` after ``Date`` instead)."""

    __slots__ = ("after", "before")

    def __init__(self, resp: Response, sniff: bool, pair: str) -> None:
        block = merged(resp.headers)
        names = sorted(block)
        before = {name: block[name] for name in names if name < "Content-Length"}
        after = {name: block[name] for name in names if name > "Content-Length"}
        super().__init__(resp, b"", sniff, b"", pair)
        self.dated = "Date" in block
        self.before = status_line(resp.status) + header_lines(before)
        self.after = header_lines(after)

    def wire(self, text: str) -> Wire:
        body = text.encode("utf-8", "surrogateescape")
        if body:
            head = b"%s%s%d\r\n%s" % (self.before, b"Content-Length: ", len(body), self.after)
            tail = f"Content-Type: {detect_content_type(body)}\r\n".encode() if self.sniff else b""
            journaled: Headers = (*self.headers, ("Content-Length", (str(len(body)),)))
        else:
            head, tail, journaled = self.before + self.after, EMPTY_LENGTH, self.headers
        return Wire(
            head, body, True, self.status, self.headers, None, go_journal_parts(body, journaled), "hit", self.pair,
            self.post_serve_action, self.dated, self.fault, b"", tail, bool(body),
        )  # fmt: skip


def go_shape(resp: Response, path: str, pair: str = "") -> WireShape | None:
    """``wire_shape`` in Go's layout (one for both modes)."""
    if wire_shape(resp, path, pair) is None:
        return None
    lower = {name.lower() for name, _ in resp.headers}
    return GoShape(resp, not lower & {"content-type", "content-encoding", "transfer-encoding"}, pair)


def written_head(wire: Wire, tail: bytes, date: bytes, keep: bool, head_only: bool) -> bytes:
    """The head of a wire in Go's layout as written: ``Date`` after the sorted headers (unless the
    map has its own), then Go's additions, ``Connection: close`` before a chunked framing. A HEAD
    request gets no computed length of an empty body, and no chunked framing."""
    if head_only:
        if not wire.body and tail.startswith(EMPTY_LENGTH):
            tail = tail[len(EMPTY_LENGTH) :]
        if tail.endswith(TE_LINE):
            tail = tail[: -len(TE_LINE)]
    if not keep:
        tail = tail[: -len(TE_LINE)] + CLOSE_LINE + TE_LINE if tail.endswith(TE_LINE) else tail + CLOSE_LINE
    if wire.dated:
        return b"".join((wire.head, tail, b"\r\n"))
    return b"".join((wire.head, b"Date: ", date, b"\r\n", tail, b"\r\n"))
