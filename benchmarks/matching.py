"""Matching benchmark: cost per request of ``engine.matching.match`` as the simulation grows.

Run from the repository root::

    python -m benchmarks.matching            # full run (~0.2 s of timing per cell)
    python -m benchmarks.matching --quick    # smoke run (a few seconds)
    python -m benchmarks.matching --json results.json

It generates simulations of 10, 1,000 and 10,000 pairs deterministically (seeded ``random.Random``,
one generator per pair index, so pair ``i`` is the same in every size), loads them the way the
runtime does (``orjson.loads``, ``decode_simulation``, ``compile_simulation``), builds requests the way the proxy
does (canonical header names, no ``Host``, ``request_path``, ``RequestDetails.build``), checks that
every request hits the pair it was made for (or misses, for the miss case), and only then times
``match`` on them. design.md section 5 sets the target this checks: "cost per request for an
exact-path hit in a 10,000-pair simulation within 2x of the cost in a 10-pair simulation", and
"a 10,000-pair simulation in under 200 MB per worker".
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import random
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import orjson

from simproxy.engine.matching import scoring
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.matching.scoring import CompiledSimulation, closest_miss, compile_simulation, match
from simproxy.engine.simulation.codec import decode_simulation
from simproxy.engine.simulation.model import Simulation
from simproxy.engine.wire.request import RequestDetails, canonical_header, request_path

SIZES = (10, 1_000, 10_000)
SEED = 20_240_601
REPEATS = 5
REQUEST_POOL = min(SIZES)
FULL_BUDGET_S = 0.2
QUICK_BUDGET_S = 0.004

EXACT_HIT = "exact hit"
GLOB_HIT = "glob hit"
REGEX_HIT = "regex hit"
MISS = "miss"
EXACT_ONLY_HIT = "exact hit, exact-only sim"
CASES = (EXACT_HIT, GLOB_HIT, REGEX_HIT, MISS, EXACT_ONLY_HIT)
"""The last case runs on a second simulation of the same size whose pairs all have exact paths:
it separates the cost of the index from the cost of the glob/regex pairs every request must visit."""

# One pair in 20 has a glob path and one in 20 a regex path (5% each): placed by index, so the
# 10-pair simulation has one of each and every size has the same mix.
GLOB_SLOT, REGEX_SLOT, SLOT_PERIOD = 3, 8, 20

METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH")
METHOD_WEIGHTS = (60, 20, 8, 7, 5)
HOSTS = (
    "users.internal.example.com",
    "orders.internal.example.com",
    "payments.example.com",
    "inventory.example.com:8443",
    "search.example.com",
    "auth.example.org",
    "catalog.shop.example.net",
    "api.partner.example.io:8080",
)
PREFIXES = ("api/v1", "api/v2", "v3", "internal", "public/api")
RESOURCES = (
    "users",
    "orders",
    "invoices",
    "products",
    "carts",
    "accounts",
    "payments",
    "shipments",
    "reviews",
    "sessions",
    "customers",
    "tenants",
)
SUFFIXES = ("", "", "", "/items", "/history", "/settings", "/status", "/events")
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class BenchmarkCheckFailed(RuntimeError):
    """A request did not hit (or miss) as the benchmark intended: its timings would be meaningless."""


@dataclass(frozen=True, slots=True)
class RawRequest:
    """What a client sends; ``details()`` turns it into the engine's request the proxy's way."""

    method: str
    host: str
    path: str
    raw_query: str = ""
    body: str = ""
    headers: tuple[tuple[str, str], ...] = ()

    def details(self) -> RequestDetails:
        headers: dict[str, list[str]] = {}
        sent = (
            ("Host", self.host),
            ("User-Agent", "bench-client/1.0"),
            ("Accept", "application/json"),
            ("Accept-Encoding", "gzip, deflate"),
            ("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl"),
            *self.headers,
        )
        for name, value in sent:
            if name.lower() not in ("host", "transfer-encoding"):  # proxy.py's _SKIPPED_HEADERS
                headers.setdefault(canonical_header(name), []).append(value)
        return RequestDetails.build(
            method=self.method,
            scheme="http",
            destination=self.host,
            path=request_path(self.path),
            raw_query=self.raw_query,
            body=self.body,
            headers=headers,
        )


@dataclass(frozen=True, slots=True)
class GeneratedPair:
    kind: str  # "exact", "glob" or "regex" (the path matcher)
    data: dict[str, Any]  # the v5 JSON pair
    request: RawRequest  # a request this pair (and only this pair) answers


@dataclass(slots=True)
class Cell:
    size: int
    case: str
    us_per_request: float
    ratio: float
    evaluated: float
    """Mean number of pairs scored per request (candidates, plus what the closest-miss search scores on a miss)."""
    index_us: float
    """``CompiledSimulation.candidates`` alone, microseconds per request."""
    calls: int
    """Calls per timed repeat (the requests of the case taken in turn)."""
    requests: int
    checked: str
    """What the check before timing established, e.g. "8 hit": each of the 8 requests hit its own pair."""


@dataclass(slots=True)
class LoadCost:
    size: int
    parse_ms: float
    decode_ms: float
    compile_ms: float
    load_peak_mb: float | None = None
    """tracemalloc peak from the JSON body to the compiled simulation (None: not measured)."""
    retained_mb: float | None = None
    """What the decoded and compiled simulation holds once loaded (the body and its dict freed)."""


@dataclass(slots=True)
class Results:
    mode: str
    seed: int
    date: str
    python: str
    machine: str
    cells: list[Cell] = field(default_factory=list)
    loads: list[LoadCost] = field(default_factory=list)
    max_rss_mb: float = 0.0


def _m(name: str, value: str) -> dict[str, str]:
    return {"matcher": name, "value": value}


def generate_pair(index: int, seed: int, *, exact_only: bool = False) -> GeneratedPair:
    """Pair ``index`` of every simulation made with ``seed``: a capture-shaped pair by default."""
    rng = random.Random(f"{seed}:{index}")
    slot = index % SLOT_PERIOD
    kind = "exact" if exact_only else "glob" if slot == GLOB_SLOT else "regex" if slot == REGEX_SLOT else "exact"
    method = rng.choices(METHODS, METHOD_WEIGHTS)[0]
    host = rng.choice(HOSTS)
    prefix, resource_name = rng.choice(PREFIXES), rng.choice(RESOURCES)
    req: dict[str, Any] = {}
    extra_headers: list[tuple[str, str]] = []
    raw_query = ""
    body = ""

    # destination: exact most of the time, a glob on the domain otherwise
    if rng.random() < 0.75:
        req["destination"] = [_m("exact", host)]
    else:
        req["destination"] = [_m("glob", "*" + host[host.index(".") :])]

    if kind == "exact":
        item_id = 100_000 + index * 7 + rng.randrange(7)  # unique per index
        path = f"/{prefix}/{resource_name}/{item_id}{rng.choice(SUFFIXES)}"
        req["path"] = [_m("exact", path)]
        req["method"] = [_m("exact", method)]
        # Hoverfly's capture records the body as an exact matcher, empty for a GET
        body = json.dumps({"id": item_id, "name": f"item-{item_id}"}) if method in BODY_METHODS else ""
        req["body"] = [_m("exact", body)]
    elif kind == "glob":
        sub = rng.choice(("items", "lines", "notes", "tags"))
        req["path"] = [_m("glob", f"/{prefix}/{resource_name}-g{index}/*/{sub}/*")]
        path = f"/{prefix}/{resource_name}-g{index}/{rng.randrange(10**6)}/{sub}/{rng.randrange(10**4)}"
        if rng.random() < 0.75:  # a hand-written glob pair often leaves the method out
            req["method"] = [_m("exact", method)]
    else:
        req["path"] = [_m("regex", f"^/{prefix}/{resource_name}/r{index}/[0-9]+(/[a-z]+)?$")]
        path = f"/{prefix}/{resource_name}/r{index}/{rng.randrange(10**8)}/details"
        if rng.random() < 0.75:
            req["method"] = [_m("exact", method)]

    if rng.random() < 0.25:  # query matchers on a quarter of the pairs
        page, limit = rng.randrange(1, 20), rng.choice((10, 25, 50))
        req["query"] = {"page": [_m("exact", str(page))], "limit": [_m("exact", str(limit))]}
        raw_query = f"page={page}&limit={limit}&trace=on"
    if rng.random() < 0.2:  # header matchers on a fifth
        tenant = f"tenant-{rng.randrange(100)}"
        req["headers"] = {"Authorization": [_m("glob", "Bearer *")], "X-Tenant-Id": [_m("exact", tenant)]}
        extra_headers.append(("x-tenant-id", tenant))
    if body:
        extra_headers.append(("content-type", "application/json"))

    response_body = json.dumps({"id": index, "resource": resource_name, "ok": True})
    data = {
        "request": req,
        "response": {
            "status": 201 if method == "POST" else 200,
            "body": response_body,
            "encodedBody": False,
            "headers": {"Content-Type": ["application/json"], "X-Generated-By": ["simproxy-bench"]},
            "templated": False,
        },
    }
    request = RawRequest(method, host, path, raw_query, body, tuple(extra_headers))
    return GeneratedPair(kind, data, request)


def generate_simulation(size: int, seed: int, *, exact_only: bool = False) -> list[GeneratedPair]:
    return [generate_pair(i, seed, exact_only=exact_only) for i in range(size)]


def simulation_data(pairs: Sequence[GeneratedPair]) -> dict[str, Any]:
    """The v5 ``data`` object, as ``PUT /api/v2/simulation`` receives it."""
    return {"pairs": [p.data for p in pairs], "globalActions": {"delays": [], "delaysLogNormal": []}}


def miss_requests(seed: int, count: int) -> list[RawRequest]:
    """Requests for paths no pair has, on the simulation's own hosts and methods."""
    rng = random.Random(f"{seed}:miss")
    return [
        RawRequest(
            rng.choices(METHODS, METHOD_WEIGHTS)[0],
            rng.choice(HOSTS),
            f"/{rng.choice(PREFIXES)}/unknown-{rng.choice(RESOURCES)}/{rng.randrange(10**6)}",
            "page=1" if rng.random() < 0.25 else "",
        )
        for _ in range(count)
    ]


def scored_for_closest_miss(sim: CompiledSimulation, req: RequestDetails) -> int:
    """How many pairs the closest-miss search scores for ``req`` (``scoring.evaluate`` counted)."""
    original, calls = scoring.evaluate, 0

    def counted(*args: Any) -> tuple[int, list[str]]:
        nonlocal calls
        calls += 1
        return original(*args)

    scoring.evaluate = counted
    try:
        closest_miss(sim, req, {}, False)
    finally:
        scoring.evaluate = original
    return calls


def case_requests(
    case: str, pairs: Sequence[GeneratedPair], seed: int, misses: int = REQUEST_POOL
) -> list[tuple[RequestDetails, int | None]]:
    """The requests of a case, each with the index of the pair it must hit (None: it must miss).

    They are the same in every size: they target pairs among the first ``REQUEST_POOL``, which every
    simulation shares (pair ``i`` does not depend on the size), so a ratio compares the same requests
    answered by the same pairs, and only the number of other pairs around them changes. A miss
    scores every pair, so the smoke run asks for fewer of them (``misses``).
    """
    if case == MISS:
        return [(raw.details(), None) for raw in miss_requests(seed, misses)]
    kind = {EXACT_HIT: "exact", EXACT_ONLY_HIT: "exact", GLOB_HIT: "glob", REGEX_HIT: "regex"}[case]
    return [(p.request.details(), i) for i, p in enumerate(pairs[:REQUEST_POOL]) if p.kind == kind]


def check(case: str, size: int, sim: CompiledSimulation, requests: Sequence[tuple[RequestDetails, int | None]]) -> str:
    """Fail loudly unless every request hits its own pair (or misses with a closest miss); say what it checked."""
    if not requests:
        raise BenchmarkCheckFailed(f"{case} @ {size} pairs: no requests to time")
    for req, expected in requests:
        result = match(sim, req, {})
        where = f"{case} @ {size} pairs: {req.method} {req.destination}{req.path}"
        if expected is None:
            if result.pair is not None:
                raise BenchmarkCheckFailed(f"{where} should miss but hit pair {result.pair.index}")
            if result.closest is None:
                raise BenchmarkCheckFailed(f"{where} missed without a closest miss")
        elif result.pair is None:
            raise BenchmarkCheckFailed(f"{where} should hit pair {expected} but missed")
        elif result.pair.index != expected:
            raise BenchmarkCheckFailed(f"{where} should hit pair {expected} but hit pair {result.pair.index}")
    return f"{len(requests)} {'miss' if requests[0][1] is None else 'hit'}"


class Timer:
    """Times one call over a case's requests taken in turn: calibrated once, then sampled repeatedly.

    ``calls`` is calibrated so that one sample takes about ``budget_s / REPEATS`` (at least
    ``min_calls``). The garbage collector is off while a sample runs, as in timeit.
    """

    def __init__(self, call: Callable[[RequestDetails], object], reqs: Sequence[RequestDetails]) -> None:
        self.call = call
        self.reqs = list(reqs)
        self.calls = 0
        self.samples: list[float] = []
        """Nanoseconds per call, one per sample."""

    def _timed(self, n: int) -> int:
        seq = (self.reqs * (n // len(self.reqs) + 1))[:n]
        call = self.call
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            start = time.perf_counter_ns()
            for req in seq:
                call(req)
            return time.perf_counter_ns() - start
        finally:
            if gc_was_enabled:
                gc.enable()

    def calibrate(self, budget_s: float, min_calls: int) -> None:
        target_ns = budget_s / REPEATS * 1e9
        calls = min_calls
        while (elapsed := self._timed(calls)) < target_ns and calls < 1 << 22:
            calls = max(calls * 2, int(calls * target_ns / max(elapsed, 1) * 1.1))
        self.calls = calls

    def sample(self) -> None:
        self.samples.append(self._timed(self.calls) / self.calls)

    @property
    def median_us(self) -> float:
        return statistics.median(self.samples) / 1000


@dataclass(slots=True)
class PendingCell:
    size: int
    case: str
    evaluated: float
    requests: int
    checked: str
    match_timer: Timer
    index_timer: Timer


def prepare_cell(
    size: int,
    case: str,
    sim: CompiledSimulation,
    requests: Sequence[tuple[RequestDetails, int | None]],
    budget_s: float,
    min_calls: int,
) -> PendingCell:
    """Check the case's requests, then calibrate its timers for ``match`` and ``candidates`` alone."""
    checked = check(case, size, sim, requests)
    reqs = [req for req, _ in requests]
    state: dict[str, str] = {}
    candidates = sim.candidates
    match_timer = Timer(lambda req: match(sim, req, state), reqs)
    index_timer = Timer(lambda req: list(candidates(req.path, req.method)), reqs)
    match_timer.calibrate(budget_s, min_calls)
    index_timer.calibrate(budget_s / 4, min_calls)
    evaluated = statistics.fmean(
        len(list(candidates(req.path, req.method))) + (scored_for_closest_miss(sim, req) if expected is None else 0)
        for req, expected in requests
    )
    return PendingCell(size, case, evaluated, len(requests), checked, match_timer, index_timer)


def load(
    pairs: Sequence[GeneratedPair], registry: MatcherRegistry
) -> tuple[bytes, Simulation, CompiledSimulation, LoadCost]:
    """Load a simulation the way the runtime does (JSON body -> decode -> compile), timing each step."""
    body = orjson.dumps(simulation_data(pairs))
    start = time.perf_counter_ns()
    data = orjson.loads(body)
    parsed_at = time.perf_counter_ns()
    decoded = decode_simulation(data)
    decoded_at = time.perf_counter_ns()
    compiled = compile_simulation(decoded, registry)
    done = time.perf_counter_ns()
    cost = LoadCost(len(pairs), (parsed_at - start) / 1e6, (decoded_at - parsed_at) / 1e6, (done - decoded_at) / 1e6)
    return body, decoded, compiled, cost


def measure_memory(body: bytes, registry: MatcherRegistry, cost: LoadCost) -> None:
    """tracemalloc's peak while loading (parse, decode, compile), and what the loaded simulation keeps."""
    gc.collect()
    tracemalloc.start()
    try:
        compiled = compile_simulation(decode_simulation(orjson.loads(body)), registry)
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del compiled
    cost.load_peak_mb = peak / 2**20
    cost.retained_mb = current / 2**20


def exact_only_variant(
    pairs: Sequence[GeneratedPair], decoded: Simulation, seed: int
) -> tuple[list[GeneratedPair], Simulation]:
    """The same simulation with its glob and regex pairs replaced by exact ones (decoding only those)."""
    swapped = {i: generate_pair(i, seed, exact_only=True) for i, p in enumerate(pairs) if p.kind != "exact"}
    new_pairs = [swapped.get(i, p) for i, p in enumerate(pairs)]
    fresh = iter(decode_simulation(simulation_data(list(swapped.values()))).pairs)
    sim_pairs = tuple(next(fresh) if i in swapped else p for i, p in enumerate(decoded.pairs))
    return new_pairs, replace(decoded, pairs=sim_pairs)


def run(quick: bool, seed: int = SEED, sizes: Sequence[int] = SIZES) -> Results:
    budget, min_calls, misses = (QUICK_BUDGET_S, 1, 2) if quick else (FULL_BUDGET_S, 8, REQUEST_POOL)
    registry = MatcherRegistry()
    results = Results(
        mode="quick" if quick else "full",
        seed=seed,
        date=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        python=platform.python_version(),
        machine=f"{platform.machine()}, {platform.system()}, {os.cpu_count()} CPUs",
    )
    pending: list[PendingCell] = []
    for size in sizes:
        mixed = generate_simulation(size, seed)
        body, decoded, sim, cost = load(mixed, registry)
        if not quick:  # tracemalloc slows loading down a lot: the smoke run skips it
            measure_memory(body, registry, cost)
        results.loads.append(cost)
        exact_only, exact_decoded = exact_only_variant(mixed, decoded, seed)
        exact_sim = compile_simulation(exact_decoded, registry)
        for case in CASES:
            case_sim, case_pairs = (exact_sim, exact_only) if case == EXACT_ONLY_HIT else (sim, mixed)
            requests = case_requests(case, case_pairs, seed, misses)
            pending.append(prepare_cell(size, case, case_sim, requests, budget, min_calls))
    # The repeats go round every cell in turn, so a burst of load from elsewhere on the machine
    # lands on one sample of many cells rather than on all the samples of one cell.
    for _ in range(REPEATS):
        for cell in pending:
            cell.match_timer.sample()
            cell.index_timer.sample()
    baseline: dict[str, float] = {}
    for cell in pending:
        us = cell.match_timer.median_us
        baseline.setdefault(cell.case, us)
        results.cells.append(
            Cell(
                cell.size,
                cell.case,
                us,
                us / baseline[cell.case],
                cell.evaluated,
                cell.index_timer.median_us,
                cell.match_timer.calls,
                cell.requests,
                cell.checked,
            )
        )
    results.max_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return results


def format_table(results: Results) -> str:
    sizes = sorted({c.size for c in results.cells})
    small, large = sizes[0], sizes[-1]
    lines = [
        f"simproxy matching benchmark ({results.mode} mode, seed {results.seed}, {results.date}, "
        f"Python {results.python}, {results.machine})",
        "",
        f"{'pairs':>7}  {'case':<26} {'us/request':>11} {'ratio':>8} {'evaluated':>10} {'index us':>9}"
        f" {'calls':>9}  checked",
        "-" * 96,
    ]
    for c in results.cells:
        lines.append(
            f"{c.size:>7,}  {c.case:<26} {c.us_per_request:>11.2f} {c.ratio:>7.2f}x {c.evaluated:>10.1f}"
            f" {c.index_us:>9.2f} {c.calls:>9,}  {c.checked}"
        )
    lines += [
        "",
        f"{'pairs':>7}  {'parse ms':>9} {'decode ms':>10} {'compile ms':>11} {'load peak MB':>13} {'retained MB':>12}",
        "-" * 68,
    ]
    for lc in results.loads:
        peak = "-" if lc.load_peak_mb is None else f"{lc.load_peak_mb:.1f}"
        kept = "-" if lc.retained_mb is None else f"{lc.retained_mb:.1f}"
        lines.append(
            f"{lc.size:>7,}  {lc.parse_ms:>9.1f} {lc.decode_ms:>10.1f} {lc.compile_ms:>11.1f} {peak:>13} {kept:>12}"
        )
    exact = {c.size: c for c in results.cells if c.case == EXACT_HIT}
    big_load = next((lc for lc in results.loads if lc.size == large), None)
    lines += [
        "",
        "us/request: engine.matching.match, microseconds per request, median of 5 timed repeats (GC off);"
        f" ratio: to the {small:,}-pair cell of the same case.",
        "evaluated: pairs scored per request (the candidates, plus the pairs the closest-miss search scores); index us:"
        " CompiledSimulation.candidates alone; calls: calls per repeat.",
        "checked: requests in the case, each checked before timing to hit the pair it was made for (or to miss).",
        "miss: a miss finds Hoverfly's closest miss, scoring the pairs that could still beat the best found"
        " (ranked by the most points each can score), so its cost grows with the simulation.",
        f"Pairs: {100 // SLOT_PERIOD}% glob paths and {100 // SLOT_PERIOD}% regex paths (none in 'exact-only sim');"
        " the same requests in every size.",
        "load: orjson.loads -> decode_simulation -> compile_simulation, once per size; peak and retained"
        " memory by tracemalloc.",
    ]
    if small in exact and large in exact:
        ratio = exact[large].us_per_request / exact[small].us_per_request
        verdict = "MET" if ratio <= 2 else "NOT MET"
        lines.append(
            f"target (design.md 5): exact hit at {large:,} pairs within 2x of {small:,}: {ratio:.2f}x, {verdict}"
        )
    if big_load is None or big_load.load_peak_mb is None:
        lines.append("target (design.md 5): memory under 200 MB per worker: not measured in quick mode")
    else:
        verdict = "MET" if big_load.load_peak_mb < 200 else "NOT MET"
        lines.append(
            f"target (design.md 5): {large:,}-pair simulation under 200 MB per worker: load peak"
            f" {big_load.load_peak_mb:.1f} MB, retained {big_load.retained_mb:.1f} MB, {verdict}"
            f" (this whole benchmark process: max RSS {results.max_rss_mb:.0f} MB)"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.matching", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fast smoke run (short timings)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    parser.add_argument("--seed", type=int, default=SEED, help=f"generator seed (default {SEED})")
    args = parser.parse_args(argv)
    results = run(args.quick, args.seed)
    print(format_table(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(asdict(results), out, indent=2)
            out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
