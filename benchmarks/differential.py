"""Differential conformance: one real Hoverfly and one ``simproxy -compat hoverfly`` fed the same inputs.

Run from the repository root (it needs a Hoverfly binary and Hoverfly's source tree; nothing of
Hoverfly's is kept here)::

    python -m benchmarks.differential --hoverfly ~/hoverfly/bin/hoverfly --hoverfly-src ~/hoverfly/src \\
        --json report.json
    python -m benchmarks.differential ... --corpus templates,matchers --show 3

Both servers run side by side on free loopback ports (``-ap A -pp P``; ``-webserver`` and
``-enable-middleware-api`` for the corpora that need them), each in a folder of its own (its working
directory and ``HOME``), with a local upstream HTTP server for capture, spy, modify and diff. Every
case's steps go to Hoverfly, then to simproxy, one request at a time, and each pair of answers is
compared (``benchmarks/diffcompare.py``). The inputs are mined from the Hoverfly tree at run time
(``benchmarks/corpus.py``) or written in ``benchmarks/diffscenarios.py``.

Output: per corpus, the cases and how many got the same answers (and the same apart from header
order or name case); the differences grouped by kind, most important first, each group with a
minimal reproduction (the input, the request, both answers); ``--json`` writes all of it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from benchmarks.corpus import Mined, mine
from benchmarks.diffcases import Case, csv_sources, matcher_case, simulation_cases, template_case
from benchmarks.diffcompare import KINDS, LOCAL, Facts, Verdict, compare, where
from benchmarks.diffscenarios import (
    action_cases,
    admin_cases,
    delay_cases,
    journal_cases,
    middleware_cases,
    upstream_cases,
    webserver_cases,
)
from benchmarks.diffwire import Answer, ServerProcess, Step, Upstream, send
from simproxy.admin.command import COMMAND

CORPORA = (
    "simulations",
    "templates",
    "matchers",
    "admin",
    "webserver",
    "delays",
    "middleware",
    "actions",
    "upstream",
    "journal",
)
FLAGS = MappingProxyType({"webserver": ("-webserver",), "middleware": ("-enable-middleware-api",)})
"""Flags a corpus needs both servers started with (the others run on one default pair)."""
ADMIN_HEADERS = frozenset({"headers", "header order", "header name case", "Date header"})
"""Aspects of an admin answer's headers: in corpora other than ``admin`` they are reported with the rest
but do not count against a case (the same few admin headers would otherwise decide every case)."""
KEPT_EXAMPLES = 20
"""Differences per group written with their whole reproduction (the rest by name)."""


def build_cases(names: Sequence[str], mined: Mined, rounds: int) -> list[Case]:
    """The cases of the named corpora, in the order of ``CORPORA``."""
    sources = csv_sources(mined.csv_sources, mined.templates)
    builders: dict[str, Callable[[], list[Case]]] = {
        "simulations": lambda: list(simulation_cases(mined.simulations, rounds)),
        "templates": lambda: [template_case(t, sources) for t in mined.templates],
        "matchers": lambda: [matcher_case(m) for m in mined.matchers],
        "admin": admin_cases,
        "webserver": lambda: webserver_cases(mined.simulations, rounds),
        "delays": delay_cases,
        "middleware": middleware_cases,
        "actions": action_cases,
        "upstream": upstream_cases,
        "journal": lambda: journal_cases(mined.simulations, mined.templates, sources),
    }
    return [case for name in CORPORA if name in names for case in builders[name]()]


@dataclass
class Side:
    """One of the two servers of a configuration, and what its answers hold that is its own."""

    server: ServerProcess
    facts: Facts | None = None

    def start(self) -> None:
        self.server.start()
        version = send(self.server.admin, Step("admin", "GET", "/api/v2/hoverfly/version", (("Host", "localhost"),)))
        try:
            name = str(json.loads(version.body)["version"])
        except (ValueError, KeyError, TypeError):
            name = ""
        self.facts = Facts(self.server.admin, self.server.proxy, str(self.server.folder), name)

    def alive(self) -> bool:
        return self.server.process is not None and self.server.process.poll() is None


@dataclass
class Run:
    """A run in progress: the servers per configuration, the upstream, and what was found."""

    hoverfly: list[str]
    simproxy: list[str]
    workdir: Path
    upstream: Upstream
    cases: list[dict[str, Any]] = field(default_factory=list)
    differences: list[dict[str, Any]] = field(default_factory=list)
    incidents: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    both_lengths: Counter[str] = field(default_factory=Counter)
    """Answers, per server, framed with both Content-Length and Transfer-Encoding (RFC 9112 forbids it)."""

    def sides(self, config: str) -> tuple[Side, Side]:
        flags = FLAGS.get(config, ())
        return (
            Side(ServerProcess("Hoverfly", self.hoverfly, flags, self.workdir / config / "hoverfly")),
            Side(ServerProcess("simproxy", self.simproxy, flags, self.workdir / config / "simproxy")),
        )

    def answer(self, side: Side, step: Step, mark: int) -> Answer:
        step = step.filled(self.upstream.port)
        if step.port != "collect":
            return send(side.server.port(step.port), step)
        deadline = time.monotonic() + 3
        while True:
            if step.method == "FILE":
                path = side.server.folder / step.target
                text = path.read_bytes() if path.exists() else b""
                if text or time.monotonic() > deadline:
                    path.unlink(missing_ok=True)
                    return Answer(200 if text else 404, body=text)
            else:
                with self.upstream.server.lock:
                    got = [r for r in self.upstream.server.received[mark:] if r["path"].startswith(step.target)]
                if got or time.monotonic() > deadline:
                    return Answer(200 if got else 404, body=json.dumps(got, sort_keys=True).encode())
            time.sleep(0.05)

    def play(self, side: Side, case: Case) -> list[Answer]:
        mark = len(self.upstream.server.received)
        return [self.answer(side, step, mark) for step in case.steps]

    def run_case(self, case: Case, pair: tuple[Side, Side]) -> None:
        hoverfly, simproxy = pair
        answers_h = self.play(hoverfly, case)
        answers_s = self.play(simproxy, case)
        for name, answers in (("hoverfly", answers_h), ("simproxy", answers_s)):
            framed = [a for a in answers if a.header("Content-Length") is not None]
            self.both_lengths[name] += sum(a.header("Transfer-Encoding") is not None for a in framed)
        assert hoverfly.facts is not None and simproxy.facts is not None
        facts = (hoverfly.facts, simproxy.facts)
        verdicts: list[tuple[int, Verdict]] = []
        for i, (step, a, b) in enumerate(zip(case.steps, answers_h, answers_s, strict=True)):
            if step.compare:
                verdict = compare(step, a, b, facts)
                if not verdict.same:
                    self.differences.append(_difference(case, i, step, verdict, a, b))
                if step.port == "admin" and case.corpus != "admin":
                    verdict = verdict.without(ADMIN_HEADERS)
                verdicts.append((i, verdict))
        record: dict[str, Any] = {
            "corpus": case.corpus,
            "name": case.name,
            "exchanges": len(verdicts),
            "same": all(v.same for _, v in verdicts),
            "same_content": all(v.same_content for _, v in verdicts),
            "same_but_layout": all(v.same_but_layout for _, v in verdicts),
        }
        collected = [a.status == 200 for step, a in zip(case.steps, answers_h, strict=True) if step.port == "collect"]
        if collected:
            record["collected"] = collected  # whether the action (or remote call) was seen on the first server
        if case.expected_hit is not None:
            last = answers_h[-1]
            record["hoverfly_hit"] = last.status == 200 and last.body == b"matched"
            record["expected_hit"] = case.expected_hit
        self.cases.append(record)


def _difference(case: Case, index: int, step: Step, verdict: Verdict, a: Answer, b: Answer) -> dict[str, Any]:
    return {
        "corpus": case.corpus,
        "case": case.name,
        "step": index,
        "label": step.label,
        "where": where(step),
        "kind": verdict.kind,
        "aspects": dict(verdict.aspects),
        "bodies_part": verdict.divergence,
        "request": step.as_json()["request"],
        "hoverfly": a.as_json(),
        "simproxy": b.as_json(),
    }


def execute(args: argparse.Namespace, cases: list[Case], workdir: Path) -> Run:
    """Run every case, one configuration of servers at a time; restart a pair a crash took down."""
    with Upstream() as upstream:
        run = Run(_command(args.hoverfly), _simproxy_command(args.simproxy), workdir, upstream)
        configs = sorted(
            {c.corpus if c.corpus in FLAGS else "default" for c in cases}, key=lambda c: (c != "default", c)
        )
        for config in configs:
            chosen = [c for c in cases if (c.corpus if c.corpus in FLAGS else "default") == config]
            pair = run.sides(config)
            try:
                for side in pair:
                    side.start()
                run.versions = {
                    "hoverfly": pair[0].facts.version if pair[0].facts else "",
                    "simproxy": pair[1].facts.version if pair[1].facts else "",
                }
                for n, case in enumerate(chosen, 1):
                    run.run_case(case, pair)
                    if args.progress:
                        print(f"\r{config}: {n}/{len(chosen)} cases", end="", file=sys.stderr, flush=True)
                    for side in pair:
                        if not side.alive():
                            run.incidents.append(
                                f"{side.server.name} exited during {case.corpus} case {case.name!r}; restarted"
                            )
                            side.server.stop()
                            side.start()
                if args.progress:
                    print(file=sys.stderr)
            finally:
                for side in pair:
                    side.server.stop()
        return run


def _command(text: str) -> list[str]:
    """The command's words; a relative program path is made absolute (the servers run in folders of their own)."""
    words = shlex.split(text)
    if words and "/" in words[0] and not words[0].startswith("/"):
        words[0] = str(Path(words[0]).absolute())
    return words


def _simproxy_command(text: str | None) -> list[str]:
    command = _command(text) if text else list(COMMAND)
    return command if "-compat" in command else [*command, "-compat", "hoverfly"]


# ---------------------------------------------------------------------------------------------
# the report


def table(run: Run, names: Sequence[str]) -> list[dict[str, Any]]:
    """Per corpus: cases, exchanges compared, same answers, same apart from header layout."""
    rows = []
    for name in names:
        mine_ = [c for c in run.cases if c["corpus"] == name]
        rows.append({
            "corpus": name,
            "cases": len(mine_),
            "exchanges": sum(c["exchanges"] for c in mine_),
            "same_content": sum(c["same_content"] for c in mine_),
            "same": sum(c["same"] for c in mine_),
            "same_but_layout": sum(c["same_but_layout"] for c in mine_),
        })  # fmt: skip
    return rows


def groups(run: Run, documents: dict[str, Any]) -> list[dict[str, Any]]:
    """The differences grouped by aspect and detail (and by where, for status, body and framing errors),
    most important aspect first, then the most cases; each exchange is in one group per aspect."""
    by_key: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for diff in run.differences:
        for aspect, detail in diff["aspects"].items():
            by_key.setdefault((aspect, detail, diff["where"] if aspect in LOCAL else ""), []).append(diff)
    out = []
    for (aspect, detail, place), diffs in by_key.items():
        size = {id(d): len(json.dumps(documents.get(f"{d['corpus']}: {d['case']}"), default=str)) for d in diffs}
        ordered = sorted(diffs, key=lambda d: (len(d["aspects"]), size[id(d)], len(d["request"])))
        out.append({
            "kind": aspect,
            "detail": detail,
            "where": place or ", ".join(f"{w} ({n})" for w, n in Counter(d["where"] for d in diffs).most_common(6)),
            "count": len(diffs),
            "cases": len({(d["corpus"], d["case"]) for d in diffs}),
            "corpora": dict(Counter(d["corpus"] for d in diffs)),
            "reproduction": ordered[0],
            "examples": ordered[1:KEPT_EXAMPLES],
            "others": [f"{d['corpus']}: {d['case']} #{d['step']}" for d in ordered[KEPT_EXAMPLES:]],
        })  # fmt: skip
    return sorted(out, key=lambda g: (KINDS.index(g["kind"]), -g["cases"], -g["count"]))


def _short(answer: dict[str, Any], width: int = 300) -> str:
    body = answer.get("body", "")
    body = body if len(body) <= width else body[:width] + f"... ({answer.get('body_length', len(body))} bytes)"
    heads = "; ".join(f"{k}: {v}" for k, v in answer.get("headers", []))
    error = f" {answer['error']}" if answer.get("error") else ""
    return f"{answer['status']} {answer.get('reason', '')} [{heads}]{error}\n      {body!r}"


def render(report: dict[str, Any], show: int) -> list[str]:
    """The report for people: the table, what was mined and skipped, then the groups."""
    lines = [f"Hoverfly {report['versions'].get('hoverfly')} against simproxy {report['versions'].get('simproxy')}", ""]
    columns = ("corpus", "cases", "exchanges", "same status+body", "same answers", "same apart from header order/case")
    lines.append(
        f"{columns[0]:<12} {columns[1]:>6} {columns[2]:>10} {columns[3]:>16} {columns[4]:>13} {columns[5]:>34}"
    )
    for row in report["table"]:
        counts = f"{row['cases']:>6} {row['exchanges']:>10} {row['same_content']:>16} {row['same']:>13}"
        counts += f" {row['same_but_layout']:>34}"
        lines.append(f"{row['corpus']:<12} {counts}")
    mining = report["mining"]
    sizes = f"{mining['simulations']} simulations, {mining['templates']} templates, {mining['matchers']} matcher cases"
    lines += ["", f"mined: {sizes}"]
    for item in mining["skipped"]:
        lines.append(f"  not used: {item['count']:>3} {item['miner']}: {item['reason']}")
    if report.get("matcher_expectations"):
        agree = report["matcher_expectations"]
        lines.append(
            f"  matcher cases where the answer agrees with Hoverfly's unit test: {agree['agree']} of {agree['total']}"
        )
    both = report["both_lengths"]
    lines.append(
        f"  answers with both Content-Length and Transfer-Encoding: Hoverfly {both['hoverfly']}, "
        f"simproxy {both['simproxy']}"
    )
    for incident in report["incidents"]:
        lines.append(f"  incident: {incident}")
    lines += ["", f"{len(report['groups'])} groups of differences ({len(report['differences_index'])} exchanges):"]
    for n, group in enumerate(report["groups"], 1):
        size = f"{group['count']} exchanges, {group['cases']} cases: {group['corpora']}"
        lines.append(f"{n:>3}. [{group['kind']}] {group['detail']} ({size})")
        lines.append(f"      at {group['where']}")
        for example in [group["reproduction"], *group["examples"]][:show]:
            lines.append(
                f"      case {example['corpus']}: {example['case']}, step {example['step']} ({example['label']})"
            )
            lines.append(f"      differs in: {'; '.join(f'{k}: {v}' for k, v in example['aspects'].items())}")
            request = example["request"].replace("\r\n", "\n      > ")
            lines.append(f"      > {request[:600]}")
            lines.append(f"      Hoverfly: {_short(example['hoverfly'])}")
            lines.append(f"      simproxy: {_short(example['simproxy'])}")
            if example.get("bodies_part"):
                part = example["bodies_part"]
                lines.append(f"      the bodies part at byte {part['offset']}:")
                lines.append(f"        Hoverfly: {part['hoverfly']!r}")
                lines.append(f"        simproxy: {part['simproxy']!r}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hoverfly", required=True, help="Hoverfly's binary (or any command that takes -ap/-pp)")
    parser.add_argument(
        "--hoverfly-src", required=True, type=Path, help="Hoverfly's source tree, where the inputs are mined"
    )
    parser.add_argument(
        "--simproxy", help="simproxy's command (default: this Python's `-m simproxy`); -compat hoverfly is added"
    )
    parser.add_argument(
        "--corpus", default=",".join(CORPORA), help=f"comma-separated corpora (default all: {','.join(CORPORA)})"
    )
    parser.add_argument("--json", type=Path, help="write the full report here")
    parser.add_argument("--show", type=int, default=1, help="examples printed per group of differences (default 1)")
    parser.add_argument("--rounds", type=int, default=3, help="requests per pair of a simulation (default 3)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many cases per corpus (default: all)")
    parser.add_argument("--workdir", type=Path, help="the servers' folders (default: a temporary one, removed after)")
    parser.add_argument("--progress", action="store_true", help="print each configuration's progress on stderr")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.corpus.split(",") if n.strip()]
    unknown = sorted(set(names) - set(CORPORA))
    if unknown:
        parser.error(f"unknown corpus {', '.join(unknown)}; choose from {', '.join(CORPORA)}")
    if not args.hoverfly_src.is_dir():
        parser.error(f"--hoverfly-src {args.hoverfly_src} is not a folder")
    mined = mine(args.hoverfly_src)
    cases = build_cases(names, mined, args.rounds)
    if args.limit:
        cases = [c for name in names for c in [c for c in cases if c.corpus == name][: args.limit]]
    with tempfile.TemporaryDirectory(prefix="differential-") as temporary:
        workdir = args.workdir or Path(temporary)
        run = execute(args, cases, workdir)
    documents = {f"{c.corpus}: {c.name}": c.document for c in cases}
    skipped = Counter((s.miner, s.reason) for s in mined.skipped)
    expectations = [c for c in run.cases if "expected_hit" in c]
    report: dict[str, Any] = {
        "hoverfly": {"command": args.hoverfly, "version": run.versions.get("hoverfly")},
        "simproxy": {"command": shlex.join(run.simproxy), "version": run.versions.get("simproxy")},
        "versions": run.versions,
        "tree": str(args.hoverfly_src),
        "table": table(run, [n for n in CORPORA if n in names]),
        "mining": {
            "simulations": len(mined.simulations),
            "templates": len(mined.templates),
            "matchers": len(mined.matchers),
            "csv_sources": [name for name, _ in mined.csv_sources],
            "skipped": [{"miner": m, "reason": r, "count": n} for (m, r), n in skipped.most_common()],
            "skipped_where": [f"{s.miner}: {s.origin}: {s.reason}" for s in mined.skipped],
        },
        "matcher_expectations": {
            "agree": sum(c["hoverfly_hit"] == c["expected_hit"] for c in expectations),
            "total": len(expectations),
        }
        if expectations
        else None,
        "incidents": run.incidents,
        "both_lengths": {"hoverfly": run.both_lengths["hoverfly"], "simproxy": run.both_lengths["simproxy"]},
        "groups": groups(run, documents),
        "differences_index": [
            {key: d[key] for key in ("corpus", "case", "step", "label", "where", "aspects")} for d in run.differences
        ],
        "cases": run.cases,
        "documents": {
            k: v for k, v in documents.items() if k in {f"{d['corpus']}: {d['case']}" for d in run.differences}
        },
    }
    print("\n".join(render(report, args.show)))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str) + "\n")
        print(f"\nreport written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
