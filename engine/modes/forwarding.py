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
from typing import TYPE_CHECKING

from simproxy.engine.errors import SimulationError, UpstreamError
from simproxy.engine.modes.failures import error_text, failure_wire
from simproxy.engine.outbound.middleware import Exchange, MiddlewareError, MiddlewareRunner
from simproxy.engine.outbound.pac import PacError, PacResolver
from simproxy.engine.outbound.upstream import Upstream, UpstreamResponse, outgoing_url
from simproxy.engine.simulation.model import Response
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire, plain_error, render_wire

if TYPE_CHECKING:
    import random

    from simproxy.engine.fleet.runtime import Runtime, Snapshot

log = logging.getLogger(__name__)

FORWARD_CONTEXT = "There was an error when forwarding the request to the intended destination"
REQUEST_MIDDLEWARE_CONTEXT = "There was an error when applying middleware to http request"
MIDDLEWARE_CONTEXT = "There was an error when executing middleware"
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
    ) -> None:
        self.runtime = runtime
        self.upstream = upstream
        self.middleware = middleware
        self.webserver = webserver
        self.own_ports = own_ports
        self.rng = rng
        self.product = runtime.dialect.product
        """The name failures are signed with (``-compat``)."""
        self.pac = PacResolver(otto=runtime.dialect.is_hoverfly)

    def failure(self, context: str, error: str) -> Wire:
        return failure_wire(context, error, product=self.product)

    def forward_failed(self, req: RequestDetails, exc: UpstreamError, mode: str) -> Wire:
        log.error(
            FORWARD_CONTEXT,
            extra={"fields": {"error": str(exc), "mode": str(mode), "destination": req.destination, "path": req.path}},
        )
        return self.failure(FORWARD_CONTEXT, str(exc))

    def middleware_failed(self, req: RequestDetails, exc: MiddlewareError, context: str, mode: str) -> Wire:
        log.error(context, extra={"fields": {"error": str(exc), "mode": str(mode), "path": req.path}})
        if exc.status != 502:  # the long-lived middleware's queue is full
            return plain_error(exc.status, error_text(context, str(exc), product=self.product))
        return self.failure(context, str(exc))

    def loops_back(self, req: RequestDetails) -> bool:
        """Whether ``req`` would come straight back to this simproxy's proxy port (Hoverfly then recurses until
        it runs out of file descriptors, hoverfly-admin.md §7.2)."""
        host, port = _split_host(req.destination)
        port = port if port is not None else (443 if req.scheme == "https" else 80)
        return host in _LOCAL_HOSTS and port in self.own_ports

    async def send(self, req: RequestDetails, *, mark: bool = True) -> UpstreamResponse:
        if self.loops_back(req):
            raise UpstreamError(
                f"{req.destination} is this {self.product} itself; refusing to forward the request to it"
            )
        pac = self.runtime.snapshot.config.pac
        proxy = None
        if pac:
            host = _split_host(req.destination)[0]
            try:
                proxy = await self.pac.proxy_for(pac, outgoing_url(req), host)
            except PacError as exc:
                raise UpstreamError(str(exc)) from exc
        return await self.upstream.forward(req, proxy=proxy, mark=mark)

    def wire(self, resp: UpstreamResponse) -> Wire:
        response = Response(status=resp.status, body=resp.body, headers=resp.headers, trailers=resp.trailers)
        return self.response_wire(response, "forwarded")

    def response_wire(self, response: Response, outcome: str) -> Wire:
        try:
            return render_wire(response, "the response", webserver=self.webserver, outcome=outcome)
        except SimulationError as exc:
            return self.failure(MIDDLEWARE_CONTEXT, str(exc))

    async def delayed(self, snap: Snapshot, req: RequestDetails, wire: Wire, response: Response = _NONE) -> Wire:
        """The response's own delays, else the global ones (not in capture mode)."""
        delay = snap.simulation.delays.for_response(response, req.destination, req.path, req.method, self.rng)
        if delay > 0:
            await asyncio.sleep(delay)
        return wire

    async def request_middleware(self, snap: Snapshot, req: RequestDetails) -> RequestDetails:
        spec = snap.config.middleware
        return (await self.middleware.run(spec, Exchange(req, None))).request if spec.enabled else req

    async def apply(self, snap: Snapshot, req: RequestDetails, served: Wire) -> Wire:
        """Simulate and spy hits: the middleware rewrites the served response (then its delays apply)."""
        if served.outcome != "hit":
            return served
        response = Response(status=served.status, body=served.raw_body, headers=served.headers)
        try:
            result = await self.middleware.run(snap.config.middleware, Exchange(req, response), rewrite_request=False)
        except MiddlewareError as exc:
            return self.middleware_failed(req, exc, MIDDLEWARE_CONTEXT, snap.config.mode)
        response = result.response or response
        if served.fault is not None:  # the pair's fault still applies to the rewritten answer
            response = replace(response, fault=served.fault)
        return await self.delayed(snap, req, self.response_wire(response, "hit"), response)

    async def relay(self, req: RequestDetails) -> Wire:
        """A request outside the destination filter: passed on untouched, not journaled or counted."""
        try:
            resp = await self.send(req, mark=False)  # the service's answer as it came, no mark
        except UpstreamError as exc:  # goproxy writes the transport's error, which no client wrapped
            return with_outcome(plain_error(500, f"{exc.cause}\n"), "relayed")
        return with_outcome(self.wire(resp), "relayed")

    async def through(
        self, snap: Snapshot, req: RequestDetails, mode: str
    ) -> tuple[RequestDetails, UpstreamResponse] | Wire:
        """The request middleware (when set), then the real service; the 502 when either failed."""
        try:
            req = await self.request_middleware(snap, req)
        except MiddlewareError as exc:
            return self.middleware_failed(req, exc, REQUEST_MIDDLEWARE_CONTEXT, mode)
        try:
            return req, await self.send(req)
        except UpstreamError as exc:
            return self.forward_failed(req, exc, mode)


def with_outcome(wire: Wire, outcome: str) -> Wire:
    return replace(wire, outcome=outcome)


def with_values(resp: UpstreamResponse, extra: tuple[tuple[str, tuple[str, ...]], ...]) -> UpstreamResponse:
    """``resp`` with more values under some headers (spy's ``Hoverfly: Forwarded`` after ``Was-Here``)."""
    merged = dict(resp.headers)
    for name, values in extra:
        merged[name] = (*merged.get(name, ()), *values)
    return replace(resp, headers=tuple(merged.items()))
