"""Stateful requests on a state that is a round trip away (as Redis's): what reaches the store.

The in-process store is made to look shared (``held_state`` None), and its state calls counted:
requests waiting for their turn share one ``state_advance``, a request that depends on no state
and steps nothing makes no call, and a step refused because another worker moved the state on is
decided again on the state handed back.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from simproxy.engine.matching.stategroups import group_id
from simproxy.engine.wire.response import Wire
from tests.engine.modes.conftest import World, pair, request

STATE_CALLS = ("state_copy", "state_fit", "state_get", "state_advance", "state_moved")
FIRST = Counter({"state_copy": 2, "state_fit": 1, "state_advance": 1})
"""A worker's first stateful request on a simulation: it reads the state, brings the simulation's
layout of the state's groups (``state_fit``), reads the state again in it, then steps it."""


def _requiring(state: dict[str, str], path: str, body: str, **response: Any) -> dict[str, Any]:
    made = pair(path, body, **response)
    made["request"]["requiresState"] = state
    return made


def _counted(w: World) -> Counter[str]:
    """Make the state a round trip away (each call yields to the loop once) and count its calls."""
    calls: Counter[str] = Counter()
    state = w.store.state
    state.held_state = lambda: None  # type: ignore[method-assign]
    for name in STATE_CALLS:
        call = getattr(state, name)

        async def counted(*args: Any, _call: Any = call, _name: str = name, **kwargs: Any) -> Any:
            calls[_name] += 1
            await asyncio.sleep(0)
            return await _call(*args, **kwargs)

        setattr(state, name, counted)
    return calls


FLIP = (
    _requiring({"side": "a"}, "/flip", "a", transitionsState={"side": "b"}),
    _requiring({"side": "b"}, "/flip", "b", transitionsState={"side": "a"}),
)


def test_requests_waiting_for_their_turn_share_one_step_in_the_order_they_came(world: Any) -> None:
    async def scenario(w: World) -> None:
        await w.store.state_replace({"side": "a"})
        calls = _counted(w)
        first = await w.answer(request("/flip"))  # reads the state, then steps it
        assert first.raw_body == b"a"
        assert calls == FIRST
        handed = [w.dispatcher.handle(request("/flip")) for _ in range(6)]
        assert not any(isinstance(one, Wire) for one in handed)
        bodies = [wire.raw_body for wire in await asyncio.gather(*handed)]
        # the first waits for the store alone; the five that came meanwhile share the next round trip
        assert bodies == [b"b", b"a", b"b", b"a", b"b", b"a"]
        assert calls == FIRST + Counter({"state_advance": 2})
        assert await w.store.state_get() == {"side": "b"}

    world(scenario, *FLIP)


def test_a_request_that_depends_on_no_state_and_steps_nothing_makes_no_state_call(world: Any) -> None:
    async def scenario(w: World) -> None:
        await w.store.state_replace({"side": "a"})
        calls = _counted(w)
        assert (await w.answer(request("/flip"))).raw_body == b"a"
        before = calls.copy()
        for _ in range(3):
            assert (await w.answer(request("/hello"))).raw_body == b"hi"
        assert calls == before

    world(scenario, pair("/hello", "hi"), *FLIP)


def test_a_hit_on_a_pair_no_state_key_can_concern_makes_no_state_call_even_when_not_cacheable(
    world: Any,
) -> None:
    async def scenario(w: World) -> None:
        await w.store.state_replace({"side": "a", "door": "shut"})
        calls = _counted(w)
        assert (await w.answer(request("/flip"))).raw_body == b"a"
        before = calls.copy()
        for _ in range(3):  # matched on a header: the match cache does not keep it
            assert (await w.answer(request("/hello", headers={"X-Who": ["me"]}))).raw_body == b"hi"
        assert calls == before

    hello = pair("/hello", "hi")
    hello["request"]["headers"] = {"X-Who": [{"matcher": "exact", "value": "me"}]}
    door = _requiring({"door": "shut"}, "/door", "opened", transitionsState={"door": "open"})
    world(scenario, hello, *FLIP, door)


def test_a_step_of_one_group_goes_to_the_store_from_the_request_s_own_task(world: Any) -> None:
    async def scenario(w: World) -> None:
        await w.store.state_replace({"side": "a"})
        _counted(w)
        advance = w.store.state.state_advance
        callers: list[asyncio.Task[Any] | None] = []

        async def recorded(*args: Any) -> Any:
            callers.append(asyncio.current_task())
            return await advance(*args)

        w.store.state.state_advance = recorded  # type: ignore[method-assign]

        async def one() -> tuple[bytes, asyncio.Task[Any] | None]:
            return (await w.answer(request("/flip"))).raw_body, asyncio.current_task()

        assert [(await one())[0] for _ in range(2)] == [b"a", b"b"]
        body, task = await asyncio.create_task(one())
        assert body == b"a" and callers[-1] is task  # no task of its own per turn

    world(scenario, *FLIP)


def test_a_step_refused_because_another_worker_moved_the_state_is_decided_again(world: Any) -> None:
    async def scenario(w: World) -> None:
        await w.store.state_replace({"side": "a"})
        calls = _counted(w)
        assert (await w.answer(request("/flip"))).raw_body == b"a"  # this worker's copy: side b
        w.store.state.step_now({"side": "a"}, ())  # another worker flipped it back meanwhile
        assert (await w.answer(request("/flip"))).raw_body == b"a"  # not b: decided again on a
        assert calls == FIRST + Counter({"state_advance": 2})  # the refused step brought the state back
        assert await w.store.state_get() == {"side": "b"}

    world(scenario, *FLIP)


def test_a_request_gone_before_its_turn_steps_nothing(world: Any) -> None:
    async def scenario(w: World) -> None:
        await w.store.state_replace({"side": "a"})
        _counted(w)
        first = asyncio.ensure_future(w.answer(request("/flip")))
        gone = asyncio.ensure_future(w.answer(request("/flip")))
        await asyncio.sleep(0)  # both wait: the first for the store, the second for its turn
        gone.cancel()
        assert (await first).raw_body == b"a"
        assert gone.cancelled()
        assert await w.store.state_get() == {"side": "b"}  # the one step of the request answered
        assert (await w.answer(request("/flip"))).raw_body == b"b"

    world(scenario, *FLIP)


def test_a_hit_steps_its_own_group_and_a_miss_checks_them_all(world: Any) -> None:
    async def scenario(w: World) -> None:
        await w.store.state_replace({"side": "a", "door": "shut"})
        calls = _counted(w)
        stepped: list[tuple[str, dict[str, str]]] = []
        advance = w.store.state.state_advance

        async def recorded(era: int, group: str, version: int, sets: Any, removes: Any) -> Any:
            stepped.append((group, dict(sets)))
            return await advance(era, group, version, sets, removes)

        w.store.state.state_advance = recorded  # type: ignore[method-assign]
        assert (await w.answer(request("/flip"))).raw_body == b"a"
        assert (await w.answer(request("/door"))).raw_body == b"opened"
        assert stepped == [(group_id(["side"]), {"side": "b"}), (group_id(["door"]), {"door": "open"})]
        assert calls == FIRST + Counter({"state_advance": 1})
        assert (await w.answer(request("/door"))).status == 502  # a miss: the door is open
        assert calls == FIRST + Counter({"state_advance": 1, "state_moved": 1})  # no group moved since copied
        assert len(stepped) == 2
        assert await w.store.state_get() == {"side": "b", "door": "open"}

    door = _requiring({"door": "shut"}, "/door", "opened", transitionsState={"door": "open"})
    world(scenario, *FLIP, door)


def test_a_miss_after_another_worker_stepped_a_group_reads_that_group_alone_again(world: Any) -> None:
    async def scenario(w: World) -> None:
        await w.store.state_replace({"side": "a", "door": "shut"})
        calls = _counted(w)
        assert (await w.answer(request("/flip"))).raw_body == b"a"
        w.store.state.step_now({"door": "open"}, ())  # another worker opened the door meanwhile
        missed = await w.answer(request("/nope"))
        assert missed.status == 502 and b'"door": "open"' in missed.raw_body  # the state as it is now
        # the miss found the door's group moved, read it alone again (a step of nothing), and held
        assert calls == FIRST + Counter({"state_moved": 2, "state_advance": 1})

    door = _requiring({"door": "shut"}, "/door", "opened", transitionsState={"door": "open"})
    world(scenario, *FLIP, door)
