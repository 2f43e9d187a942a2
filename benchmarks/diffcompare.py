"""Comparing two answers to the same request, after normalising only what must differ.

What must differ between two servers run side by side, and is normalised: the value of the ``Date``
header, each server's own ports and folder where an answer echoes them (with the random names of
temporary files in it), and, in admin answers, the times and ids each server makes up: the
journal's ``id``, ``journalEntryId``, ``timeStarted``, ``latency`` and a post-serve action's
``correlationId``, ``invoked`` and ``completed``; log times (``time``), diff reports'
``timestamp``, an export's ``timeExported``, and ``Date`` values recorded in JSON; in what a
post-serve action received, its ids and UUIDs (a correlation id). Headers are compared without
``Date``; whether each answer has one is reported as a noted difference (``NOTED``), and so is the
version string: it is replaced, but a body that differs only by it is reported as ``version
string``, never hidden. A step marked ``loose`` (a template with a random helper) compares less: a
JSON body's keys and nesting (every value counts as the same), another body only whether it is
empty, and of the headers other than the standard ones only whether they have a value.

Each aspect that differs gets a detail (``Hoverfly 200, simproxy 400``, ``only simproxy:
connection``); the aspects and their details group the differences of a run, an exchange in as many
groups as it has aspects. ``KINDS`` lists the aspects, most important first.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from benchmarks.diffwire import Answer, Step

KINDS = (
    "both Content-Length and Transfer-Encoding",
    "no answer",
    "status",
    "body",
    "framing",
    "headers",
    "delay",
    "Date header",
    "version string",
    "reason phrase",
    "header name case",
    "header order",
)
"""Aspects of an answer that may differ, most important first."""
LOCAL = frozenset({"both Content-Length and Transfer-Encoding", "no answer", "status", "body"})
"""Aspects whose groups are split by where the request went (a 400 on PUT is not a 400 on the proxy)."""
FORMATTING = frozenset({"header name case", "header order"})
"""Aspects that leave the same answer apart from how its headers are laid out."""
NOTED = frozenset({"Date header", "version string"})
"""Known differences that are reported but do not count against "the same answer": the brief compares
headers without ``Date``, and the version string is simproxy's own."""
CONTENT = frozenset({"both Content-Length and Transfer-Encoding", "no answer", "status", "body"})
"""Aspects that change what a client reads (its status and body), not how the answer is framed or labelled."""
STANDARD_HEADERS = frozenset({"content-length", "content-type", "date", "transfer-encoding", "connection"})
_TIME_KEYS = "timeStarted|timeExported|latency|timestamp|invoked|completed|time"
_JSON_VALUE = r"(?:\"(?:[^\"\\]|\\.)*\"|-?\d[\d.eE+-]*|null)"
_TIMES = re.compile(rf'("(?:{_TIME_KEYS})"\s*:\s*){_JSON_VALUE}'.encode())
_IDS = re.compile(rf'("(?:id|journalEntryId|correlationId)"\s*:\s*){_JSON_VALUE}'.encode())
_UUID = re.compile(rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_IN_FOLDER = re.compile(rb"\{folder\}[^\s\"'\\]*")
_DATES = re.compile(rb'("Date"\s*:\s*\[\s*)"[^"]*"')
_LOG_TIMES = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
"""A log line's time as text (logrus's ``INFO[2026-11-29T04:29:21Z]``), in ``/logs`` answers."""
SHORTEST_DELAY_MS = 50
"""Delays shorter than this are not compared (a millisecond is within the noise of two processes)."""


@dataclass(frozen=True)
class Facts:
    """What is a server's own and appears in its answers: its ports, folder and version string."""

    admin: int
    proxy: int
    folder: str
    version: str


@dataclass(frozen=True)
class Verdict:
    """How two answers to one step compare: each aspect that differs with its detail, most important
    first, and where the normalised bodies part when they do."""

    aspects: tuple[tuple[str, str], ...] = ()
    divergence: dict[str, Any] | None = None

    @property
    def same(self) -> bool:
        """The same answer: nothing differs but the noted differences (``NOTED``)."""
        return {aspect for aspect, _ in self.aspects} <= NOTED

    @property
    def same_but_layout(self) -> bool:
        """The same answer apart from header order or the case of header names."""
        return {aspect for aspect, _ in self.aspects} <= FORMATTING | NOTED

    @property
    def same_content(self) -> bool:
        """The same status and body (and both answered, neither framed with both length headers)."""
        return not {aspect for aspect, _ in self.aspects} & CONTENT

    def without(self, aspects: frozenset[str]) -> Verdict:
        """The verdict with ``aspects`` set aside."""
        return Verdict(tuple((k, v) for k, v in self.aspects if k not in aspects), self.divergence)

    @property
    def kind(self) -> str:
        """The most important aspect that differs ("" when none does)."""
        return self.aspects[0][0] if self.aspects else ""


def where(step: Step) -> str:
    """Where a step goes, for grouping: ``PUT /api/v2/simulation``, ``proxy`` or ``collect``."""
    if step.port == "admin":
        return f"{step.method} {urlsplit(step.target).path}"
    return step.port


def normalise_body(body: bytes, facts: Facts, step: Step) -> bytes:
    """The body with what must differ between the two servers replaced (see the module's docstring)."""
    out = body.replace(facts.folder.encode(), b"{folder}") if facts.folder else body
    out = _IN_FOLDER.sub(b"{folder}/...", out)  # temporary files have random names
    for port, name in ((facts.admin, b"{admin-port}"), (facts.proxy, b"{proxy-port}")):
        out = re.sub(rb"(?<!\d)%d(?!\d)" % port, name, out)
    if step.port in ("admin", "collect"):
        out = _TIMES.sub(rb'\1"{time}"', out)
        out = _DATES.sub(rb'\1"{date}"', out)
        if "/logs" in step.target:
            out = _LOG_TIMES.sub(b"{time}", out)  # two servers' lines can straddle a second
        if "/journal" in step.target or step.port == "collect":
            out = _IDS.sub(rb'\1"{id}"', out)
        if step.port == "collect":
            out = _UUID.sub(b"{uuid}", out)
    return out


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return "x"


def loose_shape(body: bytes) -> bytes:
    """What is compared of a body with random values: a JSON body's keys and nesting with every value
    an ``x``; any other body, only whether it is empty."""
    ok, value = _json(body)
    if ok:
        return json.dumps(_masked(value)).encode()
    return b"x" if body.strip() else b""


def divergence(a: bytes, b: bytes, context: int = 80) -> dict[str, Any]:
    """Where two bodies first part: the offset, and the text around it on each side."""
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, at - context)
    return {
        "offset": at,
        "hoverfly": a[start : at + context].decode("utf-8", errors="replace"),
        "simproxy": b[start : at + context].decode("utf-8", errors="replace"),
    }


def _versionless(body: bytes, facts: Facts) -> bytes:
    return body.replace(facts.version.encode(), b"{version}") if facts.version else body


def _headers(answer: Answer, facts: Facts, body_changed: bool, loose: bool) -> list[tuple[str, str]]:
    out = []
    for name, value in answer.headers:
        lower = name.lower()
        if loose and lower not in STANDARD_HEADERS:
            value = "x" if value else ""
        elif lower == "date":
            value = "{date}"
        elif lower == "content-length" and body_changed:
            value = "{length}"
        else:
            for port, label in ((facts.admin, "{admin-port}"), (facts.proxy, "{proxy-port}")):
                value = re.sub(rf"(?<!\d){port}(?!\d)", label, value)
        out.append((name, value))
    return out


def _json(body: bytes) -> tuple[bool, Any]:
    try:
        return True, json.loads(body)
    except ValueError:
        return False, None


def _body_detail(a: bytes, b: bytes) -> str:
    ok_a, value_a = _json(a)
    ok_b, value_b = _json(b)
    if not a or not b:
        return "one body empty"
    if ok_a and ok_b:
        if value_a == value_b:
            same_order = json.dumps(value_a) == json.dumps(value_b)
            return "JSON formatting (spaces or escapes)" if same_order else "JSON key order"
        return "JSON values"
    if ok_a != ok_b:
        return "JSON against text"
    return "text"


def _shape(order: list[str]) -> str:
    """A header order with the pair's own header names folded into ``*``."""
    out: list[str] = []
    for name in order:
        token = name if name.lower() in STANDARD_HEADERS else "*"
        if not (token == "*" and out and out[-1] == "*"):
            out.append(token)
    return ", ".join(out)


def compare(step: Step, hoverfly: Answer, simproxy: Answer, facts: tuple[Facts, Facts]) -> Verdict:
    """How ``simproxy``'s answer to ``step`` differs from ``hoverfly``'s, aspect by aspect."""
    fh, fs = facts
    aspects: dict[str, str] = {}
    if (hoverfly.status == 0) != (simproxy.status == 0) or bool(hoverfly.error) != bool(simproxy.error):
        silent = "Hoverfly" if hoverfly.status == 0 or hoverfly.error else "simproxy"
        aspects["no answer"] = f"{silent} gave no (whole) answer"
    both = [
        a.header("Content-Length") is not None and a.header("Transfer-Encoding") is not None
        for a in (hoverfly, simproxy)
    ]
    if both[0] != both[1]:
        aspects["both Content-Length and Transfer-Encoding"] = f"sent by {'simproxy' if both[1] else 'Hoverfly'}"
    if hoverfly.status != simproxy.status:
        aspects["status"] = f"Hoverfly {hoverfly.status}, simproxy {simproxy.status}"
    elif hoverfly.reason != simproxy.reason:
        aspects["reason phrase"] = f"{hoverfly.reason!r} against {simproxy.reason!r}"
    body_h, body_s = normalise_body(hoverfly.body, fh, step), normalise_body(simproxy.body, fs, step)
    if step.loose:
        body_h, body_s = loose_shape(body_h), loose_shape(body_s)
    changed = body_h != hoverfly.body or body_s != simproxy.body
    if body_h != body_s:
        plain_h, plain_s = _versionless(body_h, fh), _versionless(body_s, fs)
        changed = True
        if plain_h == plain_s:
            aspects["version string"] = f"{fh.version} against {fs.version}"
        else:
            aspects["body"] = _body_detail(plain_h, plain_s)
    if hoverfly.chunked != simproxy.chunked:
        aspects["framing"] = "Hoverfly chunked, simproxy Content-Length" if hoverfly.chunked else "simproxy chunked"
    heads_h, heads_s = _headers(hoverfly, fh, changed, step.loose), _headers(simproxy, fs, changed, step.loose)
    dates = [any(k.lower() == "date" for k, _ in heads) for heads in (heads_h, heads_s)]
    if dates[0] != dates[1]:
        aspects["Date header"] = f"only {'Hoverfly' if dates[0] else 'simproxy'} sends one"
    skipped = {"date"} | ({"content-length", "transfer-encoding"} if "framing" in aspects else set())
    kept_h = [(k, v) for k, v in heads_h if k.lower() not in skipped]
    kept_s = [(k, v) for k, v in heads_s if k.lower() not in skipped]
    lower_h = Counter((k.lower(), v) for k, v in kept_h)
    lower_s = Counter((k.lower(), v) for k, v in kept_s)
    if lower_h != lower_s:
        only_h = sorted({k for k, _ in lower_h - lower_s} - {k for k, _ in lower_s - lower_h})
        only_s = sorted({k for k, _ in lower_s - lower_h} - {k for k, _ in lower_h - lower_s})
        values = sorted({k for k, _ in lower_h - lower_s} & {k for k, _ in lower_s - lower_h})
        parts = [
            f"only Hoverfly: {', '.join(only_h)}" if only_h else "",
            f"only simproxy: {', '.join(only_s)}" if only_s else "",
        ]
        parts.append(f"values of {', '.join(values)}" if values else "")
        aspects["headers"] = "; ".join(p for p in parts if p)
    common = {k.lower() for k, _ in kept_h} & {k.lower() for k, _ in kept_s}
    if {k for k, _ in kept_h if k.lower() in common} != {k for k, _ in kept_s if k.lower() in common}:
        cased = sorted({k for k, _ in kept_s if k.lower() in common} - {k for k, _ in kept_h})
        aspects["header name case"] = f"simproxy writes {', '.join(cased)}"
    # the order of the headers both sent (Date included), whatever else differs
    shared = common | ({"date"} if all(dates) else set())
    order_h = [k for k, _ in hoverfly.headers if k.lower() in shared]
    order_s = [k for k, _ in simproxy.headers if k.lower() in shared]
    if [k.lower() for k in order_h] != [k.lower() for k in order_s]:
        aspects["header order"] = f"{_shape(order_h)} | {_shape(order_s)}"
    if step.delay_ms >= SHORTEST_DELAY_MS:
        waited = [a.elapsed * 1000 >= 0.8 * step.delay_ms for a in (hoverfly, simproxy)]
        if waited[0] != waited[1]:
            aspects["delay"] = f"only {'Hoverfly' if waited[0] else 'simproxy'} waited {step.delay_ms} ms"
    parted = divergence(_versionless(body_h, fh), _versionless(body_s, fs)) if "body" in aspects else None
    return Verdict(tuple((k, aspects[k]) for k in KINDS if k in aspects), parted)
