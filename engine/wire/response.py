"""Turning pairs and errors into HTTP/1.1 response bytes, rendered once per pair at compile time.

``Date`` is added per response (Go's server adds it); everything else is fixed when a simulation
is compiled. Header names are written as stored in proxy mode and canonicalised in webserver mode.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from http import HTTPStatus

import orjson

from simproxy.engine.errors import SimulationError
from simproxy.engine.gocompat.sniff import detect_content_type
from simproxy.engine.simulation.model import Fault, Response
from simproxy.engine.wire.hot import hot_value
from simproxy.engine.wire.request import canonical_header

# Go's http.StatusText, which writes the status line Hoverfly's clients see; Python's phrases
# differ in two places, and Go names an unknown code "status code N".
_REASONS = {s.value: s.phrase for s in HTTPStatus} | {414: "Request URI Too Long", 418: "I'm a teapot"}
_NOT_SNIFFED = frozenset({"content-type", "content-encoding", "transfer-encoding"})
"""Go's server sniffs a body's type only when the handler set none of these."""


def bodyless(status: int) -> bool:
    """No body, and so neither length nor type, goes with this status: 1xx, 204 and 304."""
    return status < 200 or status == 204 or status == 304


def status_line(status: int) -> bytes:
    return f"HTTP/1.1 {status} {_REASONS.get(status) or f'status code {status}'}\r\n".encode("latin-1")


@hot_value
class Wire:
    """A response ready to write: ``head`` ends with the last header line; Date and CRLF follow.
    Made per request for templated answers, hence ``hot_value`` (engine/wire/hot.py)."""

    head: bytes
    body: bytes
    """Already framed: chunk-encoded when the pair declares ``Transfer-Encoding: chunked``."""
    keep_alive: bool = True
    """False when the declared Content-Length disagrees with the body: the connection must close."""
    status: int = 200
    headers: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """The response headers as the journal records them (no Date, no framing headers added)."""
    content: bytes | None = None
    """The unframed body when ``body`` is chunk-encoded (the journal records the content)."""
    journal: bytes | None = None
    """The response body and headers as the journal stores them, encoded once with the wire
    (``journal_parts``; None when the body is not UTF-8 text: the journal then takes its careful path)."""
    outcome: str = "hit"
    """For the metrics: ``hit`` (a pair answered), ``miss`` (no pair matched) or ``error``."""
    pair: str = ""
    """For the metrics: the pair that answered (its first label, or ``pair-<index>``)."""
    post_serve_action: str = ""
    """The post-serve action the response names (run after it is sent, in simulate and synthesize)."""
    dated: bool = False
    """``head`` carries the response's own ``Date`` (a captured pair's, a real service's): the server
    adds none, as Go's server adds one only when the handler set none."""
    fault: Fault | None = None
    """A fault the server applies when it writes this answer (engine/server/faults.py): the pair's
    own (its fraction rolled by the server), or a global one the dispatcher rolled and set."""
    sniffed: bytes = b""
    """The ``Content-Type`` line in ``head`` that Go's server would have sniffed and added (the
    response has none); Hoverfly's intercepted tunnel, which is not Go's server, sends none."""
    tail: bytes | None = None
    """Go's layout (``-compat hoverfly``, engine/wire/golayout.py): ``head`` holds the sorted headers
    and this the lines Go's server adds after ``Date``; None: the spec's layout, all in ``head``."""
    set_length: bool = False
    """Hoverfly's handler set ``Content-Length`` itself (Go's layout): its journal lists it."""
    trailers: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Trailer fields sent after the body over HTTP/2 (engine/server/http2.py); HTTP/1.1 sends none."""

    @property
    def raw_body(self) -> bytes:
        return self.body if self.content is None else self.content

    @property
    def journaled_headers(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The response headers as the journal records them: with the length Hoverfly's handler set."""
        if self.set_length:
            return (*self.headers, ("Content-Length", (str(len(self.raw_body)),)))
        return self.headers


@dataclass(frozen=True, slots=True)
class RenderedResponse:
    proxy: Wire
    webserver: Wire


def render_response(resp: Response, path: str, pair: str = "") -> RenderedResponse:
    """Render a pair's response for both proxy and webserver mode, rejecting unsendable headers."""
    check_headers(resp, path)
    journal = journal_parts(resp.body, resp.headers)  # one copy for both wires
    return RenderedResponse(
        _render(resp, canonical=False, pair=pair, journal=journal),
        _render(resp, canonical=True, pair=pair, journal=journal),
    )


def render_wire(resp: Response, path: str, pair: str = "", *, webserver: bool = False, outcome: str = "hit") -> Wire:
    """The one wire a mode serves (a templated response, rendered per request): ``render_response``'s
    proxy or webserver half, counted in the metrics as ``outcome``."""
    check_headers(resp, path)
    journal = journal_parts(resp.body, resp.headers)
    return _render(resp, canonical=webserver, pair=pair, journal=journal, outcome=outcome)


def check_headers(resp: Response, path: str) -> None:
    for name, values in (*resp.headers, *resp.trailers):
        if not name or any(c in name for c in "\r\n:") or any(("\r" in v or "\n" in v) for v in values):
            raise SimulationError(f"{path}.headers.{name}", "header names and values cannot contain line breaks")


def _head_lines(resp: Response, canonical: bool, *, chunked: bool = False) -> list[bytes]:
    """The status line and a line per header value, names as stored or canonical (webserver mode).
    A ``chunked`` answer leaves out any declared ``Content-Length``: a sender must never send both
    (RFC 9112 §6.1; a receiver that trusts the other one is how request smuggling starts), and Go's
    server, and so Hoverfly, sends the chunked framing alone."""
    lines = [status_line(resp.status)]
    for name, values in resp.headers:
        if chunked and name.lower() == "content-length":
            continue
        written = canonical_header(name) if canonical else name
        lines.extend(f"{written}: {value}\r\n".encode("utf-8", "surrogateescape") for value in values)
    return lines


def _sniffed_line(body: bytes) -> bytes:
    """The ``Content-Type`` line Go's server adds to a body sent without one."""
    return f"Content-Type: {detect_content_type(body)}\r\n".encode()


def _render(resp: Response, *, canonical: bool, pair: str, journal: bytes | None, outcome: str = "hit") -> Wire:
    lower = {name.lower() for name, _ in resp.headers}
    no_body = bodyless(resp.status)
    chunked = (
        not no_body
        and "transfer-encoding" in lower
        and any("chunked" in v.lower() for n, vs in resp.headers if n.lower() == "transfer-encoding" for v in vs)
    )
    lines = _head_lines(resp, canonical, chunked=chunked)
    body = resp.body
    keep_alive = True
    if no_body:
        body = b""  # Go's server refuses a body here (ErrBodyNotAllowed) and sends no length
    elif chunked:
        body = (f"{len(body):x}\r\n".encode() + body + b"\r\n" if body else b"") + b"0\r\n\r\n"
    elif "content-length" in lower:
        declared = next(vs for n, vs in resp.headers if n.lower() == "content-length")
        keep_alive = bool(declared) and declared[0].strip() == str(len(body))
    else:
        lines.append(f"Content-Length: {len(body)}\r\n".encode())
    sniffed = b""
    if body and not lower & _NOT_SNIFFED:  # Go's server sniffs the type of a plain body sent without one
        sniffed = _sniffed_line(resp.body)
        lines.append(sniffed)
    return Wire(
        b"".join(lines),
        body,
        keep_alive,
        resp.status,
        resp.headers,
        None if body is resp.body else resp.body,
        journal,
        outcome,
        pair,
        resp.post_serve_action,
        "date" in lower,
        resp.fault,
        sniffed,
        trailers=resp.trailers,
    )


def as_hoverfly_tunnels_it(wire: Wire) -> Wire:
    """``wire`` as Hoverfly writes it inside an intercepted tunnel, where goproxy writes the
    response itself rather than Go's server: chunked, the connection closed after it, and neither
    a ``Date`` nor a sniffed ``Content-Type`` added (``-compat hoverfly``)."""
    if wire.sniffed:  # a whole line: the same text inside another header's line is not it
        wire = replace(wire, head=wire.head.replace(b"\r\n" + wire.sniffed, b"\r\n", 1), sniffed=b"")
    return replace(chunked_instead(wire, always=True), dated=True)


def chunked_instead(wire: Wire, *, always: bool = False) -> Wire:
    """``wire`` sent chunked when its head declares a ``Content-Length`` its body disagrees with: a
    client inside a tunnel would read a broken answer. ``always`` (``-compat hoverfly``): chunked
    whatever its length, and the connection closed after it, as Hoverfly sends every tunnelled answer."""
    lines = wire.head.split(b"\r\n")
    if always and bodyless(wire.status):
        return replace(wire, keep_alive=False)  # a status without a body is not chunked either
    if always:
        if any(line[:18].lower() == b"transfer-encoding:" for line in lines):
            return replace(wire, keep_alive=False)  # already chunk-framed
    elif wire.keep_alive:
        return wire
    declared = [line for line in lines if line[:15].lower() == b"content-length:"]
    if not always and (not declared or declared[0][15:].strip() == str(len(wire.body)).encode()):
        return wire
    kept = [line for line in lines if line and line[:15].lower() != b"content-length:"]
    head = b"\r\n".join(kept) + b"\r\nTransfer-Encoding: chunked\r\n"
    body = (f"{len(wire.body):x}\r\n".encode() + wire.body + b"\r\n" if wire.body else b"") + b"0\r\n\r\n"
    return replace(wire, head=head, body=body, content=wire.raw_body, keep_alive=False)


def journal_parts(body: bytes, headers: tuple[tuple[str, tuple[str, ...]], ...]) -> bytes | None:
    """The response part of a journal entry, encoded once with the wire: the body as a JSON string
    and the headers as a JSON object, behind the body's length (``split_journal_parts``). None
    when the body is not UTF-8 text."""
    try:
        text = orjson.dumps(body.decode("utf-8"))
        encoded_headers = _journal_headers(headers)
    except (UnicodeDecodeError, orjson.JSONEncodeError):
        return None
    return _journal_joined(text, encoded_headers)


def _journal_headers(headers: tuple[tuple[str, tuple[str, ...]], ...]) -> bytes:
    return orjson.dumps({k: list(v) for k, v in headers})


def _journal_joined(body_json: bytes, headers_json: bytes) -> bytes:
    return b"".join((len(body_json).to_bytes(4, "little"), body_json, headers_json))


class WireShape:
    """Everything of a response's wire but its body, for a body rendered per request (a templated
    response whose status and headers do not change): ``wire(body)`` gives what ``render_wire``
    gives for the response with that body, without walking the headers again."""

    __slots__ = ("dated", "fault", "head", "headers", "journal_headers", "pair", "post_serve_action", "sniff", "status")

    def __init__(self, resp: Response, head: bytes, sniff: bool, journal_headers: bytes, pair: str) -> None:
        self.head = head
        self.sniff = sniff
        self.journal_headers = journal_headers
        self.status = resp.status
        self.headers = resp.headers
        self.pair = pair
        self.post_serve_action = resp.post_serve_action
        self.dated = any(name.lower() == "date" for name, _ in resp.headers)
        self.fault = resp.fault

    def wire(self, text: str) -> Wire:
        """The wire with ``text`` as its body (encoded as templates are: UTF-8, lone surrogates
        kept as the bytes they came from)."""
        body = text.encode("utf-8", "surrogateescape")
        head = self.head + b"Content-Length: %d\r\n" % len(body)
        sniffed = b""
        if body and self.sniff:
            sniffed = _sniffed_line(body)
            head += sniffed
        try:  # what journal_parts gives, without decoding the body again in the common case
            encoded = orjson.dumps(text)
        except orjson.JSONEncodeError:  # lone surrogates: the bytes they stand for may still be UTF-8
            try:
                encoded = orjson.dumps(body.decode("utf-8"))
            except UnicodeDecodeError:
                encoded = b""
        journal = _journal_joined(encoded, self.journal_headers) if encoded else None
        return Wire(
            head, body, True, self.status, self.headers, None, journal, "hit", self.pair, self.post_serve_action,
            self.dated, self.fault, sniffed,
        )  # fmt: skip


def wire_shape(resp: Response, path: str, pair: str = "", *, webserver: bool = False) -> WireShape | None:
    """The shape of ``resp``'s wire for any body, or None when the body decides more than its length
    (a status without a body, a declared ``Content-Length`` or ``Transfer-Encoding``), or a header
    would be refused (``render_wire`` then says why)."""
    lower = {name.lower() for name, _ in resp.headers}
    if bodyless(resp.status) or lower & {"content-length", "transfer-encoding"}:
        return None
    try:
        check_headers(resp, path)
        journal_headers = _journal_headers(resp.headers)
    except (SimulationError, orjson.JSONEncodeError):
        return None
    head = b"".join(_head_lines(resp, webserver))
    return WireShape(resp, head, not lower & _NOT_SNIFFED, compact(journal_headers), pair)


def split_journal_parts(parts: bytes) -> tuple[bytes, bytes]:
    """(the body's JSON, the headers' JSON) of ``journal_parts``."""
    end = 4 + int.from_bytes(parts[:4], "little")
    return parts[4:end], parts[end:]


def compact(data: bytes) -> bytes:
    """A copy of exactly ``data``'s size: what ``orjson.dumps`` returns keeps its working buffer
    (4 KB for a few hundred bytes), which adds up in anything kept per pair or per entry."""
    return bytes(memoryview(data))


def proxy_auth_required(text: str) -> Wire:
    """Hoverfly's 407 when ``-auth`` is on and the proxy credentials are missing or wrong; the
    connection closes after it. Not journaled or counted (outcome ``refused``), as in Hoverfly."""
    body = text.encode("utf-8")
    head = status_line(407) + (
        b"Content-Type: text/plain; charset=utf-8\r\nProxy-Authenticate: Basic realm=hoverfly\r\n"
        b"Proxy-Connection: close\r\nContent-Length: %d\r\n" % len(body)
    )
    return Wire(head, body, keep_alive=False, status=407, outcome="refused")


def plain_error(status: int, text: str, *, content_type: str = "text/plain", outcome: str = "error") -> Wire:
    """A plain-text response such as Hoverfly's 502 (``Content-Type: text/plain``, no charset)."""
    body = text.encode("utf-8", "surrogateescape")
    head = status_line(status) + f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n".encode()
    headers = (("Content-Type", (content_type,)),)
    return Wire(head, body, True, status, headers, None, journal_parts(body, headers), outcome)
