"""The one outgoing HTTP client: real services (capture, spy misses, modify, diff), remote middleware
and post-serve actions, and body files named by URL (engine/outbound/bodyfiles.py).

Hoverfly's client rules (hoverfly-admin.md §7.10): no redirects followed, TLS verification per
``-tls-verification``, ``-upstream-proxy`` for every call, and the body passed through as it came
(compressed bodies stay compressed) unless the client sent no ``Accept-Encoding``: then, like Go's
transport, it asks for gzip itself and hands back the decompressed body without
``Content-Encoding`` and ``Content-Length``. Each answer carries ``Hoverfly: Was-Here``.

A request that came over HTTP/2 and goes to an ``https`` service directly goes out over HTTP/2
when the service offers it by ALPN (engine/outbound/h2upstream.py), else as any other.

aiohttp does the pooling, proxies and TLS; its helpful defaults (cookie jar, automatic
``User-Agent``/``Content-Type``/``Accept-Encoding``, decompression) are all switched off here.
It is imported by the first call out, so a worker that never calls out does not load it.
"""

from __future__ import annotations

import asyncio
import gzip
import importlib
import ssl
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from simproxy.engine.errors import UpstreamError
from simproxy.engine.outbound.clientauth import ClientAuthentication
from simproxy.engine.outbound.goerrors import dial_error, nameserver, tls_problem
from simproxy.engine.wire.request import RequestDetails, canonical_header, go_escape_path, valid_escapes

if TYPE_CHECKING:
    import aiohttp

    from simproxy.engine.outbound.h2upstream import Http2Upstream

Headers = tuple[tuple[str, tuple[str, ...]], ...]

HOP_BY_HOP = frozenset(
    {"connection", "proxy-connection", "keep-alive", "proxy-authorization", "te", "upgrade", "transfer-encoding",
     "content-length", "host"}
)  # fmt: skip
"""Request headers that describe one connection, not the request: never forwarded as they came."""
_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~$&+,/:;=@!*'()%")
DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class UpstreamResponse:
    status: int
    headers: Headers
    """Canonical names in arrival order, repeated names merged (``Hoverfly: Was-Here`` added when marked)."""
    body: bytes
    elapsed_ms: int
    """Round trip from sending the request to the last body byte (capture's ``captureDelay``)."""
    trailers: Headers = ()
    """Trailer fields sent after the body (over HTTP/2), canonical names, repeated names merged."""


@dataclass(frozen=True, slots=True)
class UpstreamOptions:
    tls_verify: bool = True
    proxy: str = ""
    """``-upstream-proxy``, ``http://`` added when it names no scheme; empty: connect directly."""
    timeout: float = DEFAULT_TIMEOUT
    client_auth: ClientAuthentication | None = None
    go_client: bool = False
    """``-compat hoverfly``: requests go out with the headers Go's client writes (``go_request_headers``)."""


GO_USER_AGENT = "Go-http-client/1.1"
_GO_OWN = frozenset({"host", "user-agent", "content-length", "transfer-encoding", "trailer"})


def go_request_headers(method: str, headers: list[tuple[str, str]], body: bytes) -> tuple[list[tuple[str, str]], bool]:
    """The headers after ``Host`` as Go's client writes them, and whether it asked for gzip itself:
    ``User-Agent`` (Go's own when none was given), ``Content-Length`` (a body, or a POST, PUT or
    PATCH without one), the others by canonical name, then ``Accept-Encoding: gzip`` when the request
    names no encoding and no range (not for HEAD)."""
    named: dict[str, list[str]] = {}
    for name, value in headers:
        named.setdefault(canonical_header(name), []).append(value)
    out = [("User-Agent", named["User-Agent"][0] if "User-Agent" in named else GO_USER_AGENT)]
    if body or method in ("POST", "PUT", "PATCH"):
        out.append(("Content-Length", str(len(body))))
    out.extend((name, value) for name in sorted(named) if name.lower() not in _GO_OWN for value in named[name])
    gzip_asked = "Accept-Encoding" not in named and "Range" not in named and method != "HEAD"
    if gzip_asked:
        out.append(("Accept-Encoding", "gzip"))
    return [(name, value) for name, value in out if value or name != "User-Agent"], gzip_asked


def proxy_url(value: str) -> str:
    """Hoverfly's rule for ``-upstream-proxy``: a value without a scheme is an ``http://`` proxy."""
    if not value:
        return ""
    return value if "://" in value else f"http://{value}"


def outgoing_path(path: str) -> str:
    """The path as sent: kept when it is already a valid escaped path (Go's ``EscapedPath``), else escaped."""
    if path and all(c in _PATH_CHARS for c in path) and valid_escapes(path):
        return path
    return go_escape_path(path) or "/"


def outgoing_url(req: RequestDetails) -> str:
    url = f"{req.scheme or 'http'}://{req.destination}{outgoing_path(req.path)}"
    return f"{url}?{req.raw_query}" if req.raw_query else url


def request_body(req: RequestDetails) -> bytes:
    """The body as forwarded: re-gzipped when the request says ``Content-Encoding: gzip`` (Hoverfly)."""
    body = req.body.encode("utf-8", "surrogateescape")
    encoding = req.headers_lower.get("content-encoding")
    if body and encoding and encoding[0].strip().lower() == "gzip":
        return gzip.compress(body, mtime=0)
    return body


class Upstream:
    """One pooled client per worker; created lazily on the worker's loop, closed with the worker."""

    def __init__(self, options: UpstreamOptions | None = None) -> None:
        self.options = options or UpstreamOptions()
        self._session: aiohttp.ClientSession | None = None
        self._client_context: ssl.SSLContext | None = None
        self._nameserver = nameserver()
        """Named in DNS failures, as Go's resolver names the server it asked."""
        self._http2: Http2Upstream | None = None
        """Made by the first request that came over HTTP/2 for an ``https`` service."""

    def _client(self) -> aiohttp.ClientSession:
        import aiohttp

        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(ssl=self.options.tls_verify, limit=0)
            self._session = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,
                skip_auto_headers=("User-Agent", "Content-Type", "Accept-Encoding", "Accept"),
                timeout=aiohttp.ClientTimeout(total=self.options.timeout),
            )
        return self._session

    @property
    def ready(self) -> bool:
        """The HTTP client is loaded (``prepare``, or a request, made it)."""
        return self._session is not None and not self._session.closed

    async def prepare(self) -> None:
        """Load the HTTP client before a request needs it: its imports take a quarter of a second,
        which the first forwarded request would otherwise wait (done in a thread, off the loop)."""
        if self._session is None:
            await asyncio.to_thread(importlib.import_module, "aiohttp")
            self._client()

    async def aclose(self) -> None:
        if self._http2 is not None:
            await self._http2.aclose()
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def forward(self, req: RequestDetails, *, proxy: str | None = None, mark: bool = True) -> UpstreamResponse:
        """Send ``req`` to where it was going and read the whole answer (through ``proxy`` when
        given, "" meaning directly; else through ``-upstream-proxy``), marked ``Hoverfly: Was-Here``
        unless ``mark`` is False."""
        headers: list[tuple[str, str]] = [
            (name, value) for name, values in req.headers.items() if name.lower() not in HOP_BY_HOP for value in values
        ]
        decompress = "accept-encoding" not in req.headers_lower
        if decompress and not self.options.go_client:  # Go's client adds it itself (send)
            headers.append(("Accept-Encoding", "gzip"))
        url = outgoing_url(req)
        body = request_body(req)
        tls = self._client_tls(req.destination)
        if tls is not None:
            proxy = ""  # Hoverfly's client for these hosts has a transport of its own, without a proxy
        elif req.protocol and req.scheme == "https" and not (self.options.proxy if proxy is None else proxy):
            answer = await self._over_http2(req.method, req.destination, url, headers, body, decompress, mark)
            if answer is not None:
                return answer
        return await self.send(
            req.method, url, headers, body, decompress=decompress, proxy=proxy, mark=mark, tls=tls
        )  # fmt: skip

    async def _over_http2(
        self,
        method: str,
        destination: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes,
        decompress: bool,
        mark: bool,
    ) -> UpstreamResponse | None:
        """``url``'s answer over HTTP/2, or None when its service does not offer it (engine/outbound/h2upstream.py)."""
        if self.options.go_client:
            return None
        host, _, port = destination.rpartition(":")
        if not host or not port.isdigit() or (host.startswith("[") != host.endswith("]")):
            host, port = destination, "443"
        if self._http2 is None:  # h2 is imported by the first request that may use it, not at start
            from simproxy.engine.outbound.h2upstream import Http2Upstream

            self._http2 = Http2Upstream(self.options.tls_verify, self.options.timeout)
        if self._http2.lacks_http2(host, int(port)):
            return None
        target = url.split("://", 1)[1]
        target = target[target.find("/") :] if "/" in target else "/"
        started = time.perf_counter()
        try:
            answer = await self._http2.send(method, host, int(port), target, headers, body)
        except TimeoutError as exc:
            raise UpstreamError.of_call(_go_op(method, url), f"no answer within {self.options.timeout:g}s") from exc
        except (OSError, ssl.SSLError, ConnectionError, ValueError) as exc:
            raise UpstreamError.of_call(_go_op(method, url), str(exc) or type(exc).__name__) from exc
        if answer is None:
            return None
        elapsed_ms = round((time.perf_counter() - started) * 1000)
        got = _answer(method, url, answer.status, answer.headers, answer.body, decompress, mark, elapsed_ms)
        if not answer.trailers:
            return got
        merged: dict[str, list[str]] = {}
        for raw_name, raw_value in answer.trailers:
            merged.setdefault(canonical_header(raw_name.decode("latin-1")), []).append(raw_value.decode())
        return replace(got, trailers=tuple((k, tuple(v)) for k, v in merged.items()))

    def _client_tls(self, destination: str) -> ssl.SSLContext | None:
        """The TLS context that presents the client certificate, for a destination that asks for it."""
        auth = self.options.client_auth
        if auth is None or not auth.applies_to(destination):
            return None
        if self._client_context is None:
            self._client_context = auth.context()
        return self._client_context

    async def send(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes,
        *,
        decompress: bool = False,
        proxy: str | None = None,
        mark: bool = False,
        tls: ssl.SSLContext | None = None,
    ) -> UpstreamResponse:
        import aiohttp
        from yarl import URL

        if self.options.go_client:
            headers, asked = go_request_headers(method, headers, body)
            decompress = decompress or asked
        started = time.perf_counter()
        try:
            async with self._client().request(
                method,
                URL(url, encoded=True),
                headers=headers,
                data=body if body or method not in ("GET", "HEAD") else None,
                allow_redirects=False,
                proxy=(proxy_url(self.options.proxy) if proxy is None else proxy) or None,
                ssl=tls if tls is not None else True,  # True: the session's own (-tls-verification)
            ) as resp:
                raw = await resp.read()
                raw_headers = resp.raw_headers
                status = resp.status
        except TimeoutError as exc:
            raise UpstreamError.of_call(_go_op(method, url), f"no answer within {self.options.timeout:g}s") from exc
        except aiohttp.ClientConnectorCertificateError as exc:
            problem = tls_problem(exc.certificate_error)
            raise UpstreamError.of_call(_go_op(method, url), f"tls: failed to verify certificate: {problem}") from exc
        except aiohttp.ClientConnectorError as exc:
            dial = dial_error(exc.host, exc.port or 0, exc.os_error, self._nameserver)
            raise UpstreamError.of_call(_go_op(method, url), dial) from exc
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            raise UpstreamError.of_call(_go_op(method, url), str(exc) or type(exc).__name__) from exc
        elapsed_ms = round((time.perf_counter() - started) * 1000)
        return _answer(method, url, status, raw_headers, raw, decompress, mark, elapsed_ms)


def _answer(
    method: str,
    url: str,
    status: int,
    raw_headers: Iterable[tuple[bytes, bytes]],
    raw: bytes,
    decompress: bool,
    mark: bool,
    elapsed_ms: int,
) -> UpstreamResponse:
    """A service's answer as simproxy keeps it: canonical names merged, a gzip body it asked for
    itself decompressed, ``Hoverfly: Was-Here`` added when ``mark``."""
    merged: dict[str, list[str]] = {}
    for raw_name, raw_value in raw_headers:
        name = canonical_header(raw_name.decode("latin-1"))
        if name == "Transfer-Encoding":
            continue  # the framing of that connection; Go's client drops it too
        merged.setdefault(name, []).append(raw_value.decode("utf-8", "surrogateescape"))
    if decompress and [v.strip().lower() for v in merged.get("Content-Encoding", [])] == ["gzip"]:
        try:
            raw = _gunzip(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise UpstreamError.of_call(_go_op(method, url), f"gzip: invalid body: {exc}") from exc
        merged.pop("Content-Encoding", None)
        merged.pop("Content-Length", None)
    if mark:
        merged.setdefault("Hoverfly", []).append("Was-Here")
    return UpstreamResponse(status, tuple((k, tuple(v)) for k, v in merged.items()), raw, elapsed_ms)


def _go_op(method: str, url: str) -> str:
    """How Go's client names a failed call: ``Get "http://host/path"``."""
    return f'{method[:1].upper()}{method[1:].lower()} "{url}"'


def _gunzip(data: bytes) -> bytes:
    return gzip.decompress(data) if data else data
