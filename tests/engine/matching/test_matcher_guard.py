"""The guard around the costly matcher families: total, and keeping its last answer."""

from __future__ import annotations

import logging

import pytest

from simproxy.engine.matching.base import REMEMBERED_INPUT, guarded
from tests.engine.conftest import REGISTRY, matcher


def test_the_same_body_again_is_answered_without_parsing_it_again() -> None:
    calls: list[str] = []

    def parse(actual: str) -> bool:
        calls.append(actual)
        return actual.startswith("{")

    check = guarded(parse, False, "json")
    assert [check("{}"), check("{}"), check("[]"), check("{}")] == [True, True, False, True]
    assert calls == ["{}", "[]", "{}"]  # only the last input is kept
    big = "{" + " " * REMEMBERED_INPUT
    assert check(big) and check(big)
    assert calls[-2:] == [big, big]  # an input this long is not kept


def test_a_failing_matcher_is_no_match_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    def broken(actual: str) -> bool:
        raise RecursionError

    with caplog.at_level(logging.WARNING):
        assert guarded(broken, False, "xpath")("<a/>") is False
    assert "xpath matcher failed on a 4-character input" in caplog.text


def test_a_jsonpartial_matcher_answers_each_body_on_its_own() -> None:
    partial = REGISTRY.compile(matcher("jsonpartial", '{"id": 42}'), "data.pairs[0].request.body[0]")
    bodies = ['{"id": 42, "x": 1}', '{"id": 42.0}', '{"id": 42, "x": 1}', '{"a": {"id": 42}}', "not json"]
    assert [partial.matches(body) for body in bodies] == [True, False, True, True, False]
