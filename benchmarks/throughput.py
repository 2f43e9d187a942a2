"""Throughput of the proxy port under wrk, the journal on against ``-journal-size=0``, both at once.

Run from the repository root (needs ``wrk``: ``apt-get install wrk``)::

    python -m benchmarks.throughput                 # journal on (default size) against -journal-size=0
    python -m benchmarks.throughput --rounds 20 --seconds 3
    python -m benchmarks.throughput --same          # A/A: both servers journal off (the method's noise)

One simproxy per configuration runs on free loopback ports for the whole run, with one small JSON
stub (design.md's W1) loaded and warmed up. Each round runs two ``wrk -t1 -c32`` at the same time,
one per server. Both servers' workers share the last CPU (wrk runs on the first): the kernel gives
each half of that core, so each server's rate is what its cost per request allows, and whatever
the machine does during the round falls on both alike. The cost is the median over rounds of each
round's own cost (design.md: the journal may cost at most 15%).
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
from simproxy.admin.command import COMMAND
from simproxy.admin.process.redisserver import free_port

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
    cmd = [*COMMAND, "-ap", str(admin), "-pp", str(proxy), *flags]
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


def _wrk(proxy: int, seconds: int, script: str, cpu: int | None) -> subprocess.Popen[str]:
    """A wrk run against ``proxy`` (on ``cpu`` only, when given), started and not waited for."""
    return subprocess.Popen(
        ["wrk", "-t1", "-c32", f"-d{seconds}s", "-s", script, f"http://127.0.0.1:{proxy}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=None if cpu is None else lambda: os.sched_setaffinity(0, {cpu}),
    )  # fmt: skip


def _answered(run: subprocess.Popen[str], seconds: int) -> tuple[float, int]:
    """Requests/s and the number of requests answered, once wrk is done."""
    out, _ = run.communicate(timeout=seconds + 30)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    count = re.search(r"(\d+) requests in", out)
    if run.returncode != 0 or rate is None or count is None:
        raise SystemExit(f"unexpected wrk output:\n{out}")
    return float(rate[1]), int(count[1])


@dataclass
class Runs:
    """One configuration's rounds: requests/s, and the worker's CPU time per request."""

    rates: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)


def run(rounds: int, seconds: int, configs: dict[str, list[str]]) -> dict[str, Runs]:
    """Both servers run for the whole run and are measured together, round after round."""
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    results = {name: Runs() for name in configs}
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT)
    cpus = sorted(os.sched_getaffinity(0))
    wrk_cpu = cpus[0] if len(cpus) > 1 else None
    servers: dict[str, tuple[subprocess.Popen[bytes], int, list[int]]] = {}
    try:
        for name, flags in configs.items():
            process, _, proxy = _start(flags)
            workers = listeners(process.pid, proxy)
            servers[name] = (process, proxy, workers)
            for worker in workers if wrk_cpu is not None else ():
                os.sched_setaffinity(worker, {cpus[-1]})
        for round_ in range(rounds + 1):  # round 0 warms up: the journal at its size, every buffer grown
            before = {name: cpu_seconds(workers) for name, (_, _, workers) in servers.items()}
            runs = {name: _wrk(proxy, seconds, script.name, wrk_cpu) for name, (_, proxy, _) in servers.items()}
            answered = {name: _answered(wrk, seconds) for name, wrk in runs.items()}
            for name, (rate, count) in answered.items() if round_ else ():
                results[name].rates.append(rate)
                results[name].cpu_us.append((cpu_seconds(servers[name][2]) - before[name]) / count * 1e6)
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
    parser.add_argument("--same", action="store_true", help="A/A: both servers with the journal off")
    args = parser.parse_args(argv)
    configs = dict(CONFIGS)
    if args.same:
        configs["journal on"] = configs["journal off"]
    results = run(args.rounds, args.seconds, configs)
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
