"""The ``Store`` contract, run against every implementation (the ``backend`` fixture's params).

Only what a caller (``engine.runtime``) can observe is asserted: generations, document versions and bodies,
counters, heartbeats and events. ``backend.open()`` gives a second handle on the same store: for Redis a
client of its own, i.e. what another worker sees.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable

import pytest

from store import DOCUMENTS, Store, StoreUnavailable, Versions


def _at(generation: int, **documents: int) -> Versions:
    """The versions at ``generation``, every document not named at 0 (never written)."""
    return Versions(generation, {name: documents.get(name, 0) for name in DOCUMENTS})


NEVER = _at(0)


async def _origin(first_bump: Awaitable[int | None]) -> int:
    """The generation before a fresh store's first bump (0 in memory; the clock on Redis, see below)."""
    generation = await first_bump
    assert generation is not None and generation > 0
    return generation - 1


def test_the_documents_are_the_simulation_config_data_sources_ca_auth_secret_and_last_start_up() -> None:
    assert DOCUMENTS == ("simulation", "config", "csv", "ca", "auth", "startup")


def test_a_fresh_store_is_at_generation_0_with_no_documents(store, run) -> None:
    async def body() -> None:
        await store.ping()
        assert await store.read_versions() == NEVER
        for name in DOCUMENTS:
            assert await store.read_document(name) is None
        assert await store.read_counters() == {}
        assert await store.worker_acks(0) == {}

    run(body())


def test_each_write_bumps_the_generation_and_versions_the_document_with_it(store, run) -> None:
    async def body() -> None:
        g = await _origin(store.write_document("simulation", b"sim-1"))
        assert await store.read_document("simulation") == (g + 1, b"sim-1")
        assert await store.read_document("config") is None
        assert await store.read_versions() == _at(g + 1, simulation=g + 1)

        assert await store.write_document("config", b"cfg-1") == g + 2
        assert await store.read_versions() == _at(g + 2, simulation=g + 1, config=g + 2)

        assert await store.write_document("simulation", b"sim-2") == g + 3
        assert await store.read_document("simulation") == (g + 3, b"sim-2")
        assert await store.read_document("config") == (g + 2, b"cfg-1")
        assert await store.read_versions() == _at(g + 3, simulation=g + 3, config=g + 2)

    run(body())


@pytest.mark.parametrize(
    "payload",
    [b"", bytes(range(256)) * 4, '{"x": "\u00e9\u2603"}'.encode()],
    ids=["empty", "every-byte", "utf8-json"],
)
def test_a_document_body_round_trips_byte_for_byte(store, run, payload: bytes) -> None:
    async def body() -> None:
        version = await store.write_document("config", payload)
        doc = await store.read_document("config")
        assert doc == (version, payload)
        assert doc is not None
        assert type(doc[1]) is bytes

    run(body())


def test_bump_generation_increments_without_touching_documents(store, run) -> None:
    async def body() -> None:
        g = await _origin(store.bump_generation())
        assert await store.bump_generation() == g + 2
        assert await store.read_versions() == _at(g + 2)
        assert await store.read_document("simulation") is None

        assert await store.write_document("simulation", b"s") == g + 3
        assert await store.bump_generation() == g + 4
        assert await store.read_versions() == _at(g + 4, simulation=g + 3)
        assert await store.read_document("simulation") == (g + 3, b"s")

    run(body())


def test_compare_and_set_with_a_stale_version_changes_nothing(store, run) -> None:
    async def body() -> None:
        g = await _origin(store.write_document("simulation", b"first"))
        assert await store.write_document("simulation", b"second", expected_version=g + 1) == g + 2

        for stale in (0, g + 1, g + 3, g + 99):
            assert await store.write_document("simulation", b"lost", expected_version=stale) is None
        assert await store.read_document("simulation") == (g + 2, b"second")
        assert await store.read_versions() == _at(g + 2, simulation=g + 2)
        # nothing was consumed by the failed attempts: the next write gets the very next generation
        assert await store.write_document("simulation", b"third", expected_version=g + 2) == g + 3

    run(body())


def test_compare_and_set_with_version_0_succeeds_only_if_never_written(store, run) -> None:
    async def body() -> None:
        g = await _origin(store.write_document("config", b"created", expected_version=0))
        assert await store.write_document("config", b"again", expected_version=0) is None
        assert await store.read_document("config") == (g + 1, b"created")
        assert await store.read_versions() == _at(g + 1, config=g + 1)

    run(body())


def test_compare_and_set_checks_the_documents_own_version_not_the_generation(store, run) -> None:
    async def body() -> None:
        g = await _origin(store.write_document("simulation", b"s1"))
        assert await store.bump_generation() == g + 2
        # simulation's write is not config's, and the generation is not the simulation's version
        assert await store.write_document("config", b"c1", expected_version=0) == g + 3
        assert await store.write_document("simulation", b"s2", expected_version=g + 3) is None
        assert await store.write_document("simulation", b"s2", expected_version=g + 1) == g + 4
        assert await store.read_versions() == _at(g + 4, simulation=g + 4, config=g + 3)

    run(body())


def test_an_unconditional_write_ignores_the_current_version(store, run) -> None:
    async def body() -> None:
        g = await _origin(store.write_document("simulation", b"a", expected_version=0))
        assert await store.write_document("simulation", b"b") == g + 2
        assert await store.write_document("simulation", b"c", expected_version=None) == g + 3
        assert await store.read_document("simulation") == (g + 3, b"c")

    run(body())


def test_a_write_through_one_handle_is_read_through_another(backend, run) -> None:
    writer, reader = backend.open(), backend.open()

    async def body() -> None:
        g = await _origin(writer.write_document("simulation", b"shared"))
        assert await reader.read_document("simulation") == (g + 1, b"shared")
        assert await reader.bump_generation() == g + 2
        assert await writer.read_versions() == _at(g + 2, simulation=g + 1)
        # compare-and-set is judged against the shared document, whichever handle wrote it
        assert await reader.write_document("simulation", b"from-reader", expected_version=g + 1) == g + 3
        assert await writer.write_document("simulation", b"from-writer", expected_version=g + 1) is None
        assert await writer.read_document("simulation") == (g + 3, b"from-reader")

    run(body())


def test_concurrent_compare_and_set_on_one_version_lets_exactly_one_write_win(backend, run) -> None:
    handles = [backend.open(), backend.open()]

    async def body() -> None:
        attempts = [
            handles[i % 2].write_document("simulation", f"writer-{i}".encode(), expected_version=0) for i in range(10)
        ]
        results = await asyncio.gather(*attempts)
        winners = [i for i, generation in enumerate(results) if generation is not None]
        assert len(winners) == 1, results
        won = results[winners[0]]
        assert won is not None and won > 0
        assert await handles[0].read_document("simulation") == (won, f"writer-{winners[0]}".encode())
        assert await handles[1].read_versions() == _at(won, simulation=won)

    run(body())


def test_concurrent_writes_and_bumps_get_distinct_consecutive_generations(backend, run) -> None:
    handles = [backend.open(), backend.open()]

    async def body() -> None:
        calls = []
        for i in range(30):
            handle = handles[i % 2]
            if i % 3 == 0:
                calls.append(handle.bump_generation())
            else:
                calls.append(handle.write_document(DOCUMENTS[i % 2], f"{i}".encode()))
        generations = await asyncio.gather(*calls)
        g = min(generations) - 1
        assert sorted(generations) == list(range(g + 1, g + 31))
        versions = await handles[0].read_versions()
        assert versions.generation == g + 30
        for name in DOCUMENTS[:2]:  # the documents this test wrote
            written = [generations[i] for i in range(30) if i % 3 and DOCUMENTS[i % 2] == name]
            doc = await handles[1].read_document(name)
            assert doc is not None
            assert doc[0] == versions.documents[name] == max(written)
            assert generations[int(doc[1])] == doc[0]  # the body is the one whose write got that generation

    run(body())


def test_counters_add_up_across_calls(store, run) -> None:
    async def body() -> None:
        await store.add_counters({"simulate": 2, "capture": 1})
        await store.add_counters({"simulate": 3})
        await store.add_counters({"modify": 1, "capture": 4})
        assert await store.read_counters() == {"simulate": 5, "capture": 5, "modify": 1}
        await store.add_counters({})
        assert await store.read_counters() == {"simulate": 5, "capture": 5, "modify": 1}

    run(body())


def test_counters_add_up_across_handles_on_one_prefix(backend, run) -> None:
    first, second = backend.open(), backend.open()

    async def body() -> None:
        await asyncio.gather(
            *(first.add_counters({"simulate": 1, "spy": 2}) for _ in range(25)),
            *(second.add_counters({"simulate": 10}) for _ in range(25)),
        )
        expected = {"simulate": 25 + 250, "spy": 50}
        assert await first.read_counters() == expected
        assert await second.read_counters() == expected

    run(body())


def test_different_prefixes_share_nothing(backend, run) -> None:
    mine = backend.open()
    # a prefix that starts with this one, and one that is unrelated
    others = [backend.open(f"{backend.prefix}nested:"), backend.open(f"other-{backend.prefix}")]

    async def body() -> None:
        g = await _origin(mine.write_document("simulation", b"mine"))
        assert await mine.write_document("config", b"mine") == g + 2
        await mine.add_counters({"simulate": 7})
        await mine.heartbeat("worker-a", g + 2, 1_000)
        for other in others:
            assert await other.read_versions() == NEVER
            assert await other.read_document("simulation") is None
            assert await other.read_counters() == {}
            assert await other.worker_acks(0) == {}
            h = await _origin(other.bump_generation())  # its own counter, starting from scratch
            assert await other.write_document("simulation", b"other", expected_version=0) == h + 2
            assert await mine.read_versions() == _at(g + 2, simulation=g + 1, config=g + 2)
        assert await mine.read_document("simulation") == (g + 1, b"mine")

    run(body())


def test_worker_acks_only_lists_workers_seen_within_the_window(backend, run) -> None:
    worker_a, worker_b, observer = backend.open(), backend.open(), backend.open()

    async def body() -> None:
        await worker_a.heartbeat("a", 3, 1_000)
        await worker_b.heartbeat("b", 5, 2_000)
        assert await observer.worker_acks(0) == {"a": 3, "b": 5}
        assert await observer.worker_acks(1_000) == {"a": 3, "b": 5}  # a heartbeat at the bound counts
        assert await observer.worker_acks(1_001) == {"b": 5}
        assert await observer.worker_acks(2_000) == {"b": 5}
        assert await observer.worker_acks(2_001) == {}

        await worker_a.heartbeat("a", 7, 2_500)  # a later heartbeat replaces both the time and the ack
        assert await observer.worker_acks(2_001) == {"a": 7}
        assert await observer.worker_acks(0) == {"a": 7, "b": 5}

    run(body())


def test_unregister_removes_only_that_worker(backend, run) -> None:
    worker_a, worker_b = backend.open(), backend.open()

    async def body() -> None:
        await worker_a.heartbeat("a", 1, 5_000)
        await worker_b.heartbeat("b", 1, 5_000)
        await worker_a.unregister("a")
        assert await worker_b.worker_acks(0) == {"b": 1}
        await worker_a.unregister("never-registered")
        assert await worker_b.worker_acks(0) == {"b": 1}

        await worker_a.heartbeat("a", 4, 6_000)  # a worker that comes back is listed again, with its new ack
        assert await worker_b.worker_acks(0) == {"a": 4, "b": 1}

    run(body())


async def _drain_into(store: Store, received: asyncio.Queue[int]) -> None:
    async with contextlib.aclosing(store.subscribe()) as events:
        async for generation in events:
            await received.put(generation)


@pytest.mark.parametrize("backend", ["redis"], indirect=True)
def test_published_generations_reach_subscribers_on_other_clients(backend, run) -> None:
    publisher = backend.open()
    subscribers = [backend.open(), backend.open()]

    async def body() -> None:
        queues: list[asyncio.Queue[int]] = [asyncio.Queue() for _ in subscribers]
        tasks = [asyncio.create_task(_drain_into(s, q)) for s, q in zip(subscribers, queues, strict=True)]
        try:
            async with asyncio.timeout(5):
                # subscribing happens in the background: announce 1 until both subscribers hear it
                while any(q.empty() for q in queues):
                    await publisher.publish(1)
                    await asyncio.sleep(0.01)
                for generation in (7, 8, 9):
                    await publisher.publish(generation)
                for queue in queues:
                    heard = [await queue.get()]
                    while heard[-1] == 1:
                        heard.append(await queue.get())
                    heard += [await queue.get(), await queue.get()]
                    assert heard[-3:] == [7, 8, 9]
            assert all(q.empty() for q in queues)
            assert not any(t.done() for t in tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    run(body())


@pytest.mark.parametrize("backend", ["memory"], indirect=True)
def test_memory_subscriber_never_yields_and_ends_when_the_store_is_closed(backend, run) -> None:
    store = backend.open()

    async def body() -> None:
        received: asyncio.Queue[int] = asyncio.Queue()
        task = asyncio.create_task(_drain_into(store, received))
        await store.publish(1)
        await store.write_document("simulation", b"s")
        await asyncio.sleep(0.05)
        assert not task.done()
        assert received.empty()

        await store.aclose()
        await asyncio.wait_for(task, timeout=1)  # ends, and without an error
        assert received.empty()
        # a subscription opened after closing ends at once
        await asyncio.wait_for(_drain_into(store, received), timeout=1)
        assert received.empty()

    run(body())


@pytest.mark.parametrize("backend", ["redis"], indirect=True)
def test_redis_subscriber_raises_store_unavailable_when_its_store_is_closed(backend, run) -> None:
    store = backend.open()

    async def body() -> None:
        received: asyncio.Queue[int] = asyncio.Queue()
        task = asyncio.create_task(_drain_into(store, received))
        await asyncio.sleep(0.1)
        assert not task.done()
        await store.aclose()
        with pytest.raises(StoreUnavailable):
            await asyncio.wait_for(task, timeout=2)
        assert received.empty()

    run(body())


# ---------------------------------------------------------------------------------------------
# state


def test_state_replace_update_and_get(store, run) -> None:
    async def body() -> None:
        assert await store.state_get() == {}
        await store.state_replace({"a": "1", "b": "2"})
        assert await store.state_get() == {"a": "1", "b": "2"}
        await store.state_update({"b": "3", "c": "\u00e9"})
        assert await store.state_get() == {"a": "1", "b": "3", "c": "\u00e9"}
        await store.state_replace({"z": ""})
        assert await store.state_get() == {"z": ""}
        await store.state_replace({})
        assert await store.state_get() == {}

    run(body())


def test_a_state_transition_applies_only_when_every_required_value_holds(store, run) -> None:
    async def body() -> None:
        await store.state_replace({"step": "1", "gone": "x", "keep": "k"})
        assert not await store.state_transition({"step": "2"}, {"step": "3"}, ["keep"])
        assert not await store.state_transition({"step": "1", "missing": "v"}, {"step": "3"}, [])
        assert await store.state_get() == {"step": "1", "gone": "x", "keep": "k"}
        assert await store.state_transition({"step": "1"}, {"step": "2", "new": "n"}, ["gone", "never-there"])
        assert await store.state_get() == {"step": "2", "new": "n", "keep": "k"}
        assert await store.state_transition({}, {}, [])  # nothing required, nothing changed

    run(body())


def test_every_change_of_the_state_moves_its_version(store, run) -> None:
    async def body() -> None:
        v0, state = await store.state_read()
        assert state == {}
        await store.state_update({"a": "1"})
        v1, state = await store.state_read()
        assert v1 > v0 and state == {"a": "1"}
        assert await store.state_transition({"a": "1"}, {"a": "2"}, ())
        await store.state_replace({"b": "x"})
        v2, state = await store.state_read()
        assert v2 > v1 + 1 and state == {"b": "x"}

    run(body())


def test_a_step_applies_only_on_the_version_it_was_decided_on(backend, run) -> None:
    async def body() -> None:
        mine, other = backend.open(), backend.open()
        await mine.state_replace({"side": "a", "gone": "x"})
        version, state = await mine.state_read()
        applied, after, state = await mine.state_step(version, {"side": "b"}, ["gone"])
        assert (applied, state) == (True, {"side": "b"}) and after > version
        assert await mine.state_step(after, {}, ()) == (True, after, {"side": "b"})  # a check, no change
        await other.state_update({"side": "c"})  # another worker moved the state on
        applied, current, state = await mine.state_step(after, {"side": "d"}, ())
        assert (applied, state) == (False, {"side": "c"}) and current > after  # refused, told the state
        assert await other.state_get() == {"side": "c"}
        assert (await mine.state_step(current, {"side": "d"}, ()))[0] is True

    run(body())


def test_concurrent_transitions_from_one_state_let_exactly_one_win(backend, run) -> None:
    async def body() -> None:
        handles = [backend.open() for _ in range(4)]
        await handles[0].state_replace({"sequence:1": "1"})
        results = await asyncio.gather(
            *(h.state_transition({"sequence:1": "1"}, {"sequence:1": "2"}, []) for h in handles for _ in range(5))
        )
        assert sorted(results) == [False] * 19 + [True]
        assert await handles[3].state_get() == {"sequence:1": "2"}

    run(body())


# ---------------------------------------------------------------------------------------------
# journal and logs


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


def test_logs_are_kept_in_order_up_to_the_limit(backend, run) -> None:
    async def body() -> None:
        a, b = backend.open(), backend.open()
        await a.logs_append([b"r1", b"r2"], 3)
        await b.logs_append([b"r3", b"r4"], 3)
        assert await a.logs_records() == [b"r2", b"r3", b"r4"]

    run(body())


# ---------------------------------------------------------------------------------------------
# diff reports


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


def test_the_login_lock_out_counts_failures_and_expires(backend, run) -> None:
    """Hoverfly's rule, fleet-wide: 3 failures lock logins until none has come for 10 minutes."""
    first, second = backend.open(), backend.open()
    window = 600_000

    async def body() -> None:
        assert await first.login_locked(1_000, window, 3) is False
        for at in (1_000, 2_000):
            await first.login_failed(at)
        assert await second.login_locked(3_000, window, 3) is False  # two failures: not yet
        await second.login_failed(3_000)
        assert await first.login_locked(4_000, window, 3) is True  # the third, through another handle
        # asking while locked keeps it locked for a whole window from then
        assert await second.login_locked(3_000 + window, window, 3) is True
        assert await first.login_locked(3_000 + 2 * window - 1, window, 3) is True
        later = 3_000 + 3 * window
        assert await first.login_locked(later, window, 3) is False  # quiet for a window: cleared
        await first.login_failed(later)
        assert await second.login_locked(later + 1, window, 3) is False  # counting from zero again

    run(body())


def test_a_revoked_token_is_known_to_every_handle_until_it_expires(backend, run) -> None:
    first, second = backend.open(), backend.open()

    async def body() -> None:
        assert await second.token_revoked("abc") is False
        await first.revoke_token("abc", until_ms=10**13 + 60_000, now_ms=10**13)
        assert await second.token_revoked("abc") is True
        assert await second.token_revoked("abd") is False
        await first.revoke_token("old", until_ms=5, now_ms=10)  # already expired: nothing to keep
        assert await second.token_revoked("old") is False

    run(body())
