"""Capture's pair construction and storing rules (pure functions, no I/O)."""

from __future__ import annotations

from simproxy.engine.fleet.config import ModeArguments
from simproxy.engine.modes.capture import captured_pair, merge_capture
from simproxy.engine.outbound.upstream import UpstreamResponse
from simproxy.engine.simulation.model import Matcher, Pair, RequestMatcher, Response, Simulation
from simproxy.engine.wire.request import RequestDetails


def request(path: str = "/p", **headers: list[str]) -> RequestDetails:
    return RequestDetails.build(
        "GET", "http", "svc.test", path, "", "", {k.replace("_", "-"): v for k, v in headers.items()}
    )


def answer(body: bytes = b"ok", elapsed_ms: int = 12) -> UpstreamResponse:
    return UpstreamResponse(200, (("X-B", ("2",)), ("Content-Type", ("text/plain",))), body, elapsed_ms)


def test_several_header_values_are_an_array_and_single_ones_exact() -> None:
    req = request(X_Multi=["a", "b"], X_One=["1"])
    pair = captured_pair(req, answer(), ModeArguments(headers_whitelist=("*",)))
    assert pair.request.headers == (
        ("X-Multi", (Matcher("array", ["a", "b"]),)),
        ("X-One", (Matcher("exact", "1"),)),
    )
    assert pair.request.query is None  # no query: the pair matches any query
    assert pair.response.headers == (("Content-Type", ("text/plain",)), ("X-B", ("2",)))
    assert pair.response.fixed_delay == 0
    assert captured_pair(req, answer(), ModeArguments(capture_delay=True)).response.fixed_delay == 12


def test_whitelisted_names_are_looked_up_in_canonical_case() -> None:
    req = request(X_One=["1"])
    assert captured_pair(req, answer(), ModeArguments(headers_whitelist=("X-One",))).request.headers != ()
    assert captured_pair(req, answer(), ModeArguments(headers_whitelist=("x-one",))).request.headers == ()


def _sim(*pairs: Pair) -> Simulation:
    return Simulation(pairs=pairs)


def test_default_keeps_the_first_and_overwrite_replaces_in_place() -> None:
    first = captured_pair(request(), answer(b"1"), ModeArguments())
    other = captured_pair(request("/q"), answer(b"q"), ModeArguments())
    again = captured_pair(request(), answer(b"2"), ModeArguments())
    sim = _sim(first, other)
    assert merge_capture(sim, again, ModeArguments(), {}) is None
    merged = merge_capture(sim, again, ModeArguments(overwrite_duplicate=True), {})
    assert merged is not None
    assert [p.response.body for p in merged.simulation.pairs] == [b"2", b"q"]


def test_stateful_capture_continues_a_sequence_and_picks_a_free_key() -> None:
    args = ModeArguments(stateful=True)
    taken = Pair(RequestMatcher(path=(Matcher("exact", "/other"),), requires_state=(("sequence:1", "1"),)), Response())
    sim = _sim(taken, captured_pair(request(), answer(b"1"), args))
    merged = merge_capture(sim, captured_pair(request(), answer(b"2"), args), args, {"sequence:1": "1"})
    assert merged is not None and merged.sequence_starts == ("sequence:2",)  # sequence:1 is in use
    merged = merge_capture(merged.simulation, captured_pair(request(), answer(b"3"), args), args, {})
    assert merged is not None and merged.sequence_starts == ()
    walk = [(p.request.requires_state, p.response.transitions_state) for p in merged.simulation.pairs[1:]]
    assert walk == [
        ((("sequence:2", "1"),), (("sequence:2", "2"),)),
        ((("sequence:2", "2"),), (("sequence:2", "3"),)),
        ((("sequence:2", "3"),), None),
    ]
