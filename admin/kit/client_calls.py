"""What the admin client sends, without sending it: every call as a ``Call`` value (``Calls``), and
the documents it carries: simulations (``simulation_document``, ``pair``) and journal searches
(``journal_search``). No I/O happens here; ``simproxy.admin.kit.client`` sends these calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar
from urllib.parse import parse_qsl, quote, urlencode

T = TypeVar("T")
JSON = Any
"""A decoded JSON value, as the server sent it."""

Simulation = Mapping[str, Any] | Sequence[Mapping[str, Any]] | str | bytes | Path
"""What ``put_simulation`` takes: a simulation document, one pair or a list of pairs (wrapped in a
v5.3 document), the document's JSON text (``str`` starting with ``{``, or ``bytes``), or the path of
a simulation file (``Path`` or any other ``str``)."""

Values = str | Sequence[str]
"""One value, or several (a repeated query parameter or header), of a name in a query or headers map."""

Query = str | Mapping[str, Values]
"""A query to match: ``"a=1&b=2"`` (a leading ``?`` is allowed) or ``{"a": "1", "b": ["2", "3"]}``."""

SCHEMA_VERSION = "v5.3"
"""The ``meta.schemaVersion`` of the documents the client wraps pairs in."""

CONFIG = "/api/v2/hoverfly"
"""Where the configuration endpoints are called (Hoverfly's spelling; simproxy also answers under
``/api/v2/service``)."""


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One admin call: the method, the path (with its query string), the body, and ``read``, which
    turns the body of a 200 answer into what the client method returns."""

    method: str
    path: str
    read: Callable[[bytes], T]
    body: bytes | None = None

    def describe(self) -> str:
        """``"GET /api/v2/journal?limit=10"``: how errors name the call."""
        return f"{self.method} {self.path}"


def error_text(body: bytes) -> str:
    """The error a refused call's body carries: ``{"error": ...}`` (JSON or plain text), else the body."""
    try:
        doc = json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace").strip()
    return str(doc["error"]) if isinstance(doc, dict) and "error" in doc else body.decode("utf-8", "replace")


def _json(body: bytes) -> JSON:
    return json.loads(body) if body.strip() else None


def _key(key: str) -> Callable[[bytes], Any]:
    return lambda body: (_json(body) or {}).get(key)


def _list(key: str) -> Callable[[bytes], list[JSON]]:
    return lambda body: list((_json(body) or {}).get(key) or [])


def _nothing(body: bytes) -> None:
    return None


def _encode(doc: Any) -> bytes:
    return json.dumps(doc).encode()


def _wrap(pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {"data": {"pairs": [dict(p) for p in pairs]}, "meta": {"schemaVersion": SCHEMA_VERSION}}


def simulation_document(simulation: Simulation) -> dict[str, Any]:
    """The simulation document ``put_simulation`` and ``append_simulation`` send for ``simulation``
    (see ``Simulation``). A document is sent as it is; the server validates it.

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for text that is not a JSON
    object."""
    if isinstance(simulation, Path) or (isinstance(simulation, str) and not simulation.lstrip().startswith("{")):
        return _document(Path(simulation).read_bytes(), f"{simulation}: ")
    if isinstance(simulation, str | bytes):
        return _document(simulation, "")
    if isinstance(simulation, Mapping):
        if "data" not in simulation and ("request" in simulation or "response" in simulation):
            return _wrap([simulation])  # one pair, as ``pair()`` makes it
        return dict(simulation)
    return _wrap(simulation)


def _document(text: str | bytes, where: str) -> dict[str, Any]:
    """A simulation document from its JSON text; ``where`` starts the error's message."""
    try:
        doc = json.loads(text)
    except ValueError as error:
        raise ValueError(f"{where}not a simulation document: invalid JSON ({error})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{where}not a simulation document (a JSON object), but a JSON {type(doc).__name__}")
    return doc


def _exact(value: str) -> list[dict[str, str]]:
    return [{"matcher": "exact", "value": value}]


def _joined(values: Values) -> str:
    """Several values of one name as the server compares them: joined with ``;`` in their order."""
    return values if isinstance(values, str) else ";".join(values)


def _query_map(query: Query) -> dict[str, list[dict[str, str]]]:
    """``"a=1&b=2"`` or a mapping -> the v5 query map, each name matched exactly."""
    if isinstance(query, str):
        grouped: dict[str, list[str]] = {}
        for name, value in parse_qsl(query.removeprefix("?"), keep_blank_values=True):
            grouped.setdefault(name, []).append(value)
        query = grouped
    return {name: _exact(_joined(values)) for name, values in query.items()}


def _split_path(path: str | None, query: Query | None, caller: str) -> tuple[str | None, Query | None]:
    """A path given with a query string (``"/search?q=1"``): the path matcher never sees the query,
    so its part after ``?`` becomes the query to match."""
    if path is None or "?" not in path:
        return path, query
    if query is not None:
        raise ValueError(f"{caller}: the path {path!r} has a query string and query= is given too; give one")
    bare, _, string = path.partition("?")
    return bare, string


def _request_matchers(
    path: str | None,
    method: str | None,
    destination: str | None,
    scheme: str | None,
    query: Query | None,
    headers: Mapping[str, Values] | None,
    body: str | None,
) -> dict[str, Any]:
    """A v5 request matcher set matching exactly what is given."""
    request: dict[str, Any] = {}
    for name, value in (("path", path), ("method", method), ("destination", destination), ("scheme", scheme)):
        if value is not None:
            request[name] = _exact(value)
    if body is not None:
        request["body"] = _exact(body)
    if query is not None:
        request["query"] = _query_map(query)
    if headers:
        request["headers"] = {name: _exact(_joined(values)) for name, values in headers.items()}
    return request


def pair(
    path: str | None = None,
    *,
    method: str | None = None,
    destination: str | None = None,
    scheme: str | None = None,
    query: Query | None = None,
    headers_matched: Mapping[str, Values] | None = None,
    body_matched: str | None = None,
    requires_state: Mapping[str, str] | None = None,
    status: int = 200,
    body: str = "",
    json: Any = None,
    headers: Mapping[str, Values] | None = None,
    body_file: str | None = None,
    templated: bool = False,
    transitions_state: Mapping[str, str] | None = None,
    removes_state: Sequence[str] | None = None,
    fixed_delay: int = 0,
    log_normal_delay: Mapping[str, int] | None = None,
    fault: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A v5 request-response pair (a dict) for ``put_simulation`` and ``append_simulation``.

    The request side matches exactly what is given and nothing else: ``path``, ``method``,
    ``destination`` (the host, with its port unless it is the scheme's), ``scheme``, ``query``
    (``"a=1&b=2"`` or a mapping; ``""`` or ``{}`` matches only a request without one; a path written
    ``"/search?q=1"`` is split into both), ``headers_matched`` (each named header), ``body_matched``
    and ``requires_state``. Finer matchers (glob, regex, jsonpath...) are written as the v5 dict.

    The response: ``status``, ``body`` or ``json`` (any JSON value, encoded, with
    ``Content-Type: application/json`` unless ``headers`` names one), ``headers`` (a value or a
    list of values per name), ``body_file`` (served from a file; see ``-response-body-files-path``),
    ``templated``, ``transitions_state`` / ``removes_state``, a delay in milliseconds
    (``fixed_delay``, or ``log_normal_delay={"min": 10, "max": 900, "mean": 100, "median": 50}``),
    and ``fault``, a simproxy fault such as ``{"type": "connectionReset", "fraction": 0.2}``
    (docs/faults.md; refused under ``-compat hoverfly``).

    Raises ``TypeError`` when both ``body`` and ``json`` are given, ``ValueError`` when the path
    carries a query and ``query`` is given too."""
    if json is not None and body:
        raise TypeError("pair() takes body or json, not both")
    path, query = _split_path(path, query, "pair()")
    request = _request_matchers(path, method, destination, scheme, query, headers_matched, body_matched)
    if requires_state:
        request["requiresState"] = dict(requires_state)
    served = {name: [values] if isinstance(values, str) else list(values) for name, values in (headers or {}).items()}
    if json is not None:
        body = _encode(json).decode()
        if not any(name.lower() == "content-type" for name in served):
            served["Content-Type"] = ["application/json"]
    response: dict[str, Any] = {"status": status, "body": body, "templated": templated}
    optional = {
        "headers": served,
        "bodyFile": body_file,
        "transitionsState": dict(transitions_state or {}),
        "removesState": list(removes_state or []),
        "fixedDelay": fixed_delay,
        "logNormalDelay": dict(log_normal_delay or {}),
        "fault": dict(fault or {}),
    }
    response.update({name: value for name, value in optional.items() if value})
    return {"request": request, "response": response}


def journal_search(
    request: Mapping[str, Any] | None = None,
    *,
    method: str | None = None,
    path: str | None = None,
    destination: str | None = None,
    scheme: str | None = None,
    query: Query | None = None,
    headers: Mapping[str, Values] | None = None,
    body: str | None = None,
) -> dict[str, Any]:
    """The body of ``POST /api/v2/journal``: ``{"request": <v5 request matcher set>}``.

    ``request`` is a matcher set written by hand (any matchers); the keywords add exact matchers,
    each replacing the field of the same name in it. ``query`` is ``"a=1&b=2"`` or a mapping (``""``
    or ``{}``: requests without a query); a ``path`` with ``?`` is split into path and query.
    Raises ``ValueError`` when the path carries a query and ``query`` is given too."""
    path, query = _split_path(path, query, "search_journal()")
    given = _request_matchers(path, method, destination, scheme, query, headers, body)
    return {"request": {**dict(request or {}), **given}}


class Calls:
    """Every call the clients make, as ``Call`` values (no I/O here): each method has the name of
    the client method that sends it."""

    @staticmethod
    def health() -> Call[JSON]:
        """``GET /api/health``."""
        return Call("GET", "/api/health", _json)

    @staticmethod
    def login(username: str, password: str) -> Call[str]:
        """``POST /api/token-auth`` with ``{"username": ..., "password": ...}``, read as the token."""
        return Call("POST", "/api/token-auth", _key("token"), _encode({"username": username, "password": password}))

    @staticmethod
    def simulation() -> Call[JSON]:
        """``GET /api/v2/simulation``."""
        return Call("GET", "/api/v2/simulation", _json)

    @staticmethod
    def put_simulation(simulation: Simulation) -> Call[JSON]:
        """``PUT /api/v2/simulation`` with ``simulation_document(simulation)``."""
        return Call("PUT", "/api/v2/simulation", _json, _encode(simulation_document(simulation)))

    @staticmethod
    def append_simulation(simulation: Simulation) -> Call[JSON]:
        """``POST /api/v2/simulation`` with ``simulation_document(simulation)``."""
        return Call("POST", "/api/v2/simulation", _json, _encode(simulation_document(simulation)))

    @staticmethod
    def delete_simulation() -> Call[None]:
        """``DELETE /api/v2/simulation``."""
        return Call("DELETE", "/api/v2/simulation", _nothing)

    @staticmethod
    def mode() -> Call[str]:
        """``GET /api/v2/hoverfly/mode``, read as the mode's name."""
        return Call("GET", f"{CONFIG}/mode", _key("mode"))

    @staticmethod
    def set_mode(mode: str, arguments: Mapping[str, Any] | None = None) -> Call[None]:
        """``PUT /api/v2/hoverfly/mode`` with ``{"mode": ..., "arguments": {...}}`` (no arguments: none sent)."""
        body = {"mode": mode, **({"arguments": dict(arguments)} if arguments else {})}
        return Call("PUT", f"{CONFIG}/mode", _nothing, _encode(body))

    @staticmethod
    def destination() -> Call[str]:
        """``GET /api/v2/hoverfly/destination``, read as the pattern."""
        return Call("GET", f"{CONFIG}/destination", _key("destination"))

    @staticmethod
    def set_destination(destination: str) -> Call[None]:
        """``PUT /api/v2/hoverfly/destination`` with ``{"destination": ...}``."""
        return Call("PUT", f"{CONFIG}/destination", _nothing, _encode({"destination": destination}))

    @staticmethod
    def usage() -> Call[dict[str, int]]:
        """``GET /api/v2/hoverfly/usage``, read as the counters by mode."""
        return Call("GET", f"{CONFIG}/usage", lambda body: dict(_json(body)["usage"]["counters"]))

    @staticmethod
    def state() -> Call[dict[str, str]]:
        """``GET /api/v2/state``, read as the state map."""
        return Call("GET", "/api/v2/state", lambda body: dict(_json(body)["state"] or {}))

    @staticmethod
    def set_state(state: Mapping[str, str], *, patch: bool = False) -> Call[None]:
        """``PUT /api/v2/state`` (``PATCH`` with ``patch``) with ``{"state": {...}}``."""
        return Call("PATCH" if patch else "PUT", "/api/v2/state", _nothing, _encode({"state": dict(state)}))

    @staticmethod
    def delete_state() -> Call[None]:
        """``DELETE /api/v2/state``."""
        return Call("DELETE", "/api/v2/state", _nothing)

    @staticmethod
    def journal_page(limit: int | None = None, offset: int | None = None, sort: str | None = None) -> Call[JSON]:
        """``GET /api/v2/journal?limit=&offset=&sort=`` (each only when given), read as the page document."""
        named = (("limit", limit), ("offset", offset), ("sort", sort))
        given = {name: value for name, value in named if value is not None}
        return Call("GET", "/api/v2/journal" + (f"?{urlencode(given)}" if given else ""), _json)

    @staticmethod
    def search_journal(search: Mapping[str, Any]) -> Call[list[JSON]]:
        """``POST /api/v2/journal`` with ``search`` (see ``journal_search``), read as the entries found."""
        return Call("POST", "/api/v2/journal", _list("journal"), _encode(search))

    @staticmethod
    def delete_journal() -> Call[None]:
        """``DELETE /api/v2/journal``."""
        return Call("DELETE", "/api/v2/journal", _nothing)

    @staticmethod
    def cache() -> Call[list[JSON]]:
        """``GET /api/v2/cache``, read as the cached entries."""
        return Call("GET", "/api/v2/cache", _list("cache"))

    @staticmethod
    def delete_cache() -> Call[None]:
        """``DELETE /api/v2/cache``."""
        return Call("DELETE", "/api/v2/cache", _nothing)

    @staticmethod
    def data_sources() -> Call[dict[str, str]]:
        """``GET /api/v2/hoverfly/templating-data-source/csv``, read as name -> CSV text."""

        def read(body: bytes) -> dict[str, str]:
            return {s["name"]: s["data"] for s in (_json(body) or {}).get("csvDataSources") or []}

        return Call("GET", f"{CONFIG}/templating-data-source/csv", read)

    @staticmethod
    def put_data_source(name: str, csv: str) -> Call[None]:
        """``PUT /api/v2/hoverfly/templating-data-source/csv`` with ``{"name": ..., "data": ...}``."""
        body = _encode({"name": name, "data": csv})
        return Call("PUT", f"{CONFIG}/templating-data-source/csv", _nothing, body)

    @staticmethod
    def delete_data_source(name: str) -> Call[None]:
        """``DELETE /api/v2/hoverfly/templating-data-source/csv/<name>``."""
        return Call("DELETE", f"{CONFIG}/templating-data-source/csv/{quote(name, safe='')}", _nothing)

    @staticmethod
    def ca_cert() -> Call[str]:
        """``GET /api/v2/hoverfly/ca-cert``, read as text."""
        return Call("GET", f"{CONFIG}/ca-cert", lambda body: body.decode())

    @staticmethod
    def logs(limit: int | None = None) -> Call[list[JSON]]:
        """``GET /api/v2/logs?limit=``, read as the log entries."""
        path = "/api/v2/logs" + (f"?{urlencode({'limit': limit})}" if limit else "")
        return Call("GET", path, _list("logs"))
