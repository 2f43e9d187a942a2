"""Simulate mode, driven directly: hits, misses, templates, state and delays; middleware rewrites."""

from __future__ import annotations

import asyncio
import gc
import random
import time
import weakref
from typing import Any

from simproxy.engine.fleet.config import ModeArguments
from simproxy.engine.matching.cache import preload_entries
from simproxy.engine.matching.scoring import compile_simulation
from simproxy.engine.modes.simulator import Simulator, slot
from simproxy.engine.simulation.codec import decode_simulation
from simproxy.engine.wire.response import Wire
from tests.engine.modes.conftest import FakeUpstream, World, pair, real, request


def _header(wire: Wire, name: str) -> tuple[str, ...]:
    return dict(wire.headers).get(name, ())


def test_a_matching_pair_answers_at_once_and_is_journaled(world: Any) -> None:
    async def scenario(w: World) -> None:
        outcome = w.dispatcher.handle(request("/a"))
        assert isinstance(outcome, Wire)  # no store call, no timer: answered synchronously
        wire = await w.answer(request("/a"))
        assert (wire.status, wire.raw_body, wire.outcome) == (200, b"simulated", "hit")
        entries = await w.journal()
        assert [(e.request.path, e.status, e.mode) for e in entries] == [("/a", 200, "simulate")]
        assert w.upstream.sent == []

    world(scenario, pair("/a"))


def test_a_miss_is_hoverflys_502_naming_the_closest_pair(world: Any) -> None:
    async def scenario(w: World) -> None:
        wire = await w.answer(request("/b"))
        assert (wire.status, wire.outcome) == (502, "miss")
        text = wire.raw_body.decode()
        assert "There was an error when matching" in text
        assert "Could not find a match for request" in text and "The following request was made" in text
        assert '"value": "/a"' in text  # the closest pair's matcher
        assert w.upstream.sent == []

    world(scenario, pair("/a"))


def test_a_templated_body_is_rendered_from_the_request(world: Any) -> None:
    templated = pair("/t", "{{ Request.Method }} {{ Request.QueryParam.id }}", templated=True)

    async def scenario(w: World) -> None:
        wire = await w.answer(request("/t", "POST", query="id=42"))
        assert (wire.status, wire.raw_body) == (200, b"POST 42")

    world(scenario, templated)


def requiring(state: dict[str, str], path: str, body: str = "simulated", **response: Any) -> dict[str, Any]:
    """``pair``, matched only while the state holds ``state``."""
    made = pair(path, body, **response)
    made["request"]["requiresState"] = state
    return made


def test_state_walks_a_sequence_one_step_per_request(world: Any) -> None:
    first = requiring({"step": "1"}, "/s", "first", transitionsState={"step": "2"})
    second = requiring({"step": "2"}, "/s", "second")

    async def scenario(w: World) -> None:
        await w.store.state_replace({"step": "1"})
        bodies = [(await w.answer(request("/s"))).raw_body for _ in range(3)]
        assert bodies == [b"first", b"second", b"second"]
        assert await w.store.state_get() == {"step": "2"}

    world(scenario, first, second)


def test_on_the_in_process_store_a_state_step_is_answered_at_once(world: Any) -> None:
    """The state is in the worker itself: a request that requires and changes it is answered
    without waiting for a turn, and each step is taken once, in the order the requests came."""
    first = requiring({"step": "1"}, "/s", "first", transitionsState={"step": "2"})
    second = requiring({"step": "2"}, "/s", "second", removesState=["step"])

    async def scenario(w: World) -> None:
        await w.store.state_replace({"step": "1"})
        outcomes = [w.dispatcher.handle(request("/s")) for _ in range(3)]
        assert all(isinstance(outcome, Wire) for outcome in outcomes)
        assert [(o.status, o.raw_body) for o in outcomes[:2]] == [(200, b"first"), (200, b"second")]  # type: ignore[union-attr]
        assert (outcomes[2].status, outcomes[2].outcome) == (502, "miss")  # type: ignore[union-attr]  # the key is gone
        assert await w.store.state_get() == {}

    world(scenario, first, second)


def test_a_cached_pairs_state_step_is_taken_before_the_next_request_is_matched(world: Any) -> None:
    """A pair that needs no state but changes it is answered from the match cache; its step is
    still taken at once, so the request after it (pipelined, say) is matched on the new state, and
    a cached template that prints the state prints it as it was before that request."""
    sets = pair("/set", "set", transitionsState={"x": "1"})
    needs = requiring({"x": "1"}, "/get", "got")
    prints = pair("/print", "x={{ State.x }}", templated=True, transitionsState={"x": "2"})

    async def scenario(w: World) -> None:
        assert (await w.answer(request("/set"))).raw_body == b"set"
        assert (await w.answer(request("/print"))).raw_body == b"x=1"
        assert len(w.runtime.cache) == 2  # both kept: neither needs state
        await w.store.state_replace({})
        outcomes = [w.dispatcher.handle(request(path)) for path in ("/set", "/get", "/print", "/print")]
        assert all(isinstance(outcome, Wire) for outcome in outcomes)
        assert [o.raw_body for o in outcomes] == [b"set", b"got", b"x=1", b"x=2"]  # type: ignore[union-attr]
        assert await w.store.state_get() == {"x": "2"}

    world(scenario, sets, needs, prints)


def test_a_state_step_is_taken_before_the_pairs_delay_is_waited(world: Any) -> None:
    stepping = requiring({"step": "1"}, "/s", "slow", transitionsState={"step": "2"}, fixedDelay=50)

    async def scenario(w: World) -> None:
        await w.store.state_replace({"step": "1"})
        outcome = w.dispatcher.handle(request("/s"))
        assert not isinstance(outcome, Wire)  # the delay: the loop goes on meanwhile
        assert await w.store.state_get() == {"step": "2"}  # stepped already, as Hoverfly steps on the match
        started = time.perf_counter()
        assert (await outcome).raw_body == b"slow"
        assert time.perf_counter() - started >= 0.05

    world(scenario, stepping)


def test_a_state_step_decided_on_a_replaced_simulation_is_answered_from_the_new_one(world: Any) -> None:
    old_pair = pair("/s", "old", transitionsState={"side": "old"})
    new_pair = pair("/s", "new", transitionsState={"side": "new"})

    async def scenario(w: World) -> None:
        simulator = Simulator(w.runtime, webserver=False, rng=random.Random(1))
        before = w.runtime.snapshot
        new = decode_simulation({"pairs": [new_pair]})
        await w.runtime.write_simulation(new, compile_simulation(new, w.runtime.registry), None, wait=False)
        outcome = simulator.simulate(before, request("/s"))  # decided on the old one: its step is refused
        assert not isinstance(outcome, Wire)
        assert (await outcome).raw_body == b"new"
        assert await w.store.state_get() == {"side": "new"}

    world(scenario, old_pair)


def test_a_cached_step_on_an_appended_simulation_is_answered_from_the_new_one(world: Any) -> None:
    """A cached pair's step decided on a snapshot the simulation has grown past since: refused,
    and the request answered again from the grown simulation (the cache is kept across an append)."""
    sets = pair("/set", "set", transitionsState={"x": "1"})

    async def scenario(w: World) -> None:
        simulator = Simulator(w.runtime, webserver=False, rng=random.Random(1))
        assert simulator.simulate(w.runtime.snapshot, request("/set")).raw_body == b"set"  # type: ignore[union-attr]
        before, runtime = w.runtime.snapshot, w.runtime
        await w.store.state_replace({})
        grown = decode_simulation({"pairs": [sets, pair("/new", "new")]})
        compiled = compile_simulation(grown, runtime.registry)
        await runtime.write_simulation(grown, compiled, None, lineage=before.lineage, wait=False)
        outcome = simulator.simulate(before, request("/set"))  # the cache still holds it: served, not matched
        assert not isinstance(outcome, Wire)
        assert (await outcome).raw_body == b"set"
        assert await w.store.state_get() == {"x": "1"}

    world(scenario, sets)


def test_with_a_template_that_may_fetch_every_state_step_waits_its_turn_in_order(world: Any) -> None:
    """A request whose template reads the journal waits for its turn even on the in-process store;
    one that comes after it (a pipelined one, say) must not step the state before it does, so in
    such a simulation every stateful request waits its turn."""
    journal_key = "{{hasJournalKey 'ids' 'x'}}"
    reads_journal = requiring({"step": "1"}, "/a", journal_key, templated=True, transitionsState={"step": "2"})
    at_one = requiring({"step": "1"}, "/c", "c at 1", transitionsState={"step": "9"})
    at_two = requiring({"step": "2"}, "/c", "c at 2")

    async def scenario(w: World) -> None:
        await w.store.state_replace({"step": "1"})
        handed = w.dispatcher.handle(request("/a"))
        assert not isinstance(handed, Wire)  # not started yet
        later = w.dispatcher.handle(request("/c"))
        assert not isinstance(later, Wire)
        assert (await handed).raw_body == b"false"
        assert (await later).raw_body == b"c at 2"
        assert await w.store.state_get() == {"step": "2"}

    world(scenario, reads_journal, at_one, at_two)


def test_a_pairs_fixed_delay_is_waited_without_blocking(world: Any) -> None:
    async def scenario(w: World) -> None:
        outcome = w.dispatcher.handle(request("/slow"))
        assert not isinstance(outcome, Wire)  # a coroutine: the worker's loop goes on meanwhile
        started = time.perf_counter()
        wire = await outcome
        assert time.perf_counter() - started >= 0.05
        assert wire.raw_body == b"simulated"

    world(scenario, pair("/slow", fixedDelay=50))


def test_middleware_rewrites_a_hit_but_never_a_miss(world: Any) -> None:
    seen: list[dict[str, Any]] = []

    def shout(exchange: dict[str, Any]) -> dict[str, Any]:
        seen.append(exchange)
        exchange["response"]["body"] = exchange["response"]["body"].upper()
        return exchange

    async def scenario(w: World) -> None:
        assert (await w.answer(request("/a"))).raw_body == b"SIMULATED"
        miss = await w.answer(request("/nothing"))
        assert (miss.status, miss.outcome) == (502, "miss")
        assert [e["request"]["path"] for e in seen] == ["/a"]

    world(scenario, pair("/a"), middleware=True, upstream=FakeUpstream(real(), middleware=shout))


def test_a_cached_miss_is_answered_the_same_without_matching_again(world: Any) -> None:
    async def scenario(w: World) -> None:
        first = await w.answer(request("/b"))
        assert len(w.runtime.cache) == 1
        second = await w.answer(request("/b"))
        assert (second.status, second.raw_body) == (first.status, first.raw_body)

    world(scenario, pair("/a"))


def _state_away(w: World) -> None:
    """The state is a round trip away, as in Redis: every stateful request waits for its turn."""
    w.store.state.held_state = lambda: None  # type: ignore[method-assign]


def _slow_state(w: World) -> None:
    """State reads take a store round trip: a stateful request waits across it."""
    _state_away(w)
    read = w.store.state.state_copy

    async def slow() -> Any:
        await asyncio.sleep(0.05)
        return await read()

    w.store.state.state_copy = slow  # type: ignore[method-assign]


def test_a_stateful_miss_in_flight_across_a_replace_is_not_cached_for_the_new_simulation(world: Any) -> None:
    async def scenario(w: World) -> None:
        _slow_state(w)
        in_flight = asyncio.ensure_future(w.answer(request("/a")))  # misses the old simulation
        await asyncio.sleep(0.01)
        new = decode_simulation({"pairs": [pair("/a", "new")]})
        await w.runtime.write_simulation(new, compile_simulation(new, w.runtime.registry), None, wait=False)
        assert (await in_flight).status == 502
        again = await w.answer(request("/a"))
        assert (again.status, again.raw_body) == (200, b"new")  # not the old simulation's 502 from the cache

    stateful = {"request": {"path": [{"matcher": "exact", "value": "/x"}], "requiresState": {"s": "1"}}}
    world(scenario, {**stateful, "response": {"status": 200, "body": "x"}}, pair("/other"))


def test_an_entry_added_while_a_stateful_request_waits_is_found_by_the_next_one(world: Any) -> None:
    """The request's result was not cacheable, but an entry for the same key came while it waited
    for its turn (a preload, another worker's entry): the next request must find it, not skip the
    lookup as the note of a result not kept would have it."""

    async def scenario(w: World) -> None:
        _state_away(w)
        simulator = Simulator(w.runtime, webserver=False, rng=random.Random(1))
        assert (await simulator.simulate(w.runtime.snapshot, request("/set"))).raw_body == b"set"  # type: ignore[union-attr]
        waiting = simulator.simulate(w.runtime.snapshot, request("/a"))  # looked up; its turn comes later
        assert not isinstance(waiting, Wire)
        preloaded = preload_entries(w.runtime.snapshot.simulation, False)
        assert len(preloaded) == 1
        w.runtime.cache.put(preloaded[0], mirror=False)
        assert (await waiting).raw_body == b"stateful"  # `first`: the stateful pair, never cached
        later = [simulator.simulate(w.runtime.snapshot, request("/a")) for _ in range(3)]
        assert [(one if isinstance(one, Wire) else await one).raw_body for one in later] == [b"preloaded"] * 3

    fields = (("path", "/a"), ("method", "GET"), ("destination", "api.test"), ("body", ""), ("scheme", "http"))
    exact = {name: [{"matcher": "exact", "value": value}] for name, value in fields}
    world(
        scenario,
        {"request": {"path": exact["path"], "requiresState": {"x": "1"}}, "response": {"body": "stateful"}},
        {"request": exact, "response": {"body": "preloaded"}},
        pair("/set", "set", transitionsState={"x": "1"}),
        arguments=ModeArguments(matching_strategy="first"),
    )


def test_a_replaced_simulation_is_not_kept_alive_by_the_requests_matched_against_it(world: Any) -> None:
    """The worker keeps its last stateless match results; once a stateful simulation replaces the
    one they came from, nothing matches statelessly any more, and the old one must still be freed."""
    keyed = {"path": [{"matcher": "exact", "value": "/a"}], "headers": {"X-Key": [{"matcher": "exact", "value": "v"}]}}

    async def scenario(w: World) -> None:
        old = weakref.ref(w.runtime.snapshot.simulation)
        for _ in range(2):  # a header matcher: the match cache keeps no result, the worker's table does
            assert (await w.answer(request("/a", headers={"X-Key": ["v"]}))).raw_body == b"stateless"
        stateful = {"request": {**keyed, "requiresState": {"s": "1"}}, "response": {"body": "stateful"}}
        sim = decode_simulation({"pairs": [stateful]})
        await w.runtime.write_simulation(sim, compile_simulation(sim, w.runtime.registry), None, wait=False)
        assert (await w.answer(request("/a", headers={"X-Key": ["v"]}))).status == 502  # no state "s" yet
        gc.collect()
        assert old() is None

    world(scenario, {"request": keyed, "response": {"body": "stateless"}})


def _apart(make: Any, count: int) -> list[Any]:
    """``count`` requests from ``make(i)`` in distinct slots of the worker's tables (by object id)."""
    chosen: list[Any] = []
    held = []  # the rejected ones stay alive, so their ids are not handed out again
    while len(chosen) < count:
        one = make(len(chosen))
        held.append(one)
        if all(slot(one) != slot(other) for other in chosen):
            chosen.append(one)
    return chosen


def test_an_answer_given_again_keeps_its_cache_entry_the_most_recently_used(world: Any) -> None:
    """The proxy hands the same request object for the same bytes, and the worker answers it again
    without a lookup; the match cache must still see the use, or it evicts the wrong entry."""
    globbed = [{"request": {"path": [{"matcher": "glob", "value": f"/{n}*"}]}, "response": {"body": n}} for n in "abc"]

    async def scenario(w: World) -> None:
        cache = w.runtime.cache
        cache.capacity = 2
        a, b, c = _apart(lambda i: request("/" + "abc"[i]), 3)
        lookups = 0
        lookup = cache.lookup

        def counted(*args: Any) -> Any:
            nonlocal lookups
            lookups += 1
            return lookup(*args)

        cache.lookup = counted  # type: ignore[method-assign]
        for req in (a, b, a, b):  # matched and cached, then found in the cache (and kept by the worker)
            assert (await w.answer(req)).raw_body == req.path[1:].encode()
        assert lookups == 4
        assert (await w.answer(a)).raw_body == b"a"
        assert lookups == 4  # answered again, with no lookup
        assert (await w.answer(c)).raw_body == b"c"  # the cache is full: the least recently used goes
        assert [e.pair.pair.response.body for e in cache.entries() if e.pair] == [b"a", b"c"]

    world(scenario, *globbed)


def test_answers_that_change_each_time_are_never_given_again(world: Any) -> None:
    """The same request object, answered twice: a random template renders twice, and a state step
    is taken twice (the state was set back in between)."""
    random_body = pair("/r", "{{ randomUuid }}", templated=True)
    stepping = pair("/s", "stepped", transitionsState={"n": "1"})

    async def scenario(w: World) -> None:
        r, s = request("/r"), request("/s")
        assert len({(await w.answer(r)).raw_body for _ in range(3)}) == 3
        for _ in range(3):
            await w.store.state_replace({"n": "0"})
            assert (await w.answer(s)).raw_body == b"stepped"
            assert await w.store.state_get() == {"n": "1"}

    world(scenario, random_body, stepping)


def test_a_replaced_snapshot_is_not_kept_alive_by_the_answers_given_again(world: Any) -> None:
    async def scenario(w: World) -> None:
        a = request("/a")
        for _ in range(3):
            assert (await w.answer(a)).raw_body == b"simulated"
        old = weakref.ref(w.runtime.snapshot)
        await w.runtime.write_config(w.runtime.snapshot.config.with_mode("capture", ModeArguments()), None, wait=False)
        gc.collect()
        assert old() is None

    world(scenario, pair("/a"))


def test_a_result_kept_after_one_not_kept_is_found_by_md5_by_a_request_spelled_otherwise(world: Any) -> None:
    """A request whose result depended on its header (not kept), then the same request without the
    header (a miss, kept): the entry is held by md5 key, so ?a=1, which Hoverfly's md5 cannot tell
    from ?%61=1, is answered from it rather than matched again into a second entry."""

    async def scenario(w: World) -> None:
        blocked = await w.answer(request("/p", query="%61=1", headers={"X-A": ["1"]}))
        kept = await w.answer(request("/p", query="%61=1"))
        assert blocked.status == kept.status == 502 and len(w.runtime.cache) == 1
        again = await w.answer(request("/p", query="a=1"))
        assert (again.status, again.raw_body) == (kept.status, kept.raw_body)
        assert len(w.runtime.cache) == 1 and len(w.runtime.cache.entries()) == 1

    headers = {"X-A": [{"matcher": "exact", "value": "1"}]}
    stateful = {"path": [{"matcher": "exact", "value": "/p"}], "headers": headers, "requiresState": {"s": "1"}}
    world(scenario, {"request": stateful, "response": {"status": 200, "body": "A"}})


def test_requests_answered_at_once_in_a_stateful_simulation_are_all_cached(world: Any) -> None:
    """Requests for pairs that need no state, in a simulation that has state, wait for their turn;
    each one's result is kept, as Hoverfly keeps it, however many entries the others added
    meanwhile (only a new simulation or a cache flush makes a result worked out before it stale)."""

    async def scenario(w: World) -> None:
        _slow_state(w)
        paths = ["/a", "/b", "/c"]
        answers = await asyncio.gather(*(w.answer(request(p)) for p in paths))
        assert [(one.status, one.raw_body) for one in answers] == [(200, p.encode()) for p in paths]
        assert len(w.runtime.cache) == 3
        listed = w.runtime.cache.entries()
        assert sorted(e.pair.pair.response.body for e in listed if e.pair is not None) == [p.encode() for p in paths]

    stateful = {"request": {"path": [{"matcher": "exact", "value": "/x"}], "requiresState": {"s": "1"}}}
    world(scenario, {**stateful, "response": {"status": 200, "body": "x"}}, *(pair(p, p) for p in ("/a", "/b", "/c")))


def test_a_stateful_miss_in_flight_across_an_append_is_not_cached_for_the_grown_simulation(world: Any) -> None:
    """An append keeps the cache (as in Hoverfly) but not what was worked out on the simulation
    before it: the request that missed while the pair was being added is not answered from then on
    with that miss."""

    async def scenario(w: World) -> None:
        _slow_state(w)
        in_flight = asyncio.ensure_future(w.answer(request("/new")))
        await asyncio.sleep(0.01)
        grown = decode_simulation({"pairs": [stateful, pair("/other"), pair("/new", "new")]})
        runtime = w.runtime
        compiled = compile_simulation(grown, runtime.registry)
        await runtime.write_simulation(grown, compiled, None, lineage=runtime.snapshot.lineage, wait=False)
        assert (await in_flight).status == 502
        again = await w.answer(request("/new"))
        assert (again.status, again.raw_body) == (200, b"new")

    stateful = {
        "request": {"path": [{"matcher": "exact", "value": "/x"}], "requiresState": {"s": "1"}},
        "response": {"status": 200, "body": "x"},
    }
    world(scenario, stateful, pair("/other"))


def test_a_result_worked_out_while_its_pair_was_preloaded_takes_the_preloaded_entrys_place(world: Any) -> None:
    """Hoverfly's save overwrites the entry its key finds: the cache holds one entry for the request,
    not the preloaded one and another beside it."""

    async def scenario(w: World) -> None:
        _slow_state(w)
        in_flight = asyncio.ensure_future(w.answer(request("/a")))
        await asyncio.sleep(0.01)
        runtime = w.runtime
        await runtime.write_config(runtime.snapshot.config.preloading(runtime.snapshot.lineage), None, wait=False)
        assert len(runtime.cache) == 1  # the preloaded pair
        assert (await in_flight).raw_body == b"A"
        assert len(runtime.cache) == 1 and len(runtime.cache.entries()) == 1
        again = await w.answer(request("/a"))
        assert (again.status, again.raw_body) == (200, b"A") and len(runtime.cache) == 1

    fields = (("path", "/a"), ("method", "GET"), ("destination", "api.test"), ("body", ""), ("scheme", "http"))
    exact = {name: [{"matcher": "exact", "value": value}] for name, value in fields}
    stateful = {"request": {"path": [{"matcher": "exact", "value": "/x"}], "requiresState": {"s": "1"}}}
    world(scenario, {**stateful, "response": {"body": "x"}}, {"request": exact, "response": {"body": "A"}})


def test_on_a_state_a_round_trip_away_templates_are_answered_without_the_general_render(
    world: Any, monkeypatch: Any
) -> None:
    """With the state in Redis, a journey step printing the state (a stated answer), one printing
    the state and a helper, an answer of body queries and a loop (closures) and a delayed echo of
    request fields (a direct answer) are answered as the general render answers them, without it;
    a request the closures cannot decide (an empty array) is rendered in full."""
    from simproxy.engine.modes import simulator

    renders: list[str] = []
    general = simulator.render_pair

    def counted(*args: Any, **kwargs: Any) -> Any:
        renders.append(args[2].path)
        return general(*args, **kwargs)

    monkeypatch.setattr(simulator, "render_pair", counted)
    journey = requiring(
        {"stage": "browsing"}, "/basket", "{{ State.user }}:{{ Request.QueryParam.sku }}", templated=True
    )
    journey["response"]["transitionsState"] = {"stage": "paid"}
    checkout = requiring({"stage": "paid"}, "/checkout", "{{ State.user }} {{ length 'abcd' }}", templated=True)
    checkout["response"]["transitionsState"] = {"stage": "done"}
    echo = pair("/echo", "{{ Request.QueryParam.id }}", templated=True, fixedDelay=1)  # delayed: awaited
    lines = pair(
        "/lines",
        "{{ Request.Body 'jsonpath' '$.id' }}={{#each (Request.Body 'jsonpath' '$.items')}}{{this}}"
        "{{#unless @last}},{{/unless}}{{else}}none{{/each}}",
        templated=True,
    )

    async def scenario(w: World) -> None:
        _state_away(w)
        await w.store.state_replace({"user": "ada", "stage": "browsing"})
        step = await w.answer(request("/basket", query="sku=a<1>"))
        assert (step.status, step.raw_body) == (200, b"ada:a&lt;1&gt;")
        assert await w.store.state_get() == {"user": "ada", "stage": "paid"}
        paid = await w.answer(request("/checkout"))  # state and a helper: closures, with their step
        assert (paid.status, paid.raw_body) == (200, b"ada 4")
        assert await w.store.state_get() == {"user": "ada", "stage": "done"}
        listed = await w.answer(request("/lines", "POST", body='{"id": "o7", "items": [1, 2]}'))
        assert (listed.status, listed.raw_body) == (200, b"o7=1,2")
        echoed = await w.answer(request("/echo", query="id=<7>"))  # request fields alone: the direct answer
        assert (echoed.status, echoed.raw_body) == (200, b"&lt;7&gt;")
        assert renders == []
        empty = await w.answer(request("/lines", "POST", body='{"id": "o8", "items": []}'))
        assert (empty.status, empty.raw_body) == (200, b"o8=none")
        assert renders == ["/lines"]

    world(scenario, journey, checkout, lines, echo)
