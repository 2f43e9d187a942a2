"""What the Redis store's roles share: one handle's clients, key names and failure count.

Each role (documents.py, state.py, journal.py, ...) is given the same ``RedisLink``; its calls are
wrapped by ``translate``, which turns redis-py's errors into the store's and counts them on the link.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from functools import wraps
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError
from redis.typing import EncodableT, FieldT

from simproxy.store.batches import BatchId
from simproxy.store.errors import StoreError, StoreUnavailable
from simproxy.store.redis.keys import Keys
from simproxy.store.redis.once import LOST, transfer_allowance

SOCKET_TIMEOUT = 1.0
"""Seconds a command may wait for the server's first reply byte (or a connection to open)."""

P = ParamSpec("P")
T = TypeVar("T")


class RedisLink:
    """One store handle's connection: ``client`` for commands, ``bulk`` (no socket timeout) for
    large transfers (``sized``), the key names, and the calls of any role that failed so far."""

    def __init__(self, client: aioredis.Redis, keys: Keys, bulk: aioredis.Redis | None = None) -> None:
        self.client = client
        self.bulk = bulk or client
        self.keys = keys
        self.errors = 0
        """Calls of this handle that failed, whatever failed: it only grows."""
        self.closed = False

    def failed(self) -> None:
        """Count one failed call."""
        self.errors += 1

    @contextlib.asynccontextmanager
    async def sized(self, size: int, script: AsyncScript | None = None) -> AsyncIterator[aioredis.Redis]:
        """The client for a command carrying or fetching ``size`` bytes, within a time limit that
        fits them (a timeout raises ``TimeoutError``, one of ``LOST``). A large ``script`` call is
        preceded by loading the script: redis-py sends its arguments again when Redis lacks it."""
        allowance = transfer_allowance(size)
        if not allowance:
            yield self.client
            return
        if script is not None:
            await self.client.script_load(script.script)
        async with asyncio.timeout(SOCKET_TIMEOUT + allowance):
            yield self.bulk

    def opening(self, kind: str, batch: BatchId | None) -> tuple[str, list[str]]:
        """The key and the arguments that open a batched write of ``kind`` (``scripts.BATCH``)."""
        batches = self.keys.batch_slots.get(kind, self.keys.batches)  # in the slot of the keys it guards
        if batch is None:
            return batches, [kind, "0"]
        return batches + batch.writer, [kind, str(batch.seq)]

    async def aclose(self) -> None:
        self.closed = True
        await self.client.aclose()
        if self.bulk is not self.client:
            await self.bulk.aclose()


class RedisRole:
    """A role of the Redis store: its calls go through ``link``."""

    def __init__(self, link: RedisLink) -> None:
        self.link = link
        self._client = link.client


class Linked(Protocol):
    """What ``translate`` wraps the calls of: a role, or the store itself (its ``ping``)."""

    @property
    def link(self) -> RedisLink: ...


R = TypeVar("R", bound=Linked)


def translate(
    func: Callable[Concatenate[R, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[R, P], Coroutine[Any, Any, T]]:
    """A role's call whose redis-py errors surface as ``StoreUnavailable`` (the server cannot be
    reached, or its reply was lost) or ``StoreError`` (it refused), each counted on the link."""

    @wraps(func)
    async def wrapper(role: R, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await func(role, *args, **kwargs)
        except StoreError:
            raise  # already translated (and counted) inside
        except LOST as exc:
            role.link.errors += 1
            raise StoreUnavailable(f"the store cannot be reached: {exc}") from exc
        except RedisError as exc:
            role.link.errors += 1
            raise StoreError(f"store operation failed: {exc}") from exc

    return wrapper


def text(value: bytes | str) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def encoded(values: Mapping[str, str]) -> dict[FieldT, EncodableT]:
    """A str -> str map as Redis hash fields, whatever characters it holds."""
    return {
        key.encode("utf-8", "surrogateescape"): value.encode("utf-8", "surrogateescape")
        for key, value in values.items()
    }
