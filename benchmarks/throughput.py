"""Throughput of the proxy port under wrk, one configuration against another, measured in turns.

Run from the repository root (needs ``wrk``: ``apt-get install wrk``)::

    python -m benchmarks.throughput                 # journal on (default size) against -journal-size=0
    python -m benchmarks.throughput --rounds 5 --seconds 4

Each round starts a fresh simproxy for each configuration on free loopback ports, loads one small
JSON stub (design.md's W1), warms up, and runs ``wrk -t1 -c32`` against it; configurations take
turns so that noise from the machine falls on both. The table shows the median requests/s of each;
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
from pathlib import Path

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
    time.sleep(1.0)  # past the moment Sanic may lose a SIGTERM (README, known issues)
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


def _wrk(proxy: int, seconds: int, script: str) -> float:
    out = subprocess.run(
        ["wrk", "-t1", "-c32", f"-d{seconds}s", "-s", script, f"http://127.0.0.1:{proxy}"],
        capture_output=True, text=True, timeout=seconds + 30, check=True,
    )  # fmt: skip
    match = re.search(r"Requests/sec:\s+([\d.]+)", out.stdout)
    if match is None:
        raise SystemExit(f"unexpected wrk output:\n{out.stdout}{out.stderr}")
    return float(match[1])


def run(rounds: int, seconds: int) -> dict[str, list[float]]:
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (apt-get install wrk)")
    results: dict[str, list[float]] = {name: [] for name in CONFIGS}
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT)
    try:
        for round_ in range(rounds):
            order = list(CONFIGS.items())
            for name, flags in order if round_ % 2 == 0 else reversed(order):  # neither always goes first
                process, _, proxy = _start(flags)
                try:
                    _wrk(proxy, 1, script.name)  # warm-up
                    results[name].append(_wrk(proxy, seconds, script.name))
                finally:
                    _stop(process)
    finally:
        os.unlink(script.name)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.throughput", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=4)
    args = parser.parse_args(argv)
    results = run(args.rounds, args.seconds)
    medians = {name: statistics.median(values) for name, values in results.items()}
    print(f"{'configuration':<16}{'median req/s':>14}   runs")
    for name, values in results.items():
        print(f"{name:<16}{medians[name]:>14,.0f}   {', '.join(f'{v:,.0f}' for v in values)}")
    # Paired by round: the machine's speed drifts over a run, and both runs of a round share it.
    ratios = [on / off for on, off in zip(results["journal on"], results["journal off"], strict=True)]
    cost = 1 - statistics.median(ratios)
    print(f"\nper-round cost: {', '.join(f'{1 - r:.0%}' for r in ratios)}")
    verdict = "MET" if cost <= 0.15 else "NOT MET"
    print(f"journal cost: {cost:.1%} of throughput (design.md target: at most 15%): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
