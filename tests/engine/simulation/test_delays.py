"""Delays: Hoverfly's precedence and selection rules, and the log-normal sampling bounds."""

from __future__ import annotations

import random

from simproxy.engine.simulation.delays import Delays, sample_log_normal
from simproxy.engine.simulation.model import LogNormal, Response
from tests.engine.conftest import simulation

RNG = random.Random(7)


def _delays(**global_actions: object) -> Delays:
    return Delays.compile(simulation(globalActions=global_actions))


def test_the_first_matching_fixed_delay_applies_on_destination_and_path_without_query() -> None:
    delays = _delays(delays=[
        {"urlPattern": "api\\.test/slow$", "httpMethod": "GET", "delay": 500},
        {"urlPattern": "api\\.test", "httpMethod": "", "delay": 100},
        {"urlPattern": "api\\.test", "httpMethod": "", "delay": 900},
    ])  # fmt: skip
    plain = Response()
    assert delays.for_response(plain, "api.test", "/slow", "get", RNG) == 0.5  # method case-insensitive
    assert delays.for_response(plain, "api.test", "/slow", "POST", RNG) == 0.1
    assert delays.for_response(plain, "other.test", "/slow", "GET", RNG) == 0.0


def test_fixed_and_log_normal_global_delays_add_up() -> None:
    delays = _delays(
        delays=[{"urlPattern": ".", "delay": 100}],
        delaysLogNormal=[{"urlPattern": ".", "min": 50, "max": 50, "mean": 50, "median": 50}],
    )
    assert delays.for_response(Response(), "h", "/", "GET", RNG) == 0.15


def test_a_response_delay_replaces_the_global_ones() -> None:
    delays = _delays(delays=[{"urlPattern": ".", "delay": 100}])
    assert delays.for_response(Response(fixed_delay=30), "h", "/", "GET", RNG) == 0.03
    both = Response(fixed_delay=30, log_normal_delay=LogNormal(10, 10, 10, 10))
    assert delays.for_response(both, "h", "/", "GET", RNG) == 0.04


def test_log_normal_samples_stay_within_min_and_max() -> None:
    params = LogNormal(min=100, max=400, mean=250, median=200)
    samples = [sample_log_normal(params, random.Random(seed)) for seed in range(500)]
    assert min(samples) >= 100 and max(samples) <= 400
    assert 150 < sorted(samples)[250] < 260  # the median is about 200
    unbounded = [sample_log_normal(LogNormal(0, 0, 250, 200), random.Random(seed)) for seed in range(500)]
    assert max(unbounded) > 400 and all(isinstance(s, int) for s in unbounded)
