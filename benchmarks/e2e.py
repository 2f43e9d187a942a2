"""End-to-end throughput of the proxy port, workload by workload (design.md §5, issue 7).

Run from the repository root::

    python -m benchmarks.e2e                                  # every workload, 1 worker, in-process store
    python -m benchmarks.e2e --workers 2                      # 2 workers on a private redis-server
    python -m benchmarks.e2e --workloads W1,W2r --seconds 4
    python -m benchmarks.e2e --ceiling                        # also the trivial fixed-response server
    python -m benchmarks.e2e --compare "hoverfly -ap {admin} -pp {proxy}"   # side by side, any such proxy

Each workload starts a fresh server on free loopback ports, loads its simulation through the admin API
(``PUT /api/v2/simulation``, so any Hoverfly-compatible server can be measured), checks that one request
gets the expected answer, warms up for a second and drives it with ``wrk -t1 -c32`` (or, without wrk,
the bundled ``benchmarks.loadgen``). It prints requests/s, p50/p99 latency and each worker's peak
resident memory, then the design.md §5 targets against the compared server or, without one, against
the Hoverfly figures design.md records for this machine.

With ``--compare`` the two servers run side by side instead (``benchmarks/sidebyside.py``): at the
same time, on one shared core, one ``wrk -t1 -c16`` each on the other core, so that the ratio of
their rates is the ratio of their costs whatever the machine's speed does (``--sequential`` for the
old one-after-the-other runs).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path

from benchmarks import sidebyside
from benchmarks.servers import (
    ROOT,
    Server,
    ceiling_server,
    command_server,
    lua_script,
    prepare,
    request_text,
    simproxy_server,
)
from benchmarks.workloads import Workload, as_webserver, workloads

REFERENCE = {"W1": 24_500.0, "W2": 23_900.0, "W2r": 3_700.0, "W3": 19_400.0}
"""Hoverfly v1.12.10 on the 2-core development machine (design.md §5), requests/s."""
CEILING = {"W1": 216_000.0, "W2": 209_000.0, "W3": 203_000.0}


@dataclass(frozen=True)
class Result:
    workload: str
    server: str
    rps: float
    p50_ms: float
    p99_ms: float
    peak_rss_mb: tuple[float, ...]
    errors: int
    rss_mb: tuple[float, ...] = ()
    """Resident memory at the end of the run (after the import's transient peak)."""


def _wrk(port: int, seconds: float, workload: Workload, connections: int) -> tuple[float, float, float, int]:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(lua_script(workload))
    try:
        out = subprocess.run(
            ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency", "-s", script.name,
             f"http://127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=seconds + 60, check=True,
        ).stdout  # fmt: skip
    finally:
        os.unlink(script.name)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])  # type: ignore[index]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, _wrk_ms(out, "50%"), _wrk_ms(out, "99%"), int(errors[1]) if errors else 0


def _wrk_ms(out: str, quantile: str) -> float:
    match = re.search(rf"^\s+{quantile}\s+([\d.]+)(us|ms|s)\s*$", out, re.MULTILINE)
    if match is None:
        return 0.0
    return float(match[1]) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[match[2]]


def _loadgen(port: int, seconds: float, workload: Workload, connections: int) -> tuple[float, float, float, int]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as spec:
        json.dump([request_text(r) for r in workload.requests], spec)
    try:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.loadgen", str(port), str(seconds), str(connections), spec.name],
            cwd=ROOT, capture_output=True, text=True, timeout=seconds + 60, check=True,
        ).stdout  # fmt: skip
    finally:
        os.unlink(spec.name)
    doc = json.loads(out)
    return doc["requests"] / doc["seconds"], doc["p50_ms"], doc["p99_ms"], doc["errors"]


def measure(server: Server, workload: Workload, seconds: float, connections: int, generator: str = "auto") -> Result:
    prepare(server, workload)
    try:
        drive = _wrk if generator == "wrk" or (generator == "auto" and shutil.which("wrk")) else _loadgen
        drive(server.proxy, 1.0, workload, connections)  # warm-up
        rps, p50, p99, errors = drive(server.proxy, seconds, workload, connections)
        peak, now = tuple(server.rss_mb("VmHWM")), tuple(server.rss_mb("VmRSS"))
        return Result(workload.name, server.name, rps, p50, p99, peak, errors, now)
    finally:
        server.stop()


# ---------------------------------------------------------------------------------------------
# report


def report(results: list[Result], compared: str | None) -> list[str]:
    lines = [f"{'workload':<10}{'server':<26}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}  RSS per worker, MB (peak)"]
    for r in results:
        rss = ", ".join(f"{m:.0f} ({p:.0f})" for m, p in zip(r.rss_mb, r.peak_rss_mb, strict=False)) or "-"
        errors = f"  ({r.errors} non-2xx)" if r.errors else ""
        lines.append(f"{r.workload:<10}{r.server:<26}{r.rps:>10,.0f}{r.p50_ms:>9.2f}{r.p99_ms:>9.2f}  {rss}{errors}")
    ours = {r.workload: r for r in results if r.server.startswith("simproxy")}
    other = {r.workload: r for r in results if compared and r.server == compared}
    base = {k: v.rps for k, v in other.items()} if other else REFERENCE
    label = compared if other else "Hoverfly (design.md reference)"
    lines.append("")
    lines.append(f"targets (design.md 5), against {label}:")
    for name, factor in (("W1", 2.0), ("W2", 2.0), ("W2r", 10.0)):
        if name in ours and name in base:
            ratio = ours[name].rps / base[name]
            verdict = "MET" if ratio >= factor else "NOT MET"
            lines.append(f"  {name}: {ratio:.2f}x (target >= {factor:g}x): {verdict}")
    if "W1" in ours and "W6" in ours:
        cost = 1 - ours["W1"].rps / ours["W6"].rps
        lines.append(f"  journal on costs {cost:.1%} of W1 (target <= 15%; benchmarks.throughput pairs rounds)")
    if "M10k" in ours and ours["M10k"].peak_rss_mb:
        peak, now = max(ours["M10k"].peak_rss_mb), max(ours["M10k"].rss_mb or (0.0,))
        verdict = "MET" if peak < 200 else "NOT MET"
        lines.append(f"  10,000 pairs: {now:.0f} MB per worker, {peak:.0f} MB at the peak (target < 200 MB): {verdict}")
    ceiling = {r.workload: r.rps for r in results if r.server == "ceiling"}
    for name, rps in ceiling.items():
        if name in ours:
            lines.append(f"  {name}: simproxy reaches {ours[name].rps / rps:.1%} of the ceiling server")
    if "W1" in ceiling and not other:
        # design.md's Hoverfly figures come from a run whose ceiling server made CEILING["W1"]: scale
        # them by this machine's ceiling now, so a slower or busier machine is not taken for a win or loss
        scale = ceiling["W1"] / CEILING["W1"]
        lines.append(f"normalised by the ceiling server (this run {ceiling['W1']:,.0f} vs {CEILING['W1']:,.0f}):")
        for name, factor in (("W1", 2.0), ("W2", 2.0), ("W2r", 10.0)):
            if name in ours:
                ratio = ours[name].rps / (REFERENCE[name] * scale)
                verdict = "MET" if ratio >= factor else "NOT MET"
                lines.append(f"  {name}: {ratio:.2f}x Hoverfly (target >= {factor:g}x): {verdict}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.e2e", description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="W1,W2,W2r,W3,W4,W5,W6,W7,M10k")
    parser.add_argument("--workers", type=int, default=1, help="simproxy workers (more than 1: a shared Redis)")
    parser.add_argument("--redis-url", default="", help="a Redis to share instead of a private redis-server")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--connections", type=int, help="per load generator (default 32; 16 side by side)")
    parser.add_argument("--rounds", type=int, help="repeat and keep each figure's median (default 1; 3 side by side)")
    parser.add_argument("--flags", default="", help='more simproxy flags, as shell words: --flags="-journal-size 0"')
    parser.add_argument(
        "--webserver", action="store_true", help="simproxy with -webserver, requests sent to it as to a web server"
    )
    parser.add_argument("--compare", metavar="CMD", help="another server, run side by side: {admin} and {proxy}")
    parser.add_argument("--compare-name", default="", help="what to call it (default: the command's name)")
    parser.add_argument("--sequential", action="store_true", help="--compare one server after the other")
    parser.add_argument("--ceiling", action="store_true", help="also the trivial fixed-response server")
    parser.add_argument("--json", metavar="FILE", help="also write every result as JSON")
    parser.add_argument("--loadgen", choices=("auto", "wrk", "python"), default="auto", help="auto: wrk if installed")
    args = parser.parse_args(argv)
    catalogue = workloads()
    chosen = [catalogue[name] for name in args.workloads.split(",")]
    if args.webserver:
        chosen = [as_webserver(w) for w in chosen]
    if args.flags:
        chosen = [replace(w, more_flags=tuple(shlex.split(args.flags))) for w in chosen]
    if args.compare and not args.sequential:
        return _side_by_side(args, chosen)
    return _one_after_the_other(args, chosen)


def _side_by_side(args: argparse.Namespace, chosen: list[Workload]) -> int:
    cores = sidebyside.Cores.of_this_machine()
    pairings = []
    for workload in chosen:
        if workload.flags:
            print(f"{workload.name}: skipped (its flags are simproxy's own)", flush=True)
            continue
        pairing = sidebyside.measure_pair(
            simproxy_server(args.workers, workload.simproxy_flags(), args.redis_url),
            command_server(args.compare, args.compare_name),
            workload, rounds=args.rounds or 3, seconds=max(1, round(args.seconds)),
            connections=args.connections or 16, cores=cores, generator=args.loadgen,
        )  # fmt: skip
        pairings.append(pairing)
        print(f"{workload.name:<6}" + ", ".join(f"{r:.2f}" for r in pairing.rate_ratios()), flush=True)
    print()
    for line in sidebyside.report(pairings):
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(p) for p in pairings], indent=2))
    return 0


def _one_after_the_other(args: argparse.Namespace, chosen: list[Workload]) -> int:
    results: list[Result] = []
    compared = None
    rounds, connections = args.rounds or 1, args.connections or 32
    for workload in chosen:
        servers: list[Callable[[], Server]] = [
            partial(simproxy_server, args.workers, workload.simproxy_flags(), args.redis_url)
        ]
        if args.compare and not workload.flags:
            servers.append(partial(command_server, args.compare, args.compare_name))
        if args.ceiling and workload.name in CEILING:
            servers.append(ceiling_server)
        for make in servers:
            runs = [measure(make(), workload, args.seconds, connections, args.loadgen) for _ in range(rounds)]
            best = sorted(runs, key=lambda r: r.rps)[len(runs) // 2]
            result = Result(
                best.workload, best.server, statistics.median(r.rps for r in runs), best.p50_ms, best.p99_ms,
                best.peak_rss_mb, sum(r.errors for r in runs), best.rss_mb,
            )  # fmt: skip
            if args.compare and make is not servers[0] and result.server != "ceiling":
                compared = result.server
            results.append(result)
            print(f"{result.workload:<6}{result.server:<26}{result.rps:>10,.0f} req/s", flush=True)
    print()
    for line in report(results, compared):
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps([r.__dict__ for r in results], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
