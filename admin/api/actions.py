"""``/api/v2/hoverfly/post-serve-action``: list, set (one at a time) and delete post-serve actions."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.configuration import write_config
from simproxy.admin.api.responses import json_response, path_name, services
from simproxy.admin.api.views import load_object, typed
from simproxy.admin.errors import BadRequest
from simproxy.engine.fleet.config import ActionSpec, RuntimeConfig
from simproxy.engine.outbound.hooks import hook_name
from simproxy.engine.outbound.pool import MAX_POOL

log = logging.getLogger(__name__)


def action_view(action: ActionSpec) -> dict[str, Any]:
    """Hoverfly's ``ActionView``: every key left out when empty (the fallback has no ``actionName``)."""
    fields = (
        ("actionName", action.name), ("binary", action.binary), ("script", action.script),
        ("remote", action.remote), ("delayInMs", action.delay_ms), ("pool", action.pool),
    )  # fmt: skip
    return {key: value for key, value in fields if value}


def actions_view(config: RuntimeConfig) -> dict[str, Any]:
    return {"actions": [action_view(a) for a in config.actions]} if config.actions else {}


async def get_actions(request: Request) -> HTTPResponse:
    runtime = services(request).runtime
    await runtime.sync()
    return json_response(actions_view(runtime.snapshot.config))


async def put_action(request: Request) -> HTTPResponse:
    body = load_object(request.body)
    name = typed(body, "actionName", str, "").strip()
    delay = typed(body, "delayInMs", int, 0)
    remote = typed(body, "remote", str, "")
    binary, script = typed(body, "binary", str, ""), typed(body, "script", str, "")
    runtime = services(request).runtime
    pool = 0 if runtime.dialect.is_hoverfly else typed(body, "pool", int, 0)  # Hoverfly ignores the member
    if not 0 <= pool <= MAX_POOL:
        raise BadRequest(f"pool must be from 0 (a process per action) to {MAX_POOL}")
    if pool and (remote or hook_name(binary) or not binary):
        raise BadRequest("pool applies to a local program only, not to a remote action or a python: hook")
    if remote:
        parsed = urlsplit(remote)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise BadRequest("remote host is invalid")
        action = ActionSpec(name=name, remote=remote, delay_ms=delay)
    else:
        action = ActionSpec(name=name, binary=binary, script=script, delay_ms=delay, pool=pool)
    config = await write_config(runtime, lambda current: current.with_action(action))
    log.info("Remote post serve action is set" if remote else "Local post serve action is set",
             extra={"fields": {"name": name}})  # fmt: skip
    return json_response(actions_view(config))


async def delete_action(request: Request, name: str) -> HTTPResponse:
    runtime = services(request).runtime
    await runtime.sync()
    name = path_name(name, runtime.dialect)
    if not name or name not in runtime.snapshot.config.action_names:
        raise BadRequest("invalid action name passed")
    config = await write_config(runtime, lambda current: current.without_action(name))
    return json_response(actions_view(config))
