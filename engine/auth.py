"""Hoverfly's authentication (``-auth``): users, bearer tokens, the lock-out, and proxy credentials.

One ``Authenticator`` per worker. Tokens are JWTs signed with HS512 by a secret that every worker
and instance shares (``-jwt-secret``, else one kept in the store: the first worker to store it
wins), so a token from any worker works on all of them. Failed logins are counted in the store,
so the lock-out (3 failures, then 10 minutes) holds fleet-wide, and so do logged-out tokens.
Passwords are bcrypt hashes, checked in a thread (tens of milliseconds each), never on the event
loop. The proxy checks ``Proxy-Authorization`` (Basic or Bearer) and remembers a header that passed
for a few seconds, so a load test pays for bcrypt once per client, not once per request.
``bcrypt`` and ``jwt`` are imported on first use, so a start without ``-auth`` loads neither.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from simproxy.engine.errors import LoginRefused, TokenRejected, TooManyAttempts
from simproxy.store import AuthStore, Documents

AUTH_DOCUMENT = "auth"
LOCK_LIMIT = 3
LOCK_WINDOW_MS = 10 * 60 * 1000
BCRYPT_COST = 10
DEFAULT_TOKEN_SECONDS = 24 * 60 * 60
PROXY_PASS_SECONDS = 5.0
PROXY_PASS_LIMIT = 1024
_ALGORITHM = "HS512"

PROXY_REQUIRED = "407 Proxy authentication required"


@dataclass(frozen=True, slots=True)
class User:
    username: str
    password_hash: str
    """bcrypt (``$2a$``/``$2b$``/``$2y$``), as ``-password-hash`` takes it."""
    admin: bool = True


def hash_password(password: str) -> str:
    """bcrypt at Hoverfly's cost (10)."""
    import bcrypt

    return bcrypt.hashpw(password.encode("utf-8"), bcrypt.gensalt(BCRYPT_COST)).decode("ascii")


def valid_hash(text: str) -> bool:
    """Whether ``text`` is a bcrypt hash that ``bcrypt.checkpw`` accepts."""
    import bcrypt

    try:
        bcrypt.checkpw(b"", text.encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        return False
    return True


def new_secret() -> bytes:
    return secrets.token_bytes(64)


async def shared_secret(store: Documents) -> bytes:
    """The signing secret of the fleet: the store's, or a new one stored first-writer-wins."""
    doc = await store.read_document(AUTH_DOCUMENT)
    if doc is not None and doc[1]:
        return doc[1]
    candidate = new_secret()
    if await store.write_document(AUTH_DOCUMENT, candidate, expected_version=0) is not None:
        return candidate
    doc = await store.read_document(AUTH_DOCUMENT)  # another worker stored one first: use that one
    return doc[1] if doc is not None and doc[1] else candidate


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (the scheme in any case)."""
    if header is None or len(header) < 7 or header[:7].upper() != "BEARER ":
        return None
    token = header[7:].strip()
    return token or None


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Authenticator:
    def __init__(
        self,
        users: Iterable[User],
        secret: bytes,
        store: AuthStore,
        *,
        token_seconds: int = DEFAULT_TOKEN_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.users = {user.username: user for user in users}
        self.token_seconds = token_seconds
        # HS512 wants a key of 64 bytes at least: a short -jwt-secret is stretched to that length
        self._secret = hashlib.sha512(secret).digest()
        self._store = store
        self._clock = clock
        self._proxy_passed: OrderedDict[str, float] = OrderedDict()
        """Proxy-Authorization values that passed -> until when (monotonic) they pass unchecked."""

    # -- logins and tokens ------------------------------------------------------------------------

    async def login(self, username: str, password: str) -> str:
        """A token for good credentials; ``TooManyAttempts`` while locked out, else ``LoginRefused``."""
        return self.issue(await self._check_password(username, password))

    async def _check_password(self, username: str, password: str) -> User:
        now_ms = int(self._clock() * 1000)
        if await self._store.login_locked(now_ms, LOCK_WINDOW_MS, LOCK_LIMIT):
            raise TooManyAttempts("Too many failed login attempts, please wait 10 minutes")
        user = self.users.get(username)
        if user is None or not await asyncio.to_thread(_password_matches, password, user.password_hash):
            await self._store.login_failed(now_ms)
            raise LoginRefused("Incorrect username or password")
        return user

    def issue(self, user: User) -> str:
        import jwt

        now = int(self._clock())
        claims = {
            "exp": now + self.token_seconds,
            "iat": now,
            "sub": user.username,
            "username": user.username,
            "jti": secrets.token_hex(8),  # two tokens issued in one second differ: logging one out leaves the other
        }
        return jwt.encode(claims, self._secret, algorithm=_ALGORITHM)

    async def verify(self, token: str) -> User:
        """The user a token stands for; ``TokenRejected`` when it is forged, expired or logged out."""
        user, _ = self._decode(token)
        if await self._store.token_revoked(_digest(token)):
            raise TokenRejected("the token was logged out")
        return user

    def _decode(self, token: str) -> tuple[User, float]:
        """The user of a token that is genuine and in date, and when it expires (epoch seconds)."""
        import jwt

        try:  # the signature and its algorithm; the times against this authenticator's clock, below
            claims = jwt.decode(
                token,
                self._secret,
                algorithms=[_ALGORITHM],
                options={"require": ["exp", "iat"], "verify_exp": False, "verify_iat": False, "verify_nbf": False},
            )
        except jwt.PyJWTError as exc:
            raise TokenRejected(f"invalid token: {exc}") from None
        now = self._clock()
        exp, iat, nbf = (_number(claims.get(name, 0)) for name in ("exp", "iat", "nbf"))
        if exp <= now:
            raise TokenRejected("invalid token: the token has expired")
        if iat > now + 5 or nbf > now + 5:  # a few seconds of clock skew between pods
            raise TokenRejected("invalid token: the token is not valid yet")
        user = self.users.get(str(claims.get("username", "")))
        if user is None:
            raise TokenRejected("invalid token: unknown user")
        return user, exp

    async def logout(self, token: str) -> None:
        """Refuse ``token`` from now on, fleet-wide (until it would have expired anyway)."""
        _, exp = self._decode(token)
        await self._store.revoke_token(_digest(token), int(exp * 1000), int(self._clock() * 1000))
        self._proxy_passed.pop(f"Bearer {token}", None)

    # -- the proxy --------------------------------------------------------------------------------

    def proxy_passed(self, header: str | None) -> bool:
        """Whether this ``Proxy-Authorization`` value passed a full check a moment ago (no I/O)."""
        if header is None:
            return False
        until = self._proxy_passed.get(header)
        return until is not None and until > time.monotonic()

    async def proxy_check(self, header: str | None) -> str | None:
        """None when ``Proxy-Authorization`` lets the request through, else the 407's body text."""
        if not header:
            return PROXY_REQUIRED
        scheme, _, value = header.strip().partition(" ")
        try:
            if scheme.lower() == "basic":
                username, password = _basic_credentials(value)
                await self._check_password(username, password)
            elif scheme.lower() == "bearer":
                await self.verify(value.strip())
            else:
                return f"407 Unknown authentication type `{scheme}`, only `Basic` or `Bearer` are supported"
        except (LoginRefused, TooManyAttempts, TokenRejected):
            return PROXY_REQUIRED
        self._proxy_passed[header] = time.monotonic() + PROXY_PASS_SECONDS
        self._proxy_passed.move_to_end(header)
        while len(self._proxy_passed) > PROXY_PASS_LIMIT:
            self._proxy_passed.popitem(last=False)
        return None


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TokenRejected("invalid token: exp, iat and nbf must be numbers")
    return float(value)


def _basic_credentials(value: str) -> tuple[str, str]:
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise LoginRefused("malformed Basic credentials") from None
    username, colon, password = decoded.partition(":")
    if not colon:
        raise LoginRefused("malformed Basic credentials")
    return username, password


def _password_matches(password: str, password_hash: str) -> bool:
    import bcrypt

    try:
        return bcrypt.checkpw(password.encode("utf-8"), password_hash.encode("ascii"))
    except ValueError:
        return False
