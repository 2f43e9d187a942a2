"""Large values take the time their size needs, while small commands still give up after a second.

A simulation of a hundred megabytes takes seconds to reach Redis or to come back from it when
several workers fetch it at once. The tests put a link of a known speed between the store and a
real Redis: a value that needs two seconds on it must go through, and be counted as no error.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from simproxy.admin.process.redisserver import RedisServer
from simproxy.store import RedisStore, StoreUnavailable
from simproxy.store.redis.once import BULK_RATE

RATE = BULK_RATE * 1.25
"""The link's bytes per second in each direction: a little above what the store allows at the least."""
SIZE = int(RATE * 2)
"""Two seconds on the link: twice the time limit of a small command."""


class SlowLink:
    """A loopback TCP relay to ``port`` that passes at most ``rate`` bytes a second each way."""

    def __init__(self, port: int, rate: float) -> None:
        self.rate = rate
        self.target = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stalled = threading.Event()
        """Set: nothing passes (a server that stopped answering), until cleared."""
        self._closing = threading.Event()
        self._sockets: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            self._sockets += (client, server)
            for src, dst in ((client, server), (server, client)):
                pump = threading.Thread(target=self._pump, args=(src, dst), daemon=True)
                pump.start()
                self._threads.append(pump)

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        chunk = 64 * 1024
        with contextlib.suppress(OSError):
            while True:
                data = src.recv(chunk)
                if not data:
                    break
                while self.stalled.is_set() and not self._closing.is_set():
                    time.sleep(0.01)
                started = time.monotonic()
                dst.sendall(data)
                time.sleep(max(len(data) / self.rate - (time.monotonic() - started), 0))
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._closing.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        self.listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(timeout=5)
        for sock in self._sockets:
            sock.close()


@pytest.fixture
def slow_link(redis_server: RedisServer) -> Iterator[SlowLink]:
    assert redis_server.port is not None
    link = SlowLink(redis_server.port, RATE)
    try:
        yield link
    finally:
        link.close()


def test_a_large_document_is_written_and_read_over_a_link_slower_than_a_second(
    slow_link: SlowLink, prefix: str, run: Any
) -> None:
    big = bytes(range(256)) * (SIZE // 256)

    async def body() -> None:
        store = RedisStore.from_url(f"redis://127.0.0.1:{slow_link.port}/0", prefix)
        try:
            version = await store.write_document("simulation", big)
            assert version is not None
            assert await store.read_document("simulation") == (version, big)
            assert store.errors == 0  # no timeout, no retry, nothing counted as a store error
        finally:
            await store.aclose()

    run(body())


def test_a_small_command_still_gives_up_after_a_second(slow_link: SlowLink, prefix: str, run: Any) -> None:
    async def body() -> None:
        store = RedisStore.from_url(f"redis://127.0.0.1:{slow_link.port}/0", prefix)
        try:
            await store.write_document("config", b"{}")
            slow_link.stalled.set()
            started = time.monotonic()
            with pytest.raises(StoreUnavailable):
                await store.read_document("config")
            assert time.monotonic() - started < 2.0
        finally:
            slow_link.stalled.clear()
            await store.aclose()

    run(body())
