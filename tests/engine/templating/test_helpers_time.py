"""``now offset format``: offsets with d and y, unix/epoch, and Go reference layouts in UTC."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simproxy.engine.templating import TemplateEngine
from simproxy.engine.templating.helpers_time import NowTexts, parse_duration
from tests.engine.templating.conftest import engine, render, text

AFTERNOON = datetime(2009, 11, 10, 23, 4, 5, 123456, tzinfo=UTC)


@pytest.mark.parametrize(
    ("offset", "fmt", "expected"),
    [
        ("", "", "2018-01-01T00:00:00Z"),
        ("", "unix", "1514764800"),
        ("", "epoch", "1514764800000"),
        ("1d", "", "2018-01-02T00:00:00Z"),
        ("-1d", "", "2017-12-31T00:00:00Z"),
        ("1y", "2006-01-02", "2019-01-01"),
        ("1h30m", "15:04", "01:30"),
        ("1y10d", "2006-01-02", "2019-01-11"),
        ("-1.5h", "2006-01-02 15:04", "2017-12-31 22:30"),
        ("cat", "", "2018-01-01T00:00:00Z"),
        ("5", "", "2018-01-01T00:00:00Z"),
        ("", "dog", "dog"),
        ("", "Mon Jan 2 15:04:05 MST 2006", "Mon Jan 1 00:00:00 UTC 2018"),
        ("", "Mon, 02 Jan 2006 15:04:05 MST", "Mon, 01 Jan 2018 00:00:00 UTC"),
    ],
)
def test_now(offset: str, fmt: str, expected: str) -> None:
    assert text(f"{{{{now '{offset}' '{fmt}'}}}}") == expected


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ("2006-01-02T15:04:05.000Z07:00", "2009-11-10T23:04:05.123Z"),
        ("06 1 01 Jan January", "09 11 11 Nov November"),
        ("2 02 _2 002 __2", "10 10 10 314 314"),
        ("Mon Monday", "Tue Tuesday"),
        ("15 3 03 4 04 5 05 PM pm", "23 11 11 4 04 5 05 PM pm"),
        (".000 .999 ,000000 .000000000 .9", ".123 .123 ,123456 .123456000 .1"),
        ("MST -0700 -07:00 -07 -070000 -07:00:00", "UTC +0000 +00:00 +00 +000000 +00:00:00"),
        ("Z0700 Z07:00 Z07 Z070000 Z07:00:00", "Z Z Z Z Z"),
        ("Janx Monday2006", "Janx Tuesday2009"),
        ("_2006", "_2009"),
        ("05.0001", "05.0011"),  # not a fraction (a digit follows the run): "01" is the month
    ],
)
def test_go_layouts(layout: str, expected: str) -> None:
    assert text(f"{{{{now '' '{layout}'}}}}", using=engine(now=AFTERNOON)) == expected


def test_fraction_trimmed_to_nothing_drops_its_separator() -> None:
    on_the_second = datetime(2020, 5, 6, 7, 8, 9, tzinfo=UTC)
    assert text("{{now '' '05.999|05.000'}}", using=engine(now=on_the_second)) == "09|09.000"


def test_the_clock_is_read_in_utc_whatever_its_zone() -> None:
    paris = datetime(2018, 1, 1, 1, 0, tzinfo=timezone(timedelta(hours=1)))
    assert text("{{now '' ''}}", using=engine(now=paris)) == "2018-01-01T00:00:00Z"


def test_epoch_before_1970_truncates_toward_zero() -> None:
    before = datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)
    assert text("{{now '' 'epoch'}}|{{now '' 'unix'}}", using=engine(now=before)) == "-500|-1"


def test_each_render_reads_the_clock() -> None:
    ticks = iter([datetime(2020, 1, 1, tzinfo=UTC), datetime(2021, 1, 1, tzinfo=UTC)])
    eng = engine()
    eng.now = lambda: next(ticks)
    template = "{{now '' '2006'}}"
    assert [render(template, using=eng).text for _ in range(2)] == ["2020", "2021"]


@pytest.mark.parametrize(
    ("duration", "nanos"),
    [
        ("300ms", 300_000_000),
        ("-1.5h", -5_400_000_000_000),
        ("2h45m", 9_900_000_000_000),
        ("1µs", 1_000),
        ("1μs", 1_000),
        ("1us1ns", 1_001),
        (".5s", 500_000_000),
        ("1.s", 1_000_000_000),
        ("0", 0),
        ("+0", 0),
        ("1y", 365 * 86_400 * 10**9),
        ("", None),
        ("-", None),
        ("1", None),
        ("1x", None),
        (".s", None),
        ("1h-1m", None),
        ("300y", None),
    ],
)
def test_parse_duration(duration: str, nanos: int | None) -> None:
    assert parse_duration(duration) == nanos


def _reference(nanos: int, offset: str, fmt: str) -> str:
    """``now`` as formatted afresh, every time (what the kept texts must equal)."""
    from datetime import timedelta

    from simproxy.engine.templating.helpers_time import _EPOCH, _NS, format_go, parse_duration

    if offset != "" and (duration := parse_duration(offset)) is not None:
        nanos += duration
    if fmt in ("unix", "epoch"):
        return NowTexts().text(nanos, "", fmt)  # no kept text involved: computed at once
    seconds, fraction = divmod(nanos, _NS)
    return format_go(_EPOCH + timedelta(seconds=seconds), fraction, fmt or "2006-01-02T15:04:05Z07:00")


LAYOUTS = ["", "unix", "epoch", "2006-01-02", "15:04:05.000", "Mon Jan _2 15:04:05 MST 2006", "05.999999999", "x"]
OFFSETS = ["", "1s", "-1s", "500ms", "-1.5s", "1h", "1d", "bad", "0"]


@given(
    start=st.integers(min_value=0, max_value=4_000_000_000 * 10**9),
    steps=st.lists(
        st.tuples(st.integers(min_value=0, max_value=3 * 10**9), st.sampled_from(OFFSETS), st.sampled_from(LAYOUTS)),
        max_size=30,
    ),
)
def test_texts_kept_for_the_second_are_the_texts_formatted_afresh(
    start: int, steps: list[tuple[int, str, str]]
) -> None:
    """Across second boundaries, offsets that cross them and fractional layouts, one ``NowTexts``
    answers what formatting every call afresh answers."""
    texts, nanos = NowTexts(), start
    for advance, offset, fmt in steps:
        nanos += advance
        assert texts.text(nanos, offset, fmt) == _reference(nanos, offset, fmt)


def test_a_layout_from_the_request_cannot_grow_the_kept_texts_without_end() -> None:
    texts = NowTexts()
    letters = "bcdfghkqrvwxy"  # no layout element among them (digits would be: "1" is the month)
    for i in range(3 * NowTexts.LIMIT):
        word = letters[i % 13] + letters[i // 13 % 13] + letters[i // 169]
        assert texts.text(10**18, "", f"2006 {word}") == f"2001 {word}"
    assert len(texts.texts) <= NowTexts.LIMIT and len(texts.layouts) <= NowTexts.LIMIT


def test_now_reads_the_system_clock_when_no_clock_is_given() -> None:
    eng = TemplateEngine()
    before = time.time()
    result = render("{{ now '' 'unix' }} {{ now '' 'epoch' }}", using=eng)
    after = time.time()
    unix, epoch = (int(text) for text in result.text.split())
    assert int(before) <= unix <= int(after)
    assert int(before * 1000) <= epoch <= int(after * 1000) + 1
