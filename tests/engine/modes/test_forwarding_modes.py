"""Spy, capture, modify, synthesize and diff, driven directly with a fake real service."""

from __future__ import annotations

from typing import Any

from simproxy.engine.fleet.config import ModeArguments
from simproxy.engine.modes.diff_report import decode_groups
from simproxy.engine.simulation.model import Pair
from tests.engine.modes.conftest import FakeUpstream, World, pair, real, request, unreachable


def _path(p: Pair) -> str:
    assert p.request.path is not None
    return str(p.request.path[0].value)


def _header(wire: Any, name: str) -> tuple[str, ...]:
    return dict(wire.headers).get(name, ())


# -- spy ------------------------------------------------------------------------------------------


def test_spy_answers_hits_from_the_simulation_and_forwards_misses_marked(world: Any) -> None:
    async def scenario(w: World) -> None:
        hit = await w.answer(request("/a"))
        assert (hit.raw_body, hit.outcome) == (b"simulated", "hit")
        miss = await w.answer(request("/b"))
        assert (miss.status, miss.raw_body, miss.outcome) == (200, b"real", "forwarded")
        assert _header(miss, "Hoverfly") == ("Forwarded",)
        assert [(req.path, marked) for req, marked in w.upstream.sent] == [("/b", True)]
        assert len(await w.pairs()) == 1  # not captured unless asked

    world(scenario, pair("/a"), mode="spy")


def test_spy_capturing_misses_stores_them_and_answers_the_next_one_itself(world: Any) -> None:
    async def scenario(w: World) -> None:
        await w.answer(request("/b"))
        assert [_path(p) for p in await w.pairs()] == ["/a", "/b"]
        again = await w.answer(request("/b"))
        assert (again.raw_body, again.outcome) == (b"real", "hit")
        assert len(w.upstream.sent) == 1

    world(scenario, pair("/a"), mode="spy", arguments=ModeArguments(capture_on_miss=True))


def test_spy_answers_502_when_the_real_service_cannot_be_reached(world: Any) -> None:
    async def scenario(w: World) -> None:
        wire = await w.answer(request("/b"))
        assert wire.status == 502
        assert "There was an error when forwarding the request to the intended destination" in wire.raw_body.decode()
        assert "connection refused" in wire.raw_body.decode()

    world(scenario, pair("/a"), mode="spy", upstream=FakeUpstream(unreachable))


# -- capture --------------------------------------------------------------------------------------


def test_capture_forwards_and_stores_each_distinct_request_once(world: Any) -> None:
    async def scenario(w: World) -> None:
        for path in ("/x", "/x", "/y"):
            wire = await w.answer(request(path, query="q=1"))
            assert (wire.status, wire.raw_body, wire.outcome) == (201, b"made", "forwarded")
        pairs = await w.pairs()
        assert [(_path(p), p.response.body) for p in pairs] == [("/x", b"made"), ("/y", b"made")]
        assert [(name, [(m.name, m.value) for m in ms]) for name, ms in pairs[0].request.query or ()] == [
            ("q", [("exact", "1")])
        ]
        entries = await w.journal()
        assert [e.mode for e in entries] == ["capture"] * 3

    world(scenario, mode="capture", upstream=FakeUpstream(real(201, b"made")))


def test_capture_stores_nothing_when_the_real_service_fails(world: Any) -> None:
    async def scenario(w: World) -> None:
        wire = await w.answer(request("/x"))
        assert wire.status == 502 and b"dial tcp" in wire.raw_body
        assert await w.pairs() == ()

    world(scenario, mode="capture", upstream=FakeUpstream(unreachable))


def test_capture_stateful_turns_repeated_requests_into_a_sequence(world: Any) -> None:
    bodies = iter([b"one", b"two"])

    async def scenario(w: World) -> None:
        await w.answer(request("/n"))
        await w.answer(request("/n"))
        pairs = await w.pairs()
        assert [p.response.body for p in pairs] == [b"one", b"two"]
        assert [p.request.requires_state for p in pairs] == [(("sequence:1", "1"),), (("sequence:1", "2"),)]

    upstream = FakeUpstream(lambda req: real(200, next(bodies))(req))
    world(scenario, mode="capture", upstream=upstream, arguments=ModeArguments(stateful=True))


# -- modify and synthesize ------------------------------------------------------------------------


def test_modify_without_middleware_is_a_transparent_proxy(world: Any) -> None:
    async def scenario(w: World) -> None:
        wire = await w.answer(request("/m"))
        assert (wire.status, wire.raw_body, wire.outcome) == (200, b"real", "forwarded")
        assert await w.pairs() == ()

    world(scenario, mode="modify")


def test_modify_runs_the_middleware_on_the_request_and_on_the_real_response(world: Any) -> None:
    def middleware(exchange: dict[str, Any]) -> dict[str, Any]:
        if exchange["response"]["status"] == 0:  # the request, on its way out
            exchange["request"]["path"] = "/rewritten"
        else:
            exchange["response"]["body"] = "modified " + exchange["response"]["body"]
        return exchange

    async def scenario(w: World) -> None:
        wire = await w.answer(request("/m"))
        assert wire.raw_body == b"modified real"
        assert [req.path for req, _ in w.upstream.sent] == ["/rewritten"]

    world(scenario, mode="modify", middleware=True, upstream=FakeUpstream(real(), middleware=middleware))


def test_synthesize_answers_from_the_middleware_alone(world: Any) -> None:
    def middleware(exchange: dict[str, Any]) -> dict[str, Any]:
        exchange["response"] = {"status": 201, "body": "made for " + exchange["request"]["path"]}
        return exchange

    async def scenario(w: World) -> None:
        wire = await w.answer(request("/s"))
        assert (wire.status, wire.raw_body, wire.outcome) == (201, b"made for /s", "hit")
        assert w.upstream.sent == []

    world(scenario, mode="synthesize", middleware=True, upstream=FakeUpstream(real(), middleware=middleware))


def test_synthesize_without_middleware_is_hoverflys_502(world: Any) -> None:
    async def scenario(w: World) -> None:
        wire = await w.answer(request("/s"))
        assert wire.status == 502
        assert b"There was an error when creating a synthetic response" in wire.raw_body
        assert b"Middleware not set" in wire.raw_body

    world(scenario, mode="synthesize")


# -- diff -----------------------------------------------------------------------------------------


def test_diff_serves_the_real_response_and_reports_how_it_differs(world: Any) -> None:
    async def scenario(w: World) -> None:
        wire = await w.answer(request("/d", query="x=1"))
        assert (wire.status, wire.raw_body) == (200, b"real")
        groups = decode_groups(await w.store.diff_reports())
        assert [(g.request.path, g.request.query) for g in groups] == [("/d", "x=1")]
        fields = {entry.field for report in groups[0].reports for entry in report.entries}
        assert "body" in fields

    world(scenario, pair("/d"), mode="diff")


def test_diff_reports_nothing_when_the_real_response_is_the_simulated_one(world: Any) -> None:
    async def scenario(w: World) -> None:
        await w.answer(request("/d"))
        await w.answer(request("/unknown"))  # no simulation for it: nothing to compare
        assert await w.store.diff_reports() == []

    world(scenario, pair("/d", "real", headers={"Content-Type": ["text/plain"]}), mode="diff")
