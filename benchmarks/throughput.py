"""Throughput of the proxy port under wrk, one configuration against another, measured in turns.

Run from the repository root (needs ``wrk``: ``apt-get install wrk``)::

    python -m benchmarks.throughput                 # journal on (default size) against -journal-size=0
    python -m benchmarks.throughput --rounds 40 --seconds 1

One simproxy per configuration runs on free loopback ports for the whole run, with one small JSON
stub (design.md's W1) loaded and warmed up; each round runs ``wrk -t1 -c32`` against each in turn,
the order alternating, so that noise from the machine falls on both. The table shows the median requests/s of each;
the cost is the median over rounds of each round's own cost, which the machine's drift over a run
does not bias (design.md: the journal may cost at most 15%).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.procs import cpu_seconds, listeners
from store.redisserver import free_port

ROOT = Path(__file__).resolve().parents[1]
STUB = {
    "data": {
        "pairs": [
            {
                "request": {
                    "path": [{"matcher": "exact", "value": "/hello"}],
                    "method": [{"matcher": "exact", "value": "GET"}],
                },
                "response": {
                    "status": 200,
                    "body": '{"hello": "world"}',
                    "headers": {"Content-Type": ["application/json"]},
                },
            }
        ]
    },
    "meta": {"schemaVersion": "v5.3"},
}
CONFIGS = {"journal off": ["-journal-size", "0"], "journal on": []}
WRK_SCRIPT = 'wrk.path = "http://api.example.com/hello"\nwrk.headers["Host"] = "api.example.com"\n'


def _start(flags: Sequence[str]) -> tuple[subprocess.Popen[bytes], int, int]:
    admin, proxy = free_port(), free_port()
    cmd = [sys.executable, "-m", "admin", "-ap", str(admin), "-pp", str(proxy), *flags]
    process = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{admin}/api/health", timeout=1).read()
            break
        except OSError:
            time.sleep(0.1)
    request = urllib.request.Request(
        f"http://127.0.0.1:{admin}/api/v2/simulation", data=json.dumps(STUB).encode(), method="PUT"
    )
    urllib.request.urlopen(request, timeout=10).read()
    return process, admin, proxy


def _stop(process: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            return
        process.send_signal(sig)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            continue


def _wrk(proxy: int, seconds: int, script: str) -> tuple[float, int]:
    """Requests/s and the number of requests answered."""
    out = subprocess.run(
        ["wrk", "-t1", "-c32", f"-d{seconds}s", "-s", script, f"http://127.0.0.1:{proxy}"],
        capture_output=True, text=True, timeout=seconds + 30, check=True,
    )  # fmt: skip
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out.stdout)
    count = re.search(r"(\d+) requests in", out.stdout)
    if rate is None or count is None:
        raise SystemExit(f"unexpected wrk output:\n{out.stdout}{out.stderr}")
    return float(rate[1]), int(count[1])


@dataclass
class Runs:
    """One configuration's rounds: requests/s, and the worker's CPU time per request."""

    rates: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)


def run(rounds: int, seconds: int) -> dict[str, Runs]:
    """Both servers run side by side for the whole run; each round measures them back to back, in
    alternating order, so that both measurements of a round see the machine in the same state."""
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    results = {name: Runs() for name in CONFIGS}
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT)
    servers: dict[str, tuple[subprocess.Popen[bytes], int, list[int]]] = {}
    try:
        for name, flags in CONFIGS.items():
            process, _, proxy = _start(flags)
            servers[name] = (process, proxy, listeners(process.pid, proxy))
        for _, proxy, _ in servers.values():
            _wrk(proxy, 2, script.name)  # warm-up: the journal at its size, every buffer grown
        order = list(servers.items())
        for round_ in range(rounds):
            for name, (_, proxy, workers) in order if round_ % 2 == 0 else reversed(order):  # neither always first
                before = cpu_seconds(workers)
                rate, count = _wrk(proxy, seconds, script.name)
                results[name].rates.append(rate)
                results[name].cpu_us.append((cpu_seconds(workers) - before) / count * 1e6)
    finally:
        for process, _, _ in servers.values():
            _stop(process)
        os.unlink(script.name)
    return results


def _cost(on: list[float], off: list[float]) -> tuple[float, list[float]]:
    """The journal's cost of throughput: the median of each round's own cost, and those costs."""
    costs = [1 - a / b for a, b in zip(on, off, strict=True)]
    return statistics.median(costs), costs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.throughput", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=2)
    args = parser.parse_args(argv)
    results = run(args.rounds, args.seconds)
    print(f"{'configuration':<16}{'median req/s':>14}{'CPU us/request':>16}   req/s of each round")
    for name, runs in results.items():
        rates = ", ".join(f"{v:,.0f}" for v in runs.rates)
        print(f"{name:<16}{statistics.median(runs.rates):>14,.0f}{statistics.median(runs.cpu_us):>16.2f}   {rates}")
    on, off = results["journal on"], results["journal off"]
    # Paired by round: the machine's speed drifts over a run, and both runs of a round share it.
    by_rate, rate_costs = _cost(on.rates, off.rates)
    # A worker that is never idle serves 1/(CPU per request) a second; CPU time leaves out the time
    # a hypervisor gives to other guests, which makes requests/s jump on a shared VM.
    by_cpu, cpu_costs = _cost([1 / c for c in on.cpu_us], [1 / c for c in off.cpu_us])
    print(f"\nper-round cost, req/s: {', '.join(f'{c:.0%}' for c in rate_costs)}")
    print(f"per-round cost, CPU:   {', '.join(f'{c:.0%}' for c in cpu_costs)}")
    for label, cost in (("requests/s", by_rate), ("CPU time per request", by_cpu)):
        verdict = "MET" if cost <= 0.15 else "NOT MET"
        print(f"journal cost by {label}: {cost:.1%} (design.md target: at most 15%): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
