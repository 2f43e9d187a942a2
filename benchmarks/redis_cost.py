"""What proxied requests cost the shared Redis: commands, bytes and Redis CPU per 1,000 requests.

    python -m benchmarks.redis_cost                 # every scenario, 4 s each
    python -m benchmarks.redis_cost --seconds 2 --scenarios simulate,capture --json out.json

For each scenario a redis-server on a loopback port and one simproxy worker on it (``-redis-url``)
are started; after a second of warm-up the server's statistics are reset (``CONFIG RESETSTAT``),
``wrk`` (or ``benchmarks.loadgen``) drives the proxy for the given seconds, and Redis's own counters
are read: calls per command (``INFO commandstats``), bytes in and out (``INFO stats``) and the CPU
time Redis spent (``INFO cpu``). The same seconds without traffic (heartbeats, housekeeping), taken before
the warm-up, is subtracted; the counting goes on 1.5 s after the load stops, for what the worker
writes about the last requests. From Redis's CPU per request follows how many requests a second one
Redis carries at 80% of a core, and so how many workers running at each scenario's own rate it
serves. The capacity model after the table puts it per request kind: Redis commands, bytes and CPU
per request, and the requests and workers one Redis carries; ``--fleets N`` adds what N Redis
servers (or N primaries of a Redis Cluster, one fleet each: a fleet's keys share one hash slot)
carry for N fleets.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import redis

from benchmarks.e2e import _loadgen, _wrk
from benchmarks.servers import Server, ceiling_server, prepare, simproxy_server
from benchmarks.workloads import Request, Workload
from benchmarks.workloads import workloads as e2e_workloads
from simproxy.admin.process.redisserver import RedisServer, free_port

SETTLE = 1.5
"""Seconds counted after the load stops: the worker's buffered writes about it come within them."""
REDIS_SHARE = 0.8
"""The share of one core a Redis may use before it is the fleet's limit."""


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    workload: Callable[[str], Workload]
    """The workload, given the real service's ``host:port`` (for the modes that forward)."""
    flags: tuple[str, ...] = ()


@dataclass
class Cost:
    scenario: str
    journal: bool
    requests: int
    rps: float
    commands: dict[str, int] = field(default_factory=dict)
    bytes_in: int = 0
    bytes_out: int = 0
    cpu_seconds: float = 0.0
    usec: dict[str, int] = field(default_factory=dict)
    """Microseconds Redis spent per command (``INFO commandstats``; a script's include its calls)."""

    def per_thousand(self, value: float) -> float:
        return 1000 * value / max(self.requests, 1)


def _forwarded(host: str) -> Workload:
    base = e2e_workloads()["W1"]
    return replace(base, pairs=[], requests=[Request("GET", "/hello", host=host)], expect=b"", status=200)


def scenarios() -> dict[str, Scenario]:
    w = e2e_workloads()
    return {
        s.name: s
        for s in (
            Scenario("simulate", "simulate, no state (W1)", lambda _: w["W1"]),
            Scenario("stateful", "simulate, each request reads and moves the state (W5)", lambda _: w["W5"]),
            Scenario("capture", "capture, every request forwarded and stored", _forwarded, ("-capture",)),
            Scenario("spy", "spy, every request a miss forwarded to the real service", _forwarded, ("-spy",)),
        )
    }


def _stats(client: redis.Redis) -> tuple[dict[str, int], int, int, float, dict[str, int]]:
    raw = {name.removeprefix("cmdstat_"): stat for name, stat in client.info("commandstats").items()}
    commands = {name: int(stat["calls"]) for name, stat in raw.items() if isinstance(stat, dict)}
    usec = {name: int(stat["usec"]) for name, stat in raw.items() if isinstance(stat, dict)}
    stats = client.info("stats")
    cpu = client.info("cpu")
    seconds = float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])
    return commands, int(stats["total_net_input_bytes"]), int(stats["total_net_output_bytes"]), seconds, usec


def _measure(client: redis.Redis, drive: Callable[[], int]) -> Cost:
    """Redis's counters over ``drive`` (which returns how many requests it made)."""
    client.config_resetstat()
    before = _stats(client)[3]
    count = drive()
    time.sleep(SETTLE)  # what the worker still writes about those requests (metrics, journal)
    commands, bytes_in, bytes_out, cpu, usec = _stats(client)
    for own in ("config", "info"):  # this script's questions
        commands.pop(own, None)
        usec.pop(own, None)
    return Cost("", True, count, 0.0, commands, bytes_in, bytes_out, cpu - before, usec)


def _scenario_cost(
    scenario: Scenario, journal: bool, store: str, real: Server, seconds: float, connections: int, generator: str
) -> tuple[Cost, Cost]:
    """The scenario's cost with the journal on or off, and the idle cost of the same seconds."""
    workload = scenario.workload(f"127.0.0.1:{real.proxy}")
    flags = () if journal else ("-journal-size=0",)
    server = simproxy_server(1, (*flags, *scenario.flags), store)
    prepare(server, workload if workload.pairs else replace(workload, pairs=[_never()]))
    client = redis.Redis.from_url(store)
    load = _wrk if generator == "wrk" else _loadgen
    try:
        idle = _measure(client, lambda: _pause(seconds))  # before any traffic: what a worker costs at rest
        load(server.proxy, 1.0, workload, connections)  # warm-up
        time.sleep(SETTLE)
        rates: list[float] = []

        def drive() -> int:
            rates.append(load(server.proxy, seconds, workload, connections)[0])
            return round(rates[0] * seconds)

        cost = _measure(client, drive)
        return replace(cost, scenario=scenario.name, journal=journal, rps=rates[0]), idle
    finally:
        server.stop()
        client.flushall()
        client.close()


def _pause(seconds: float) -> int:
    time.sleep(seconds)
    return 0


def run(chosen: Sequence[Scenario], seconds: float, connections: int, generator: str) -> tuple[list[Cost], Cost]:
    """Every scenario with the journal on and off, less the idle cost measured with the first one."""
    costs: list[Cost] = []
    idles: list[Cost] = []
    real = ceiling_server()
    real.start()
    try:
        with RedisServer(port=free_port()) as store:
            for scenario in chosen:
                for journal in (True, False):
                    cost, idle = _scenario_cost(scenario, journal, store.url, real, seconds, connections, generator)
                    costs.append(cost)
                    idles.append(idle)
    finally:
        real.stop()
    idle = min(idles, key=lambda c: c.cpu_seconds)
    return [_without(cost, idle) for cost in costs], idle


def _never() -> dict[str, Any]:
    """A pair no request of the forwarding scenarios matches (spy must miss; capture ignores it)."""
    return {"request": {"path": [{"matcher": "exact", "value": "/never"}]}, "response": {"status": 200, "body": ""}}


def _without(cost: Cost, idle: Cost) -> Cost:
    """``cost`` less what the same seconds cost without traffic."""
    commands = {name: calls - idle.commands.get(name, 0) for name, calls in cost.commands.items()}
    usec = {name: spent - idle.usec.get(name, 0) for name, spent in cost.usec.items()}
    return replace(
        cost,
        commands={name: calls for name, calls in commands.items() if calls > 0},
        usec={name: spent for name, spent in usec.items() if spent > 0},
        bytes_in=max(cost.bytes_in - idle.bytes_in, 0),
        bytes_out=max(cost.bytes_out - idle.bytes_out, 0),
        cpu_seconds=max(cost.cpu_seconds - idle.cpu_seconds, 0.0),
    )


def report(costs: list[Cost], idle: Cost, seconds: float) -> list[str]:
    base = next((c for c in costs if c.scenario == "simulate" and c.journal), None)
    rows = [
        "| scenario | journal | req/s | Redis commands / 1,000 req | KB in / out per 1,000 req"
        " | Redis CPU ms / 1,000 req | req/s at 80% of a core | workers at the simulate rate |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cost in costs:
        calls = sum(cost.commands.values())
        ranked = sorted(cost.commands.items(), key=lambda item: -item[1])[:4]
        top = ", ".join(f"{name} {cost.per_thousand(n):.0f}" for name, n in ranked)
        cpu_ms = cost.per_thousand(cost.cpu_seconds) * 1000
        capacity = REDIS_SHARE * 1000 / cpu_ms * 1000 if cpu_ms else float("inf")
        workers = capacity / base.rps if base and base.rps else float("nan")
        kb_in, kb_out = cost.per_thousand(cost.bytes_in) / 1024, cost.per_thousand(cost.bytes_out) / 1024
        rows.append(
            f"| {cost.scenario} | {'on' if cost.journal else 'off'} | {cost.rps:,.0f}"
            f" | {cost.per_thousand(calls):.0f} ({top}) | {kb_in:.1f} / {kb_out:.1f}"
            f" | {cpu_ms:.1f} | {capacity:,.0f} | {workers:,.0f} |"
        )
    per_second = sum(idle.commands.values()) / seconds
    rows += ["", f"Idle (subtracted): {per_second:.0f} commands/s, {idle.cpu_seconds / seconds * 1000:.1f} ms CPU/s."]
    return rows


def capacity(costs: list[Cost], fleets: int) -> list[str]:
    """The capacity model: per request kind, what one request costs Redis, and what one Redis (and
    ``fleets`` Redis servers or Cluster primaries, a fleet on each) carries at ``REDIS_SHARE`` of a
    core, in requests a second and in workers each running at the kind's measured rate."""
    rows = [
        "",
        f"Capacity model (one Redis at {REDIS_SHARE:.0%} of a core; workers at each kind's measured rate):",
        "",
        "| request kind | journal | Redis commands / req | bytes in / out per req | Redis CPU us / req"
        f" | top CPU (us / req) | req/s one Redis | workers one Redis | req/s, {fleets} fleets |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for cost in costs:
        per = max(cost.requests, 1)
        cpu_us = cost.cpu_seconds * 1e6 / per
        carried = REDIS_SHARE * 1e6 / cpu_us if cpu_us else float("inf")
        workers = carried / cost.rps if cost.rps else float("nan")
        ranked = sorted(cost.usec.items(), key=lambda item: -item[1])[:3]
        top = ", ".join(f"{name} {spent / per:.2f}" for name, spent in ranked)
        rows.append(
            f"| {cost.scenario} | {'on' if cost.journal else 'off'} | {sum(cost.commands.values()) / per:.3f}"
            f" | {cost.bytes_in / per:.0f} / {cost.bytes_out / per:.0f} | {cpu_us:.2f} | {top}"
            f" | {carried:,.0f} | {workers:,.1f} | {carried * fleets:,.0f} |"
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--scenarios", default=",".join(scenarios()))
    parser.add_argument("--loadgen", choices=("wrk", "python"), default="wrk")
    parser.add_argument("--json", default="")
    parser.add_argument("--fleets", type=int, default=3, help="Redis servers (or Cluster primaries), a fleet each")
    args = parser.parse_args(argv)
    known = scenarios()
    chosen = [known[name] for name in args.scenarios.split(",")]
    costs, idle = run(chosen, args.seconds, args.connections, args.loadgen)
    print("\n".join(report(costs, idle, args.seconds) + capacity(costs, args.fleets)))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"costs": [asdict(c) for c in costs], "idle": asdict(idle)}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
