"""Middleware: a local program or a remote URL that rewrites a request/response pair
(hoverfly-admin.md §8).

The pair travels as Hoverfly's single-line JSON (``response`` first, then ``request``); the reply has
the same shape and replaces the whole pair. A local middleware is one subprocess per call, run
without blocking the worker, at most ``concurrency`` at once, and killed after ``timeout`` seconds
(Hoverfly waits forever); a remote one is a POST through the worker's pooled client.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
from dataclasses import dataclass
from typing import Any

import orjson

from simproxy.engine.errors import EngineError, UpstreamError
from simproxy.engine.execution.scripts import ScriptFiles, run_program
from simproxy.engine.fleet.config import MiddlewareSpec
from simproxy.engine.gocompat.gojson import unmarshal_error
from simproxy.engine.outbound.goerrors import exec_error
from simproxy.engine.outbound.hooks import HookError, Hooks, hook_name
from simproxy.engine.outbound.pool import PoolBusy, PoolFailure, PoolKey, ProcessPool
from simproxy.engine.outbound.upstream import Upstream
from simproxy.engine.simulation.codec import needs_base64
from simproxy.engine.simulation.model import LogNormal, Response
from simproxy.engine.wire.request import (
    RequestDetails,
    canonical_header,
    go_escape_path,
    joined_query,
    parse_query,
    query_string,
    sort_query_string,
)

log = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 256
DEFAULT_TIMEOUT = 30.0
HOOK_CALLS = 256
"""Calls of an in-process hook a worker lets run or wait at once (``-middleware-queue`` overrides);
beyond them a 503, never an unbounded queue of threads' work."""


class MiddlewareError(EngineError):
    """The middleware failed; the text is Hoverfly's (message, command, stdin, stdout, stderr)."""

    status = 502


class MiddlewareBusy(MiddlewareError):
    """Every long-lived middleware process is busy and the worker's queue for them is full."""

    status = 503


@dataclass(frozen=True, slots=True)
class Exchange:
    """What a middleware sees and returns: a request, and a response (None: not there yet, status 0)."""

    request: RequestDetails
    response: Response | None


TRIAL = Exchange(
    RequestDetails.build("GET", "", "www.test.com", "/", "", "", {"test_header": ["true"]}),
    Response(status=200, body=b"ok", headers=(("test_header", ("true",)),)),
)
"""The pair ``PUT .../middleware`` runs a new middleware on before accepting it."""


def encode_exchange(exchange: Exchange, *, empty_maps: bool = False) -> bytes:
    """The pair as middleware and post-serve actions read it; ``empty_maps``: an empty ``formData``
    or ``headers`` is ``{}`` (Hoverfly's post-serve action payload) instead of ``null``."""
    return orjson.dumps(exchange_document(exchange, empty_maps=empty_maps))


def exchange_document(exchange: Exchange, *, empty_maps: bool = False, own: bool = False) -> dict[str, Any]:
    """The pair as ``encode_exchange`` writes it, as a dict; ``own``: every map and list in it is the
    document's own (an in-process hook may change them in place without touching the request)."""
    req, resp = exchange.request, exchange.response
    response: dict[str, Any] = {"status": 0, "body": "", "encodedBody": False}
    if resp is not None:
        encoded = needs_base64(resp)
        body = base64.b64encode(resp.body).decode("ascii") if encoded else resp.body.decode("utf-8", "replace")
        response = {"status": resp.status, "body": body, "encodedBody": encoded}
        if resp.headers:
            response["headers"] = {name: list(values) for name, values in resp.headers}
        if resp.post_serve_action:
            response["postServeAction"] = resp.post_serve_action
    body = req.body
    if not body.isascii():  # text that is not UTF-8 (kept as surrogates) travels as base64
        raw_body = body.encode("utf-8", "surrogateescape")
        try:
            body = raw_body.decode("utf-8")
        except UnicodeDecodeError:
            body = base64.b64encode(raw_body).decode("ascii")
    request = {
        "path": req.path,
        "method": req.method,
        "destination": req.destination,
        "scheme": req.scheme,
        "query": query_string(req.query) if req.query else "",
        "formData": (_copied(req.form) if own else req.form) or ({} if empty_maps else None),
        "body": body,
        "headers": (_copied(req.headers) if own else req.headers) or ({} if empty_maps else None),
    }
    return {"response": response, "request": request}


def _copied(values: dict[str, list[str]]) -> dict[str, list[str]]:
    return {name: list(items) for name, items in values.items()}


def decode_exchange(raw: bytes, sent: Exchange, *, rewrite_request: bool = True) -> Exchange:
    """The middleware's reply; raises ``ValueError`` when it is not the pair's shape."""
    return exchange_from_document(orjson.loads(raw), sent, rewrite_request=rewrite_request)


def exchange_from_document(doc: object, sent: Exchange, *, rewrite_request: bool = True) -> Exchange:
    """The pair a reply document describes; raises ``ValueError`` when it is not the pair's shape.
    ``rewrite_request=False``: the reply's request is checked but the sent one is kept (a caller
    that reads only the response saves building a request nobody reads)."""
    if not isinstance(doc, dict):
        raise ValueError("the reply is not a JSON object")
    request = doc.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("query"), str):
        raise ValueError("the reply has no request with a query string")
    new_request = _request(request) if rewrite_request else sent.request
    response = doc.get("response")
    if not isinstance(response, dict):
        response = {}
    status = response.get("status") or 0
    if not isinstance(status, int):
        raise ValueError("the reply's response status is not a number")
    new_response: Response | None = None
    if status:
        body_text = _text(response, "body")
        try:
            body = base64.b64decode(body_text, validate=True) if response.get("encodedBody") else body_text.encode()
        except binascii.Error as exc:
            raise ValueError(f"the reply's encodedBody is not base64: {exc}") from exc
        delay = response.get("logNormalDelay")
        new_response = Response(
            status=status,
            body=body,
            headers=tuple((str(k), tuple(map(str, vs or ()))) for k, vs in _object(response, "headers").items()),
            fixed_delay=int(response.get("fixedDelay") or 0),
            log_normal_delay=None if not isinstance(delay, dict) else LogNormal(
                int(delay.get("min") or 0), int(delay.get("max") or 0),
                int(delay.get("mean") or 0), int(delay.get("median") or 0),
            ),
            post_serve_action=_text(response, "postServeAction"),
        )  # fmt: skip
    return Exchange(new_request, new_response)


def _request(request: dict[str, Any]) -> RequestDetails:
    headers = {canonical_header(str(k)): [str(v) for v in vs or ()] for k, vs in _object(request, "headers").items()}
    raw_query = _encode_query(request["query"])  # Hoverfly loses the raw query once middleware has answered
    return RequestDetails.build(
        method=_text(request, "method"),
        scheme=_text(request, "scheme"),
        destination=_text(request, "destination"),
        path=_text(request, "path"),
        raw_query=raw_query,
        body=_text(request, "body"),
        headers=headers,
    )


def _object(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _text(doc: dict[str, Any], key: str) -> str:
    value = doc.get(key)
    return value if isinstance(value, str) else ""


def _encode_query(query: str) -> str:
    """The query Hoverfly forwards for a request middleware returned: the reply's query sorted
    (``SortQueryString``), parsed as Go's ``url.ParseQuery`` parses (a part with ``;`` or a bad escape
    is dropped, ``+`` is a space), written back decoded (``QueryString``) and escaped as Go escapes
    a URL path, ``./`` in front when a ``:`` comes before any ``/`` (``URL{Path: ...}.String()``):
    ``test=b+c%2Cd`` goes out as ``test=b%20c,d``."""
    parsed = parse_query("&".join(p for p in sort_query_string(query).split("&") if ";" not in p))
    text = joined_query(parsed)
    escaped = go_escape_path(text)
    return "./" + escaped if ":" in text.partition("/")[0] else escaped


def _error(message: str, command: str = "", cause: str = "", url: str = "", stdin: bytes = b"",
           stdout: bytes = b"", stderr: bytes = b"") -> MiddlewareError:  # fmt: skip
    text = message
    for prefix, value in (("\nCommand: ", command), ("\n", cause), ("\nURL: ", url)):
        if value:
            text += prefix + value
    for title, data in (("STDIN", stdin), ("STDOUT", stdout), ("STDERR", stderr)):
        if data:
            text += f"\n\n{title}:\n{data.decode('utf-8', 'replace')}"
    return MiddlewareError(text)


class MiddlewareRunner:
    """Runs the configured middleware for one worker. ``go_errors`` (``-compat hoverfly``): a reply
    that is not JSON is named in Go's words (``invalid character 'h' in literal true (expecting
    'r')``), as Hoverfly's ``json.Unmarshal`` names it, instead of Python's; and only an empty
    reply leaves the pair as it was (one of whitespace alone is ``unexpected end of JSON input``)."""

    def __init__(
        self,
        upstream: Upstream,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT,
        queue: int = 0,
        go_errors: bool = False,
    ) -> None:
        self.upstream = upstream
        self.timeout = timeout
        self.queue = queue
        """Calls that may wait for a long-lived pool (0: ``QUEUE_PER_PROCESS`` per process)."""
        self.go_errors = go_errors
        self._slots = asyncio.Semaphore(concurrency)
        self._scripts = ScriptFiles("simproxy-middleware-")
        self._hooks = Hooks()
        self._hook_calls = 0
        self._pools: dict[PoolKey, ProcessPool] = {}

    def close(self) -> None:
        self._scripts.close()

    async def aclose(self) -> None:
        """Kill the long-lived processes, then remove the script files."""
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.aclose()
        await self._hooks.aclose()
        self.close()

    def counters(self) -> dict[str, int]:
        """Long-lived processes replaced after a failure, and calls refused with a full queue."""
        pools = self._pools.values()
        return {"replaced": sum(p.replaced for p in pools), "refused": sum(p.refused for p in pools)}

    async def run(self, spec: MiddlewareSpec, exchange: Exchange, *, rewrite_request: bool = True) -> Exchange:
        """The pair as the middleware rewrote it. ``rewrite_request=False``: the caller reads only the
        response, so the reply's request is checked but not rebuilt (the sent one is returned)."""
        if not spec.enabled:
            raise _error("Cannot execute middleware as middleware has not been correctly set")
        hook = "" if self.go_errors or spec.remote else hook_name(spec.binary)
        if hook:
            return await self._hook(hook, exchange, rewrite_request)
        payload = encode_exchange(exchange)
        if spec.remote:
            stdout = await self._remote(spec.remote, payload)
        elif spec.pool > 0 and not self.go_errors:
            return await self._pooled(spec, payload, exchange, rewrite_request)
        else:
            stdout = await self._local(spec, payload)
        if not (stdout if self.go_errors else stdout.strip()):  # Hoverfly decodes even a lone newline
            log.warning("No response from middleware.")
            return exchange
        try:
            return decode_exchange(stdout, exchange, rewrite_request=rewrite_request)
        except (ValueError, orjson.JSONDecodeError) as exc:
            cause = (unmarshal_error(stdout) if self.go_errors else None) or str(exc)
            if spec.remote:
                raise _error("Error when trying to serialize response from remote middleware", cause=cause,
                             url=spec.remote, stdin=payload, stdout=stdout) from exc  # fmt: skip
            raise _error("Failed to unmarshal JSON from middleware", command=self._command_text(spec),
                         cause=cause, stdin=payload, stdout=stdout) from exc  # fmt: skip

    async def _hook(self, name: str, exchange: Exchange, rewrite_request: bool) -> Exchange:
        limit = self.queue or HOOK_CALLS
        if self._hook_calls >= limit:
            raise MiddlewareBusy(f"Middleware busy\nHook: python:{name}\n{limit} calls already in flight")
        self._hook_calls += 1
        try:
            return await self._call_hook(name, exchange, rewrite_request)
        finally:
            self._hook_calls -= 1

    async def _call_hook(self, name: str, exchange: Exchange, rewrite_request: bool) -> Exchange:
        """The hook is handed a fresh document (it may change it in place) and its reply is read as a
        document too: no JSON text is written or parsed on the way."""
        try:
            reply = await self._hooks.call(name, exchange_document(exchange, own=True))
            if reply is None:
                return exchange
            return exchange_from_document(reply, exchange, rewrite_request=rewrite_request)
        except (HookError, ValueError, TypeError) as exc:
            log.error("Middleware hook failed", extra={"fields": {"hook": name, "error": str(exc)}})
            stdin = encode_exchange(exchange)
            raise _error("Middleware hook failed", f"python:{name}", str(exc), stdin=stdin) from exc

    async def _pooled(
        self, spec: MiddlewareSpec, payload: bytes, exchange: Exchange, rewrite_request: bool
    ) -> Exchange:
        """One line to a long-lived process, one line back; an empty line leaves the pair as it was."""
        command = self._command(spec)
        key = PoolKey(tuple(command), spec.pool)
        pool = self._pools.get(key)
        if pool is None:
            stale, self._pools = list(self._pools.values()), {}
            for old in stale:  # the middleware was changed: its processes go
                await old.aclose()
            pool = self._pools.setdefault(key, ProcessPool(key, self.timeout, queue=self.queue))
        replies: list[Exchange] = []

        def accept(line: bytes) -> None:
            replies.append(
                decode_exchange(line, exchange, rewrite_request=rewrite_request) if line.strip() else exchange
            )

        try:
            await pool.call(payload, accept)
        except PoolBusy as exc:
            raise MiddlewareBusy(f"Middleware busy\nCommand: {' '.join(command)}\n{exc}") from exc
        except PoolFailure as exc:
            raise _error("Middleware failed", " ".join(command), exc.reason, stdin=payload,
                         stderr=exc.stderr) from exc  # fmt: skip
        return replies[0]

    def _command(self, spec: MiddlewareSpec) -> list[str]:
        return [spec.binary, self._scripts.path(spec.script)] if spec.script else [spec.binary]

    def _command_text(self, spec: MiddlewareSpec) -> str:
        return " ".join(self._command(spec))

    async def _local(self, spec: MiddlewareSpec, payload: bytes) -> bytes:
        command = self._command(spec)
        async with self._slots:
            try:
                done = await run_program(command, payload, self.timeout)
            except TimeoutError as exc:  # an OSError too: caught first
                raise _error("Middleware failed", " ".join(command), f"no answer within {self.timeout:g}s",
                             stdin=payload) from exc  # fmt: skip
            except OSError as exc:
                cause = exec_error(command, exc)
                raise _error("Middleware failed to start", " ".join(command), cause, stdin=payload) from exc
        if done.returncode != 0:
            raise _error("Middleware failed", " ".join(command), f"exit status {done.returncode}",
                         stdin=payload, stdout=done.stdout, stderr=done.stderr)  # fmt: skip
        if done.stderr:
            stderr = done.stderr.decode("utf-8", "replace")
            log.info("Information from middleware", extra={"fields": {"stderr": stderr}})
        return done.stdout

    async def _remote(self, url: str, payload: bytes) -> bytes:
        async with self._slots:
            try:
                resp = await self.upstream.send("POST", url, [("Content-Type", "application/json")], payload)
            except UpstreamError as exc:
                raise _error("Error when communicating with remote middleware:", cause=str(exc), url=url,
                             stdin=payload) from exc  # fmt: skip
        if resp.status != 200:
            raise _error(f"Error when communicating with remote middleware: received {resp.status}", url=url,
                         stdin=payload, stdout=resp.body)  # fmt: skip
        if not resp.body and self.go_errors:
            return b" "  # what Hoverfly decodes in place of an empty body: unexpected end of JSON input
        if not resp.body:
            raise _error("Error when trying to serialize response from remote middleware", cause="empty body",
                         url=url, stdin=payload)  # fmt: skip
        return resp.body
