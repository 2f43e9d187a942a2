"""The ``Date`` header value a worker writes: kept current by a task while the proxy server runs."""

from __future__ import annotations

import asyncio
import contextlib
from email.utils import formatdate

from simproxy.engine.server.state import HttpDate

START = 1_700_000_000


def _date(second: float) -> bytes:
    return formatdate(second, usegmt=True).encode("ascii")


def test_the_kept_date_is_renewed_as_each_second_starts_and_read_from_the_clock_once_not_kept() -> None:
    async def main() -> None:
        now = [START + 0.9985]
        date = HttpDate(clock=lambda: now[0])
        keeper = asyncio.ensure_future(date.keep())
        await asyncio.sleep(0)
        assert date.value() == _date(START)
        now[0] = START + 1.0002  # the keeper's timer (2.5 ms) ends just after the second starts
        for _ in range(500):  # a busy machine may run it late
            await asyncio.sleep(0.01)
            if date.value() != _date(START):
                break
        assert date.value() == _date(START + 1)
        keeper.cancel()
        now[0] = START + 2.0004
        with contextlib.suppress(asyncio.CancelledError):
            await keeper
        assert date.value() == _date(START + 2)  # nothing keeps it: the clock is read

    asyncio.run(main())
