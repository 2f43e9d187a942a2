"""``Documents`` on Redis: versioned documents, the generation counter, and its pub/sub channel.

A write is one Lua script (compare-and-set, the generation bumped, its ``WriteEffects`` applied;
a write of the simulation starts an era of the state, store/redis/eras.py)
taken under a lease, so that a write whose reply is lost is looked up rather than applied late
(store/redis/once.py).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator
from typing import Any, cast

from redis.exceptions import RedisError
from redis.typing import EncodableT

from simproxy.store.base import DOCUMENTS, NO_EFFECTS, Versions, WriteEffects
from simproxy.store.errors import StoreError, StoreUnavailable
from simproxy.store.redis import scripts
from simproxy.store.redis.eras import RedisEras, encodable
from simproxy.store.redis.link import RedisLink, RedisRole, translate
from simproxy.store.redis.once import LOST, WRITE_OUTCOME_KEEP_MS, take_lease, write_lease, write_outcome

DRAIN_TRIES = 4
"""Times a write of the simulation tries to drain the era of the state it started."""
DRAIN_WAIT = 0.05
"""Seconds before the second try, doubled before each one after (0.35 s in all)."""


class RedisDocuments(RedisRole):
    def __init__(self, link: RedisLink, eras: RedisEras) -> None:
        super().__init__(link)
        self._eras = eras
        keys = link.keys
        self._gen = keys.gen
        self._docs = keys.docs
        self._writes = keys.writes
        self._effects = (*keys.cache, keys.eras)
        """The keys a write's effects touch: the match cache's, the state's eras."""
        self.channel = keys.channel
        self._bump_script = self._client.register_script(scripts.BUMP_ONE)
        self._write_script = self._client.register_script(scripts.WRITE_DOCUMENT)

    @translate
    async def read_versions(self) -> Versions:
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.get(self._gen)
            for name in DOCUMENTS:
                pipe.hget(self._docs[name], "v")
            results = await pipe.execute()
        return Versions(
            int(results[0] or 0), {name: int(v or 0) for name, v in zip(DOCUMENTS, results[1:], strict=True)}
        )

    @translate
    async def read_document(self, name: str) -> tuple[int, bytes] | None:
        key = self._docs[name]
        async with self.link.sized(await self._client.hstrlen(key, "body")) as client:
            version, body = await client.hmget(key, ["v", "body"])
        if version is None or body is None:
            return None
        return int(version), body if isinstance(body, bytes) else body.encode()

    @translate
    async def write_document(
        self, name: str, body: bytes, expected_version: int | None = None, effects: WriteEffects = NO_EFFECTS
    ) -> int | None:
        encodable(effects.state)
        marker = self._writes + secrets.token_hex(8)
        expected = "" if expected_version is None else str(expected_version)
        lease = write_lease(len(body))
        leased = await take_lease(self._client, marker, lease)
        try:
            async with self.link.sized(len(body), self._write_script) as client:
                keys = [self._docs[name], self._gen, marker, *self._effects]
                args: list[EncodableT] = [
                    body,
                    expected,
                    WRITE_OUTCOME_KEEP_MS,
                    "1" if effects.clear_cache else "",
                    "1" if name == "simulation" else "",  # a new simulation, a new era of the state
                    json.dumps(dict(effects.state)),
                ]
                result = int(await self._write_script(keys=keys, args=args, client=client))
        except LOST as exc:
            self.link.failed()
            result = await write_outcome(self._client, marker, leased, lease, exc, self.link.failed)
            if result < 0:
                raise StoreUnavailable(f"the store did not answer a write in time ({exc}); it was not applied") from exc
        if result < 0:
            self.link.failed()
            raise StoreUnavailable("the store took the write after its lease: it was not applied")
        if result and name == "simulation":
            await self._drain_state()
        return result or None

    async def _drain_state(self) -> None:
        """Drain the era of the state the write started, before the write is answered: a step
        decided on the old simulation is refused from then on. A drain that fails is tried again
        (``DRAIN_TRIES``, a short wait between), since until the era is drained such a step still
        holds on a group not sealed yet. When it keeps failing, whoever reads the state next drains
        it (store/redis/eras.py): the write was applied all the same, so no failure of the drain,
        whatever it is, fails the write's answer."""
        for attempt in range(DRAIN_TRIES):
            if attempt:
                await asyncio.sleep(DRAIN_WAIT * 2 ** (attempt - 1))
            try:
                await self._eras.drain_current()
            except Exception:  # the write holds: tried again, or left to the next reader
                continue
            return

    @translate
    async def bump_generation(self) -> int:
        return int(await self._bump_script(keys=[self._gen]))

    @translate
    async def publish(self, generation: int) -> None:
        await self._client.publish(self.channel, str(generation))

    async def subscribe(self) -> AsyncIterator[int]:
        pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(self.channel)
            while not self.link.closed:
                # a bounded wait, so that closing the store also ends its subscriptions
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.5)
                if message is None:
                    continue
                try:
                    yield int(cast(dict[str, Any], message)["data"])
                except (KeyError, TypeError, ValueError):
                    continue
            raise StoreUnavailable("the store was closed")
        except LOST as exc:
            self.link.failed()
            raise StoreUnavailable(f"lost the store's event channel: {exc}") from exc
        except RedisError as exc:
            self.link.failed()
            raise StoreError(f"cannot follow the store's event channel: {exc}") from exc
        finally:
            await pubsub.aclose()  # type: ignore[no-untyped-call]
