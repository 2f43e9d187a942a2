"""Cases of the differential harness built from mined inputs: simulations, templates, matcher cases.

A case is a named list of ``Step``s run on both servers, with the input it came from (its
reproduction). For a simulation document the steps PUT it, read the export back, send requests built
from each pair's matchers (a request that should hit it, built from exact and glob values and simple
regexes; several rounds, so state and sequences move on), a few misses, and read the state and the
journal. A template is served by a pair that matches any request (``templated``), asked with a
request that gives it data. A matcher case is one pair whose body matchers are the case's, and a
request whose body is the case's input.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from benchmarks.corpus import MatcherCase, RequestSpec, SimulationDoc, TemplateCase
from benchmarks.diffwire import Step

MAX_PAIRS = 25
"""Pairs of one simulation that get requests of their own (the rest are still loaded and matched)."""
LONG_DELAY_MS = 500
"""A pair that delays its answer longer than this gets one request, not one per round."""
RANDOM = re.compile(r"\b(random\w*|now|faker|currentDateTime\w*|uuid)\b", re.IGNORECASE)
JSON_BODY = (
    '{"id":123,"username":"hoverfly","name":"Ben","age":30,"paidInFull":true,"text":"hello world",'
    '"products":[1,2],"ids":[1,2],"lineitems":{"lineitem":[{"upc":"1001","quantity":"1","price":"3.50"},'
    '{"upc":"1002","quantity":"2","price":"4.50"}]}}'
)
XML_BODY = "<root><id>123</id><name>hoverfly</name><items><item>1</item><item>2</item></items></root>"
FORM_BODY = "email=foo%40bar.com&name=hoverfly&id=123"


def _b64url(value: bytes) -> str:
    return base64.urlsafe_b64encode(value).rstrip(b"=").decode()


def jwt(payload: dict[str, Any]) -> str:
    """An unsigned-looking JWT (HS256 header, the payload, a fixed signature): matchers only decode it."""
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    return f"{header}.{_b64url(json.dumps(payload, separators=(',', ':')).encode())}.{_b64url(b'differential')}"


BEARER = "Bearer " + jwt({"id": "7b0d170d-2c4a-4fd5-a0e3-3b5b8a0c6d5e", "sub": "1234567890", "name": "John Doe"})


@dataclass(frozen=True)
class Case:
    """A named input and the steps that exercise it; ``document`` is what a reproduction shows."""

    corpus: str
    name: str
    document: Any
    steps: tuple[Step, ...]
    expected_hit: bool | None = None


@dataclass(frozen=True)
class Request:
    """A request to the proxy port, before it is written in proxy (absolute URI) or web-server form."""

    method: str = "GET"
    destination: str = "differential.test"
    path: str = "/"
    query: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""

    def step(self, label: str, *, webserver: bool = False, loose: bool = False, delay_ms: int = 0) -> Step:
        """The request as a step: ``GET http://host/path?q`` to a proxy, ``GET /path?q`` to a web server."""
        path = self.path if self.path.startswith("/") else "/" + self.path
        target = path + (f"?{self.query}" if self.query else "")
        if not webserver:
            target = f"http://{self.destination}{target}"
        headers = (("Host", self.destination), *self.headers)
        return Step("proxy", self.method, target, headers, self.body.encode(), label, loose=loose, delay_ms=delay_ms)


def admin(
    method: str, path: str, body: Any = None, label: str = "", *, raw: bytes | None = None, compare: bool = True
) -> Step:
    """A step to the admin API; ``body`` is sent as JSON, ``raw`` as it is."""
    data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
    headers: tuple[tuple[str, str], ...] = (("Host", "localhost"),)
    if data:
        headers += (("Content-Type", "application/json"),)
    return Step("admin", method, path, headers, data, label or f"{method} {path}", compare=compare)


def resets() -> tuple[Step, ...]:
    """Set-up steps that bring a server back to an empty simulate mode (their answers are not compared)."""
    return (
        admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"}, "reset mode", compare=False),
        admin("DELETE", "/api/v2/simulation", label="reset simulation", compare=False),
        admin("DELETE", "/api/v2/state", label="reset state", compare=False),
        admin("DELETE", "/api/v2/journal", label="reset journal", compare=False),
    )


# ---------------------------------------------------------------------------------------------
# requests that should hit a pair


def _regex_sample(pattern: str) -> str | None:
    """A string the simple regex ``pattern`` matches, or None when it is not simple enough to guess."""
    text = pattern.removeprefix("^").removesuffix("$")
    for token, value in (
        (".*", "x"),
        (".+", "x"),
        (r"\d+", "1"),
        ("[0-9]+", "1"),
        (r"\d", "1"),
        (r"\w+", "x"),
        ("[a-z]+", "x"),
    ):
        text = text.replace(token, value)
    text = re.sub(r"\\(.)", r"\1", text)
    try:
        return text if re.search(pattern, text) else None
    except re.error:
        return None


def _path_json(path: str) -> str | None:
    """A JSON body holding the dotted jsonpath ``$.a.b`` (no brackets or filters)."""
    match = re.fullmatch(r"\$((?:\.[A-Za-z_][\w-]*)+)", path.strip())
    if match is None:
        return None
    value: Any = "x"
    for key in reversed(match[1].split(".")[1:]):
        value = {key: value}
    return json.dumps(value)


def _path_xml(path: str) -> str | None:
    """An XML body holding the plain XPath ``/a/b`` (no predicates or functions)."""
    if not re.fullmatch(r"(/[A-Za-z_][\w-]*)+", path.strip()):
        return None
    names = path.strip().split("/")[1:]
    return "".join(f"<{n}>" for n in names) + "x" + "".join(f"</{n}>" for n in reversed(names))


def sample(matchers: Any) -> str | None:
    """A value the field matchers accept: v5 matcher lists, v2-v4 ``{"exactMatch": ...}`` objects, v1 strings."""
    if isinstance(matchers, str):
        return matchers
    if isinstance(matchers, dict):
        for key, value in matchers.items():
            if isinstance(value, str):
                name = key.removesuffix("Match").lower()
                return sample([{"matcher": name, "value": value}])
        return None
    if not isinstance(matchers, list):
        return None
    for matcher in matchers:
        if not isinstance(matcher, dict):
            continue
        name = str(matcher.get("matcher") or "exact").lower()
        value = matcher.get("value")
        if name == "array" and isinstance(value, list):
            return ";".join(map(str, value))
        if name == "jwt" and isinstance(value, str):
            try:
                parts = json.loads(value)
            except ValueError:
                continue
            return jwt(parts.get("payload", {}) if isinstance(parts, dict) else {})
        if name == "negate":
            return "differential-negated"
        if name == "form" and isinstance(value, dict):
            fields = [(k, sample(v) or "x") for k, v in value.items()]
            return "&".join(f"{quote(k)}={quote(v)}" for k, v in fields)
        if not isinstance(value, str):
            continue
        found = {
            "exact": value,
            "glob": value.replace("*", "x"),
            "regex": _regex_sample(value),
            "json": value,
            "jsonpartial": value,
            "xml": value,
            "xmltemplated": value,
            "jsonpath": _path_json(value),
            "xpath": _path_xml(value),
        }.get(name)
        if found is not None:
            return found
    return None


def _values(field: Any) -> list[str]:
    """The values for one header or query key (an ``array`` matcher gives several)."""
    if isinstance(field, list) and field and all(isinstance(v, str) for v in field):
        return list(field)  # v1-v4 headers: the values themselves
    if isinstance(field, list):
        for matcher in field:
            if isinstance(matcher, dict) and str(matcher.get("matcher", "")).lower() == "array":
                value = matcher.get("value")
                if isinstance(value, list):
                    return [str(v) for v in value]
    found = sample(field)
    return [] if found is None else [found]


def pair_request(pair: Any) -> Request:
    """A request built to hit ``pair`` (fields it cannot guess are left at harmless defaults)."""
    matcher = (pair.get("request") or pair.get("requestMatcher") or {}) if isinstance(pair, dict) else {}
    if not isinstance(matcher, dict):
        matcher = {}
    query = ""
    items: list[tuple[str, str]] = []
    for key in ("query", "queriesWithMatchers"):
        value = matcher.get(key)
        if isinstance(value, dict) and not any(k.endswith("Match") for k in value):
            items += [(k, v) for k, field in value.items() for v in _values(field)]
        elif value is not None and key == "query":
            query = sample(value) or ""
    deprecated = sample(matcher.get("deprecatedQuery")) if matcher.get("deprecatedQuery") else None
    query = "&".join(filter(None, [query, deprecated or "", "&".join(f"{quote(k)}={quote(v)}" for k, v in items)]))
    query = quote(query, safe="=&;/:+,%?@!$'()*[]~-._")  # a raw query may hold spaces
    headers: list[tuple[str, str]] = []
    for key in ("headers", "headersWithMatchers"):
        value = matcher.get(key)
        if isinstance(value, dict):
            headers += [(k, v) for k, field in value.items() for v in _values(field)]
    body = sample(matcher.get("body")) or ""
    method = sample(matcher.get("method")) or ("POST" if body else "GET")
    destination = sample(matcher.get("destination")) or "differential.test"
    path = sample(matcher.get("path")) or "/"
    safe = "".join(c for c in destination if c.isalnum() or c in ".-:") or "differential.test"
    return Request(method.upper(), safe, quote(path, safe="/%:@!$&'()*+,;=-._~"), query, tuple(headers), body)


def _delay_of(pair: Any, request: Request, data: Any) -> int:
    """The least delay (ms) the simulation asks for this request: the pair's own, or a global one."""
    response = pair.get("response") if isinstance(pair, dict) else None
    delay = 0
    if isinstance(response, dict):
        if isinstance(response.get("fixedDelay"), int):
            delay = response["fixedDelay"]
        log_normal = response.get("logNormalDelay")
        if isinstance(log_normal, dict) and isinstance(log_normal.get("min"), int):
            delay = max(delay, log_normal["min"])
    actions = data.get("globalActions") if isinstance(data, dict) else None
    if isinstance(actions, dict):
        for rule in [*(actions.get("delays") or []), *(actions.get("delaysLogNormal") or [])]:
            if not isinstance(rule, dict):
                continue
            try:
                hit = re.search(str(rule.get("urlPattern", "")), request.destination + request.path)
            except re.error:
                hit = None
            method = str(rule.get("httpMethod") or "")
            if hit and method in ("", request.method):
                value = rule.get("delay", rule.get("min", 0))
                delay = max(delay, value if isinstance(value, int) else 0)
    return delay


def simulation_steps(doc: Any, text: str, rounds: int, *, webserver: bool = False) -> tuple[Step, ...]:
    """PUT the document, read the export, hit each pair ``rounds`` times, miss twice, read state and journal."""
    steps = [*resets(), admin("PUT", "/api/v2/simulation", raw=text.encode(), label="PUT the simulation")]
    steps.append(admin("GET", "/api/v2/simulation", label="export"))
    data = doc.get("data") if isinstance(doc, dict) else None
    pairs = data.get("pairs") if isinstance(data, dict) else None
    pairs = pairs if isinstance(pairs, list) else []
    requests = [
        (i, pair_request(p), _delay_of(p, pair_request(p), data), _random(p)) for i, p in enumerate(pairs[:MAX_PAIRS])
    ]
    for round_ in range(rounds):
        for i, request, delay, loose in requests:
            if round_ and delay > LONG_DELAY_MS:
                continue
            steps.append(
                request.step(f"pair {i} request {round_ + 1}", webserver=webserver, delay_ms=delay, loose=loose)
            )
    steps.append(Request(path="/differential-miss").step("a miss", webserver=webserver))
    if requests:
        first = requests[0][1]
        moved = Request(
            first.method,
            first.destination,
            first.path.rstrip("/") + "/differential-miss",
            first.query,
            first.headers,
            first.body,
        )
        steps.append(moved.step("pair 0 with a longer path", webserver=webserver))
    journal = admin("GET", "/api/v2/journal", label="journal after")
    if any(pair_random for *_, pair_random in requests):
        journal = Step(
            journal.port, journal.method, journal.target, journal.headers, journal.body, journal.label, loose=True
        )
    steps += [admin("GET", "/api/v2/state", label="state after"), journal]
    return tuple(steps)


def _random(pair: Any) -> bool:
    """Whether the pair's answer is a template that prints random or time-dependent values."""
    response = pair.get("response") if isinstance(pair, dict) else None
    return isinstance(response, dict) and bool(response.get("templated")) and bool(RANDOM.search(json.dumps(response)))


def simulation_cases(
    docs: Sequence[SimulationDoc], rounds: int, *, corpus: str = "simulations", webserver: bool = False
) -> Iterator[Case]:
    for doc in docs:
        yield Case(
            corpus, doc.origin, doc.document, simulation_steps(doc.document, doc.text, rounds, webserver=webserver)
        )


# ---------------------------------------------------------------------------------------------
# templates


def template_request(template: str, spec: RequestSpec) -> Request:
    """The request a template is asked with: what its test gave, else path, query, headers and a body it can read."""
    if spec.body is not None:
        body, content_type = (
            spec.body,
            "application/json" if spec.body.lstrip().startswith(("{", "[")) else "application/xml",
        )
    elif "FormData" in template:
        body, content_type = FORM_BODY, "application/x-www-form-urlencoded"
    elif "xpath" in template.lower() and "jsonpath" not in template.lower():
        body, content_type = XML_BODY, "application/xml"
    else:
        body, content_type = JSON_BODY, "application/json"
    query = spec.query or (("myParam", "bar1"), ("myParam", "bar2"), ("id", "1"), ("sound", "oink"), ("singular", "1"))
    headers = spec.headers or (("X-Header-Id", "bar1"), ("X-Header-Id", "bar2"), ("Authorization", BEARER))
    return Request(
        method=(spec.method or "POST").upper(),
        destination=spec.destination or "www.foo.com",
        path=spec.path or "/zero/one/two",
        query="&".join(f"{quote(k)}={quote(v)}" for k, v in query),
        headers=(*headers, ("Content-Type", content_type)),
        body=body,
    )


def templated_simulation(template: str) -> dict[str, Any]:
    """One pair matching every request, answering ``template`` rendered."""
    response = {"status": 200, "body": template, "templated": True}
    return {"data": {"pairs": [{"request": {}, "response": response}]}, "meta": {"schemaVersion": "v5.2"}}


def csv_steps(sources: Sequence[tuple[str, str]]) -> tuple[Step, ...]:
    """Set-up steps loading the CSV data sources (afresh: templates may change them)."""
    return tuple(
        admin("PUT", "/api/v2/hoverfly/templating-data-source/csv", {"name": n, "data": d}, f"CSV {n}", compare=False)
        for n, d in sources
    )


def csv_cleanup(sources: Sequence[tuple[str, str]]) -> tuple[Step, ...]:
    """Steps deleting the CSV data sources again (a listing of several comes in random order from Hoverfly)."""
    path = "/api/v2/hoverfly/templating-data-source/csv/"
    return tuple(admin("DELETE", path + quote(n, safe=""), label=f"delete CSV {n}", compare=False) for n, _ in sources)


def template_case(case: TemplateCase, sources: Sequence[tuple[str, str]], corpus: str = "templates") -> Case:
    simulation = templated_simulation(case.template)
    state = dict(case.state) or {"basket": "eggs"}
    request = template_request(case.template, case.request)
    steps = (
        *resets(),
        *csv_steps(sources),
        admin("PUT", "/api/v2/state", {"state": state}, "state", compare=False),
        admin("PUT", "/api/v2/simulation", simulation, "PUT the templated pair"),
        request.step("the templated answer", loose=bool(RANDOM.search(case.template))),
        *csv_cleanup(sources),
    )
    document = {"template": case.template, "state": state, "simulation": simulation}
    return Case(corpus, case.origin, document, steps)


def pets_csv() -> str:
    """A data source for the names the docs' examples use (``pets``) when the tree gives none."""
    rows = ["id,category,name,status", "1000,cats,Sylvester,available", "1001,cats,Tom,available"]
    rows += ["1002,dogs,Zipper,available", "21,cats,Garfield,sold", "22,dogs,Rex,pending"]
    return "\n".join(rows) + "\n"


def csv_sources(mined: Sequence[tuple[str, str]], templates: Sequence[TemplateCase]) -> tuple[tuple[str, str], ...]:
    """The mined data sources, and a small table for each other name a template reads."""
    names = dict(mined)
    for case in templates:
        for name in re.findall(r"csv\w*\s+['\"]([\w-]+)['\"]", case.template):
            names.setdefault(name, pets_csv())
        for table in re.findall(r"(?:FROM|UPDATE)\s+([\w-]+)", case.template, re.IGNORECASE):
            names.setdefault(table, pets_csv())
    return tuple(sorted(names.items()))


# ---------------------------------------------------------------------------------------------
# matchers


def matcher_case(case: MatcherCase) -> Case:
    simulation = {
        "data": {"pairs": [{"request": {"body": list(case.matchers)}, "response": {"status": 200, "body": "matched"}}]},
        "meta": {"schemaVersion": "v5.2"},
    }
    request = Request("POST", "matchers.test", "/match", "", (("Content-Type", "text/plain"),), case.input)
    steps = (
        *resets(),
        admin("PUT", "/api/v2/simulation", simulation, "PUT the matcher's pair"),
        request.step("the input"),
    )
    document = {"matchers": list(case.matchers), "input": case.input, "expected_by_test": case.expected}
    return Case("matchers", case.origin, document, steps, case.expected)
