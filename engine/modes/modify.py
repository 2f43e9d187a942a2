"""Modify and synthesize: the modes whose responses the middleware writes (hoverfly-admin.md §7.7,
§7.8). Modify rewrites a real exchange; synthesize has no real service, the middleware answers."""

from __future__ import annotations

from typing import ClassVar

from simproxy.engine.fleet.config import Mode
from simproxy.engine.fleet.runtime import Snapshot
from simproxy.engine.modes.base import Kit
from simproxy.engine.modes.forwarding import MIDDLEWARE_CONTEXT
from simproxy.engine.outbound.middleware import Exchange, MiddlewareError
from simproxy.engine.simulation.model import Response
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire

SYNTHESIZE_CONTEXT = "There was an error when creating a synthetic response"


class ModifyMode:
    """Middleware on the request, the real service, middleware on the pair; without middleware, a
    transparent forwarding proxy. The response's delays apply."""

    name: ClassVar[Mode] = Mode.MODIFY
    runs_actions: ClassVar[bool] = False

    def __init__(self, kit: Kit) -> None:
        self.forwarder = kit.forwarder

    async def handle(self, snap: Snapshot, req: RequestDetails) -> Wire:
        forwarder = self.forwarder
        sent = await forwarder.through(snap, req, Mode.MODIFY)
        if isinstance(sent, Wire):
            return sent
        req, resp = sent
        response = Response(status=resp.status, body=resp.body, headers=resp.headers)
        spec = snap.config.middleware
        if spec.enabled:
            try:
                response = (
                    await forwarder.middleware.run(spec, Exchange(req, response), rewrite_request=False)
                ).response or response
            except MiddlewareError as exc:
                return forwarder.middleware_failed(req, exc, MIDDLEWARE_CONTEXT, Mode.MODIFY)
        return await forwarder.delayed(snap, req, forwarder.response_wire(response, "forwarded"), response)


class SynthesizeMode:
    """The middleware makes the response from the request alone."""

    name: ClassVar[Mode] = Mode.SYNTHESIZE
    runs_actions: ClassVar[bool] = True

    def __init__(self, kit: Kit) -> None:
        self.forwarder = kit.forwarder

    async def handle(self, snap: Snapshot, req: RequestDetails) -> Wire:
        spec = snap.config.middleware
        if not spec.enabled:
            return self.forwarder.failure(SYNTHESIZE_CONTEXT, "Middleware not set")
        forwarder = self.forwarder
        try:
            response = (await forwarder.middleware.run(spec, Exchange(req, None), rewrite_request=False)).response
        except MiddlewareError as exc:
            return forwarder.middleware_failed(req, exc, SYNTHESIZE_CONTEXT, Mode.SYNTHESIZE)
        if response is None:
            return forwarder.failure(SYNTHESIZE_CONTEXT, "the middleware answered without a response status")
        return await forwarder.delayed(snap, req, forwarder.response_wire(response, "hit"), response)
