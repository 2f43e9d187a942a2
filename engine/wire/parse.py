"""From an HTTP/1.1 request to ``RequestDetails``: the proxy's rules, in one place.

The proxy port builds every request it serves with ``build_request``; the journal's packed
entries keep the request's bytes as they came and rebuild it with ``read_request``, through the
same rules, when the journal is read. What the bytes alone do not say (a CONNECT tunnel the
request came through, ``-webserver``, ``-auth``) is the request's ``Arrival``.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

import httptools

from simproxy.engine.errors import RequestRejected
from simproxy.engine.wire.request import RequestDetails, canonical_header, request_path

_SKIPPED_HEADERS = frozenset({"host", "transfer-encoding"})


@dataclass(frozen=True, slots=True)
class Arrival:
    """How a request reached the proxy, besides its bytes."""

    webserver: bool = False
    """``-webserver``: origin-form targets, scheme always ``http``."""
    strip_proxy_authorization: bool = False
    """``-auth``: the ``Proxy-Authorization`` header is the proxy's, not the request's."""
    tunnel_authority: str = ""
    """Inside a CONNECT tunnel: the CONNECT's ``host:port`` ("" outside one)."""
    tunnel_scheme: str = ""
    """Inside a CONNECT tunnel: the scheme of the requests it carries."""
    own_port: int | None = None
    """The proxy port: a proxy-mode request addressed to it is refused (None: not checked)."""
    http2: bool = False
    """The request came over HTTP/2 (engine/server/http2.py), not HTTP/1.1."""

    def encode(self) -> bytes:
        """The stored form (``own_port`` left out: a stored request was accepted already)."""
        flags = "w" * self.webserver + "a" * self.strip_proxy_authorization + "2" * self.http2
        return "\n".join((flags, self.tunnel_authority, self.tunnel_scheme)).encode("utf-8", "surrogateescape")

    @classmethod
    def decode(cls, data: bytes) -> Arrival:
        flags, authority, scheme = data.decode("utf-8", "surrogateescape").split("\n")
        return cls("w" in flags, "a" in flags, authority, scheme, http2="2" in flags)


NAME_KEPT_LENGTH = 64
"""Longer header names are canonicalised each time, never kept (a client could send huge ones)."""
NAMES_KEPT = 1024
"""Distinct header names a worker remembers the canonical form of (a client sending ever new names
only costs the computation)."""


def build_request(
    method: str,
    url: bytes,
    raw_headers: Iterable[tuple[bytes, bytes]],
    body: bytes,
    arrival: Arrival,
    names: dict[str, str] | None = None,
) -> RequestDetails:
    """Hoverfly's view of a request: canonical header names (no ``Host``, no ``Transfer-Encoding``),
    the destination from an absolute target, the tunnel or ``Host``, a gzip body decompressed.
    ``RequestRejected`` when it cannot be served. ``names``: a worker's memo of canonical header
    names (the same few names come on every request; at most ``NAMES_KEPT`` are remembered)."""
    if names is None:
        names = {}
    headers: dict[str, list[str]] = {}
    host = ""
    encoding = ""
    for raw_name, raw_value in raw_headers:
        name = raw_name.decode("latin-1")
        value = raw_value.decode("utf-8", "surrogateescape")
        lower = name.lower()
        if lower == "host":
            host = host or value
        elif lower == "content-encoding" and not encoding:
            encoding = value
        if lower not in _SKIPPED_HEADERS and not (lower == "proxy-authorization" and arrival.strip_proxy_authorization):
            canonical = names.get(name)
            if canonical is None:
                canonical = canonical_header(name)
                if len(names) < NAMES_KEPT and len(name) <= NAME_KEPT_LENGTH:
                    names[name] = canonical
            headers.setdefault(canonical, []).append(value)
    if url[:1] != b"/" and (url[:7].lower() == b"http://" or url[:8].lower() == b"https://"):
        parsed = httptools.parse_url(url)
        scheme = parsed.schema.decode("latin-1").lower()
        authority = parsed.host.decode("ascii" if parsed.host.isascii() else "utf-8")
        if parsed.port is not None:
            authority = f"{authority}:{parsed.port}"
        raw_path, raw_query = parsed.path or b"", parsed.query or b""
    elif arrival.tunnel_scheme:
        scheme, authority = arrival.tunnel_scheme, host or arrival.tunnel_authority
        raw_path, _, raw_query = url.partition(b"?")
        raw_query = raw_query.partition(b"#")[0]
    else:
        if not host:
            raise RequestRejected(400, "Cannot handle requests without Host header, e.g., HTTP 1.0\n")
        if arrival.own_port is not None and not arrival.webserver and port_of(host) == arrival.own_port:
            raise RequestRejected(500, "This is a proxy server. Does not respond to non-proxy requests.\n")
        scheme, authority = "http", host
        raw_path, _, raw_query = url.partition(b"?")
        raw_query = raw_query.partition(b"#")[0]
    if body and encoding and encoding.strip().lower() == "gzip":
        body = _gunzip(body)
    return RequestDetails.build(
        method,
        "http" if arrival.webserver else scheme,
        authority,
        request_path(raw_path.decode("utf-8", "surrogateescape")),
        raw_query.decode("utf-8", "surrogateescape"),
        body.decode("utf-8", "surrogateescape"),
        headers,
    )


MEMO_BYTES = 4096
"""Requests read in more bytes than this are built every time (their bodies are not kept twice)."""
MEMO_SIZE = 128
"""Requests a ``RequestMemo`` holds built (with their bytes: 1 MB at most); it starts again empty
when full."""
SEEN_SIZE = 4096
"""Requests a ``RequestMemo`` knows the bytes of (by their hash), to tell when they come again."""
ARRIVALS_KEPT = 16
"""Ways of arriving (the proxy port, each tunnel's authority) that keep a memo of their own."""


class RequestMemo:
    """The requests built from bytes that came before, in the same way (``Arrival``): a load test
    sends the same few requests again and again, and the same bytes give the same request.

    The bytes' hash is remembered the first time, and the request built from them kept only when
    they come a second time: a stream of requests that never repeat (a unique id in each) keeps no
    built request alive for the garbage collector to scan again and again. ``RequestDetails`` is
    immutable, so the requests served from one memo entry can share it."""

    __slots__ = ("_built", "_seen")

    def __init__(self) -> None:
        self._seen: set[int] = set()
        self._built: dict[bytes, tuple[bytes, RequestDetails]] = {}

    def get(self, raw: bytes) -> tuple[bytes, RequestDetails] | None:
        """The request ``raw`` (the bytes of exactly one request) was built into before, if kept,
        with the first bytes object that held them (the journal keeps that one: the read is freed).
        Bytes beyond ``MEMO_BYTES`` are never kept, so they are not even hashed to look."""
        return None if len(raw) > MEMO_BYTES else self._built.get(raw)

    def keep(self, raw: bytes, req: RequestDetails) -> None:
        """``req`` was built from ``raw``: kept if those bytes came before."""
        if len(raw) > MEMO_BYTES:
            return
        seen = hash(raw)  # computed once per bytes object: get() made it already
        if seen in self._seen:
            if len(self._built) >= MEMO_SIZE:
                self._built.clear()
            self._built[raw] = (raw, req)
        else:
            if len(self._seen) >= SEEN_SIZE:
                self._seen.clear()
            self._seen.add(seen)


class RequestMemos:
    """A worker's memos, one per way of arriving: the same bytes inside a tunnel to another host,
    or through the proxy port, make another request."""

    __slots__ = ("_memos",)

    def __init__(self) -> None:
        self._memos: dict[bytes, RequestMemo] = {}

    def of(self, arrival: bytes) -> RequestMemo:
        """The memo of the requests that arrive as ``arrival`` (``Arrival.encode()``) says."""
        memo = self._memos.get(arrival)
        if memo is None:
            memo = RequestMemo()
            if len(self._memos) < ARRIVALS_KEPT:  # beyond that, a memo of the connection's own
                self._memos[arrival] = memo
        return memo


def read_request(data: bytes, arrival: Arrival) -> RequestDetails:
    """The first request in ``data`` (bytes the proxy received whole), built as the proxy built it."""
    message = _Message()
    parser = httptools.HttpRequestParser(message)
    try:
        parser.feed_data(data)
    except httptools.HttpParserUpgrade:
        pass  # an Upgrade request: its head and body were read
    except httptools.HttpParserError:
        if not message.complete:  # else: what follows the request is not part of it
            raise
    if not message.complete:
        raise ValueError("not a whole HTTP request")
    method = parser.get_method().decode("latin-1")
    return build_request(method, message.url, message.headers, b"".join(message.body), arrival)


class _Message:
    """httptools callbacks collecting one request."""

    def __init__(self) -> None:
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.complete = False

    def on_message_begin(self) -> None:
        if self.complete:
            raise _Done

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        self.complete = True


class _Done(Exception):
    """A second request begins: the parser stops there."""


def port_of(host: str) -> int | None:
    """The port of a ``Host`` value (``h``, ``h:80``, ``[::1]:80``), or None when it names none."""
    _, sep, port = host.rpartition(":")
    if not sep or not port.isdigit() or host.endswith("]"):
        return None
    return int(port)


def _gunzip(body: bytes) -> bytes:
    try:
        return gzip.decompress(body)
    except (OSError, EOFError, zlib.error):
        return body  # Hoverfly matches the raw body when it cannot be gunzipped
