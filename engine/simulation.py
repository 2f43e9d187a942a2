"""Importing a simulation: Hoverfly's import rules as a pure function, all checks before any write.

``import_simulation`` takes the current simulation (None for a replace) and an incoming one and
returns the simulation to store plus Hoverfly's warnings; it raises ``ImportFailure`` (Hoverfly's
500 "An error occurred: ...") for bad delays or body files. Nothing is stored here: the caller
compiles the result and swaps it in with one store write, so a failed import changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

import orjson

from engine.codec import encode_request
from engine.errors import ImportFailure
from engine.goregex import InvalidPattern, compile_go
from engine.model import DelayLogNormal, LogNormal, Pair, RequestMatcher, Simulation

_URL = re.compile(r"^(https?|ftp)://", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ImportResult:
    simulation: Simulation
    warnings: tuple[str, ...]


def request_key(request: RequestMatcher) -> bytes:
    """Canonical bytes of a request matcher: equal keys <=> Hoverfly's deep-equal duplicate rule."""
    return orjson.dumps(encode_request(request, export=False), option=orjson.OPT_SORT_KEYS)


def import_simulation(
    current: Simulation | None,
    incoming: Simulation,
    *,
    check_duplicates: bool = True,
    body_files_root: Path | None = None,
) -> ImportResult:
    """Hoverfly's import (core/hoverfly_service.go) for PUT (``current`` None) and POST (append)."""
    base = current or Simulation()
    warnings: list[str] = []
    incoming = _load_body_files(incoming, body_files_root or Path.cwd(), warnings)
    for params in [p.response.log_normal_delay for p in incoming.pairs] + [
        d.params for d in incoming.delays_log_normal
    ]:
        if params is not None:
            check_log_normal(params)
    _check_delays(incoming)

    pairs = list(base.pairs)
    seen = {request_key(p.request) for p in pairs} if check_duplicates else set()
    for i, pair in enumerate(incoming.pairs):
        if check_duplicates:
            key = request_key(pair.request)
            if key in seen:
                warnings.append(f"WARNING: data.pairs[{i}] is not added due to a conflict with the existing simulation")
                continue
            seen.add(key)
        pairs.append(pair)
        warnings.extend(_header_warnings(pair, i))

    literals, variables = base.literals, base.variables
    if incoming.pairs:  # Hoverfly replaces literals and variables only when the document has pairs
        literals, variables = incoming.literals, incoming.variables
    result = Simulation(
        pairs=tuple(pairs),
        delays=incoming.delays,  # global delays are replaced, also by an append
        delays_log_normal=incoming.delays_log_normal,
        literals=literals,
        variables=variables,
    )
    return ImportResult(result, tuple(warnings))


def _header_warnings(pair: Pair, index: int) -> list[str]:
    resp = pair.response
    where = f"data.pairs[{index}].response"
    out = []
    length = resp.header("Content-Length")
    if length is not None and resp.header("Transfer-Encoding") is not None:
        out.append(
            f"WARNING: Response contains both Content-Length and Transfer-Encoding headers on {where}, "
            "please remove one of these headers"
        )
    if length and length[0].strip().lstrip("-").isdigit() and int(length[0]) != len(resp.body):
        out.append(
            f"WARNING: Response contains incorrect Content-Length header on {where}, please correct or remove header"
        )
    return out


def _load_body_files(sim: Simulation, root: Path, warnings: list[str]) -> Simulation:
    pairs = list(sim.pairs)
    for i, pair in enumerate(pairs):
        resp = pair.response
        if not resp.body_file:
            continue
        if resp.body:
            warnings.append(
                f"WARNING: Response contains both `body` and `bodyFile` in data.pairs[{i}].response, "
                "please remove one of them otherwise `body` is used if non empty"
            )
            continue
        body = _read_body_file(resp.body_file, root, f"data.pairs[{i}].response")
        pairs[i] = replace(pair, response=replace(resp, body=body))
    return replace(sim, pairs=tuple(pairs))


def _read_body_file(name: str, root: Path, where: str) -> bytes:
    if _URL.match(name):
        raise ImportFailure(
            f"{where} bodyFile {name} is not allowed. "
            "To allow this origin run simproxy with -response-body-files-allow-origin"
        )
    path = Path(name)
    if path.is_absolute():
        raise ImportFailure(f"{where} bodyFile contains absolute path ({name}). only relative is supported")
    resolved = (root / path).resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise ImportFailure(f"{where} relative path is invalid as it attempts to backtrack")
    try:
        return resolved.read_bytes()
    except OSError as exc:
        raise ImportFailure(f"{where} {exc.strerror or exc}: {name}") from exc


def _check_delays(sim: Simulation) -> None:
    for delay in sim.delays:
        if not delay.url_pattern or delay.delay == 0:
            raise ImportFailure(
                f"Config error - Missing values found in: {{{delay.url_pattern} {delay.http_method} {delay.delay}}}"
            )
        _check_pattern(delay.url_pattern)
    for log_normal in sim.delays_log_normal:
        _check_log_normal_entry(log_normal)


def _check_log_normal_entry(entry: DelayLogNormal) -> None:
    if not entry.url_pattern:
        raise ImportFailure("Config error - Missing urlPattern")
    _check_pattern(entry.url_pattern)


def _check_pattern(pattern: str) -> None:
    try:
        compile_go(pattern)
    except InvalidPattern as exc:
        raise ImportFailure(f"Response delay entry skipped due to invalid pattern : {pattern}") from exc


def check_log_normal(p: LogNormal) -> None:
    """Hoverfly's log-normal parameter checks (typos are Hoverfly's); a zero min/max disables its bound."""
    problem = None
    if p.min < 0 or p.max < 0:
        problem = "delay min and max can't be less than 0"
    elif p.mean <= 0 or p.median <= 0:
        problem = "delay mean and median params can't be less or equals 0"
    elif p.max and p.min >= p.max:
        problem = "min delay must be less than max one"
    elif p.max and p.mean > p.max:
        problem = "mean delay can't be greather than max one"
    elif p.max and p.median > p.max:
        problem = "median delay can't be and greather than max one"
    elif p.min and p.mean < p.min:
        problem = "mean delay can't be less than min one"
    elif p.min and p.median < p.min:
        problem = "median delay can't be less than min one"
    if problem:
        raise ImportFailure(f"Config error - {problem}")
