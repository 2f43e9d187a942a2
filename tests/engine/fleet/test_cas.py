"""The one compare-and-set retry loop: a write refused because another came first is decided again."""

from __future__ import annotations

import asyncio

import pytest

from simproxy.engine.errors import CaptureConflict, WriteConflict
from simproxy.engine.fleet.cas import until_written


def test_a_refused_write_is_decided_and_tried_again_until_it_is_applied() -> None:
    tries: list[int] = []

    async def attempt() -> str | None:
        tries.append(len(tries))
        return "written" if len(tries) == 3 else None  # two other writers came first

    assert asyncio.run(until_written(attempt, "kept changing")) == "written"
    assert tries == [0, 1, 2]


def test_a_falsy_result_is_a_result() -> None:
    async def attempt() -> list[bool] | None:
        return []  # e.g. no captured pair needed writing

    assert asyncio.run(until_written(attempt, "kept changing")) == []


def test_it_gives_up_after_its_attempts_with_the_callers_error() -> None:
    tries = 0

    async def attempt() -> None:
        nonlocal tries
        tries += 1

    with pytest.raises(WriteConflict, match="the document kept changing"):
        asyncio.run(until_written(attempt, "the document kept changing"))
    assert tries == 20
    with pytest.raises(CaptureConflict):
        asyncio.run(until_written(attempt, "captures", attempts=3, error=CaptureConflict))
    assert tries == 23
