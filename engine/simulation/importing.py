"""Importing a simulation: Hoverfly's import rules as a pure function, all checks before any write.

``import_simulation`` takes the current simulation (None for a replace) and an incoming one and
returns the simulation to store plus Hoverfly's warnings; it raises ``ImportFailure`` (Hoverfly's
500 "An error occurred: ...") for bad delays or body files. Nothing is stored here: the caller
compiles the result and swaps it in with one store write, so a failed import changes nothing.
"""

from __future__ import annotations

import base64
import binascii
import errno
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import orjson

from simproxy.engine.errors import ImportFailure
from simproxy.engine.gocompat.goregex import InvalidPattern, compile_go
from simproxy.engine.simulation.codec import encode_request
from simproxy.engine.simulation.model import LogNormal, Pair, RequestMatcher, Simulation

_URL = re.compile(r"^(https?|ftp)://", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ImportResult:
    simulation: Simulation
    warnings: tuple[str, ...]
    sequence_keys: tuple[str, ...] = ()
    """``requiresState`` keys containing ``sequence:`` of the pairs added: Hoverfly resets them to "1"."""


def request_key(request: RequestMatcher) -> bytes:
    """Canonical bytes of a request matcher: equal keys <=> Hoverfly's deep-equal duplicate rule."""
    return orjson.dumps(encode_request(request, export=False), option=orjson.OPT_SORT_KEYS)


FIRST_STEP = "1"


def sequence_starts(keys: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """The state that starts each ``sequence:`` key at its first step (Hoverfly's ``"1"``): what an
    import, a capture that starts a sequence and a simulation restored into an empty store set."""
    return tuple((key, FIRST_STEP) for key in keys)


def sequence_keys(sim: Simulation) -> tuple[str, ...]:
    """The ``sequence:`` state keys the simulation's pairs require, once each, in order: Hoverfly
    starts each at its first step ("1") when they are imported."""
    return tuple(dict.fromkeys(key for pair in sim.pairs for key in _sequence_keys_of(pair)))


def _sequence_keys_of(pair: Pair) -> list[str]:
    return [key for key, _ in pair.request.requires_state or () if "sequence:" in key]


def import_simulation(
    current: Simulation | None,
    incoming: Simulation,
    *,
    check_duplicates: bool = True,
    body_files_root: Path | None = None,
    allowed_origins: tuple[str, ...] = (),
    downloaded: Mapping[str, bytes | str] | None = None,
    known_actions: frozenset[str] = frozenset(),
    go_file_errors: bool = False,
) -> ImportResult:
    """Hoverfly's import (core/hoverfly_service.go) for PUT (``current`` None) and POST (append).

    The checks run in Hoverfly's order, so the first failure reported is the one Hoverfly reports:
    body files, then each pair (post-serve action, log-normal delay), then the global delays.
    ``go_file_errors`` (``-compat hoverfly``): a body file that cannot be read is reported as Go's
    ``os.ReadFile`` says it (``open <path>: no such file or directory``).
    """
    base = current or Simulation()
    file_warnings: list[str] = []
    root = body_files_root or Path.cwd()
    files = _BodyFiles(root, allowed_origins, downloaded or {}, go_file_errors, body_files_root)
    incoming = _load_body_files(incoming, files, file_warnings)
    for pair in incoming.pairs:
        name = pair.response.post_serve_action
        if name and name not in known_actions and "" not in known_actions:  # "": a fallback takes any name
            raise ImportFailure("invalid post server action name provided")
        if pair.response.log_normal_delay is not None:
            check_log_normal(pair.response.log_normal_delay)
    _check_delays(incoming)

    warnings: list[str] = []
    sequences: list[str] = []
    pairs = list(base.pairs)
    seen = {request_key(p.request) for p in pairs} if check_duplicates else set()
    for i, pair in enumerate(incoming.pairs):
        key = request_key(pair.request) if check_duplicates else b""
        if check_duplicates and key in seen:
            warnings.append(f"WARNING: data.pairs[{i}] is not added due to a conflict with the existing simulation")
        else:
            seen.add(key)
            pairs.append(pair)
            sequences.extend(_sequence_keys_of(pair))
        warnings.extend(_header_warnings(pair, i))  # Hoverfly checks skipped pairs too

    literals, variables = base.literals, base.variables
    if incoming.pairs:  # Hoverfly replaces literals and variables only when the document has pairs
        literals, variables = incoming.literals, incoming.variables
    result = Simulation(
        pairs=tuple(pairs),
        delays=incoming.delays,  # global delays are replaced, also by an append
        delays_log_normal=incoming.delays_log_normal,
        literals=literals,
        variables=variables,
        faults=incoming.faults,  # like the global delays: replaced, also by an append
    )
    return ImportResult(result, tuple(warnings + file_warnings), tuple(dict.fromkeys(sequences)))


_GO_INT = re.compile(r"[+-]?[0-9]+")


def _header_warnings(pair: Pair, index: int) -> list[str]:
    resp = pair.response
    where = f"data.pairs[{index}].response"
    out = []
    length = resp.header("Content-Length")
    if length and resp.header("Transfer-Encoding"):  # Go's Header.Get: a key with no values is absent
        out.append(
            f"WARNING: Response contains both Content-Length and Transfer-Encoding headers on {where}, "
            "please remove one of these headers"
        )
    # strconv.Atoi: an optional sign and ASCII digits, nothing else (no spaces)
    if length and _GO_INT.fullmatch(length[0]) and int(length[0]) != len(resp.body):
        out.append(
            f"WARNING: Response contains incorrect Content-Length header on {where}, please correct or remove header"
        )
    return out


@dataclass(frozen=True, slots=True)
class _BodyFiles:
    root: Path
    allowed_origins: tuple[str, ...]
    downloaded: Mapping[str, bytes | str]
    """URL -> content, or the reason it could not be downloaded (see ``download_body_files``)."""
    go_errors: bool = False
    """A file that cannot be read is worded as Go's ``os.ReadFile`` words it."""
    given_root: Path | None = None
    """``-response-body-files-path`` as given (None: not given), which Go's texts show."""


def _load_body_files(sim: Simulation, files: _BodyFiles, warnings: list[str]) -> Simulation:
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
        where = f"data.pairs[{i}].response"
        body = _read_body_file(resp.body_file, files, where)
        if resp.body_file_base64:
            body = _b64(body, where)
        pairs[i] = replace(pair, response=replace(resp, body=body, body_file_base64=False))
    return replace(sim, pairs=tuple(pairs))


def _b64(data: bytes, where: str) -> bytes:
    try:
        text = data.strip()
        return base64.b64decode(text + b"=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ImportFailure(f"{where} bodyFile is not valid base64 although encodedBody is true") from exc


def origin_allowed(url: str, origins: tuple[str, ...]) -> bool:
    """Whether ``url`` lies under one of ``origins`` (``-response-body-files-allow-origin``).

    Hoverfly checks a plain prefix, so ``http://files.test`` also lets in ``http://files.test.evil.net``
    and ``http://files.test@evil.net``; here an origin without a trailing slash must be followed by
    the end of the URL or by ``/``, ``?`` or ``#``.
    """
    for origin in origins:
        if url.startswith(origin) and (
            origin.endswith("/") or url[len(origin) : len(origin) + 1] in ("", "/", "?", "#")
        ):
            return True
    return False


def _read_body_file(name: str, files: _BodyFiles, where: str) -> bytes:
    if _URL.match(name):
        if not origin_allowed(name, files.allowed_origins):
            raise ImportFailure(
                f"{where} bodyFile {name} is not allowed. "
                "To allow this origin run simproxy with -response-body-files-allow-origin"
            )
        content = files.downloaded.get(name, "it was not downloaded")
        if isinstance(content, str):
            raise ImportFailure(f"{where} bodyFile {name} cannot be downloaded: {content}")
        return content
    root = files.root
    path = Path(name)
    if path.is_absolute():
        raise ImportFailure(f"{where} bodyFile contains absolute path ({name}). only relative is supported")
    resolved = (root / path).resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise ImportFailure(f"{where} relative path is invalid as it attempts to backtrack")
    try:
        return resolved.read_bytes()
    except OSError as exc:
        if files.go_errors:
            raise ImportFailure(f"{where} {go_read_error(exc, name, files.given_root)}") from exc
        raise ImportFailure(f"{where} {exc.strerror or exc}: {name}") from exc


def go_read_error(exc: OSError, name: str, root: Path | None) -> str:
    """Go's ``os.ReadFile`` error for the body file ``name`` under ``root``: ``<op> <path>: <reason>``,
    the path joined and cleaned as Go's ``filepath.Join`` does, the reason in Go's lower case; a
    directory opens in Go and fails at ``read``."""
    shown = posixpath.normpath(posixpath.join(str(root), name) if root is not None else name)
    op = "read" if exc.errno == errno.EISDIR else "open"
    reason = exc.strerror or str(exc)
    return f"{op} {shown}: {reason[:1].lower()}{reason[1:]}"


def body_file_urls(sim: Simulation, allowed_origins: tuple[str, ...]) -> set[str]:
    """The URL body files an import of ``sim`` will need (allowed ones only)."""
    return {
        p.response.body_file
        for p in sim.pairs
        if not p.response.body
        and _URL.match(p.response.body_file)
        and origin_allowed(p.response.body_file, allowed_origins)
    }


def _check_delays(sim: Simulation) -> None:
    for delay in sim.delays:
        if not delay.url_pattern or delay.delay == 0:
            raise ImportFailure(
                f"Config error - Missing values found in: {{{delay.url_pattern} {delay.http_method} {delay.delay}}}"
            )
        _check_pattern(delay.url_pattern)
    for entry in sim.delays_log_normal:
        if not entry.url_pattern:
            raise ImportFailure("Config error - Missing urlPattern")
        _check_pattern(entry.url_pattern)
        check_log_normal(entry.params)


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
    elif p.max and p.min > p.max:
        problem = "min delay must be less than max one"
    elif p.max and p.mean > p.max:
        problem = "mean delay can't be greather than max one"
    elif p.max and p.median > p.max:
        problem = "median delay can't be and greather than max one"
    elif p.min and p.mean < p.min:
        problem = "mean delay can't be less than min one"
    elif p.min and p.median < p.min:
        problem = "median delay can't be less than min one"
    elif p.mean < p.median:
        problem = "mean delay can't be less than median one"
    if problem:
        raise ImportFailure(f"Config error - {problem}")
