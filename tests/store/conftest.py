"""Fixtures for the store tests: one real redis-server per session, and stores of every implementation.

Tests are plain functions. Each gets its own event loop through ``run`` (an ``asyncio.Runner``), and the
stores the fixtures open are used and closed on that same loop, so ``run`` may be called several times.

fakeredis is deliberately not among the implementations: the compare-and-set write is a Lua script, and
fakeredis only runs Lua with ``lupa``, which is not installed (without it EVALSHA is an unknown command).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from simproxy.admin.process.redisserver import RedisServer, free_port
from simproxy.store import MemoryStore, RedisStore, Store
from tests.processes import starts_processes

Run = Callable[[Coroutine[Any, Any, Any]], Any]


@pytest.fixture(scope="session")
@starts_processes
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer(port=free_port()).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def run() -> Iterator[Run]:
    with asyncio.Runner() as runner:
        yield runner.run


@pytest.fixture
def prefix() -> str:
    """A key prefix no other test uses, so tests sharing the session's Redis never see each other."""
    return f"test-{uuid.uuid4().hex[:12]}:"


class Backend:
    """Opens handles on one store implementation; every handle is closed when the test ends.

    For Redis each handle is a client of its own (what a separate worker has); handles on the same prefix
    share everything. The memory store lives in one process, so its handles on one prefix are one object.
    """

    def __init__(self, kind: str, prefix: str, run: Run, server: RedisServer | None = None) -> None:
        self.kind = kind
        self.prefix = prefix
        self._run = run
        self._server = server
        self._memory: dict[str, MemoryStore] = {}
        self._opened: list[Store] = []

    def open(self, prefix: str | None = None) -> Store:
        prefix = self.prefix if prefix is None else prefix
        store: Store
        if self.kind == "memory":
            store = self._memory.setdefault(prefix, MemoryStore())
        else:
            assert self._server is not None
            store = RedisStore.from_url(self._server.url, prefix)
        self._opened.append(store)
        return store

    def close_all(self) -> None:
        for store in self._opened:
            self._run(store.aclose())


def _backend(kind: str, request: pytest.FixtureRequest, prefix: str, run: Run) -> Iterator[Backend]:
    server = request.getfixturevalue("redis_server") if kind == "redis" else None
    backend = Backend(kind, prefix, run, server)
    try:
        yield backend
    finally:
        backend.close_all()


@pytest.fixture(params=["memory", "redis"])
def backend(request: pytest.FixtureRequest, prefix: str, run: Run) -> Iterator[Backend]:
    yield from _backend(request.param, request, prefix, run)


@pytest.fixture
def store(backend: Backend) -> Store:
    return backend.open()


@pytest.fixture
@starts_processes
def redis_backend(request: pytest.FixtureRequest, prefix: str, run: Run) -> Iterator[Backend]:
    yield from _backend("redis", request, prefix, run)


@pytest.fixture
def redis_store(redis_backend: Backend) -> RedisStore:
    store = redis_backend.open()
    assert isinstance(store, RedisStore)
    return store


@pytest.fixture
def redis_client(redis_server: RedisServer, run: Run) -> Iterator[aioredis.Redis]:
    """A plain client on the session's Redis, to look at (or tamper with) what a store wrote."""
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        yield client
    finally:
        run(client.aclose())
