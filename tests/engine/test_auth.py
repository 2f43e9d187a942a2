"""engine/auth: tokens, the lock-out and proxy credentials, on the in-process store with a fake clock."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import Coroutine
from typing import Any, TypeVar

import bcrypt
import jwt
import pytest

from simproxy.engine.auth import PROXY_REQUIRED, Authenticator, User, bearer_token, shared_secret
from simproxy.engine.errors import LoginRefused, TokenRejected, TooManyAttempts
from simproxy.store import MemoryStore

T = TypeVar("T")
SECRET = b"k" * 64
KEY = hashlib.sha512(SECRET).digest()
"""What the authenticator signs with (a forger who knows it still fails the other checks)."""
USER = User("ops", bcrypt.hashpw(b"pw", bcrypt.gensalt(4)).decode())


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def make(clock: Clock | None = None, store: MemoryStore | None = None) -> Authenticator:
    return Authenticator([USER], SECRET, store or MemoryStore(), token_seconds=60, clock=clock or Clock())


def test_a_token_carries_hoverflys_claims_signed_with_hs512() -> None:
    clock = Clock()
    token = run(make(clock).login("ops", "pw"))
    header = jwt.get_unverified_header(token)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert header["alg"] == "HS512"
    assert (claims["exp"] - claims["iat"], claims["username"], claims["sub"]) == (60, "ops", "ops")


def test_a_token_expires() -> None:
    clock = Clock()
    auth = make(clock)
    token = auth.issue(USER)
    assert run(auth.verify(token)) == USER
    clock.now += 61
    with pytest.raises(TokenRejected, match="expired"):
        run(auth.verify(token))


@pytest.mark.parametrize(
    "forge",
    [
        lambda claims: jwt.encode(claims, hashlib.sha512(SECRET).digest(), algorithm="HS256"),  # another algorithm
        lambda claims: jwt.encode(claims, b"another secret" * 5, algorithm="HS512"),
        lambda claims: jwt.encode(claims, None, algorithm="none"),
        lambda claims: jwt.encode({**claims, "username": "root"}, KEY, algorithm="HS512"),  # no such user
        lambda claims: jwt.encode({k: v for k, v in claims.items() if k != "exp"}, KEY, algorithm="HS512"),
        lambda claims: jwt.encode({**claims, "exp": "never"}, KEY, algorithm="HS512"),
    ],
    ids=["hs256", "wrong-secret", "alg-none", "unknown-user", "no-expiry", "text-expiry"],
)
def test_forged_tokens_are_rejected(forge: Any) -> None:
    clock = Clock()
    claims = {"exp": int(clock.now) + 60, "iat": int(clock.now), "sub": "ops", "username": "ops"}
    with pytest.raises(TokenRejected):
        run(make(clock).verify(forge(claims)))


def test_the_lock_out_and_its_end() -> None:
    clock, store = Clock(), MemoryStore()
    auth = make(clock, store)

    async def body() -> None:
        for _ in range(3):
            with pytest.raises(LoginRefused):
                await auth.login("ops", "wrong")
        with pytest.raises(TooManyAttempts):
            await auth.login("ops", "pw")
        clock.now += 601  # ten minutes without a try
        assert await auth.login("ops", "pw")

    run(body())


def test_unknown_users_and_wrong_passwords_count_alike() -> None:
    auth = make()

    async def body() -> None:
        for user in ("nobody", "ops", ""):
            with pytest.raises(LoginRefused):
                await auth.login(user, "wrong")
        with pytest.raises(TooManyAttempts):
            await auth.login("nobody", "wrong")

    run(body())


def test_proxy_credentials_pass_once_checked_and_stop_after_logout() -> None:
    auth = make()
    basic = "Basic " + base64.b64encode(b"ops:pw").decode()

    async def body() -> None:
        assert not auth.proxy_passed(basic)
        assert await auth.proxy_check(basic) is None
        assert auth.proxy_passed(basic)  # the next request skips bcrypt
        token = auth.issue(USER)
        assert await auth.proxy_check(f"Bearer {token}") is None
        await auth.logout(token)
        assert not auth.proxy_passed(f"Bearer {token}")
        assert await auth.proxy_check(f"Bearer {token}") == PROXY_REQUIRED
        for bad in (None, "", "Basic !!!", "Basic " + base64.b64encode(b"no-colon").decode()):
            assert await auth.proxy_check(bad) == PROXY_REQUIRED
        assert "Unknown authentication type `Negotiate`" in str(await auth.proxy_check("Negotiate abc"))

    run(body())


def test_bearer_headers() -> None:
    assert bearer_token("Bearer abc") == bearer_token("bEaReR abc ") == "abc"
    assert bearer_token("Basic abc") is None and bearer_token("Bearer ") is None and bearer_token(None) is None


def test_every_worker_gets_the_first_stored_secret() -> None:
    store = MemoryStore()

    async def body() -> None:
        secrets = await asyncio.gather(*(shared_secret(store) for _ in range(5)))
        assert len(set(secrets)) == 1 and len(secrets[0]) == 64

    run(body())


def test_a_good_token_signed_with_the_key_passes() -> None:
    clock = Clock()
    claims = {"exp": int(clock.now) + 60, "iat": int(clock.now), "sub": "ops", "username": "ops"}
    assert run(make(clock).verify(jwt.encode(claims, KEY, algorithm="HS512"))) == USER
