"""The dispatcher: the mode table, the destination filter, CORS, and the observers told after a write."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from simproxy.engine.fleet.config import MODES, ActionSpec, Mode, ModeArguments
from simproxy.engine.fleet.runtime import Runtime
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.modes.dispatch import Dispatcher
from simproxy.engine.modes.table import MODE_CLASSES
from simproxy.engine.outbound.upstream import Upstream
from simproxy.store import MemoryStore
from tests.engine.modes.conftest import World, pair, request


def test_every_mode_name_has_exactly_one_class() -> None:
    assert sorted(MODE_CLASSES) == sorted(MODES) == sorted(Mode)
    assert {name: cls.name for name, cls in MODE_CLASSES.items()} == {mode: mode for mode in Mode}
    assert {name for name, cls in MODE_CLASSES.items() if cls.runs_actions} == {Mode.SIMULATE, Mode.SYNTHESIZE}


def test_requests_outside_the_destination_are_relayed_untouched_and_not_journaled(world: Any) -> None:
    async def scenario(w: World) -> None:
        config = replace(w.runtime.snapshot.config, destination="api.test")
        await w.runtime.write_config(config, None, wait=False)
        inside = await w.answer(request("/a"))
        outside = await w.answer(request("/a", destination="elsewhere.test"))
        assert (inside.raw_body, inside.outcome) == (b"simulated", "hit")
        assert (outside.raw_body, outside.outcome) == (b"real", "relayed")
        assert [(req.destination, marked) for req, marked in w.upstream.sent] == [("elsewhere.test", False)]
        assert [e.request.destination for e in await w.journal()] == ["api.test"]
        assert await w.store.read_counters() == {"simulate": 1}

    world(scenario, pair("/a"))


def test_cors_answers_preflights_itself_and_adds_the_origin_to_answers(world: Any) -> None:
    origin = {"Origin": ["http://app.test"]}

    async def scenario(w: World) -> None:
        asked = {**origin, "Access-Control-Request-Method": ["POST"]}
        preflight = await w.answer(request("/a", "OPTIONS", headers=asked))
        assert preflight.status == 200
        assert dict(preflight.headers)["Access-Control-Allow-Origin"] == ("http://app.test",)
        answer = await w.answer(request("/a", headers=origin))
        assert answer.raw_body == b"simulated"
        assert dict(answer.headers)["Access-Control-Allow-Origin"] == ("http://app.test",)
        assert [e.request.method for e in await w.journal()] == ["OPTIONS", "GET"]

    world(scenario, pair("/a"), cors=True)


def test_observers_journal_count_and_run_the_post_serve_action_quoting_the_entry(world: Any) -> None:
    async def scenario(w: World) -> None:
        config = w.runtime.snapshot.config.with_action(ActionSpec(name="hook", remote="http://hooks.test/"))
        await w.runtime.write_config(config, None, wait=False)
        await w.answer(request("/a"))
        await w.answer(request("/missing"))
        await w.runtime.flush()  # the entries are stored (a running worker flushes every few ms)
        for _ in range(200):  # the action waits Hoverfly's 0.2 s before it runs
            if not len(w.dispatcher.actions):
                break
            await asyncio.sleep(0.01)
        assert [(url, body["request"]["path"]) for url, body in w.upstream.posted] == [("http://hooks.test/", "/a")]
        entries = await w.journal()
        assert [(e.request.path, e.status) for e in entries] == [("/a", 200), ("/missing", 502)]
        assert entries[0].post_serve_action is not None
        assert entries[0].post_serve_action["name"] == "hook"
        assert entries[1].post_serve_action is None
        requests = {k: v for k, v in w.runtime.metrics.totals.items() if k.startswith("requests|")}
        assert requests == {"requests|simulate|hit": 1, "requests|simulate|miss": 1}

    world(scenario, pair("/a", postServeAction="hook"))


def test_a_mode_that_forwards_has_its_http_client_loaded_before_the_worker_acknowledges_it() -> None:
    async def scenario() -> tuple[bool, bool, bool]:
        runtime = Runtime(MemoryStore(), MatcherRegistry())
        upstream = Upstream()
        dispatcher = Dispatcher(runtime, upstream=upstream)
        await runtime.start(prepare=dispatcher.prepare)
        try:
            at_start = upstream.ready  # simulate: nothing to load
            config = runtime.snapshot.config
            await runtime.write_config(config.with_mode("simulate", ModeArguments(stateful=True)), expected=None)
            after_simulate = upstream.ready
            await runtime.write_config(config.with_mode("capture", ModeArguments()), expected=None)
            return at_start, after_simulate, upstream.ready  # written means every worker acknowledged
        finally:
            await dispatcher.aclose()
            await upstream.aclose()
            await runtime.aclose()

    assert asyncio.run(scenario()) == (False, False, True)


def test_actions_beyond_the_pending_bound_are_dropped_counted_and_marked_in_their_journal_entries(
    world: Any,
) -> None:
    async def scenario(w: World) -> None:
        config = w.runtime.snapshot.config.with_action(ActionSpec(name="hook", remote="http://hooks.test/"))
        await w.runtime.write_config(config, None, wait=False)
        w.dispatcher.actions.max_pending = 1  # one action may wait (Hoverfly's 0.2 s) at a time
        for _ in range(3):
            await w.answer(request("/a"))
        await w.runtime.flush()
        for _ in range(200):
            if not len(w.dispatcher.actions):
                break
            await asyncio.sleep(0.01)
        assert len(w.upstream.posted) == 1  # the first ran; the two behind it were dropped
        records = [e.post_serve_action for e in await w.journal()]
        assert records[0] is not None and records[0]["name"] == "hook" and "dropped" not in records[0]
        assert records[1:] == [{"name": "hook", "dropped": True}] * 2
        dropped = {k: v for k, v in w.runtime.metrics.totals.items() if k.startswith("actions|")}
        assert dropped == {"actions|dropped": 2}

    world(scenario, pair("/a", postServeAction="hook"))
