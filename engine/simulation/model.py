"""The simulation domain: frozen dataclasses, no wire shapes, no I/O.

``None`` and the empty tuple are different on purpose: Hoverfly's duplicate check tells an
absent matcher list from an empty one (pairs upgraded from v1-v4 carry empty lists), and an
absent ``query`` matches any query while ``{}`` matches only a request without one.
Fields the engine does not interpret yet (literals, variables, log-normal delays) are kept
as plain JSON so that an import followed by an export loses nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import TypeAlias

from simproxy.engine.gocompat.gojson import JSON as JSON

"""Any JSON value as produced by orjson: dict, list, str, int, float, bool or None."""

Matchers: TypeAlias = tuple["Matcher", ...]
NamedMatchers: TypeAlias = tuple[tuple[str, Matchers], ...]
"""A header or query map: (name, matcher list) sorted by name, as Go sorts map keys."""


@dataclass(frozen=True, slots=True)
class Matcher:
    """One matcher object: ``{"matcher": name, "value": ..., "config": {...}, "doMatch": {...}}``."""

    name: str
    """As written in the simulation (case kept: scoring compares it case-sensitively)."""
    value: JSON
    config: dict[str, JSON] | None = None
    do_match: Matcher | None = None


@dataclass(frozen=True, slots=True)
class RequestMatcher:
    """The request side of a pair; every field is optional."""

    path: Matchers | None = None
    method: Matchers | None = None
    destination: Matchers | None = None
    scheme: Matchers | None = None
    body: Matchers | None = None
    headers: NamedMatchers = ()
    query: NamedMatchers | None = None
    requires_state: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True, slots=True)
class LogNormal:
    """Parameters of a log-normal delay, in milliseconds."""

    min: int
    max: int
    mean: int
    median: int


class FaultKind(StrEnum):
    """How a fault breaks an answer (the names are the wire format's ``fault.type``)."""

    CONNECTION_RESET = "connectionReset"
    """The connection is reset (RST) instead of answered."""
    EMPTY_RESPONSE = "emptyResponse"
    """The connection is closed (FIN) with nothing written."""
    MALFORMED_CHUNK = "malformedChunk"
    """The head, declaring a chunked body, then bytes that are no chunk, then close."""
    RANDOM_DATA_THEN_CLOSE = "randomDataThenClose"
    """Random bytes that are no HTTP answer, then close."""
    DRIBBLE = "dribble"
    """The head at once, then the body in ``chunks`` pieces spread over ``duration_ms``."""
    BANDWIDTH = "bandwidth"
    """The whole answer paced to at most ``bytes_per_second``."""


TIMED_FAULTS = frozenset({FaultKind.DRIBBLE, FaultKind.BANDWIDTH})
"""Faults that send the whole answer, only slowly: the connection stays usable after them."""

MAX_CHUNKS = 10_000
"""The most pieces a ``dribble`` cuts a body into: a bound on the writes (and wake-ups) one answer costs."""
MAX_DURATION_MS = 2**31 - 1
"""The longest ``dribble``, in milliseconds (about 24.8 days: a 32-bit int, as most timeouts)."""
MAX_BYTES_PER_SECOND = 10_000_000_000
"""The highest ``bandwidth`` rate (10 GB/s, more than any loopback delivers)."""
FAULT_PARAMETERS: Mapping[FaultKind, tuple[tuple[str, int, int], ...]] = MappingProxyType(
    {
        FaultKind.DRIBBLE: (("chunks", 1, MAX_CHUNKS), ("durationMs", 0, MAX_DURATION_MS)),
        FaultKind.BANDWIDTH: (("bytesPerSecond", 1, MAX_BYTES_PER_SECOND),),
    }
)
"""The parameters each fault type requires (their names in the wire format), with the least and the
most value each takes; the other types take none."""


@dataclass(frozen=True, slots=True)
class Fault:
    """A fault asked for by a pair's response or a global rule (simproxy's own, not Hoverfly's).

    Its parameters are checked when it is made (``ValueError``): a dribble of no pieces or a
    bandwidth of 0 bytes a second cannot be written. The codec checks the same bounds first
    (``FAULT_PARAMETERS``), so that an import names the JSON path of a wrong one."""

    kind: FaultKind
    chunks: int = 0
    """``dribble``: the pieces the body is cut into (1 to ``MAX_CHUNKS``)."""
    duration_ms: int = 0
    """``dribble``: the milliseconds over which the pieces arrive (0 to ``MAX_DURATION_MS``)."""
    bytes_per_second: int = 0
    """``bandwidth``: the highest rate the answer is sent at (1 to ``MAX_BYTES_PER_SECOND``)."""
    fraction: float = 1.0
    """The probability (0 to 1) that a given request gets the fault; the others are answered normally."""

    def __post_init__(self) -> None:
        values = {"chunks": self.chunks, "durationMs": self.duration_ms, "bytesPerSecond": self.bytes_per_second}
        for name, least, most in FAULT_PARAMETERS.get(self.kind, ()):
            if not least <= values[name] <= most:
                raise ValueError(f"a {self.kind.value} fault needs {name} from {least} to {most}, not {values[name]}")
        if not 0 <= self.fraction <= 1:
            raise ValueError(f"a fault's fraction is from 0 to 1, not {self.fraction}")


@dataclass(frozen=True, slots=True)
class GlobalFault:
    """A fault for requests whose ``destination + path`` matches ``url_pattern`` and whose pair has
    no fault of its own (``data.globalActions.faults``)."""

    url_pattern: str
    http_method: str
    fault: Fault


@dataclass(frozen=True, slots=True)
class Response:
    """What a pair serves. ``body`` holds the decoded bytes (``encodedBody`` undone at import)."""

    status: int = 200
    body: bytes = b""
    body_file: str = ""
    body_file_base64: bool = False
    """The body is still to be read from ``body_file`` and is base64 there (``encodedBody: true``)."""
    headers: tuple[tuple[str, tuple[str, ...]], ...] = ()
    templated: bool = False
    transitions_state: tuple[tuple[str, str], ...] | None = None
    removes_state: tuple[str, ...] | None = None
    fixed_delay: int = 0
    log_normal_delay: LogNormal | None = None
    post_serve_action: str = ""
    fault: Fault | None = None
    trailers: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Trailer fields sent after the body (simproxy's own): over HTTP/2, a last HEADERS frame."""

    def header(self, name: str) -> tuple[str, ...] | None:
        """The values of the header spelled exactly ``name`` (Hoverfly looks keys up by exact case)."""
        for key, values in self.headers:
            if key == name:
                return values
        return None


@dataclass(frozen=True, slots=True)
class Pair:
    request: RequestMatcher
    response: Response
    labels: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Delay:
    """A global fixed delay for requests whose ``destination + path`` matches ``url_pattern``."""

    url_pattern: str
    http_method: str
    delay: int


@dataclass(frozen=True, slots=True)
class DelayLogNormal:
    url_pattern: str
    http_method: str
    params: LogNormal


@dataclass(frozen=True, slots=True)
class Simulation:
    pairs: tuple[Pair, ...] = ()
    delays: tuple[Delay, ...] = ()
    delays_log_normal: tuple[DelayLogNormal, ...] = ()
    literals: tuple[JSON, ...] = ()
    variables: tuple[JSON, ...] = ()
    faults: tuple[GlobalFault, ...] = ()


EMPTY_SIMULATION = Simulation()
