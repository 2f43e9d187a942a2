"""``AuthStore`` on Redis: failed logins in one hash, each logged-out token a key that expires with it."""

from __future__ import annotations

from simproxy.store.redis import scripts
from simproxy.store.redis.link import RedisLink, RedisRole, translate


class RedisAuth(RedisRole):
    def __init__(self, link: RedisLink) -> None:
        super().__init__(link)
        self._failures = link.keys.login_failures
        self._revoked_prefix = link.keys.revoked_prefix
        self._locked_script = self._client.register_script(scripts.LOGIN_LOCKED)

    @translate
    async def login_locked(self, now_ms: int, window_ms: int, limit: int) -> bool:
        return bool(await self._locked_script(keys=[self._failures], args=[now_ms, window_ms, limit]))

    @translate
    async def login_failed(self, now_ms: int) -> None:
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.hincrby(self._failures, "count", 1)
            pipe.hset(self._failures, "last", now_ms)
            await pipe.execute()

    @translate
    async def revoke_token(self, digest: str, until_ms: int, now_ms: int) -> None:
        if until_ms > now_ms:
            await self._client.set(self._revoked_prefix + digest, b"1", px=until_ms - now_ms)

    @translate
    async def token_revoked(self, digest: str) -> bool:
        return bool(await self._client.exists(self._revoked_prefix + digest))
