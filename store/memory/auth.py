"""``AuthStore`` in process: the count of failed logins and the tokens logged out."""

from __future__ import annotations


class MemoryAuth:
    def __init__(self) -> None:
        self._failures = (0, 0)  # (count, ms of the last)
        self._revoked: dict[str, int] = {}  # digest -> until (ms)

    async def login_locked(self, now_ms: int, window_ms: int, limit: int) -> bool:
        count, last = self._failures
        if now_ms - last >= window_ms:
            self._failures = (0, 0)
            return False
        if count >= limit:
            self._failures = (count, now_ms)
            return True
        return False

    async def login_failed(self, now_ms: int) -> None:
        self._failures = (self._failures[0] + 1, now_ms)

    async def revoke_token(self, digest: str, until_ms: int, now_ms: int) -> None:
        self._revoked = {d: until for d, until in self._revoked.items() if until > now_ms}
        if until_ms > now_ms:
            self._revoked[digest] = until_ms

    async def token_revoked(self, digest: str) -> bool:
        return digest in self._revoked
