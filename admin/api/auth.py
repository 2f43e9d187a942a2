"""``-auth`` on the admin port: login, tokens, logout, users, and the check in front of every route.

With authentication on, only ``GET /api/health``, the login (``POST``/``OPTIONS /api/token-auth``)
and ``OPTIONS`` requests answer without ``Authorization: Bearer <token>``; everything else,
``/metrics`` included, answers 401. Hoverfly answers its 401 and 429 with empty bodies; simproxy
answers ``{"error": ...}`` like every other error (clients such as hoverctl read the status).
"""

from __future__ import annotations

import uuid

import orjson
from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.responses import empty_response, json_response, services
from simproxy.admin.dashboard import page
from simproxy.admin.errors import ApiError
from simproxy.engine.auth import Authenticator, bearer_token
from simproxy.engine.errors import AuthError, LoginRefused, TokenRejected, TooManyAttempts

OPEN_ROUTES = frozenset({("GET", "/api/health"), ("POST", "/api/token-auth")})
DUMMY_TOKEN = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkR1bW15IHRva2VuIiwiYWRtaW4iOnRydWV9"
    ".kyDfiTW85gnhZJiO_npgh7TE_Dr1a2Jf-o18db5c0Ao"
)
"""Hoverfly's answer to a login when authentication is off: a fixed token that nothing checks (HS256 of
``{"sub": "1234567890", "name": "Dummy token", "admin": true}`` under the key ``simproxy: a token
nothing checks``, written out so that a start without ``-auth`` does not import ``jwt``)."""


class Unauthorized(ApiError):
    status = 401


class TooManyRequests(ApiError):
    status = 429


def _api_error(exc: AuthError) -> ApiError:
    if isinstance(exc, TooManyAttempts):
        return TooManyRequests(str(exc))
    return Unauthorized(str(exc))


async def require_token(request: Request) -> None:
    """Request middleware: with ``-auth``, a valid bearer token or 401 (the open routes excepted)."""
    auth: Authenticator | None = services(request).auth
    if auth is None or request.method == "OPTIONS" or (request.method, request.path) in OPEN_ROUTES:
        return
    if request.method == "GET" and request.path in page.OPEN_PATHS:  # the page's own files, no data
        return
    token = bearer_token(request.headers.get("authorization"))
    if token is None:
        raise Unauthorized("authentication required: Authorization: Bearer <token> (POST /api/token-auth)")
    try:
        request.ctx.user = await auth.verify(token)
    except TokenRejected as exc:
        raise Unauthorized(str(exc)) from None


async def login(request: Request) -> HTTPResponse:
    auth = services(request).auth
    if auth is None:
        return json_response({"token": DUMMY_TOKEN})
    username, password = _credentials(request.body)
    try:
        return json_response({"token": await auth.login(username, password)})
    except (LoginRefused, TooManyAttempts) as exc:
        raise _api_error(exc) from None


async def login_options(request: Request) -> HTTPResponse:
    return HTTPResponse(b"", status=200, headers={"Allow": "OPTIONS, POST"})


async def refresh(request: Request) -> HTTPResponse:
    """A fresh token for the caller (Hoverfly hands out one with an empty user name)."""
    auth = services(request).auth
    if auth is None:
        return json_response({"token": DUMMY_TOKEN})
    return json_response({"token": auth.issue(request.ctx.user)})


async def logout(request: Request) -> HTTPResponse:
    """The caller's token stops working on every worker and instance (Hoverfly's logout misses it)."""
    auth = services(request).auth
    token = bearer_token(request.headers.get("authorization"))
    if auth is not None and token is not None:
        await auth.logout(token)
    return empty_response()


async def users(request: Request) -> HTTPResponse:
    """The users, without their password hashes (Hoverfly lists those too)."""
    auth = services(request).auth
    known = [] if auth is None else list(auth.users.values())
    return json_response(
        {
            "users": [
                {"uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"simproxy:user:{u.username}")),
                 "username": u.username, "is_admin": u.admin}
                for u in known
            ]
        }
    )  # fmt: skip


def _credentials(body: bytes) -> tuple[str, str]:
    """``{"username", "password"}``; anything unreadable counts as empty credentials, as in Hoverfly."""
    try:
        data = orjson.loads(body or b"{}")
    except orjson.JSONDecodeError:
        return "", ""
    if not isinstance(data, dict):
        return "", ""
    username, password = data.get("username", ""), data.get("password", "")
    return (username if isinstance(username, str) else "", password if isinstance(password, str) else "")
