"""What simproxy saw during one test, told the way a failing test's report needs it.

The pytest plugin adds this text as a ``simproxy`` section to the report of a test that failed: was
the test recording or replaying, which cassette, how many requests reached the proxy, and each one
simproxy answered with its own 502 instead of an answer (a request no pair matched, with the pair
that came closest and the fields it differed on; a request the real service could not be reached
for, with the reason).

Those 502s are read from the journal: their body is simproxy's (or Hoverfly's) plain-text error in
Hoverfly's layout (``engine/modes/failures.py``), which both products keep byte for byte, so this
works against a Hoverfly given by its URLs too. Nothing here needs pytest.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simproxy.admin.kit.client import JSON

PRODUCTS = ("simproxy", "Hoverfly")
MATCHING = "There was an error when matching"
FORWARDING = "There was an error when forwarding the request to the intended destination"
CLOSEST = "The matcher which came closest was:\n\n"
DIFFERS = "\n\nBut it did not match on the following fields:\n\n"
SHOWN = 10
"""Failed requests the section lists; the rest are counted."""
REQUEST_FIELDS = ("method", "scheme", "destination", "path", "query", "headers", "body", "requiresState")

CLIENT_HINTS = (
    "urllib3 used directly ignores them: urllib3.ProxyManager(simproxy.proxy_url, ca_certs=str(simproxy.ca_path))",
    "aiohttp ignores them unless told: aiohttp.ClientSession(trust_env=True), or proxy=simproxy.proxy_url",
    "requests and httpx follow them unless trust_env=False; curl and urllib follow them",
)
"""How each common client is sent through the proxy when it does not read the proxy variables."""


@dataclass(frozen=True, slots=True)
class Failure:
    """A request simproxy answered with its own 502: what was asked, the error, and for a miss the
    closest pair's request matchers and the fields that pair differed on."""

    request: str
    context: str
    error: str
    closest: Mapping[str, Any] | None = None
    differs: tuple[str, ...] = ()

    @property
    def missed(self) -> bool:
        return self.context == MATCHING

    def lines(self) -> list[str]:
        if self.missed:
            lines = [f"{self.request}: no pair matched"]
            if self.closest is not None:
                lines.append(f"    closest pair: {describe_matchers(self.closest)}")
                lines.append(f"    it differs on: {', '.join(self.differs) or '(nothing listed)'}")
            else:
                lines.append("    the simulation has no pair")
            return lines
        if self.context == FORWARDING:
            return [f"{self.request}: the real service could not be reached", f"    {self.error}"]
        return [f"{self.request}: {self.context.removeprefix('There was an ')}", f"    {self.error}"]


def entry_line(entry: JSON) -> str:
    """``METHOD scheme://destination/path?query -> status``."""
    request, response = entry.get("request") or {}, entry.get("response") or {}
    query = request.get("query") or ""
    url = f"{request.get('scheme') or 'http'}://{request.get('destination', '')}{request.get('path', '')}"
    return f"{request.get('method', '?')} {url}{'?' + query if query else ''} -> {response.get('status', '?')}"


def failure_of(entry: JSON) -> Failure | None:
    """The failure a journal entry records, or None for an answer (the service's, or a pair's)."""
    response = entry.get("response") or {}
    body = response.get("body")
    if response.get("status") != 502 or not isinstance(body, str) or response.get("encodedBody"):
        return None
    head, _, rest = body.partition(" Error!\n\n")
    if head not in PRODUCTS:
        return None
    context, _, rest = rest.partition("\n\nGot error: ")
    error, _, details = rest.partition("\n\n")
    closest, differs = _closest(details) if context == MATCHING else (None, ())
    return Failure(entry_line(entry), context, error, closest, differs)


def _closest(details: str) -> tuple[Mapping[str, Any] | None, tuple[str, ...]]:
    """The closest pair's request and the fields it missed on, from a miss's 502 body."""
    _, found, rest = details.partition(CLOSEST)
    if not found:
        return None, ()
    matcher, _, rest = rest.partition(DIFFERS)
    try:
        request = json.loads(matcher)
    except ValueError:
        return None, ()
    fields = rest.partition("\n")[0].strip().strip("[]")
    return request if isinstance(request, dict) else None, tuple(f.strip() for f in fields.split(",") if f.strip())


def describe_matchers(request: Mapping[str, Any]) -> str:
    """A pair's request matchers on one line: ``method exact "POST", path glob "/pay/*"``."""
    parts = []
    for name in sorted(request, key=lambda n: (REQUEST_FIELDS.index(n) if n in REQUEST_FIELDS else 99, n)):
        value = request[name]
        if isinstance(value, list):
            parts.extend(_matchers(name, value))
        elif isinstance(value, dict) and name != "requiresState":
            for key, matchers in value.items():
                parts.extend(_matchers(f"{name} {key}", matchers if isinstance(matchers, list) else []))
        elif value:
            parts.append(f"{name} {json.dumps(value)}")
    return ", ".join(parts) or "(matches any request)"


def _matchers(name: str, matchers: Iterable[Any]) -> list[str]:
    return [
        f"{name} {m.get('matcher', '?')} {json.dumps(m.get('value'), ensure_ascii=False)}"
        for m in matchers
        if isinstance(m, dict)
    ]


@dataclass(frozen=True, slots=True)
class Situation:
    """What the test asked of simproxy: ``recording`` or ``replaying`` a cassette (its name as shown),
    or neither (the session's simproxy in the mode the test set)."""

    proxy_url: str
    cassette: str | None = None
    recording: bool = False
    log: Path | None = None

    def headline(self, mode: str | None) -> str:
        if self.cassette is not None and self.recording:
            return f"recording {self.cassette}: capture mode, every request goes to the real service"
        if self.cassette is not None:
            return f"replaying {self.cassette} (simulate mode: the real service is not asked)"
        return f"{mode or 'unknown'} mode, no cassette"


def section(situation: Situation, mode: str | None, entries: Sequence[JSON]) -> str:
    """The ``simproxy`` section of a failing test's report."""
    lines = [situation.headline(mode)]
    failures = [failure for entry in entries if (failure := failure_of(entry)) is not None]
    if not entries:
        lines.append(f"no request reached simproxy's proxy ({situation.proxy_url}) during the test.")
        lines += [
            "If the code under test made one, its HTTP client ignores HTTP_PROXY and HTTPS_PROXY:",
            *(f"  - {hint}" for hint in CLIENT_HINTS),
        ]
    else:
        noun = "request" if len(entries) == 1 else "requests"
        told = f"; {len(failures)} got simproxy's own 502:" if failures else ", each answered."
        lines.append(f"{len(entries)} {noun} reached simproxy's proxy{told}")
        for failure in failures[:SHOWN]:
            lines += [f"  {line}" for line in failure.lines()]
        if len(failures) > SHOWN:
            lines.append(f"  ... and {len(failures) - SHOWN} more (simproxy.journal() has them all)")
    if situation.log is not None:
        lines.append(f"simproxy's log: {situation.log}")
    return "\n".join(lines)


def empty_recording(cassette: str, proxy_url: str) -> str:
    """Why a recording that captured nothing is refused, and what usually causes it."""
    return "\n".join(
        [
            f"simproxy recorded nothing for {cassette}: no request reached its proxy ({proxy_url}) while the test "
            "ran, so the file was not written (a cassette without pairs would fail every replay).",
            "The likely cause: the code under test uses an HTTP client that ignores the HTTP_PROXY and "
            "HTTPS_PROXY variables the fixture sets.",
            *(f"  - {hint}" for hint in CLIENT_HINTS),
            "A test that makes no HTTP request needs no cassette: drop simulation= from its marker.",
        ]
    )


def failed_recording(cassette: str, failures: Sequence[Failure]) -> str:
    """Why a recording during which the real service failed is refused."""
    noun = "request" if len(failures) == 1 else "requests"
    lines = [
        f"simproxy did not write {cassette}: while recording, {len(failures)} {noun} could not be forwarded to the "
        "real service, so the cassette would lack their answers:"
    ]
    for failure in failures[:SHOWN]:
        lines += [f"  {line}" for line in failure.lines()]
    lines.append("Start the service (or fix its address) and run the test again to record it.")
    return "\n".join(lines)
