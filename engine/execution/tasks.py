"""The one place background tasks are created: every task is referenced, named and awaited on close."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)

RECANCEL_AFTER = 0.05
"""Seconds a cancelled task gets to end before it is cancelled again."""


class TaskSet:
    """Owns background tasks; ``aclose`` cancels the ones still running and waits for all of them."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    def __len__(self) -> int:
        return len(self._tasks)

    async def aclose(self) -> None:
        """Cancel the tasks still running and wait until every one has ended.

        A cancellation can be lost: Python 3.11's ``asyncio.wait_for`` (redis-py wraps commands in
        it) drops one that arrives as the call it waits for completes (CPython gh-86296), and the
        task runs on. So a task still running shortly after is cancelled again, until it ends.
        """
        pending = set(self._tasks)
        while pending:
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=RECANCEL_AFTER)
