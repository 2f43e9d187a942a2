"""Templating benchmark: cost per render of a templated response body, as the engine renders it.

Run from the repository root::

    python -m benchmarks.templating            # full run
    python -m benchmarks.templating --quick    # smoke run
    python -m benchmarks.templating --general  # each case also with the general nodes only

Cases: a plain body (``templated: true`` with no tags), a typical templated JSON body (request
fields, a literal, a helper or two), a 64 KB templated JSON body (a large captured-style document
with a tag in every record: the issue's target, at least 5,000 renders a second in one worker),
the same size built by an ``#each`` over the request's items with per-item helpers (the heavy
case), and an 800 KB templated JSON body. Each render goes through ``engine.templated.render_pair`` exactly as the
proxy calls it for a hit; every case is checked to render (``ok``) before it is timed.

Then the cost of one mustache of each common kind: a body of 40 such mustaches, less the same body
with the mustaches taken out, over 40. With ``--general`` every figure is also measured with the
general render nodes alone (``TemplateEngine(specialise=False)``, engine/templating/fast.py), the
two alternated in one process.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.matching.scoring import compile_simulation
from simproxy.engine.simulation.codec import decode_simulation
from simproxy.engine.templating import CsvTables, TemplateEngine
from simproxy.engine.templating.pairs import render_pair
from simproxy.engine.wire.request import RequestDetails

TARGET_RENDERS_PER_S = 5_000
TARGET_CASE = "64 KB templated JSON"
REPEATS = 5


@dataclass(frozen=True)
class Case:
    name: str
    template: str
    request_body: str
    query: str = "id=42&name=widget"


def _items(count: int) -> str:
    return json.dumps({"items": [{"id": i, "name": f"item-{i}", "price": i * 1.25} for i in range(count)]})


ITEM_TEMPLATE = (
    '{"order": "{{ Request.QueryParam.id }}", "customer": "{{ Request.Header.X-Customer }}", '
    "\"lines\": [{{#each (Request.Body 'jsonpath' '$.items') }}"
    '{"id": {{ this.id }}, "name": "{{ this.name }}", "price": "{{ this.price }}", '
    '"tax": "{{ multiply this.price 0.2 \'0.00\' }}", "index": {{ @index }}, '
    '"note": "line {{ @index }} of order {{ Request.QueryParam.id }} for {{ Request.QueryParam.name }}"}'
    "{{#unless @last}},{{/unless}}{{/each}}]}"
)


def _big_json(kilobytes: int) -> str:
    """A captured-style JSON document of about ``kilobytes`` KB with a template tag in every record
    (one tag per ~200 bytes): what a large response marked ``templated`` usually looks like."""
    records = []
    size, i = 0, 0
    while size < kilobytes * 1024:
        record = (
            f'{{"id": {i}, "sku": "SKU-{i:06d}", "name": "Product number {i}", "price": {i * 1.25:.2f}, '
            f'"tags": ["alpha", "beta", "gamma"], "order": "{{{{ Request.QueryParam.id }}}}"}}'
        )
        records.append(record)
        size += len(record) + 2
        i += 1
    return '{"customer": "{{ Request.Header.X-Customer }}", "records": [' + ", ".join(records) + "]}"


def cases() -> list[Case]:
    typical = (
        '{"id": "{{ Request.QueryParam.id }}", "name": "{{ Request.QueryParam.name }}", '
        '"path": "{{ Request.Path.[1] }}", "method": "{{ Request.Method }}", "answer": {{ Literals.answer }}, '
        '"total": "{{ add 10 (Request.QueryParam.id) \'\' }}", '
        "\"upper\": \"{{ replace (Request.QueryParam.name) 'w' 'W' }}\"}"
    )
    return [
        Case("plain body", '{"status": "ok", "items": [1, 2, 3]}' * 4, ""),
        Case("typical templated JSON", typical, ""),
        Case(TARGET_CASE, _big_json(64), ""),
        Case("64 KB built by #each", ITEM_TEMPLATE, _items(530)),
        Case("800 KB templated JSON", _big_json(800), ""),
    ]


@dataclass(frozen=True)
class Result:
    case: str
    output_kb: float
    us_per_render: float
    renders_per_s: float


def _measure(case: Case, budget: float, specialise: bool = True) -> Result:
    sim = decode_simulation({
        "pairs": [{"request": {}, "response": {"status": 200, "body": case.template, "templated": True}}],
        "literals": [{"name": "answer", "value": 42}],
    })  # fmt: skip
    compiled = compile_simulation(sim, MatcherRegistry(), TemplateEngine(specialise=specialise))
    pair = compiled.pairs[0]
    assert pair.templates is not None and compiled.variables is not None
    req = RequestDetails.build(
        "POST", "http", "shop.test", "/orders/7", case.query, case.request_body, {"X-Customer": ["c-9"]}
    )

    def render() -> bytes:
        rendered = render_pair(
            pair.templates, pair.pair.response, req, {}, compiled.literals, compiled.variables, CsvTables({})
        )
        return rendered.response.body

    body = render()
    if body == case.template.encode() and "{{" in case.template:
        raise SystemExit(f"{case.name}: the template did not render")
    if "KB" in case.name:
        json.loads(body)  # the output is the JSON it claims to be
    calls = 1
    while True:
        started = time.perf_counter()
        for _ in range(calls):
            render()
        took = time.perf_counter() - started
        if took >= budget / REPEATS or calls >= 1_000_000:
            break
        calls *= 2
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        for _ in range(calls):
            render()
        samples.append((time.perf_counter() - started) / calls)
    per = statistics.median(samples)
    return Result(case.name, len(body) / 1024, per * 1e6, 1 / per)


MUSTACHES = 40
KINDS = {
    "a request field": "{{ Request.QueryParam.id }}",
    "a helper with literals": "{{ add '10' '20' '' }}",
    "a body query": "{{ Request.Body 'jsonpath' '$.items[0].name' }}",
    "an #if on a helper": "{{#if (isGreaterThan '3' '2')}}y{{/if}}",
    "a field in an #each": "{{#each (split 'a' ',')}}{{this}}{{@index}}{{/each}}",
}


def per_mustache(budget: float, specialise: bool) -> dict[str, float]:
    """Microseconds one mustache of each kind adds to a render."""
    filler = "<td>x</td>"
    empty = _measure(Case("empty", filler * MUSTACHES + "{{ Request.Method }}", _items(3)), budget, specialise)
    costs = {}
    for kind, mustache in KINDS.items():
        case = Case(kind, (filler + mustache) * MUSTACHES + "{{ Request.Method }}", _items(3))
        costs[kind] = (_measure(case, budget, specialise).us_per_render - empty.us_per_render) / MUSTACHES
    return costs


def run(quick: bool) -> list[Result]:
    budget = 0.05 if quick else 1.0
    return [_measure(case, budget) for case in cases()]


def compare(quick: bool) -> str:
    """Every case and mustache kind with the specialised nodes and the general ones, alternated."""
    budget = 0.05 if quick else 0.5
    lines = [f"{'case':<26}{'general us':>12}{'specialised us':>16}{'ratio':>8}", "-" * 62]
    for case in cases():
        general, special = [], []
        for _ in range(3):
            general.append(_measure(case, budget, False).us_per_render)
            special.append(_measure(case, budget, True).us_per_render)
        g, s = statistics.median(general), statistics.median(special)
        lines.append(f"{case.name:<26}{g:>12.1f}{s:>16.1f}{g / s:>7.2f}x")
    lines += ["", f"{'one mustache of':<26}{'general us':>12}{'specialised us':>16}", "-" * 54]
    rounds = [(per_mustache(budget / 4, False), per_mustache(budget / 4, True)) for _ in range(3)]
    for kind in KINDS:
        g = statistics.median(r[0][kind] for r in rounds)
        s = statistics.median(r[1][kind] for r in rounds)
        lines.append(f"{kind:<26}{g:>12.2f}{s:>16.2f}")
    return "\n".join(lines)


def format_table(results: Sequence[Result]) -> str:
    lines = [f"{'case':<26}{'output KB':>11}{'us/render':>12}{'renders/s':>12}", "-" * 61]
    lines += [f"{r.case:<26}{r.output_kb:>11.1f}{r.us_per_render:>12.1f}{r.renders_per_s:>12,.0f}" for r in results]
    target = next(r for r in results if r.case == TARGET_CASE)
    verdict = "MET" if target.renders_per_s >= TARGET_RENDERS_PER_S else "NOT MET"
    lines.append("")
    lines.append(
        f"target: {TARGET_CASE} at >= {TARGET_RENDERS_PER_S:,} renders/s in one worker: "
        f"{target.renders_per_s:,.0f}, {verdict}"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.templating", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fast smoke run")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    parser.add_argument("--general", action="store_true", help="compare with the general render nodes alone")
    args = parser.parse_args(argv)
    if args.general:
        print(compare(args.quick))
        return 0
    results = run(args.quick)
    print(format_table(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump([asdict(r) for r in results], out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
