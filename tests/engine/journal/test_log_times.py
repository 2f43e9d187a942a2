"""Log times as logrus writes them (RFC 3339, local time, whole seconds), in any time zone."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import datetime

import pytest

from simproxy.engine.journal.logs import rfc3339_of


@pytest.fixture
def zone() -> Iterator[None]:
    before = os.environ.get("TZ")
    yield
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.mark.parametrize("name", ["UTC", "Europe/Berlin", "America/St_Johns", "Asia/Kolkata", "America/Los_Angeles"])
@pytest.mark.parametrize("epoch", [0.0, 1764100000.7, 1751300000.2, -1.5, 1700000000.999])
def test_log_times_are_datetimes_isoformat_in_the_local_zone(zone: None, name: str, epoch: float) -> None:
    os.environ["TZ"] = name
    time.tzset()
    expected = datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds").replace("+00:00", "Z")
    assert rfc3339_of(epoch) == expected


def test_utc_is_written_z(zone: None) -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()
    assert rfc3339_of(1764100000.7) == "2025-11-25T19:46:40Z"
