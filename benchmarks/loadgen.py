"""A bounded HTTP/1.1 load generator for machines without wrk: keep-alive connections on loopback.

Each connection sends a request, reads the whole response (``Content-Length`` framed, which is what
simproxy and the servers it is compared with send here), and sends the next; it stops after the
given seconds. Run in its own process so it never shares an interpreter with the server::

    python -m benchmarks.loadgen PORT SECONDS CONNECTIONS REQUESTS.json

``REQUESTS.json`` is a list of request texts (latin-1); they are sent in turn, and ``{n}`` in a
request is replaced by the run's number and a counter (a value no cache has seen, also in an
earlier run against the same server). Prints one JSON line:
``{"requests", "seconds", "p50_ms", "p99_ms", "errors"}``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from itertools import count
from pathlib import Path


async def _connection(
    port: int,
    deadline: float,
    requests: list[str],
    run: int,
    counter: count[int],
    latencies: list[float],
    errors: list[int],
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < deadline:
            n = next(counter)
            text = requests[n % len(requests)].replace("{n}", f"{run}.{n}")
            started = time.perf_counter()
            writer.write(text.encode("latin-1"))
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if length:
                await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
            if not head.startswith((b"HTTP/1.1 2", b"HTTP/1.0 2")):
                errors[0] += 1
    finally:
        writer.close()


async def run(port: int, seconds: float, connections: int, requests: list[str]) -> dict[str, float]:
    latencies: list[float] = []
    errors = [0]
    run, counter = time.time_ns() // 1_000_000, count()  # the run's own number (its start, in ms)
    started = time.perf_counter()
    deadline = started + seconds
    await asyncio.gather(
        *(_connection(port, deadline, requests, run, counter, latencies, errors) for _ in range(connections))
    )
    elapsed = time.perf_counter() - started
    latencies.sort()
    pick = (lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000) if latencies else None
    return {
        "requests": len(latencies),
        "seconds": elapsed,
        "p50_ms": pick(0.50) if pick else 0.0,
        "p99_ms": pick(0.99) if pick else 0.0,
        "errors": errors[0],
    }


def main(argv: list[str]) -> int:
    port, seconds, connections = int(argv[0]), float(argv[1]), int(argv[2])
    requests = json.loads(Path(argv[3]).read_text())
    print(json.dumps(asyncio.run(run(port, seconds, connections, requests))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
