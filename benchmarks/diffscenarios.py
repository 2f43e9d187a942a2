"""Cases of the differential harness written here rather than mined: the admin API walked through,
and the wider behaviours issue 38 asks for (web-server mode, delays, middleware, post-serve actions,
capture, spy, modify and diff against the local upstream, the ``journal`` template helper).

Each is a list of ``Case``s; the runner sends every step of a case to Hoverfly, then to simproxy, so
whatever a server does on the side (an action's file, a request to the upstream) is its own.
Middleware and actions are small Python scripts run with ``python3``, as Hoverfly runs them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from benchmarks.corpus import SimulationDoc, TemplateCase
from benchmarks.diffcases import Case, Request, admin, pair_request, resets, simulation_cases, template_case
from benchmarks.diffwire import Step

MIDDLEWARE = """import json, sys
payload = json.load(sys.stdin)
response = payload.get("response") or {}
response["body"] = (response.get("body") or "") + " [middleware]"
headers = response.get("headers") or {}
headers["X-Middleware"] = ["differential"]
response["headers"] = headers
response["status"] = response.get("status") or 201
payload["response"] = response
request = payload.get("request") or {}
request_headers = request.get("headers") or {}
request_headers["X-Modified"] = ["by middleware"]
request["headers"] = request_headers
payload["request"] = request
print(json.dumps(payload))
"""
FAILING = "import sys\nsys.stderr.write('middleware failed on purpose')\nsys.exit(1)\n"
NOT_JSON = "print('this is not JSON')\n"
ACTION = """import sys
data = sys.stdin.read()
with open("action-record.jsonl", "a") as out:
    out.write(data.strip() + "\\n")
"""
UPSTREAM = "127.0.0.1:{upstream}"


def _sim(*pairs: dict[str, Any], **data: Any) -> dict[str, Any]:
    return {"data": {"pairs": list(pairs), **data}, "meta": {"schemaVersion": "v5.2"}}


def _pair(path: str, body: str = "simulated", status: int = 200, **response: Any) -> dict[str, Any]:
    request = {"path": [{"matcher": "exact", "value": path}]}
    return {"request": request, "response": {"status": status, "body": body, **response}}


def _cases(corpus: str, named: Sequence[tuple[str, Any, Sequence[Step]]], first_resets: bool = True) -> list[Case]:
    out = []
    for i, (name, document, steps) in enumerate(named):
        prefix = resets() if (i == 0 and first_resets) else ()
        out.append(Case(corpus, name, document, (*prefix, *steps)))
    return out


def admin_cases() -> list[Case]:
    """One case per admin operation, run in this order on one server (each sees what the ones before did)."""
    sim = _sim(_pair("/admin/one"), _pair("/admin/two", "second"))
    ops: list[tuple[str, Any, Step]] = [
        ("health", None, admin("GET", "/api/health")),
        ("configuration", None, admin("GET", "/api/v2/hoverfly")),
        ("version", None, admin("GET", "/api/v2/hoverfly/version")),
        ("mode", None, admin("GET", "/api/v2/hoverfly/mode")),
        ("mode capture", None, admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})),
        (
            "mode spy first",
            None,
            admin("PUT", "/api/v2/hoverfly/mode", {"mode": "spy", "arguments": {"matchingStrategy": "first"}}),
        ),
        (
            "mode capture with arguments",
            None,
            admin(
                "PUT",
                "/api/v2/hoverfly/mode",
                {
                    "mode": "capture",
                    "arguments": {"headersWhitelist": ["*"], "stateful": True, "overwriteDuplicate": True},
                },
            ),
        ),
        (
            "mode bad whitelist",
            None,
            admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture", "arguments": {"headersWhitelist": ["*", "X-A"]}}),
        ),
        (
            "mode bad strategy",
            None,
            admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate", "arguments": {"matchingStrategy": "best"}}),
        ),
        ("mode unknown", None, admin("PUT", "/api/v2/hoverfly/mode", {"mode": "teleport"})),
        ("mode not JSON", None, admin("PUT", "/api/v2/hoverfly/mode", raw=b"mode=simulate")),
        ("mode diff", None, admin("PUT", "/api/v2/hoverfly/mode", {"mode": "diff"})),
        ("mode modify", None, admin("PUT", "/api/v2/hoverfly/mode", {"mode": "modify"})),
        ("mode synthesize", None, admin("PUT", "/api/v2/hoverfly/mode", {"mode": "synthesize"})),
        (
            "mode simulate FIRST",
            None,
            admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate", "arguments": {"matchingStrategy": "FIRST"}}),
        ),
        ("mode simulate", None, admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})),
        ("destination", None, admin("GET", "/api/v2/hoverfly/destination")),
        ("destination set", None, admin("PUT", "/api/v2/hoverfly/destination", {"destination": "admin.test"})),
        ("destination bad regex", None, admin("PUT", "/api/v2/hoverfly/destination", {"destination": "(("})),
        ("destination not JSON", None, admin("PUT", "/api/v2/hoverfly/destination", raw=b"{")),
        ("destination reset", None, admin("PUT", "/api/v2/hoverfly/destination", {"destination": "."})),
        ("middleware", None, admin("GET", "/api/v2/hoverfly/middleware")),
        (
            "middleware PUT without the API",
            None,
            admin("PUT", "/api/v2/hoverfly/middleware", {"binary": "python3", "script": "print(1)"}),
        ),
        ("usage", None, admin("GET", "/api/v2/hoverfly/usage")),
        ("upstream proxy", None, admin("GET", "/api/v2/hoverfly/upstream-proxy")),
        ("cors", None, admin("GET", "/api/v2/hoverfly/cors")),
        ("pac absent", None, admin("GET", "/api/v2/hoverfly/pac")),
        (
            "pac set",
            None,
            admin("PUT", "/api/v2/hoverfly/pac", raw=b"function FindProxyForURL(url, host) { return 'DIRECT'; }"),
        ),
        ("pac read", None, admin("GET", "/api/v2/hoverfly/pac")),
        ("pac delete", None, admin("DELETE", "/api/v2/hoverfly/pac")),
        ("actions none", None, admin("GET", "/api/v2/hoverfly/post-serve-action")),
        (
            "action bad remote",
            None,
            admin(
                "PUT", "/api/v2/hoverfly/post-serve-action", {"actionName": "a", "remote": "not a url", "delayInMs": 0}
            ),
        ),
        ("action delete unknown", None, admin("DELETE", "/api/v2/hoverfly/post-serve-action/nothing")),
        ("csv none", None, admin("GET", "/api/v2/hoverfly/templating-data-source/csv")),
        (
            "csv bad",
            None,
            admin("PUT", "/api/v2/hoverfly/templating-data-source/csv", {"name": "bad", "data": "a,b\n1\n"}),
        ),
        (
            "csv set",
            None,
            admin("PUT", "/api/v2/hoverfly/templating-data-source/csv", {"name": "one", "data": "id,name\n1,Ada\n"}),
        ),
        ("csv delete", None, admin("DELETE", "/api/v2/hoverfly/templating-data-source/csv/one")),
        ("simulation empty", None, admin("GET", "/api/v2/simulation")),
        ("simulation PUT", sim, admin("PUT", "/api/v2/simulation", sim)),
        ("simulation POST duplicate", sim, admin("POST", "/api/v2/simulation", sim)),
        ("simulation POST more", None, admin("POST", "/api/v2/simulation", _sim(_pair("/admin/three")))),
        ("simulation urlPattern", None, admin("GET", "/api/v2/simulation?urlPattern=.*two")),
        ("simulation urlPattern bad", None, admin("GET", "/api/v2/simulation?urlPattern=((")),
        ("simulation not JSON", None, admin("PUT", "/api/v2/simulation", raw=b"not json")),
        ("simulation no meta", None, admin("PUT", "/api/v2/simulation", {"data": {"pairs": []}})),
        ("simulation no schemaVersion", None, admin("PUT", "/api/v2/simulation", {"data": {"pairs": []}, "meta": {}})),
        (
            "simulation unknown version",
            None,
            admin("PUT", "/api/v2/simulation", {"data": {"pairs": []}, "meta": {"schemaVersion": "r3"}}),
        ),
        (
            "simulation schema error",
            None,
            admin("PUT", "/api/v2/simulation", {"data": {"pairs": [{}]}, "meta": {"schemaVersion": "v5"}}),
        ),
        (
            "simulation v1",
            None,
            admin(
                "PUT",
                "/api/v2/simulation",
                {
                    "data": {
                        "pairs": [
                            {"request": {"path": "/v1", "method": "GET"}, "response": {"status": 200, "body": "v1"}}
                        ]
                    },
                    "meta": {"schemaVersion": "v1"},
                },
            ),
        ),
        (
            "simulation status 0",
            None,
            admin("PUT", "/api/v2/simulation", _sim({"request": {}, "response": {"status": 0, "body": "zero"}})),
        ),
        (
            "simulation both framing headers",
            None,
            admin(
                "PUT",
                "/api/v2/simulation",
                _sim(_pair("/framing", "abc", headers={"Content-Length": ["3"], "Transfer-Encoding": ["chunked"]})),
            ),
        ),
        ("simulation schema document", None, admin("GET", "/api/v2/simulation/schema")),
        ("cache", None, admin("GET", "/api/v2/cache")),
        ("cache delete", None, admin("DELETE", "/api/v2/cache")),
        ("state PUT", None, admin("PUT", "/api/v2/state", {"state": {"a": "1", "b": "2"}})),
        ("state PATCH", None, admin("PATCH", "/api/v2/state", {"state": {"b": "3"}})),
        ("state", None, admin("GET", "/api/v2/state")),
        ("state not JSON", None, admin("PUT", "/api/v2/state", raw=b"{")),
        ("state delete", None, admin("DELETE", "/api/v2/state")),
        ("journal", None, admin("GET", "/api/v2/journal")),
        (
            "journal search",
            None,
            admin("POST", "/api/v2/journal", {"request": {"path": [{"matcher": "exact", "value": "/x"}]}}),
        ),
        ("journal search bad", None, admin("POST", "/api/v2/journal", raw=b"[")),
        ("journal page", None, admin("GET", "/api/v2/journal?offset=0&limit=1")),
        ("journal delete", None, admin("DELETE", "/api/v2/journal")),
        ("journal index", None, admin("GET", "/api/v2/journal/index")),
        ("journal index add", None, admin("POST", "/api/v2/journal/index", {"name": "Request.QueryParam.id"})),
        ("journal index delete", None, admin("DELETE", "/api/v2/journal/index/Request.QueryParam.id")),
        ("diff", None, admin("GET", "/api/v2/diff")),
        ("diff delete", None, admin("DELETE", "/api/v2/diff")),
        ("logs", None, admin("GET", "/api/v2/logs?limit=3")),
        (
            "logs text",
            None,
            Step(
                "admin",
                "GET",
                "/api/v2/logs?limit=1",
                (("Host", "localhost"), ("Accept", "text/plain")),
                label="GET /api/v2/logs as text",
            ),
        ),
        ("options simulation", None, admin("OPTIONS", "/api/v2/simulation")),
        ("options mode", None, admin("OPTIONS", "/api/v2/hoverfly/mode")),
        ("unknown path", None, admin("GET", "/api/v2/nothing-here")),
        ("wrong method", None, admin("PATCH", "/api/v2/hoverfly/mode", {"mode": "simulate"})),
        ("simulation delete", None, admin("DELETE", "/api/v2/simulation")),
    ]
    return _cases("admin", [(name, doc, [step]) for name, doc, step in ops])


def webserver_cases(docs: Sequence[SimulationDoc], rounds: int) -> list[Case]:
    """The simulations again, asked in origin form of servers started with ``-webserver``; and its mode rules."""
    cases = list(simulation_cases(docs, rounds, corpus="webserver", webserver=True))
    rules = [
        ("webserver configuration", None, [admin("GET", "/api/v2/hoverfly")]),
        ("webserver refuses capture", None, [admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})]),
        ("webserver refuses modify", None, [admin("PUT", "/api/v2/hoverfly/mode", {"mode": "modify"})]),
        ("webserver absolute URI", None, [Request(path="/x").step("an absolute URI to a web server")]),
    ]
    return cases + _cases("webserver", rules)


def delay_cases() -> list[Case]:
    """Fixed, log-normal and global delays (only whether each server waited is compared, not how long)."""
    fixed = _sim(_pair("/fixed", "fixed", fixedDelay=300))
    log_normal = _sim(
        _pair("/lognormal", "log-normal", logNormalDelay={"min": 200, "max": 400, "mean": 300, "median": 300})
    )
    global_ = _sim(
        _pair("/global", "global"),
        globalActions={
            "delays": [{"urlPattern": "delayed\\.test", "delay": 250, "httpMethod": "GET"}],
            "delaysLogNormal": [],
        },
    )
    bad = _sim(_pair("/bad", "bad", logNormalDelay={"min": 500, "max": 100, "mean": 300, "median": 300}))
    named = [
        (
            "fixed delay",
            fixed,
            [admin("PUT", "/api/v2/simulation", fixed), Request(path="/fixed").step("fixed", delay_ms=300)],
        ),
        (
            "log-normal delay",
            log_normal,
            [
                admin("PUT", "/api/v2/simulation", log_normal),
                Request(path="/lognormal").step("log-normal", delay_ms=200),
            ],
        ),
        (
            "global delay",
            global_,
            [
                admin("PUT", "/api/v2/simulation", global_),
                Request(destination="delayed.test", path="/global").step("global, matching", delay_ms=250),
                Request(destination="prompt.test", path="/global").step("global, another host"),
            ],
        ),
        ("invalid log-normal delay", bad, [admin("PUT", "/api/v2/simulation", bad)]),
    ]
    return _cases("delays", [(n, d, [*resets()[1:2], *s]) for n, d, s in named])


def middleware_cases() -> list[Case]:
    """Middleware set through the API (servers started with ``-enable-middleware-api``), in several modes."""
    sim = _sim(_pair("/mw", "from the simulation"))
    set_mw = admin("PUT", "/api/v2/hoverfly/middleware", {"binary": "python3", "script": MIDDLEWARE})
    off = admin("PUT", "/api/v2/hoverfly/middleware", {"binary": "", "script": "", "remote": ""})
    named: list[tuple[str, Any, list[Step]]] = [
        ("middleware set", MIDDLEWARE, [set_mw, admin("GET", "/api/v2/hoverfly/middleware")]),
        (
            "middleware on a simulated answer",
            {"middleware": MIDDLEWARE, "simulation": sim},
            [
                admin("PUT", "/api/v2/simulation", sim),
                Request(path="/mw").step("simulate with middleware"),
                Request(path="/mw-miss").step("a miss with middleware"),
            ],
        ),
        (
            "middleware synthesizes",
            MIDDLEWARE,
            [admin("PUT", "/api/v2/hoverfly/mode", {"mode": "synthesize"}), Request(path="/synth").step("synthesize")],
        ),
        (
            "middleware modifies",
            MIDDLEWARE,
            [
                admin("PUT", "/api/v2/hoverfly/mode", {"mode": "modify"}),
                Request(destination=UPSTREAM, path="/modify", query="a=1").step("modify against the upstream"),
                admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"}),
            ],
        ),
        (
            "middleware that fails",
            FAILING,
            [admin("PUT", "/api/v2/hoverfly/middleware", {"binary": "python3", "script": FAILING})],
        ),
        (
            "middleware that writes no JSON",
            NOT_JSON,
            [admin("PUT", "/api/v2/hoverfly/middleware", {"binary": "python3", "script": NOT_JSON})],
        ),
        (
            "middleware script without binary",
            None,
            [admin("PUT", "/api/v2/hoverfly/middleware", {"script": MIDDLEWARE})],
        ),
        (
            "remote middleware",
            None,
            [
                admin("PUT", "/api/v2/hoverfly/middleware", {"remote": f"http://{UPSTREAM}/middleware"}),
                admin("PUT", "/api/v2/simulation", sim),
                Request(path="/mw").step("simulate with remote middleware"),
            ],
        ),
        ("middleware removed", None, [off, admin("GET", "/api/v2/hoverfly")]),
        (
            "synthesize without middleware",
            None,
            [
                admin("PUT", "/api/v2/hoverfly/mode", {"mode": "synthesize"}),
                Request(path="/synth").step("synthesize, no middleware"),
            ],
        ),
    ]
    return _cases("middleware", named)


def action_cases() -> list[Case]:
    """Post-serve actions: a local script writing what it got to a file, and a remote one (the upstream)."""
    local = {"actionName": "record", "binary": "python3", "script": ACTION, "delayInMs": 0}
    remote = {"actionName": "remote", "remote": f"http://{UPSTREAM}/action", "delayInMs": 0}
    sim = _sim(_pair("/act", "acted", postServeAction="record"), _pair("/remote", "remote", postServeAction="remote"))
    unknown = _sim(_pair("/nope", postServeAction="missing"))
    named: list[tuple[str, Any, list[Step]]] = [
        ("action set", local, [admin("PUT", "/api/v2/hoverfly/post-serve-action", local)]),
        (
            "remote action set",
            remote,
            [
                admin("PUT", "/api/v2/hoverfly/post-serve-action", remote),
                admin("GET", "/api/v2/hoverfly/post-serve-action"),
            ],
        ),
        ("pairs with actions", sim, [admin("PUT", "/api/v2/simulation", sim)]),
        (
            "local action runs",
            sim,
            [
                Request(path="/act").step("a hit with a local action"),
                Step("collect", "FILE", "action-record.jsonl", label="what the action got"),
            ],
        ),
        (
            "remote action runs",
            sim,
            [
                Request(path="/remote").step("a hit with a remote action"),
                Step("collect", "UPSTREAM", "/action", label="what the remote action got"),
            ],
        ),
        ("unknown action in a simulation", unknown, [admin("PUT", "/api/v2/simulation", unknown)]),
        (
            "actions deleted",
            None,
            [
                admin("DELETE", "/api/v2/hoverfly/post-serve-action/record"),
                admin("DELETE", "/api/v2/hoverfly/post-serve-action/remote"),
            ],
        ),
    ]
    return _cases("actions", named)


def upstream_cases() -> list[Case]:
    """Capture, spy, diff and synthesize against the local upstream (which echoes what it received)."""
    up = UPSTREAM
    gets = [
        Request(destination=up, path="/capture/one", query="x=1&y=2", headers=(("X-Test", "a"),)).step(
            "GET to the upstream"
        ),
        Request("POST", up, "/capture/two", "", (("Content-Type", "application/json"),), '{"a":1}').step(
            "POST to the upstream"
        ),
        Request(destination=up, path="/status/404").step("a 404 from the upstream"),
    ]
    spy_sim = _sim(
        {"request": {"path": [{"matcher": "exact", "value": "/spy/hit"}]}, "response": {"status": 200, "body": "spied"}}
    )
    diff_sim = _sim(
        {
            "request": {"path": [{"matcher": "exact", "value": "/diff/one"}]},
            "response": {"status": 200, "body": "expected", "headers": {"X-Upstream": ["other"]}},
        }
    )
    named: list[tuple[str, Any, list[Step]]] = [
        (
            "capture",
            None,
            [
                admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"}),
                *gets,
                admin("GET", "/api/v2/simulation", label="captured"),
            ],
        ),
        ("replay captured", None, [admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"}), *gets]),
        (
            "capture stateful, all headers",
            None,
            [
                admin("DELETE", "/api/v2/simulation"),
                admin(
                    "PUT",
                    "/api/v2/hoverfly/mode",
                    {"mode": "capture", "arguments": {"headersWhitelist": ["*"], "stateful": True}},
                ),
                gets[0],
                gets[0],
                admin("GET", "/api/v2/simulation", label="captured statefully"),
            ],
        ),
        (
            "spy",
            spy_sim,
            [
                admin("PUT", "/api/v2/simulation", spy_sim),
                admin("PUT", "/api/v2/hoverfly/mode", {"mode": "spy"}),
                Request(destination=up, path="/spy/hit").step("spy, a hit"),
                Request(destination=up, path="/spy/miss").step("spy, a miss"),
            ],
        ),
        (
            "spy capturing misses",
            spy_sim,
            [
                admin("PUT", "/api/v2/hoverfly/mode", {"mode": "spy", "arguments": {"captureOnMiss": True}}),
                Request(destination=up, path="/spy/new").step("spy, a miss captured"),
                admin("GET", "/api/v2/simulation", label="after spying"),
            ],
        ),
        (
            "diff",
            diff_sim,
            [
                admin("PUT", "/api/v2/simulation", diff_sim),
                admin("PUT", "/api/v2/hoverfly/mode", {"mode": "diff"}),
                Request(destination=up, path="/diff/one").step("diff, a pair"),
                Request(destination=up, path="/diff/none").step("diff, no pair"),
                admin("GET", "/api/v2/diff"),
                admin("DELETE", "/api/v2/diff"),
                admin("GET", "/api/v2/diff", label="diff after delete"),
            ],
        ),
        (
            "destination outside",
            None,
            [
                admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"}),
                admin("PUT", "/api/v2/simulation", spy_sim),
                admin("PUT", "/api/v2/hoverfly/destination", {"destination": "only.test"}),
                Request(destination=up, path="/spy/hit").step("a host outside the destination"),
                admin("PUT", "/api/v2/hoverfly/destination", {"destination": "."}),
            ],
        ),
        ("usage after", None, [admin("GET", "/api/v2/hoverfly/usage")]),
    ]
    return _cases("upstream", named)


def journal_cases(
    docs: Sequence[SimulationDoc], templates: Sequence[TemplateCase], sources: Sequence[tuple[str, str]]
) -> list[Case]:
    """The ``journal`` helper: each mined simulation or template that uses it, with its index created first."""
    cases: list[Case] = []
    lookup = _sim(
        _pair("/users", '{"name":"Ada"}', headers={"Content-Type": ["application/json"]}),
        {
            "request": {"path": [{"matcher": "exact", "value": "/lookup"}]},
            "response": {
                "status": 200,
                "templated": True,
                "body": "{{ journal 'Request.QueryParam.id' '1' 'response' 'jsonpath' '$.name' }}",
            },
        },
    )
    own = SimulationDoc("journal lookup (written here)", json.dumps(lookup), lookup)
    for doc in [own, *(d for d in docs if "journal" in d.text and "{{" in d.text)]:
        keys = sorted(set(re.findall(r"journal\s+\\?['\"]([^'\"\\]+)", doc.text))) or ["Request.QueryParam.id"]
        index = [admin("POST", "/api/v2/journal/index", {"name": k}, f"index {k}") for k in keys]
        body = [admin("PUT", "/api/v2/simulation", raw=doc.text.encode(), label="PUT the simulation")]
        hits = [
            Request(path="/users", query="id=1").step("seed the journal"),
            Request(path="/lookup", query="id=1").step("journal lookup"),
        ]
        if doc is not own:
            pairs = doc.document.get("data", {}).get("pairs", []) if isinstance(doc.document, dict) else []
            hits = [
                pair_request(p).step(f"pair {i} request {r + 1}") for r in range(2) for i, p in enumerate(pairs[:10])
            ]
        removals = [admin("DELETE", f"/api/v2/journal/index/{quote(k, safe='')}") for k in keys]
        tail = [admin("GET", "/api/v2/journal/index"), *removals]
        cases.append(Case("journal", f"journal: {doc.origin}", doc.document, (*resets(), *index, *body, *hits, *tail)))
    for case in templates:
        if "journal" in case.template:
            made = template_case(case, sources, corpus="journal")
            keys = sorted(set(re.findall(r"journal\s+['\"]([^'\"]+)", case.template))) or ["Request.QueryParam.id"]
            indexes = [admin("POST", "/api/v2/journal/index", {"name": k}, f"index {k}", compare=False) for k in keys]
            at = next(i for i, step in enumerate(made.steps) if step.label == "the templated answer")
            again = made.steps[at]
            steps = (*made.steps[:at], *indexes, again, again, *made.steps[at + 1 :])
            cases.append(Case("journal", f"journal: {case.origin}", made.document, steps))
    return cases
