"""Two servers measured at the same time on one shared core: the ratio of their rates is the ratio of their costs.

``python -m benchmarks.e2e --compare CMD`` lands here. On this VM the speed drifts by up to 40%
between two runs a minute apart, so a server measured after the other proves nothing about a 20%
change. Here both servers run for the same seconds on the same core (``sched_setaffinity`` before
``exec``, so every thread and child process inherits it), each driven by its own ``wrk -t1`` pinned
to the other core: the kernel splits the shared core between the two servers as their demand asks,
each answers as fast as its cost per request allows, and whatever the machine does during a round
falls on both. Each round gives two rates and two CPU times per request (user + system time of
every process of the server, which leaves out the time a hypervisor gives to other guests); the
report keeps every round and the median of each round's own ratio.

Round 0 warms both up (caches filled, buffers grown, the journal at its size) and is not counted.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchmarks.procs import cpu_seconds, descendants
from benchmarks.servers import ROOT, Server, lua_script, prepare, request_text
from benchmarks.workloads import Workload


@dataclass(frozen=True)
class Cores:
    """Where the servers and where the load generators run."""

    servers: int
    load: int

    @classmethod
    def of_this_machine(cls) -> Cores:
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            raise SystemExit("a side-by-side run needs two cores: one for the servers, one for wrk")
        return cls(servers=cpus[-1], load=cpus[0])


@dataclass
class Side:
    """One server's rounds."""

    server: str
    rates: list[float] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)
    errors: int = 0


@dataclass(frozen=True)
class Pairing:
    """One workload measured on both servers, round by round."""

    workload: str
    ours: Side
    theirs: Side

    def rate_ratios(self) -> list[float]:
        """Our rate over theirs per round; ``inf`` where they completed no request in the round
        (Hoverfly on an 800 KB templated body: every request outlasts the load generator's timeout)."""
        return [a / b if b else math.inf for a, b in zip(self.ours.rates, self.theirs.rates, strict=True)]

    def cost_ratios(self) -> list[float]:
        """How many of our requests one of theirs costs, in CPU time: above 1, ours are cheaper."""
        return [b / a for a, b in zip(self.ours.cpu_us, self.theirs.cpu_us, strict=True)]


@dataclass(frozen=True)
class Load:
    """A load generator process per server and round: ``wrk -t1``, or the bundled ``benchmarks.loadgen``."""

    script: str
    """wrk's Lua script, or the loadgen's JSON list of request texts."""
    seconds: int
    connections: int
    cpu: int

    @classmethod
    def written(cls, workload: Workload, generator: str, seconds: int, connections: int, cpu: int) -> Load:
        wrk = generator == "wrk" or (generator == "auto" and shutil.which("wrk") is not None)
        with tempfile.NamedTemporaryFile("w", suffix=".lua" if wrk else ".json", delete=False) as script:
            script.write(lua_script(workload) if wrk else json.dumps([request_text(r) for r in workload.requests]))
        return cls(script.name, seconds, connections, cpu)

    @property
    def wrk(self) -> bool:
        return self.script.endswith(".lua")

    def start(self, port: int) -> subprocess.Popen[str]:
        if self.wrk:
            argv = ["wrk", "-t1", f"-c{self.connections}", f"-d{self.seconds}s", "-s", self.script]
            argv.append(f"http://127.0.0.1:{port}")
        else:
            argv = [sys.executable, "-m", "benchmarks.loadgen", str(port), str(self.seconds), str(self.connections)]
            argv.append(self.script)
        cpu = self.cpu
        return subprocess.Popen(
            argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}),
        )  # fmt: skip

    def answered(self, run: subprocess.Popen[str]) -> tuple[float, int, int]:
        """Requests/s, requests answered and non-2xx answers of a finished run."""
        out, _ = run.communicate(timeout=self.seconds + 60)
        if run.returncode != 0:
            raise SystemExit(f"the load generator failed:\n{out}")
        if not self.wrk:
            doc = json.loads(out)
            return doc["requests"] / doc["seconds"], doc["requests"], doc["errors"]
        rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
        count = re.search(r"(\d+) requests in", out)
        if rate is None or count is None:
            raise SystemExit(f"unexpected wrk output:\n{out}")
        errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        return float(rate[1]), int(count[1]), int(errors[1]) if errors else 0


def _pids(server: Server) -> list[int]:
    assert server.process is not None
    return [server.process.pid, *descendants(server.process.pid)]


def measure_pair(
    ours: Server,
    theirs: Server,
    workload: Workload,
    *,
    rounds: int,
    seconds: int,
    connections: int,
    cores: Cores,
    generator: str = "auto",
) -> Pairing:
    """Start both servers on the shared core, load ``workload`` into each, and run the rounds together."""
    sides = (Side(ours.name), Side(theirs.name))
    servers = (ours, theirs)
    load = Load.written(workload, generator, seconds, connections, cores.load)
    try:
        for server in servers:
            server.cpu = cores.servers
            prepare(server, workload)
        for round_ in range(rounds + 1):
            pids = [_pids(s) for s in servers]
            before = [cpu_seconds(p) for p in pids]
            runs = [load.start(s.proxy) for s in servers]
            answered = [load.answered(run) for run in runs]
            if not round_:
                continue
            for side, ids, start, (rate, count, errors) in zip(sides, pids, before, answered, strict=True):
                side.rates.append(rate)
                side.cpu_us.append((cpu_seconds(ids) - start) / max(count, 1) * 1e6)
                side.errors += errors
    finally:
        for server in servers:
            server.stop()
        os.unlink(load.script)
    return Pairing(workload.name, *sides)


def report(pairings: Sequence[Pairing]) -> list[str]:
    """One block per workload: both servers' rounds, then the medians of the per-round ratios."""
    if not pairings:
        return []
    ours, theirs = pairings[0].ours.server, pairings[0].theirs.server
    lines = [f"side by side on one shared core: {ours} / {theirs}", ""]
    head = f"{'workload':<8}{'ours req/s':>12}{'theirs req/s':>14}{'rate ratio':>12}{'ours us/req':>13}"
    lines.append(head + f"{'theirs us/req':>15}{'cost ratio':>12}   rate ratio of each round")
    for p in pairings:
        rates, costs = p.rate_ratios(), p.cost_ratios()
        row = (
            f"{p.workload:<8}{statistics.median(p.ours.rates):>12,.0f}{statistics.median(p.theirs.rates):>14,.0f}"
            f"{statistics.median(rates):>11.2f}x{statistics.median(p.ours.cpu_us):>13.1f}"
            f"{statistics.median(p.theirs.cpu_us):>15.1f}{statistics.median(costs):>11.2f}x   "
        )
        lines.append(row + ", ".join(f"{r:.2f}" for r in rates))
        if p.ours.errors or p.theirs.errors:
            lines.append(f"{'':<8}non-2xx answers: ours {p.ours.errors:,}, theirs {p.theirs.errors:,}")
    lines.append("")
    lines.append("rate ratio: our requests/s over theirs in the same round; cost ratio: their CPU time per request")
    lines.append("over ours. Both are medians of the rounds' own ratios; above 1, simproxy is ahead.")
    return lines
