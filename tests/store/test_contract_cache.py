"""The ``CacheStore`` contract on every store: the fleet-wide match cache keeps the entries put last,
up to its capacity, and a clear empties it for every handle."""

from __future__ import annotations


def test_the_cache_keeps_the_most_recently_put_entries_up_to_its_capacity(backend, run) -> None:
    a, b = backend.open(), backend.open()

    async def body() -> None:
        await a.cache_put({"k1": b"one", "k2": b"two"}, 3)
        await b.cache_put({"k3": b"three"}, 3)
        await a.cache_put({"k1": b"one again"}, 3)  # put again: the most recent now, its entry replaced
        await b.cache_put({"k4": b"four"}, 3)  # one too many: the least recently put (k2) goes
        assert await a.cache_entries() == {"k1": b"one again", "k3": b"three", "k4": b"four"}
        await a.cache_put({"k5": b"five", "k6": b"six"}, 2)  # a smaller capacity drops down to it
        assert await b.cache_entries() == {"k5": b"five", "k6": b"six"}

    run(body())


def test_a_clear_empties_the_cache_for_every_handle_and_later_entries_start_afresh(backend, run) -> None:
    a, b = backend.open(), backend.open()

    async def body() -> None:
        await a.cache_put({"k1": b"one", "k2": bytes(range(256))}, 10)
        assert await b.cache_entries() == {"k1": b"one", "k2": bytes(range(256))}
        await b.cache_clear()
        assert await a.cache_entries() == {}
        await a.cache_put({"k3": b"three"}, 1)
        await b.cache_put({"k4": b"four"}, 1)
        assert await a.cache_entries() == {"k4": b"four"}

    run(body())


def test_the_caches_of_different_prefixes_are_separate(backend, run) -> None:
    mine, theirs = backend.open(), backend.open(prefix=backend.prefix + "other:")

    async def body() -> None:
        await mine.cache_put({"k": b"mine"}, 10)
        await theirs.cache_put({"k": b"theirs"}, 10)
        await theirs.cache_clear()
        assert await mine.cache_entries() == {"k": b"mine"}

    run(body())
