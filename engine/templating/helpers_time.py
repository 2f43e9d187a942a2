"""``now offset format``: Hoverfly's duration syntax (with ``d`` and ``y``) and Go time layouts in UTC.

The layout is read with Go's ``nextStdChunk`` rules (``2006``, ``Jan``, ``_2``, ``.000``, ``Z07:00``
and the rest); any other text is literal. Times are whole nanoseconds since the epoch.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import TypeVar

from simproxy.engine.templating.evaluate import Call

_K = TypeVar("_K")
_V = TypeVar("_V")
_NS = 1_000_000_000
_MAX = 2**63 - 1
_UNITS = MappingProxyType(
    {
        "ns": 1,
        "us": 1_000,
        "µs": 1_000,
        "μs": 1_000,
        "ms": 1_000_000,
        "s": _NS,
        "m": 60 * _NS,
        "h": 3600 * _NS,
        "d": 24 * 3600 * _NS,
        "y": 365 * 24 * 3600 * _NS,
    }
)
_EPOCH = datetime(1970, 1, 1)
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = tuple(
    [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ]
)
_RFC3339 = "2006-01-02T15:04:05Z07:00"


def parse_duration(text: str) -> int | None:
    """Hoverfly's ``ParseDuration`` (Go's, plus ``d`` and ``y``): nanoseconds, or None if invalid."""
    s = text
    negative = False
    if s[:1] in ("-", "+"):
        negative = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        return None
    total = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            return None
        i = 0
        while i < len(s) and "0" <= s[i] <= "9":
            i += 1
        whole = int(s[:i]) if i else 0
        if whole > _MAX:
            return None
        before = i > 0
        s = s[i:]
        fraction, scale, after = 0, 1.0, False
        if s[:1] == ".":
            s = s[1:]
            j = 0
            while j < len(s) and "0" <= s[j] <= "9":
                if fraction <= _MAX // 10:
                    fraction = fraction * 10 + int(s[j])
                    scale *= 10
                j += 1
            after = j > 0
            s = s[j:]
        if not before and not after:
            return None
        k = 0
        while k < len(s) and not (s[k] == "." or "0" <= s[k] <= "9"):
            k += 1
        unit = _UNITS.get(s[:k]) if k else None
        if unit is None:
            return None
        s = s[k:]
        if whole > _MAX // unit:
            return None
        value = whole * unit
        if fraction > 0:
            value += int(float(fraction) * (float(unit) / scale))
            if value > _MAX:
                return None
        total += value
        if total > _MAX:
            return None
    return -total if negative else total


def _chunks(layout: str) -> list[tuple[str, str]]:
    """The layout as (kind, text) pairs: kind "" is literal text, otherwise a Go std element."""
    out: list[tuple[str, str]] = []
    literal_start = 0
    i = 0
    n = len(layout)

    def take(start: int, std: str, end: int) -> None:
        nonlocal literal_start, i
        if start > literal_start:
            out.append(("", layout[literal_start:start]))
        out.append((std, layout[start:end]))
        literal_start = i = end

    while i < n:
        c = layout[i]
        rest = layout[i:]
        lower_next = i + 3 < n and "a" <= layout[i + 3] <= "z"
        if c == "J" and rest.startswith("Jan"):
            if rest.startswith("January"):
                take(i, "January", i + 7)
                continue
            if not lower_next:
                take(i, "Jan", i + 3)
                continue
        elif c == "M" and rest.startswith("Mon"):
            if rest.startswith("Monday"):
                take(i, "Monday", i + 6)
                continue
            if not lower_next:
                take(i, "Mon", i + 3)
                continue
        elif c == "M" and rest.startswith("MST"):
            take(i, "MST", i + 3)
            continue
        elif c == "0" and i + 1 < n and "1" <= layout[i + 1] <= "6":
            take(i, rest[:2], i + 2)
            continue
        elif c == "0" and rest.startswith("002"):
            take(i, "002", i + 3)
            continue
        elif c == "1":
            size = 2 if rest.startswith("15") else 1
            take(i, rest[:size], i + size)
            continue
        elif c == "2":
            size = 4 if rest.startswith("2006") else 1
            take(i, rest[:size], i + size)
            continue
        elif c == "_" and rest.startswith("_2"):
            if rest.startswith("_2006"):
                take(i + 1, "2006", i + 5)  # a literal "_" before the long year
            else:
                take(i, "_2", i + 2)
            continue
        elif c == "_" and rest.startswith("__2"):
            take(i, "__2", i + 3)
            continue
        elif c in "345":
            take(i, c, i + 1)
            continue
        elif c in "Pp" and i + 1 < n and layout[i + 1] == ("M" if c == "P" else "m"):
            take(i, rest[:2], i + 2)
            continue
        elif c in "-Z":
            std = next((s for s in _ZONES[c] if rest.startswith(s)), None)
            if std is not None:
                take(i, std, i + len(std))
                continue
        elif c in ".," and i + 1 < n and layout[i + 1] in "09":
            j = i + 1
            while j < n and layout[j] == layout[i + 1]:
                j += 1
            if not (j < n and "0" <= layout[j] <= "9"):
                take(i, "frac" + layout[i + 1], j)
                continue
        i += 1
    if literal_start < n:
        out.append(("", layout[literal_start:]))
    return out


_ZONES = MappingProxyType(
    {
        "-": ("-070000", "-07:00:00", "-0700", "-07:00", "-07"),
        "Z": ("Z070000", "Z07:00:00", "Z0700", "Z07:00", "Z07"),
    }
)
_UTC_OFFSETS = MappingProxyType(
    {"-070000": "+000000", "-07:00:00": "+00:00:00", "-0700": "+0000", "-07:00": "+00:00", "-07": "+00"}
)


def _pad(value: int, width: int) -> str:
    return ("-" if value < 0 else "") + str(abs(value)).rjust(width, "0")


def format_go(moment: datetime, nanos: int, layout: str) -> str:
    """``time.Time.Format`` in UTC for a naive UTC ``moment`` with ``nanos`` in its second."""
    return _formatted(moment, nanos, _chunks(layout))


def _formatted(moment: datetime, nanos: int, chunks: Sequence[tuple[str, str]]) -> str:
    out = []
    hour12 = moment.hour % 12 or 12
    for std, text in chunks:
        if std == "":
            out.append(text)
        elif std == "2006":
            out.append(_pad(moment.year, 4))
        elif std == "06":
            out.append(_pad(moment.year % 100, 2))
        elif std in ("January", "Jan"):
            out.append(_MONTHS[moment.month - 1][: len(std) if std == "Jan" else None])
        elif std in ("1", "01"):
            out.append(_pad(moment.month, len(std)))
        elif std in ("Monday", "Mon"):
            out.append(_DAYS[moment.weekday()][: 3 if std == "Mon" else None])
        elif std in ("2", "02"):
            out.append(_pad(moment.day, len(std)))
        elif std == "_2":
            out.append(str(moment.day).rjust(2))
        elif std == "002":
            out.append(_pad(moment.timetuple().tm_yday, 3))
        elif std == "__2":
            out.append(str(moment.timetuple().tm_yday).rjust(3))
        elif std == "15":
            out.append(_pad(moment.hour, 2))
        elif std in ("3", "03"):
            out.append(_pad(hour12, len(std)))
        elif std in ("4", "04"):
            out.append(_pad(moment.minute, len(std)))
        elif std in ("5", "05"):
            out.append(_pad(moment.second, len(std)))
        elif std in ("PM", "pm"):
            out.append(("PM" if moment.hour >= 12 else "AM") if std == "PM" else ("pm" if moment.hour >= 12 else "am"))
        elif std == "MST":
            out.append("UTC")
        elif std.startswith("Z"):
            out.append("Z")
        elif std.startswith("-"):
            out.append(_UTC_OFFSETS[std])
        else:  # fractional seconds: frac0 or frac9, the separator and the digit run in text
            digits = f"{nanos:09d}"[: len(text) - 1]
            if std == "frac9":
                digits = digits.rstrip("0")
            out.append(text[0] + digits if digits else "")
    return "".join(out)


def _nanos(moment: datetime) -> int:
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    delta = moment - _EPOCH
    return (delta.days * 86400 + delta.seconds) * _NS + delta.microseconds * 1000


class NowTexts:
    """``now``'s texts, kept for the second they are true in: a layout without fractional seconds
    prints the same all second long, so a worker formats each (offset, layout) once a second. The
    parsed layouts and offsets are kept too; each table is emptied when it reaches ``LIMIT`` (a
    layout taken from the request could otherwise grow it without end)."""

    __slots__ = ("layouts", "offsets", "second", "texts")
    LIMIT = 256

    def __init__(self) -> None:
        self.second = -1
        self.texts: dict[tuple[int, str], str] = {}
        self.offsets: dict[str, int | None] = {}
        self.layouts: dict[str, tuple[tuple[tuple[str, str], ...], bool]] = {}

    def text(self, nanos: int, offset: str, fmt: str) -> str:
        """``now offset fmt`` at ``nanos`` (nanoseconds since the epoch, UTC)."""
        if nanos // _NS != self.second:  # a new second: every text kept is out of date
            self.second = nanos // _NS
            self.texts.clear()
        if offset != "":
            if offset in self.offsets:
                duration = self.offsets[offset]
            else:
                duration = self._keep(self.offsets, offset, parse_duration(offset))
            if duration is not None:
                nanos += duration
        if fmt == "unix":
            return str(nanos // _NS)
        if fmt == "epoch":
            return str(nanos // 1_000_000 if nanos >= 0 else -(-nanos // 1_000_000))
        seconds, fraction = divmod(nanos, _NS)
        layout = fmt or _RFC3339
        parsed = self.layouts.get(layout)
        if parsed is None:
            parsed = self._keep(self.layouts, layout, _parsed(layout))
        chunks, fractional = parsed
        if fractional:
            return _formatted(_EPOCH + timedelta(seconds=seconds), fraction, chunks)
        key = (seconds, layout)  # the offset is in the seconds
        text = self.texts.get(key)
        if text is None:
            text = self._keep(self.texts, key, _formatted(_EPOCH + timedelta(seconds=seconds), fraction, chunks))
        return text

    def _keep(self, table: dict[_K, _V], key: _K, value: _V) -> _V:
        if len(table) >= self.LIMIT:
            table.clear()
        table[key] = value
        return value


def _parsed(layout: str) -> tuple[tuple[tuple[str, str], ...], bool]:
    chunks = tuple(_chunks(layout))
    return chunks, any(std.startswith("frac") for std, _ in chunks)


def now_helper(call: Call, offset: str, fmt: str) -> str:
    services = call.rt.services
    nanos = time.time_ns() if services.system_clock else _nanos(services.now())
    return str(services.now_texts.text(nanos, offset, fmt))
