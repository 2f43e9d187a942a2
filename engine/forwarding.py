"""The modes that send requests on to the real service or through middleware: capture, spy's misses,
modify, synthesize, diff, and the relay of requests outside the destination filter
(hoverfly-admin.md §7.1, §7.4, §7.7, §7.8, §8.5).

Every failure is Hoverfly's 502 with its context line; nothing is recorded from a failed call.
``engine.diff`` is imported by the first request diff mode compares.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from engine.capture import Captures, captured_pair
from engine.config import DEFAULT_MAX_PAIRS
from engine.errors import CaptureConflict, SimulationError, UpstreamError
from engine.middleware import Exchange, MiddlewareError, MiddlewareRunner
from engine.miss import error_text
from engine.model import Response
from engine.pac import PacError, PacResolver
from engine.request import RequestDetails
from engine.responses import Wire, plain_error, render_response
from engine.upstream import Upstream, UpstreamResponse, outgoing_path, outgoing_url
from store import StoreError

if TYPE_CHECKING:
    import random

    from engine.runtime import Runtime, Snapshot

log = logging.getLogger(__name__)

FORWARD_CONTEXT = "There was an error when forwarding the request to the intended destination"
SAVE_CONTEXT = "There was an error when saving request and response"
REQUEST_MIDDLEWARE_CONTEXT = "There was an error when applying middleware to http request"
MIDDLEWARE_CONTEXT = "There was an error when executing middleware"
SYNTHESIZE_CONTEXT = "There was an error when creating a synthetic response"
_NONE = Response(status=0)
"""No response of its own: only the global delays apply."""
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "::", socket.gethostname().lower()})


def _split_host(destination: str) -> tuple[str, int | None]:
    if destination.startswith("["):
        host, _, rest = destination[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port = destination.partition(":")
    return host.lower(), int(port) if port.isdigit() else None


class Forwarder:
    def __init__(
        self,
        runtime: Runtime,
        upstream: Upstream,
        middleware: MiddlewareRunner,
        *,
        webserver: bool,
        own_ports: frozenset[int],
        rng: random.Random,
        max_pairs: int = DEFAULT_MAX_PAIRS,
    ) -> None:
        self.runtime = runtime
        self.upstream = upstream
        self.middleware = middleware
        self.webserver = webserver
        self.own_ports = own_ports
        self.rng = rng
        self.captures = Captures(runtime, max_pairs)
        self.pac = PacResolver()

    def loops_back(self, req: RequestDetails) -> bool:
        """Whether ``req`` would come straight back to this simproxy (Hoverfly then recurses until
        it runs out of file descriptors, hoverfly-admin.md §7.2)."""
        host, port = _split_host(req.destination)
        port = port if port is not None else (443 if req.scheme == "https" else 80)
        return host in _LOCAL_HOSTS and port in self.own_ports

    async def _send(self, req: RequestDetails, *, mark: bool = True) -> UpstreamResponse:
        if self.loops_back(req):
            raise UpstreamError(f"{req.destination} is this simproxy itself; refusing to forward the request to it")
        pac = self.runtime.snapshot.config.pac
        proxy = None
        if pac:
            host = _split_host(req.destination)[0]
            try:
                proxy = await self.pac.proxy_for(pac, outgoing_url(req), host)
            except PacError as exc:
                raise UpstreamError(str(exc)) from exc
        return await self.upstream.forward(req, proxy=proxy, mark=mark)

    def wire(self, resp: UpstreamResponse, *, extra: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> Wire:
        headers = resp.headers
        if extra:
            merged = dict(headers)
            for name, values in extra:
                merged[name] = (*merged.get(name, ()), *values)
            headers = tuple(merged.items())
        return self.response_wire(Response(status=resp.status, body=resp.body, headers=headers), "forwarded")

    def response_wire(self, response: Response, outcome: str) -> Wire:
        try:
            rendered = render_response(response, "the response")
        except SimulationError as exc:
            return plain_error(502, error_text(MIDDLEWARE_CONTEXT, str(exc)))
        wire = rendered.webserver if self.webserver else rendered.proxy
        return _with_outcome(wire, outcome)

    async def _delayed(self, snap: Snapshot, req: RequestDetails, wire: Wire, response: Response = _NONE) -> Wire:
        """The response's own delays, else the global ones (not in capture mode)."""
        delay = snap.simulation.delays.for_response(response, req.destination, req.path, req.method, self.rng)
        if delay > 0:
            await asyncio.sleep(delay)
        return wire

    async def _request_middleware(self, snap: Snapshot, req: RequestDetails) -> RequestDetails:
        spec = snap.config.middleware
        return (await self.middleware.run(spec, Exchange(req, None))).request if spec.enabled else req

    async def apply(self, snap: Snapshot, req: RequestDetails, served: Wire) -> Wire:
        """Simulate and spy hits: the middleware rewrites the served response (then its delays apply)."""
        if served.outcome != "hit":
            return served
        response = Response(status=served.status, body=served.raw_body, headers=served.headers)
        try:
            result = await self.middleware.run(snap.config.middleware, Exchange(req, response))
        except MiddlewareError as exc:
            return _middleware_failed(req, exc, MIDDLEWARE_CONTEXT, snap.config.mode)
        response = result.response or response
        return await self._delayed(snap, req, self.response_wire(response, "hit"), response)

    # -- modes -----------------------------------------------------------------------------

    async def relay(self, req: RequestDetails) -> Wire:
        """A request outside the destination filter: passed on untouched, not journaled or counted."""
        try:
            resp = await self._send(req, mark=False)  # the service's answer as it came, no mark
        except UpstreamError as exc:
            return _with_outcome(plain_error(500, f"{exc}\n"), "relayed")
        return _with_outcome(self.wire(resp), "relayed")

    async def _through(
        self, snap: Snapshot, req: RequestDetails, mode: str
    ) -> tuple[RequestDetails, UpstreamResponse] | Wire:
        """The request middleware (when set), then the real service; the 502 when either failed."""
        try:
            req = await self._request_middleware(snap, req)
        except MiddlewareError as exc:
            return _middleware_failed(req, exc, REQUEST_MIDDLEWARE_CONTEXT, mode)
        try:
            return req, await self._send(req)
        except UpstreamError as exc:
            return _forward_failed(req, exc, mode)

    async def capture(self, snap: Snapshot, req: RequestDetails) -> Wire:
        args = snap.config.args("capture")
        sent = await self._through(snap, req, "capture")
        if isinstance(sent, Wire):
            return sent
        req, resp = sent
        try:
            await self.captures.add(captured_pair(req, resp, args), args)
        except (StoreError, CaptureConflict) as exc:
            log.error(SAVE_CONTEXT, extra={"fields": {"error": str(exc), "mode": "capture"}})
            return plain_error(502, error_text(SAVE_CONTEXT, str(exc)))
        log.info(
            "request and response captured",
            extra={"fields": {"mode": "capture", "destination": req.destination, "path": req.path}},
        )
        return self.wire(resp)

    async def spy(self, snap: Snapshot, req: RequestDetails) -> Wire:
        """A spy miss: the real service answers, marked ``Hoverfly: Forwarded``; captured on request."""
        try:
            resp = await self._send(req)
        except UpstreamError as exc:
            return _forward_failed(req, exc, "spy")
        args = snap.config.args("spy")
        if args.capture_on_miss:
            try:
                if await self.captures.add(captured_pair(req, resp, args), args):
                    await self.runtime.sync()  # this worker serves the new pair from its next request
            except (StoreError, CaptureConflict) as exc:
                log.error(SAVE_CONTEXT, extra={"fields": {"error": str(exc), "mode": "spy"}})
        return await self._delayed(snap, req, self.wire(resp, extra=(("Hoverfly", ("Forwarded",)),)))

    async def modify(self, snap: Snapshot, req: RequestDetails) -> Wire:
        """Middleware on the request, the real service, middleware on the pair; without middleware,
        a transparent forwarding proxy."""
        sent = await self._through(snap, req, "modify")
        if isinstance(sent, Wire):
            return sent
        req, resp = sent
        response = Response(status=resp.status, body=resp.body, headers=resp.headers)
        spec = snap.config.middleware
        if spec.enabled:
            try:
                response = (await self.middleware.run(spec, Exchange(req, response))).response or response
            except MiddlewareError as exc:
                return _middleware_failed(req, exc, MIDDLEWARE_CONTEXT, "modify")
        return await self._delayed(snap, req, self.response_wire(response, "forwarded"), response)

    async def synthesize(self, snap: Snapshot, req: RequestDetails) -> Wire:
        """The middleware makes the response; there is no real service."""
        spec = snap.config.middleware
        if not spec.enabled:
            return plain_error(502, error_text(SYNTHESIZE_CONTEXT, "Middleware not set"))
        try:
            response = (await self.middleware.run(spec, Exchange(req, None))).response
        except MiddlewareError as exc:
            return _middleware_failed(req, exc, SYNTHESIZE_CONTEXT, "synthesize")
        if response is None:
            return plain_error(502, error_text(SYNTHESIZE_CONTEXT, "the middleware answered without a response status"))
        return await self._delayed(snap, req, self.response_wire(response, "hit"), response)

    async def diff(self, snap: Snapshot, req: RequestDetails, expected: Wire) -> Wire:
        """Serve the real response; store a report when it differs from what the simulation expects."""
        from engine.diff import (
            DiffReport,
            DiffRequest,
            compare_responses,
            encode_report,
            encode_request,
            report_timestamp,
        )

        moment = datetime.now().astimezone()
        try:
            resp = await self._send(req)
        except UpstreamError as exc:
            return _forward_failed(req, exc, "diff")
        if expected.outcome == "miss":
            log.info("There was no simulation for the request", extra={"fields": {"path": req.path}})
        else:
            entries = compare_responses(
                expected.status,
                expected.headers,
                expected.raw_body,
                resp.status,
                resp.headers,
                resp.body,
                snap.config.args("diff").headers_whitelist,
            )
            if entries:
                key = DiffRequest(req.method, req.destination, outgoing_path(req.path), req.raw_query)
                report = DiffReport(report_timestamp(moment), tuple(entries))
                try:
                    await self.runtime.store.diff_add(encode_request(key), encode_report(report))
                except StoreError as exc:
                    log.error("the diff report could not be stored", extra={"fields": {"error": str(exc)}})
        return await self._delayed(snap, req, self.wire(resp))


def _forward_failed(req: RequestDetails, exc: UpstreamError, mode: str) -> Wire:
    log.error(
        FORWARD_CONTEXT,
        extra={"fields": {"error": str(exc), "mode": mode, "destination": req.destination, "path": req.path}},
    )
    return plain_error(502, error_text(FORWARD_CONTEXT, str(exc)))


def _middleware_failed(req: RequestDetails, exc: MiddlewareError, context: str, mode: str) -> Wire:
    log.error(context, extra={"fields": {"error": str(exc), "mode": mode, "path": req.path}})
    return plain_error(502, error_text(context, str(exc)))


def _with_outcome(wire: Wire, outcome: str) -> Wire:
    return replace(wire, outcome=outcome)
