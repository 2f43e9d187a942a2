"""Buffered writes applied exactly once: batch ids, and the one batch of a kind not yet acknowledged.

A worker buffers what it served (usage counters, cache entries, journal entries, logs, metrics) and
writes it in batches. A batch whose reply did not come (the store paused, a connection dropped) may
still have been applied, or may be applied later, when the store reads the copy it was sent. So a
batch keeps its id and its items until the store acknowledges it and is sent again as it was; what
is buffered meanwhile waits for a later batch. A shared store records the highest batch number it
applied per writer and kind in the step that applies a batch, and drops a copy it has already
applied; the numbers of one writer's batches of one kind only grow, and a batch is only sent once
every earlier one was acknowledged, so any older copy that comes late is dropped too.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BatchId:
    """One batch of one writer: ``seq`` grows with every batch that writer makes."""

    writer: str
    seq: int


@dataclass(frozen=True, slots=True)
class Batch(Generic[T]):
    id: BatchId
    items: T


class BatchIds:
    """The ids of one writer's batches: a random name of its own, and numbers that only grow."""

    def __init__(self) -> None:
        self.writer = secrets.token_hex(8)
        self._numbers = itertools.count(1)

    def next(self) -> BatchId:
        return BatchId(self.writer, next(self._numbers))


class Outbox(Generic[T]):
    """One kind of buffered write: at most one batch sent and not acknowledged yet (``unsent``)."""

    def __init__(self, ids: BatchIds) -> None:
        self._ids = ids
        self.unsent: Batch[T] | None = None

    def __bool__(self) -> bool:
        return self.unsent is not None

    async def send(self, write: Callable[[Batch[T]], Awaitable[None]], take: Callable[[], T | None]) -> None:
        """Send the unsent batch again, as it was, then what ``take`` gives (None: nothing) as a new one.

        When ``write`` raises, the batch stays unsent and the error goes to the caller; nothing is
        taken after an unsent batch failed again, so batches are acknowledged in the order they were made.
        """
        if self.unsent is not None:
            await write(self.unsent)
            self.unsent = None
        items = take()
        if items is None:
            return
        self.unsent = Batch(self._ids.next(), items)
        await write(self.unsent)
        self.unsent = None
