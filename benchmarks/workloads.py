"""The workloads the end-to-end benchmarks drive (``benchmarks/e2e.py``, ``benchmarks/redis_cost.py``):
each a simulation, the requests sent to it, and the answer the first one must get.

W1 to W7 and M10k are design.md §5's and issue 20's; W8 to W14 are what load tests of real services
send besides (browser headers, glob and body matchers, templates with helpers, state and the body,
a sequence), measured against Hoverfly since stop 35; W15 to W18 are issue 39's templated answers (an
order API built from the body, a stateful journey step, an 800 KB body, a loop over the body's array).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

HOST = "api.bench.test"


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    """May hold ``{n}``: the run's own number and a counter, so that every request is new to any
    cache, also in the next run against the same server (a round of ``--rounds``)."""
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""
    host: str = HOST
    """The URL's host (a real service's ``127.0.0.1:port`` for the modes that forward)."""
    absolute: bool = True
    """Sent as a proxy's request, ``GET http://host/path`` (else as a web server's, ``GET /path``)."""

    def target(self, path: str) -> str:
        return f"http://{self.host}{path}" if self.absolute else path


@dataclass(frozen=True)
class Workload:
    name: str
    title: str
    pairs: list[dict[str, Any]]
    requests: list[Request]
    expect: bytes
    """The body the first request must get (checked before timing)."""
    flags: tuple[str, ...] = ()
    random_pick: bool = False
    """wrk picks one of ``requests`` at random for every request (else the first, always)."""
    state: dict[str, str] = field(default_factory=dict)
    """The state set before the first request (``PUT /api/v2/state``)."""
    status: int = 200
    """The status every request must get (W7's are all misses)."""
    webserver: bool = False
    """simproxy started with ``-webserver`` (and the requests in origin form: ``as_webserver``)."""
    more_flags: tuple[str, ...] = ()
    """simproxy's flags given for the run (``--flags``), not the workload's own."""

    def simproxy_flags(self) -> tuple[str, ...]:
        return (*self.flags, *self.more_flags, *(("-webserver",) if self.webserver else ()))


def as_webserver(workload: Workload) -> Workload:
    """``workload`` against ``-webserver``: the flag added, every request in origin form."""
    requests = [replace(r, absolute=False) for r in workload.requests]
    return replace(workload, requests=requests, webserver=True)


def stub(path: str, body: str, **request: Any) -> dict[str, Any]:
    return {
        "request": {"path": [{"matcher": "exact", "value": path}], **request},
        "response": {"status": 200, "body": body, "headers": {"Content-Type": ["application/json"]}},
    }


def workloads() -> dict[str, Workload]:
    hello = '{"hello": "world"}'
    items = [stub(f"/item/{i}", f'{{"item": {i}}}') for i in range(500)]
    w3 = {
        "request": {
            "path": [{"matcher": "exact", "value": "/orders"}],
            "method": [{"matcher": "exact", "value": "POST"}],
            "headers": {"X-Api-Key": [{"matcher": "exact", "value": "secret"}]},
            "query": {"region": [{"matcher": "exact", "value": "eu"}]},
            "body": [{"matcher": "jsonpartial", "value": '{"customer": {"id": 42}}'}],
        },
        "response": {"status": 201, "body": '{"order": "created"}', "headers": {"Content-Type": ["application/json"]}},
    }
    w4 = {
        "request": {"path": [{"matcher": "glob", "value": "/greet/*"}]},
        "response": {
            "status": 200,
            "templated": True,
            "body": '{"hello": "{{ Request.QueryParam.name }}", "path": "{{ Request.Path.[1] }}", '
            '"method": "{{ Request.Method }}"}',
            "headers": {"Content-Type": ["application/json"]},
        },
    }
    w5 = [
        {
            "request": {"path": [{"matcher": "exact", "value": "/flip"}], "requiresState": {"side": state}},
            "response": {"status": 200, "body": state, "transitionsState": {"side": other}},
        }
        for state, other in (("a", "b"), ("b", "a"))
    ]
    many: list[dict[str, Any]] = [
        {
            "request": {
                "path": [{"matcher": "exact", "value": f"/api/v1/resource/{i}"}],
                "method": [{"matcher": "exact", "value": "GET"}],
                "destination": [{"matcher": "exact", "value": HOST}],
                "body": [{"matcher": "exact", "value": ""}],
            },
            "response": {
                "status": 200,
                "body": json.dumps({"id": i, "name": f"resource {i}", "tags": ["a", "b", "c"], "pad": "x" * 300}),
                "headers": {"Content-Type": ["application/json"], "X-Request-Id": [f"req-{i}"]},
            },
        }
        for i in range(10_000)
    ]
    post = Request(
        "POST",
        "/orders?region=eu",
        (("X-Api-Key", "secret"), ("Content-Type", "application/json")),
        '{"customer": {"id": 42, "name": "Ada"}, "items": [1, 2, 3]}',
    )
    all_ = [
        Workload("W1", "one small JSON stub", [stub("/hello", hello)], [Request("GET", "/hello")], hello.encode()),
        Workload(
            "W2", "500 exact-path stubs, the last requested", items, [Request("GET", "/item/499")], b'{"item": 499}'
        ),
        Workload(
            "W2r",
            "500 stubs, a random one with a unique query (no cache helps)",
            items,
            [Request("GET", f"/item/{i}?u={{n}}") for i in range(500)],
            b'{"item": 0}',
            random_pick=True,
        ),
        Workload(
            "W3", "POST with header, query and JSON-body matchers", [w3], [post], b'{"order": "created"}', status=201
        ),
        Workload(
            "W4",
            "a templated response",
            [w4],
            [Request("GET", "/greet/world?name=Ada")],
            b'{"hello": "Ada", "path": "world", "method": "GET"}',
        ),
        Workload(
            "W5",
            "a stateful walk (every request a state step)",
            w5,
            [Request("GET", "/flip")],
            b"a",
            state={"side": "a"},
        ),
        Workload(
            "W6",
            "W1 with the journal off (-journal-size=0)",
            [stub("/hello", hello)],
            [Request("GET", "/hello")],
            hello.encode(),
            flags=("-journal-size", "0"),
        ),
        Workload(
            "W7",
            "every request a new miss in 1,000 pairs (the closest miss found each time)",
            [stub(f"/item/{i}", f'{{"item": {i}}}') for i in range(1_000)],
            [Request("GET", "/item/{n}/absent")],
            b"",
            status=502,
        ),
        Workload(
            "M10k",
            "10,000 captured-style pairs, the last requested (memory)",
            many,
            [Request("GET", "/api/v1/resource/9999")],
            json.dumps({"id": 9999, "name": "resource 9999", "tags": ["a", "b", "c"], "pad": "x" * 300}).encode(),
        ),
    ]
    return {w.name: w for w in (*all_, *_beside())}


_BROWSER = (
    ("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"),
    ("Accept", "application/json, text/plain, */*"),
    ("Accept-Encoding", "gzip, deflate, br"),
    ("Accept-Language", "en-GB,en;q=0.9"),
    ("Cookie", "session=abc123def456; theme=dark; consent=yes"),
    ("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc"),
    ("Cache-Control", "no-cache"),
    ("Referer", "http://app.test/dashboard"),
    ("X-Request-Id", "req-{n}"),
)
_JSON = (("Content-Type", "application/json"),)


def _exact(value: str) -> list[dict[str, str]]:
    return [{"matcher": "exact", "value": value}]


def _templated(path: list[dict[str, str]], body: str, status: int = 200, **request: Any) -> dict[str, Any]:
    return {
        "request": {"path": path, **request},
        "response": {"status": status, "templated": True, "body": body},
    }


def _beside() -> list[Workload]:
    """What load tests of real services send besides W1 to W7 (issue 20's table, stop 35)."""
    hello = '{"hello": "world"}'
    globs = [stub(f"/shop{i}/*/orders/*", f'{{"shop": {i}}}') for i in range(50)]
    for pair in globs:
        pair["request"]["path"][0]["matcher"] = "glob"
    bodies = [
        {
            "request": {
                "method": _exact("POST"),
                "path": _exact(f"/orders{i}"),
                "body": [{"matcher": "jsonpath", "value": "$.customer.id"}],
            },
            "response": {"status": 201, "body": '{"order": "created"}'},
        }
        for i in range(20)
    ]
    helpers = _templated(
        [{"matcher": "glob", "value": "/users/*"}],
        '{"id": "{{ Request.Path.[1] }}", "token": "{{ randomString }}", "when": "{{ now \'\' \'unix\' }}", '
        '"agent": "{{ Request.Header.User-Agent }}"}',
    )
    printing_state = [
        _templated(_exact("/who"), "user={{ State.user }}"),
        {"request": {"path": _exact("/login"), "requiresState": {"user": "ada"}}, "response": {"body": "ok"}},
    ]
    reading_body = _templated(
        _exact("/orders"),
        '{"id": "{{ randomUuid }}", "customer": "{{ Request.Body \'jsonpath\' \'$.customer.name\' }}", '
        "\"first\": {{ Request.Body 'jsonpath' '$.items[0]' }} }",
        201,
        method=_exact("POST"),
    )
    sequence = [
        {
            "request": {"path": _exact("/poll"), "requiresState": {"sequence:1": str(step)}},
            "response": {"status": 200, "body": f"step {step}", "transitionsState": {"sequence:1": str(step % 3 + 1)}},
        }
        for step in (1, 2, 3)
    ]
    order_api = _templated(
        _exact("/checkout"),
        "{\"order\": \"{{ Request.Body 'jsonpath' '$.id' }}\", "
        "\"customer\": \"{{ Request.Body 'jsonpath' '$.customer.name' }}\", "
        "\"total\": {{ multiply (Request.Body 'jsonpath' '$.qty') '9.5' '' }}, "
        "\"tier\": \"{{#if (isGreaterThan (Request.Body 'jsonpath' '$.qty') '10')}}bulk{{else}}retail{{/if}}\", "
        "\"tags\": [{{#each (split 'a,b,c' ',')}}\"{{this}}\"{{#unless @last}},{{/unless}}{{/each}}], "
        '"at": "{{ now \'2006-01-02\' \'\' }}", "via": "{{ Request.Header.X-Client }}"}',
        201,
        method=_exact("POST"),
    )
    journey = [
        {
            "request": {"path": _exact("/basket"), "requiresState": {"stage": "browsing"}},
            "response": {
                "status": 200,
                "templated": True,
                "body": '{"user": "{{ State.user }}", "stage": "{{ State.stage }}", '
                '"item": "{{ Request.QueryParam.sku }}"}',
                "transitionsState": {"stage": "browsing"},
            },
        }
    ]
    filler = "x" * 1000
    big = "".join(f'{{"n": {i}, "pad": "{filler}"}},' for i in range(800))
    large_body = _templated(
        _exact("/report"),
        '{"id": "{{ Request.QueryParam.id }}", "items": [' + big + "{}], "
        '"method": "{{ Request.Method }}", "agent": "{{ Request.Header.User-Agent }}", "n": "{{ Request.Path.[0] }}"}',
    )
    items = json.dumps({"items": [{"sku": f"s{i}", "qty": i} for i in range(100)]})
    each_body = _templated(
        _exact("/lines"),
        '[{{#each (Request.Body \'jsonpath\' \'$.items\')}}{"line": {{@index}}, "sku": "{{this.sku}}"}'
        "{{#unless @last}},{{/unless}}{{/each}}]",
        method=_exact("POST"),
    )
    return [
        Workload(
            "W8",
            "one stub, nine browser headers, a new request id each time",
            [stub("/hello", hello)],
            [Request("GET", "/hello", _BROWSER)],
            hello.encode(),
        ),
        Workload(
            "W9",
            "50 glob pairs, a new path segment each time",
            globs,
            [Request("GET", f"/shop{i}/{{n}}/orders/7") for i in range(0, 50, 5)],
            b'{"shop": 0}',
            random_pick=True,
        ),
        Workload(
            "W10",
            "a jsonpath body matcher among 20 pairs, a new query each time",
            bodies,
            [Request("POST", "/orders7?x={n}", _JSON, '{"customer": {"id": 42}, "items": [1, 2, 3]}')],
            b'{"order": "created"}',
            status=201,
        ),
        Workload(
            "W11",
            "a template with randomString, now, a header and a path segment, a new path each time",
            [helpers],
            [Request("GET", "/users/{n}", (("User-Agent", "wrk"),))],
            b"",
        ),
        Workload(
            "W12",
            "a template printing State (the simulation has state)",
            printing_state,
            [Request("GET", "/who")],
            b"user=ada",
            state={"user": "ada"},
        ),
        Workload(
            "W13",
            "a template reading the JSON body twice and a randomUuid, a new body each time",
            [reading_body],
            [Request("POST", "/orders", _JSON, '{"customer": {"name": "Ada{n}"}, "items": [1, 2, 3]}')],
            b"",
            status=201,
        ),
        Workload(
            "W14",
            "a 3-step sequence (requiresState, transitionsState), walked round",
            sequence,
            [Request("GET", "/poll")],
            b"step 1",
            state={"sequence:1": "1"},
        ),
        Workload(
            "W15",
            "an order-API answer: jsonpath on the body (3x), multiply, #if isGreaterThan, #each split, now, a header",
            [order_api],
            [
                Request(
                    "POST",
                    "/checkout",
                    (*_JSON, ("X-Client", "web")),
                    '{"id": "o{n}", "customer": {"name": "Ada"}, "qty": 12}',
                )
            ],
            b"",
            status=201,
        ),
        Workload(
            "W16",
            "a stateful journey step printing State fields and a query parameter",
            journey,
            [Request("GET", "/basket?sku=a{n}")],
            b"",
            state={"user": "ada", "stage": "browsing"},
        ),
        Workload(
            "W17",
            "an 800 KB templated body with five expressions",
            [large_body],
            [Request("GET", "/report?id={n}", (("User-Agent", "wrk"),))],
            b"",
        ),
        Workload(
            "W18",
            "#each over a 100-item JSON array from the request body",
            [each_body],
            [Request("POST", "/lines", _JSON, items)],
            b"",
        ),
    ]
