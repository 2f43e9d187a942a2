"""Compare-and-set writes, retried: read the current document, decide, write only if it is unchanged.

Every writer of a shared document (the admin API's configuration, simulation appends and data
sources, captured pairs) decides on the version it read and lets the store refuse the write when
another writer came first; it then reads again and decides again. One loop for all of them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from simproxy.engine.errors import WriteConflict

T = TypeVar("T")

WRITE_ATTEMPTS = 20
"""Tries before giving up: each lost try means another write was applied meanwhile."""


async def until_written(
    attempt: Callable[[], Awaitable[T | None]],
    conflict: str,
    *,
    attempts: int = WRITE_ATTEMPTS,
    error: type[WriteConflict] = WriteConflict,
) -> T:
    """Run ``attempt`` (read, decide, compare-and-set) until it returns a result; None means the
    store refused the write because another came first. Raises ``error(conflict)`` after
    ``attempts`` refusals."""
    for _ in range(attempts):
        result = await attempt()
        if result is not None:
            return result
    raise error(conflict)
