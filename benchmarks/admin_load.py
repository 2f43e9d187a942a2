"""How long proxied requests wait while the admin API takes a large simulation.

Run from the repository root::

    python -m benchmarks.admin_load                       # 50,000 pairs, one worker
    python -m benchmarks.admin_load --pairs 20000 --workers 2 --rounds 3

A server is started with a one-pair simulation; a client thread opens a new proxied connection
every 5 ms for one request to that pair (new connections: the kernel spreads them over every
worker), and meanwhile the admin API is sent ``PUT /api/v2/simulation`` with ``--pairs`` exact-path
pairs (the one pair among them). Printed per round: the PUT's time, and the proxied requests'
worst, p99 and median latency, over those sent while the PUT was in flight. A request that fails
counts as the time it took to fail.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import statistics
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.servers import Server, simproxy_server

INTERVAL = 0.005
"""Seconds between two proxied requests."""


def simulation(pairs: int) -> bytes:
    stubs = [
        {
            "request": {
                "path": [{"matcher": "exact", "value": f"/p{i}"}],
                "method": [{"matcher": "exact", "value": "GET"}],
            },
            "response": {"status": 200, "body": f"body {i}"},
        }
        for i in range(pairs)
    ]
    return json.dumps({"data": {"pairs": stubs}, "meta": {"schemaVersion": "v5.3"}}).encode()


def call(port: int, method: str, target: str, body: bytes | None = None, timeout: float = 300) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, target, body=body)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@dataclass
class Round:
    put_seconds: float
    put_status: int
    latencies: list[float]
    """Seconds, of the proxied requests sent while the PUT was in flight."""


def one_round(server: Server, document: bytes) -> Round:
    assert call(server.admin, "PUT", "/api/v2/simulation", simulation(1)) == 200
    timed: list[tuple[float, float]] = []
    stop = threading.Event()

    def load() -> None:
        while not stop.is_set():
            sent = time.perf_counter()
            with contextlib.suppress(OSError):
                call(server.proxy, "GET", "http://bench.test/p0", timeout=30)
            timed.append((sent, time.perf_counter() - sent))
            time.sleep(INTERVAL)

    client = threading.Thread(target=load, name="proxied-client")
    client.start()
    try:
        time.sleep(0.5)
        began = time.perf_counter()
        status = call(server.admin, "PUT", "/api/v2/simulation", document)
        ended = time.perf_counter()
        time.sleep(0.5)
    finally:
        stop.set()
        client.join()
    return Round(ended - began, status, [took for sent, took in timed if began <= sent <= ended])


def report(rounds: list[Round], pairs: int, workers: int) -> list[str]:
    lines = [f"PUT of {pairs:,} pairs, {workers} worker(s), a new proxied connection every {INTERVAL * 1000:.0f} ms"]
    lines.append(f"{'round':>5} {'PUT s':>7} {'status':>6} {'requests':>8} {'worst ms':>9} {'p99 ms':>7} {'p50 ms':>7}")
    for n, r in enumerate(rounds, 1):
        ms = sorted(t * 1000 for t in r.latencies) or [0.0]
        p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
        lines.append(
            f"{n:>5} {r.put_seconds:>7.1f} {r.put_status:>6} {len(r.latencies):>8} {ms[-1]:>9.0f} {p99:>7.0f}"
            f" {statistics.median(ms):>7.1f}"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--pairs", type=int, default=50_000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    document = simulation(args.pairs)
    server = simproxy_server(args.workers, ["-max-admin-body-size", "1GB", "-max-pairs", str(args.pairs)], "")
    server.start()
    try:
        rounds = [one_round(server, document) for _ in range(args.rounds)]
    finally:
        server.stop()
    print("\n".join(report(rounds, args.pairs, args.workers)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
