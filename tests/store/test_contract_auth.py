"""The ``AuthStore`` contract on every store: the fleet-wide login lock-out and revoked tokens."""

from __future__ import annotations


def test_the_login_lock_out_counts_failures_and_expires(backend, run) -> None:
    """Hoverfly's rule, fleet-wide: 3 failures lock logins until none has come for 10 minutes."""
    first, second = backend.open(), backend.open()
    window = 600_000

    async def body() -> None:
        assert await first.login_locked(1_000, window, 3) is False
        for at in (1_000, 2_000):
            await first.login_failed(at)
        assert await second.login_locked(3_000, window, 3) is False  # two failures: not yet
        await second.login_failed(3_000)
        assert await first.login_locked(4_000, window, 3) is True  # the third, through another handle
        # asking while locked keeps it locked for a whole window from then
        assert await second.login_locked(3_000 + window, window, 3) is True
        assert await first.login_locked(3_000 + 2 * window - 1, window, 3) is True
        later = 3_000 + 3 * window
        assert await first.login_locked(later, window, 3) is False  # quiet for a window: cleared
        await first.login_failed(later)
        assert await second.login_locked(later + 1, window, 3) is False  # counting from zero again

    run(body())


def test_a_revoked_token_is_known_to_every_handle_until_it_expires(backend, run) -> None:
    first, second = backend.open(), backend.open()

    async def body() -> None:
        assert await second.token_revoked("abc") is False
        await first.revoke_token("abc", until_ms=10**13 + 60_000, now_ms=10**13)
        assert await second.token_revoked("abc") is True
        assert await second.token_revoked("abd") is False
        await first.revoke_token("old", until_ms=5, now_ms=10)  # already expired: nothing to keep
        assert await second.token_revoked("old") is False

    run(body())
