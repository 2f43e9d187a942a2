"""The ``DiffStore`` contract on every store: reports grouped per request, cleared, isolated per prefix."""

from __future__ import annotations

import asyncio

import pytest


def test_diff_reports_are_grouped_per_request_key_in_first_seen_order(backend, run) -> None:
    async def body() -> None:
        a, b = backend.open(), backend.open()
        assert await a.diff_reports() == []
        await a.diff_add("GET /b", b"r1")
        await b.diff_add("GET /a", b"r2")
        await a.diff_add("GET /b", b"r3")
        await b.diff_add("POST /b", b"r4")
        await b.diff_add("GET /a", b"r5")
        expected = [("GET /b", [b"r1", b"r3"]), ("GET /a", [b"r2", b"r5"]), ("POST /b", [b"r4"])]
        assert await a.diff_reports() == expected
        assert await b.diff_reports() == expected

    run(body())


def test_diff_clear_empties_every_group_and_later_groups_start_afresh(backend, run) -> None:
    async def body() -> None:
        a, b = backend.open(), backend.open()
        await a.diff_add("k1", b"r1")
        await a.diff_add("k2", b"r2")
        await b.diff_clear()
        assert await a.diff_reports() == []
        await b.diff_clear()  # clearing nothing is fine
        await a.diff_add("k2", b"r3")
        await a.diff_add("k1", b"r4")
        assert await b.diff_reports() == [("k2", [b"r3"]), ("k1", [b"r4"])]

    run(body())


@pytest.mark.parametrize(
    "key",
    ["", "12:34", '["GET","h:80","/p","a=1"]', "caf\u00e9 \u2603 \U0001f600", "x\ny\x00z", "9" * 40],
)
def test_diff_keys_and_reports_round_trip_whatever_they_hold(store, run, key: str) -> None:
    reports = [b"", b"5:abc", bytes(range(256)), b'{"timestamp":"t","diffEntries":[]}']

    async def body() -> None:
        for report in reports:
            await store.diff_add(key, report)
        await store.diff_add(key + "-other", b"other")
        assert await store.diff_reports() == [(key, reports), (key + "-other", [b"other"])]

    run(body())


def test_concurrent_diff_adds_keep_every_report_and_each_writers_order(backend, run) -> None:
    async def body() -> None:
        handles = [backend.open() for _ in range(4)]

        async def writer(n: int) -> None:
            for i in range(25):
                await handles[n].diff_add(f"k{i % 3}", f"w{n}:{i}".encode())

        await asyncio.gather(*(writer(n) for n in range(4)))
        groups = dict(await handles[0].diff_reports())
        assert sorted(groups) == ["k0", "k1", "k2"]
        assert sum(len(reports) for reports in groups.values()) == 100
        for key, reports in groups.items():
            for n in range(4):
                mine = [int(r.split(b":")[1]) for r in reports if r.startswith(f"w{n}:".encode())]
                assert mine == [i for i in range(25) if f"k{i % 3}" == key]

    run(body())


def test_diff_reports_of_different_prefixes_are_separate(backend, run) -> None:
    async def body() -> None:
        a, b = backend.open(), backend.open(backend.prefix + "other:")
        await a.diff_add("k", b"a")
        await b.diff_add("k", b"b")
        assert await a.diff_reports() == [("k", [b"a"])]
        await b.diff_clear()
        assert await a.diff_reports() == [("k", [b"a"])]
        assert await b.diff_reports() == []

    run(body())
