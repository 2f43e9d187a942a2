"""What makes a lost reply harmless on Redis: batches applied once, and document writes looked up.

A command whose reply does not come in time may still run: Redis reads what it was sent once it
answers again, even from a connection the client gave up on. A batch of buffered writes is applied
by whichever copy comes first and dropped by the others (``scripts.BATCH``). A document
write takes a lease first, its marker key, and is only applied while the lease lasts
(``scripts.WRITE_DOCUMENT``); when its reply is lost the writer waits the lease out, after
which no copy of the write can be applied, and reads the outcome back from the marker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from simproxy.store.errors import WriteUnconfirmed

LOST = (RedisConnectionError, RedisTimeoutError, OSError)
"""What a call whose reply may be lost raises: the server may have run it, or may run it later."""
WRITE_LEASE = 3.0
"""Seconds a document write may take to reach Redis after its lease was taken: a copy that reaches it
later changes nothing. Above the store's socket timeout, so that a write answered in time was applied."""
WRITE_LOOKUP = 10.0
"""Seconds from the lease on that a write whose reply was lost has its outcome looked for."""
WRITE_OUTCOME_KEEP_MS = 60_000
"""How long Redis keeps a write's outcome: longer than it is looked for."""
LOOKUP_INTERVAL = 0.1
CLOCK_MARGIN = 0.1
"""Seconds waited beyond the lease before a write is taken as never applied (clock granularity)."""


BULK_BYTES = 1 << 20
"""A command that carries or fetches more than this many bytes (a large simulation, a journal
batch of large bodies) gets a time limit that grows with its size: under a fixed second, every
worker fetching a 100 MB simulation at once timed out, retried and kept Redis busy for minutes."""
BULK_RATE = 10 << 20
"""Bytes per second such a command is allowed at the least (on top of the store's socket timeout): 13 s
for a 120 MB simulation. Several workers fetching it at once, with their loops busy compiling,
measured 35-150 MB/s each on the 2-core test machine."""


def transfer_allowance(size: int) -> float:
    """Seconds added to a command's time limit for carrying ``size`` bytes."""
    return size / BULK_RATE if size > BULK_BYTES else 0.0


def write_lease(size: int) -> float:
    """Seconds a document write of ``size`` bytes may take to reach Redis (see ``WRITE_LEASE``)."""
    return WRITE_LEASE + transfer_allowance(size)


async def take_lease(client: aioredis.Redis, marker: str, lease: float) -> float:
    """Take a write's lease (its marker, "pending") for ``lease`` seconds (``WRITE_LEASE``, more for
    a large write) and return when it was acknowledged (loop time): the write, sent after, can be
    applied until ``lease`` after that at the latest."""
    await client.set(marker, b"pending", nx=True, px=int(lease * 1000))
    return asyncio.get_running_loop().time()


async def write_outcome(
    client: aioredis.Redis,
    marker: str,
    leased: float,
    lease: float,
    lost: BaseException,
    failed: Callable[[], None],
) -> int:
    """The outcome of a write whose reply was lost, as ``scripts.WRITE_DOCUMENT`` returns it
    (-1: not applied), read back once the lease of ``lease`` seconds taken at ``leased`` (loop
    time) has run out.

    Raises ``WriteUnconfirmed`` when Redis does not answer within ``WRITE_LOOKUP`` (counted beyond
    ``WRITE_LEASE``, for a longer lease); ``failed`` is called for each lookup that fails.
    """
    loop = asyncio.get_running_loop()
    await asyncio.sleep(max(leased + lease + CLOCK_MARGIN - loop.time(), 0))
    give_up = leased + lease - WRITE_LEASE + WRITE_LOOKUP
    while True:
        try:
            outcome = await client.get(marker)
        except LOST as exc:
            failed()
            lost = exc
        else:
            if outcome != b"pending":  # it cannot be still, unless clocks disagree: look again
                return -1 if outcome is None else int(outcome)
        if loop.time() >= give_up:
            raise WriteUnconfirmed(
                f"the store stopped answering while a write was sent ({lost}): it may have been applied"
                " before; it cannot be any more"
            ) from lost
        await asyncio.sleep(LOOKUP_INTERVAL)
