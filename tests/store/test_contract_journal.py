"""The ``JournalStore`` contract on every store: order, bounds, indexes, amends."""

from __future__ import annotations


def test_journal_append_keeps_order_bounds_it_and_indexes_point_at_entries(backend, run) -> None:
    async def body() -> None:
        a, b = backend.open(), backend.open()
        await a.journal_append([("e1", b"one"), ("e2", b"two")], {"Request.QueryParam.id": {"7": "e1", "8": "e2"}}, 3)
        await b.journal_append([("e3", b"three")], {"Request.QueryParam.id": {"7": "e3"}}, 3)
        assert await a.journal_entries() == [b"one", b"two", b"three"]
        assert await b.journal_lookup("Request.QueryParam.id", ["7", "8", "9"]) == [b"three", b"two", None]
        await a.journal_append([("e4", b"four"), ("e5", b"five")], {}, 3)  # the two oldest go
        assert await b.journal_entries() == [b"three", b"four", b"five"]
        assert await b.journal_lookup("Request.QueryParam.id", ["8"]) == [None]  # its entry was dropped
        await a.journal_set_index("Request.Method", {"GET": "e5"})
        assert await b.journal_lookup("Request.Method", ["GET", "POST"]) == [b"five", None]
        await a.journal_drop_index("Request.Method")
        assert await b.journal_lookup("Request.Method", ["GET"]) == [None]
        await b.journal_clear(["Request.QueryParam.id"])
        assert await a.journal_entries() == []
        assert await a.journal_lookup("Request.QueryParam.id", ["7"]) == [None]

    run(body())


def test_journal_amend_replaces_only_entries_still_kept(backend, run) -> None:
    async def body() -> None:
        a, b = backend.open(), backend.open()
        await a.journal_append([("e1", b"one"), ("e2", b"two")], {}, 2)
        assert await b.journal_amend("e1", b"one, amended") is True
        assert await a.journal_entries() == [b"one, amended", b"two"]
        await a.journal_append([("e3", b"three")], {}, 2)  # e1 is dropped
        assert await b.journal_amend("e1", b"too late") is False
        assert await a.journal_entries() == [b"two", b"three"]

    run(body())


def test_amended_entries_are_found_read_and_dropped_like_the_others(backend, run) -> None:
    async def body() -> None:
        a, b = backend.open(), backend.open()
        index = {"Request.Path": {"/1": "e1", "/2": "e2", "/3": "e3"}}
        await a.journal_append([("e1", b"one"), ("e2", b"two"), ("e3", b"three")], index, 4)
        assert await b.journal_amend("e2", b"two, amended") is True
        assert await b.journal_amend("nope", b"never") is False
        assert await a.journal_lookup("Request.Path", ["/2", "/3"]) == [b"two, amended", b"three"]
        await b.journal_append([("e4", b"four"), ("e5", b"five")], {}, 4)  # e1 goes, the rest stay
        assert await a.journal_entries() == [b"two, amended", b"three", b"four", b"five"]
        assert (await a.sizes())[0] == 4
        await b.journal_append([("e6", b"six"), ("e7", b"seven")], {}, 4)  # e2 and e3 go
        assert await a.journal_lookup("Request.Path", ["/1", "/2", "/3"]) == [None, None, None]
        assert await a.journal_amend("e2", b"too late") is False
        assert await a.journal_entries() == [b"four", b"five", b"six", b"seven"]
        await a.journal_append([("e8", b"eight")], {}, 2)  # a smaller limit: cut to it at once
        assert await b.journal_entries() == [b"seven", b"eight"]
        assert (await b.sizes())[0] == 2

    run(body())
