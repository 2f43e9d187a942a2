"""-auth: who may use the admin API and the proxy, on one instance and across a fleet on Redis."""

from __future__ import annotations

import base64
import contextlib
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from simproxy.admin.process.redisserver import RedisServer
from tests.integration.conftest import Simproxy, pair, simulation

USER, PASSWORD = "ops", "correct horse"
AUTH = ("-auth", "-username", USER, "-password", PASSWORD)


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _login(sp: Simproxy, user: str = USER, password: str = PASSWORD) -> tuple[int, Any]:
    return sp.admin_json("POST", "/api/token-auth", {"username": user, "password": password})


def _token(sp: Simproxy) -> str:
    status, body = _login(sp)
    assert status == 200, body
    return str(body["token"])


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def secured() -> Iterator[Simproxy]:
    sp = Simproxy(*AUTH).start()
    yield sp
    sp.stop()


def test_without_a_token_only_health_and_login_answer(secured: Simproxy) -> None:
    assert secured.admin("GET", "/api/health")[0] == 200
    for method, path in [
        ("GET", "/api/v2/hoverfly/mode"),
        ("GET", "/api/v2/service/mode"),
        ("PUT", "/api/v2/simulation"),
        ("GET", "/api/v2/journal"),
        ("GET", "/metrics"),
        ("GET", "/api/users"),
        ("DELETE", "/api/v2/shutdown"),
    ]:
        status, body = secured.admin_json(method, path)
        assert status == 401 and "error" in body, (method, path)
    status, headers, body = secured.admin("OPTIONS", "/api/token-auth")
    assert (status, headers["allow"], body) == (200, "OPTIONS, POST", b"")
    forged = "eyJhbGciOiJIUzUxMiJ9.eyJ1c2VybmFtZSI6Im9wcyIsImV4cCI6OTk5OTk5OTk5OSwiaWF0IjoxfQ.AAAA"
    for headers_sent in (_bearer(forged), {"Authorization": "Basic b3BzOmNvcnJlY3QgaG9yc2U="}):
        assert secured.admin("GET", "/api/v2/hoverfly/mode", headers=headers_sent)[0] == 401


def test_a_token_from_the_login_opens_both_namespaces_until_logout(secured: Simproxy) -> None:
    token = _token(secured)
    for path in ("/api/v2/hoverfly/mode", "/api/v2/service/mode"):
        status, body = secured.admin_json("GET", path, headers={"Authorization": f"bearer {token}"})
        assert (status, body["mode"]) == (200, "simulate")
    status, users = secured.admin_json("GET", "/api/users", headers=_bearer(token))
    assert status == 200 and [u["username"] for u in users["users"]] == [USER]
    assert "password" not in users["users"][0] and "$2b$" not in str(users)
    status, refreshed = secured.admin_json("GET", "/api/refresh-token-auth", headers=_bearer(token))
    assert status == 200 and secured.admin("GET", "/metrics", headers=_bearer(refreshed["token"]))[0] == 200
    assert secured.admin("GET", "/api/logout", headers=_bearer(token))[0] == 200
    assert secured.admin("GET", "/api/v2/hoverfly/mode", headers=_bearer(token))[0] == 401
    assert secured.admin("GET", "/api/v2/hoverfly/mode", headers=_bearer(refreshed["token"]))[0] == 200


def test_the_proxy_wants_credentials_and_keeps_them_out_of_the_journal(secured: Simproxy) -> None:
    token = _token(secured)
    put = secured.admin_json("PUT", "/api/v2/simulation", simulation(pair("/p", "served")), headers=_bearer(token))
    assert put[0] == 200
    status, headers, body = secured.proxy("http://svc.test/p")
    assert (status, body) == (407, b"407 Proxy authentication required")
    assert headers["proxy-authenticate"] == "Basic realm=hoverfly" and headers["proxy-connection"] == "close"
    assert secured.proxy("http://svc.test/p", headers={"Proxy-Authorization": _basic(USER, "wrong")})[0] == 407
    status, _, body = secured.proxy("http://svc.test/p", headers={"Proxy-Authorization": "Digest x"})
    assert (status, body) == (407, b"407 Unknown authentication type `Digest`, only `Basic` or `Bearer` are supported")
    for credentials in (_basic(USER, PASSWORD), f"Bearer {token}", _basic(USER, PASSWORD)):
        assert secured.proxy("http://svc.test/p", headers={"Proxy-Authorization": credentials})[::2] == (200, b"served")
    status, journal = secured.admin_json("GET", "/api/v2/journal", headers=_bearer(token))
    assert status == 200 and journal["total"] == 3  # the refused requests are not journaled
    assert PASSWORD not in str(journal) and "Proxy-Authorization" not in str(journal) and token not in str(journal)
    status, logs = secured.admin_json("GET", "/api/v2/logs", headers=_bearer(token))
    assert status == 200 and PASSWORD not in str(logs) and token not in str(logs)


def test_a_connect_without_credentials_is_refused(secured: Simproxy) -> None:
    with socket.create_connection(("127.0.0.1", secured.proxy_port), timeout=10) as sock:
        sock.sendall(b"CONNECT svc.test:443 HTTP/1.1\r\nHost: svc.test:443\r\n\r\n")
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := sock.recv(4096):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 407 ") and answer.endswith(b"407 Proxy authentication required")


def test_three_failed_logins_lock_everyone_out(simproxy_factory: Any) -> None:
    sp = simproxy_factory(*AUTH)
    assert [_login(sp, USER, "nope")[0] for _ in range(3)] == [401, 401, 401]
    assert _login(sp)[0] == 429  # even the right password, for 10 minutes
    assert sp.proxy("http://svc.test/p", headers={"Proxy-Authorization": _basic(USER, PASSWORD)})[0] == 407


def test_with_auth_off_the_login_answers_hoverflys_dummy_token(simproxy: Simproxy) -> None:
    status, body = _login(simproxy, "anyone", "anything")
    assert status == 200 and body["token"].count(".") == 2
    assert simproxy.admin("GET", "/api/v2/hoverfly/mode")[0] == 200


def test_a_fleet_shares_tokens_logouts_and_the_lock_out(simproxy_factory: Any, redis_server: RedisServer) -> None:
    flags = (*AUTH, "-workers", "2", "-redis-url", redis_server.url, "-redis-prefix", "auth-fleet:")
    first, second = simproxy_factory(*flags), simproxy_factory(*flags)
    token = _token(first)
    for sp in (first, second):
        for _ in range(4):  # new connections land on both workers
            assert sp.admin("GET", "/api/v2/hoverfly/mode", headers=_bearer(token))[0] == 200
    assert second.admin("GET", "/api/logout", headers=_bearer(token))[0] == 200
    for sp in (first, second):
        for _ in range(4):
            assert sp.admin("GET", "/api/v2/hoverfly/mode", headers=_bearer(token))[0] == 401
    assert [_login(sp, USER, "nope")[0] for sp in (first, second, first)] == [401, 401, 401]
    assert _login(second)[0] == 429
