"""Smoke test of the matching benchmark: it runs, covers every size and case, and its hits really hit.

The benchmark's figures are read by people (benchmarks/README.md), never asserted here: timing
targets are not checked by the test suite (design.md section 5).
"""

from __future__ import annotations

import re
import sys

import pytest

from benchmarks import matching
from simproxy.admin.api.simfile import validate
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.matching.scoring import compile_simulation
from simproxy.engine.simulation.codec import decode_simulation

ROW = re.compile(r"^\s*([\d,]+)  (.+?)\s{2,}([\d.]+)\s+([\d.]+)x\s+([\d.]+)\s+([\d.]+)\s+([\d,]+)  (\d+) (hit|miss)$")


def test_quick_run_prints_a_checked_row_for_every_size_and_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert matching.main(["--quick"]) == 0
    out = capsys.readouterr().out
    rows = {(int(m[1].replace(",", "")), m[2]): m for line in out.splitlines() if (m := ROW.match(line))}
    assert set(rows) == {(size, case) for size in matching.SIZES for case in matching.CASES}
    for (size, case), row in rows.items():
        # the benchmark raised unless each request hit its own pair (or missed): the row says which
        assert row[9] == ("miss" if case == matching.MISS else "hit"), (size, case)
        assert int(row[8]) >= 1
        assert float(row[3]) > 0
    assert "target (design.md 5): exact hit at 10,000 pairs within 2x of 10:" in out


def test_the_simulation_is_valid_and_the_check_fails_loudly_when_a_request_does_not_hit_its_pair() -> None:
    pairs = matching.generate_simulation(100, matching.SEED)
    meta = {"schemaVersion": "v5", "hoverflyVersion": "v1.12.10", "timeExported": "2024-06-01T00:00:00Z"}
    assert validate({"data": matching.simulation_data(pairs), "meta": meta}, "v5") == []
    sim = compile_simulation(decode_simulation(matching.simulation_data(pairs)), MatcherRegistry())
    requests = matching.case_requests(matching.EXACT_HIT, pairs, matching.SEED)
    (req, index), *_ = requests
    assert index is not None
    with pytest.raises(matching.BenchmarkCheckFailed, match="should hit pair"):
        matching.check(matching.EXACT_HIT, 100, sim, [(req, index + 1)])
    with pytest.raises(matching.BenchmarkCheckFailed, match="should miss"):
        matching.check(matching.MISS, 100, sim, [(req, None)])


def test_templating_quick_run_renders_every_case(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import templating

    assert templating.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for case in templating.cases():
        assert re.search(rf"^{re.escape(case.name)}\s+[\d.]+\s+[\d.]+\s+[\d,]+$", out, re.MULTILINE), case.name
    assert f"target: {templating.TARGET_CASE} at >= 5,000 renders/s in one worker:" in out


@pytest.mark.slow  # starts a process
def test_end_to_end_harness_measures_real_servers(capsys: pytest.CaptureFixture[str]) -> None:
    """Two short workloads through the bundled load generator: every row is measured and checked."""
    from benchmarks import e2e

    assert e2e.main(["--workloads", "W1,W5", "--seconds", "1", "--loadgen", "python", "--connections", "4"]) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^(W1|W5)\s+simproxy \(1w\)\s+([\d,]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+) \((\d+)\)$", out, re.M)
    assert [r[0] for r in rows] == ["W1", "W5"]  # each answered as checked before timing (else SystemExit)
    for _, rps, *_ in rows:
        assert int(rps.replace(",", "")) > 0
    assert "non-2xx" not in out
    assert "W1:" in out and "Hoverfly (design.md reference)" in out


@pytest.mark.slow  # starts a process
def test_side_by_side_compare_measures_both_servers_in_the_same_rounds(capsys: pytest.CaptureFixture[str]) -> None:
    """simproxy against itself (A/A), side by side: each round has both rates and both CPU costs."""
    from benchmarks import e2e

    other = f"{sys.executable} -I -m simproxy -ap {{admin}} -pp {{proxy}}"
    argv = ["--workloads", "W1,W7", "--seconds", "1", "--rounds", "2", "--loadgen", "python", "--connections", "4"]
    assert e2e.main([*argv, "--compare", other, "--compare-name", "twin"]) == 0
    out = capsys.readouterr().out
    assert "side by side on one shared core: simproxy (1w) / twin" in out
    row = r"^(W1|W7)\s+([\d,]+)\s+([\d,]+)\s+([\d.]+)x\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)x\s+(.+)$"
    rows = re.findall(row, out, re.M)
    assert [r[0] for r in rows] == ["W1", "W7"]
    for _, ours, theirs, ratio, ours_us, theirs_us, cost, rounds in rows:
        assert int(ours.replace(",", "")) > 0 and int(theirs.replace(",", "")) > 0
        assert float(ours_us) > 0 and float(theirs_us) > 0 and float(ratio) > 0 and float(cost) > 0
        assert len(rounds.split(", ")) == 2  # one ratio per counted round; the warm-up round is not one
    # W7's answers are all misses (502) on both servers; W1's are all hits
    assert re.search(r"^\s+non-2xx answers: ours [\d,]+, theirs [\d,]+$", out, re.M)
    assert out.count("non-2xx answers") == 1


@pytest.mark.slow  # starts a process
def test_side_by_side_as_web_servers_sends_origin_form_requests(capsys: pytest.CaptureFixture[str]) -> None:
    """``--webserver``: simproxy with ``-webserver`` and origin-form requests (Hoverfly's web server
    tries to forward an absolute URI), checked on both servers before the rounds."""
    from benchmarks import e2e, servers

    w1 = e2e.as_webserver(e2e.workloads()["W1"])
    assert servers.request_text(w1.requests[0]).startswith("GET /hello HTTP/1.1\r\nHost: api.bench.test\r\n")
    assert w1.simproxy_flags() == ("-webserver",)
    other = f"{sys.executable} -I -m simproxy -webserver -ap {{admin}} -pp {{proxy}}"
    argv = ["--workloads", "W1", "--seconds", "1", "--rounds", "1", "--loadgen", "python", "--connections", "4"]
    assert e2e.main([*argv, "--webserver", "--compare", other, "--compare-name", "twin"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^W1\s+[\d,]+\s+[\d,]+\s+[\d.]+x", out, re.M)
    assert "non-2xx" not in out  # every answer of both was the stub's


@pytest.mark.slow  # starts a process
def test_startup_benchmark_measures_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    """One run with one worker: every figure's row holds a measured number, every count a count."""
    from benchmarks import startup

    assert startup.main(["--runs", "1", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^run 1/1  simproxy 1w\s+start \d+ ms", out, re.M)
    assert re.search(r"^median ms of 1 runs\s+simproxy 1w$", out, re.M)
    for label in startup.FIGURES.values():  # a plain number: measured in the run (not "-", nor "(0/1)")
        assert re.search(rf"^{re.escape(label)}\s+[\d,]+\.\d$", out, re.M), label
    for label in startup.COUNTS.values():
        assert re.search(rf"^{re.escape(label)}\s+\d+$", out, re.M), label


def test_startup_report_marks_missing_figures_and_gives_the_ratio() -> None:
    from benchmarks import startup

    restarted = startup.Restarted(30.0, old_answered=True, failed_starts=2)
    ours, other = startup.Samples(), startup.Samples()
    for answered in (None, 4.0):  # two runs: the first call of ours was never answered
        ours.add({**dict.fromkeys(startup.FIGURES, 1.0), "start": 300.0, "shutdown answered": answered}, restarted)
        other.add({**dict.fromkeys(startup.FIGURES, 1.0), "start": 20.0}, restarted)
    lines = startup.report({"simproxy 1w": ours, "hoverfly 1w": other}, 2, "simproxy 1w", "hoverfly 1w")
    rows = {line[:42].strip(): line[42:].split() for line in lines[2:] if line[:42].strip()}
    assert rows[startup.FIGURES["start"]] == ["300.0", "20.0", "15.00x"]
    assert rows[startup.FIGURES["shutdown answered"]] == ["4.0", "(1/2)", "1.0", "4.00x"]
    assert rows[startup.COUNTS["old answered"]] == ["2", "2"]
    assert rows[startup.COUNTS["failed starts"]] == ["4", "4"]
    assert startup.Target("x", "srv --flag", None).argv(1, 2) == ["srv", "--flag", "-ap", "1", "-pp", "2"]
    assert startup.Target("x", "srv -a {admin} -p {proxy} -w {workers}", 4).argv(1, 2) == [
        "srv", "-a", "1", "-p", "2", "-w", "4",
    ]  # fmt: skip


def test_startup_against_another_simproxy_gives_it_a_column_of_its_own() -> None:
    from benchmarks import startup

    names = [t.name for t in startup.targets("simproxy", [1], "/old/.venv/bin/simproxy -ap {admin} -pp {proxy}")]
    assert names == ["simproxy 1w", "compared simproxy 1w"]  # one name for both made one column of both
    assert [t.name for t in startup.targets("simproxy", [1], "hoverfly")] == ["simproxy 1w", "hoverfly 1w"]


@pytest.mark.slow  # starts a process
def test_redis_cost_counts_what_each_mode_asks_of_redis(capsys: pytest.CaptureFixture[str]) -> None:
    """Simulate and capture, one second each, through the bundled load generator and a real redis-server."""
    from benchmarks import redis_cost

    argv = ["--scenarios", "simulate,capture", "--seconds", "1", "--loadgen", "python", "--connections", "4"]
    assert redis_cost.main(argv) == 0
    out = capsys.readouterr().out
    row = r"^\| (simulate|capture) \| (on|off) \| ([\d,]+) \| (\d+) \((.*)\) \| ([\d.]+) / ([\d.]+) \| ([\d.]+) \|"
    rows = re.findall(row, out, re.M)
    assert [(r[0], r[1]) for r in rows] == [
        ("simulate", "on"),
        ("simulate", "off"),
        ("capture", "on"),
        ("capture", "off"),
    ]
    for name, _journal, rps, commands, top, *_ in rows:
        assert int(rps.replace(",", "")) > 0
        if name == "capture":  # every captured pair is stored: Redis is asked something for each request
            assert int(commands) > 0 and top
    assert "Idle (subtracted):" in out


def test_load_generator_sends_requests_no_earlier_run_sent() -> None:
    """``{n}`` is new in every request of a run and in every later run against the same server:
    a round of ``--rounds`` that replayed the round before found its misses cached (Hoverfly's)."""
    import asyncio

    from benchmarks import loadgen

    targets: list[list[bytes]] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                targets[-1].append(head.split(b" ", 2)[1])
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        except asyncio.IncompleteReadError:
            pass  # the generator closed the connection at its deadline
        finally:
            writer.close()

    async def two_runs() -> list[dict[str, float]]:
        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        request = "GET /item/{n}/absent HTTP/1.1\r\nHost: api.bench.test\r\n\r\n"
        results = []
        async with server:
            for _ in range(2):
                targets.append([])
                results.append(await loadgen.run(port, 0.3, 3, [request]))
        return results

    results = asyncio.run(two_runs())
    assert [r["requests"] for r in results] == [len(t) for t in targets]
    assert all(r["errors"] == 0 for r in results)
    first, second = (set(t) for t in targets)
    assert len(first) == len(targets[0]) > 10 and len(second) == len(targets[1]) > 10
    assert not first & second


@pytest.mark.slow  # starts a process
@pytest.mark.parametrize("workload", ["W1", "W2r"])
def test_h2load_benchmark_answers_every_request_over_both_protocols(
    workload: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """HTTP/2 (10 streams per connection) and HTTP/1.1 side by side: each row measured, all 200
    (W2r: its 500 stubs asked with different requests, each matched)."""
    from benchmarks import h2load
    from tests.system import system_tool

    system_tool("h2load", "nghttp2-client")
    h2load.main(["--requests", "400", "--connections", "2", "--workload", workload])
    out = capsys.readouterr().out
    assert f"workload {workload}:" in out
    rows = re.findall(r"^(HTTP/1\.1|HTTP/2)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", out, re.M)
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        ("HTTP/1.1", "1", "400", "400", "0"),
        ("HTTP/2", "10", "400", "400", "0"),
    ]
    assert all(int(r[5]) > 0 for r in rows)
