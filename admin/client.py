"""A Python client of the admin API, for tests and scripts: ``Client`` (blocking) and ``AsyncClient``.

It speaks the admin API v2 of any simproxy or Hoverfly (it uses the ``/api/v2/hoverfly/...``
spelling both answer to)::

    from simproxy.admin.client import Client, pair

    with Client("http://localhost:8888") as sp:
        sp.put_simulation([pair("/hello", body='{"hi": 1}', headers={"Content-Type": ["application/json"]})])
        sp.set_mode("simulate")
        ...
        assert len(sp.search_journal(method="GET", path="/hello")) == 1

Every call is described once (``Call``: method, path, body, and how to read the answer); the two
clients only send it, the blocking one with the standard library, the async one with aiohttp. A
refused call raises ``ApiError`` carrying the status and the server's ``{"error": ...}`` text.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import quote, urlencode

if TYPE_CHECKING:
    import aiohttp

T = TypeVar("T")
JSON = Any
Simulation = Mapping[str, Any] | Sequence[Mapping[str, Any]] | str | Path
"""A simulation document, a list of pairs (wrapped as one), or the path of a simulation file."""

SCHEMA_VERSION = "v5.3"
CONFIG = "/api/v2/hoverfly"


class ApiError(Exception):
    """The admin API refused a call: ``status`` and the server's error text (``message``)."""

    def __init__(self, status: int, message: str, call: str) -> None:
        super().__init__(f"{call}: {status} {message}")
        self.status = status
        self.message = message


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One admin call: what to send, and how to read a 200's body."""

    method: str
    path: str
    read: Callable[[bytes], T]
    body: bytes | None = None

    def describe(self) -> str:
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


def _nothing(body: bytes) -> None:
    return None


def _encode(doc: Any) -> bytes:
    return json.dumps(doc).encode()


def simulation_document(simulation: Simulation) -> dict[str, Any]:
    """A full simulation document from what ``put_simulation`` takes."""
    if isinstance(simulation, str | Path):
        doc = json.loads(Path(simulation).read_text())
        if not isinstance(doc, dict):
            raise ValueError(f"{simulation}: not a simulation document (a JSON object)")
        return doc
    if isinstance(simulation, Mapping):
        return dict(simulation)
    return {"data": {"pairs": [dict(p) for p in simulation]}, "meta": {"schemaVersion": SCHEMA_VERSION}}


def pair(
    path: str | None = None,
    *,
    method: str | None = None,
    destination: str | None = None,
    query: Mapping[str, str] | None = None,
    headers_matched: Mapping[str, str] | None = None,
    body_matched: str | None = None,
    status: int = 200,
    body: str = "",
    headers: Mapping[str, Sequence[str]] | None = None,
    templated: bool = False,
    requires_state: Mapping[str, str] | None = None,
    transitions_state: Mapping[str, str] | None = None,
    fixed_delay: int = 0,
) -> dict[str, Any]:
    """A request-response pair matching exactly what is given (``query``, ``headers_matched`` and
    ``body_matched`` exactly too); anything finer is written as the v5 dict itself."""

    def exact(value: str) -> list[dict[str, str]]:
        return [{"matcher": "exact", "value": value}]

    request: dict[str, Any] = {}
    for name, value in (("path", path), ("method", method), ("destination", destination), ("body", body_matched)):
        if value is not None:
            request[name] = exact(value)
    if query:
        request["query"] = {name: exact(value) for name, value in query.items()}
    if headers_matched:
        request["headers"] = {name: exact(value) for name, value in headers_matched.items()}
    if requires_state:
        request["requiresState"] = dict(requires_state)
    response: dict[str, Any] = {"status": status, "body": body, "templated": templated}
    if headers:
        response["headers"] = {name: list(values) for name, values in headers.items()}
    if transitions_state:
        response["transitionsState"] = dict(transitions_state)
    if fixed_delay:
        response["fixedDelay"] = fixed_delay
    return {"request": request, "response": response}


def journal_search(
    *, method: str | None = None, path: str | None = None, destination: str | None = None, query: str | None = None
) -> dict[str, Any]:
    """The body of ``POST /api/v2/journal``: entries whose request has exactly what is given."""
    request = {
        name: [{"matcher": "exact", "value": value}]
        for name, value in (("method", method), ("path", path), ("destination", destination), ("query", query))
        if value is not None
    }
    return {"request": request}


class Calls:
    """Every call the clients make, as ``Call`` values (no I/O here)."""

    @staticmethod
    def health() -> Call[JSON]:
        return Call("GET", "/api/health", _json)

    @staticmethod
    def simulation() -> Call[JSON]:
        return Call("GET", "/api/v2/simulation", _json)

    @staticmethod
    def put_simulation(simulation: Simulation) -> Call[JSON]:
        return Call("PUT", "/api/v2/simulation", _json, _encode(simulation_document(simulation)))

    @staticmethod
    def append_simulation(simulation: Simulation) -> Call[JSON]:
        return Call("POST", "/api/v2/simulation", _json, _encode(simulation_document(simulation)))

    @staticmethod
    def delete_simulation() -> Call[None]:
        return Call("DELETE", "/api/v2/simulation", _nothing)

    @staticmethod
    def mode() -> Call[str]:
        return Call("GET", f"{CONFIG}/mode", _key("mode"))

    @staticmethod
    def set_mode(mode: str, arguments: Mapping[str, Any]) -> Call[None]:
        body = {"mode": mode, **({"arguments": dict(arguments)} if arguments else {})}
        return Call("PUT", f"{CONFIG}/mode", _nothing, _encode(body))

    @staticmethod
    def destination() -> Call[str]:
        return Call("GET", f"{CONFIG}/destination", _key("destination"))

    @staticmethod
    def set_destination(destination: str) -> Call[None]:
        return Call("PUT", f"{CONFIG}/destination", _nothing, _encode({"destination": destination}))

    @staticmethod
    def usage() -> Call[dict[str, int]]:
        return Call("GET", f"{CONFIG}/usage", lambda body: dict(_json(body)["usage"]["counters"]))

    @staticmethod
    def state() -> Call[dict[str, str]]:
        return Call("GET", "/api/v2/state", lambda body: dict(_json(body)["state"] or {}))

    @staticmethod
    def put_state(state: Mapping[str, str], *, patch: bool = False) -> Call[None]:
        return Call("PATCH" if patch else "PUT", "/api/v2/state", _nothing, _encode({"state": dict(state)}))

    @staticmethod
    def delete_state() -> Call[None]:
        return Call("DELETE", "/api/v2/state", _nothing)

    @staticmethod
    def journal(limit: int | None = None, offset: int | None = None) -> Call[JSON]:
        given = {name: value for name, value in (("limit", limit), ("offset", offset)) if value is not None}
        return Call("GET", "/api/v2/journal" + (f"?{urlencode(given)}" if given else ""), _json)

    @staticmethod
    def search_journal(search: Mapping[str, Any]) -> Call[list[JSON]]:
        return Call("POST", "/api/v2/journal", lambda body: list(_json(body)["journal"] or []), _encode(search))

    @staticmethod
    def delete_journal() -> Call[None]:
        return Call("DELETE", "/api/v2/journal", _nothing)

    @staticmethod
    def cache() -> Call[list[JSON]]:
        return Call("GET", "/api/v2/cache", lambda body: list(_json(body)["cache"] or []))

    @staticmethod
    def delete_cache() -> Call[None]:
        return Call("DELETE", "/api/v2/cache", _nothing)

    @staticmethod
    def data_sources() -> Call[dict[str, str]]:
        def read(body: bytes) -> dict[str, str]:
            return {s["name"]: s["data"] for s in (_json(body) or {}).get("csvDataSources") or []}

        return Call("GET", f"{CONFIG}/templating-data-source/csv", read)

    @staticmethod
    def put_data_source(name: str, csv: str) -> Call[None]:
        body = _encode({"name": name, "data": csv})
        return Call("PUT", f"{CONFIG}/templating-data-source/csv", _nothing, body)

    @staticmethod
    def delete_data_source(name: str) -> Call[None]:
        return Call("DELETE", f"{CONFIG}/templating-data-source/csv/{quote(name, safe='')}", _nothing)

    @staticmethod
    def ca_cert() -> Call[str]:
        return Call("GET", f"{CONFIG}/ca-cert", lambda body: body.decode())

    @staticmethod
    def logs(limit: int | None = None) -> Call[list[JSON]]:
        path = "/api/v2/logs" + (f"?{urlencode({'limit': limit})}" if limit else "")
        return Call("GET", path, lambda body: list(_json(body)["logs"] or []))


class _Base:
    def __init__(self, base_url: str = "http://localhost:8888", *, token: str = "", timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"

    @staticmethod
    def _answer(call: Call[T], status: int, body: bytes) -> T:
        if status != 200:
            raise ApiError(status, error_text(body), call.describe())
        return call.read(body)


class Client(_Base):
    """Blocking client (the standard library's HTTP); ``with Client(...) as sp`` or plain. It never
    goes through ``HTTP_PROXY`` (set to simproxy itself for the code under test, as a rule)."""

    def __init__(self, base_url: str = "http://localhost:8888", *, token: str = "", timeout: float = 30.0) -> None:
        super().__init__(base_url, token=token, timeout=timeout)
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def send(self, call: Call[T]) -> T:
        request = urllib.request.Request(
            self.base_url + call.path, data=call.body, method=call.method, headers=self.headers
        )
        try:
            with self._opener.open(request, timeout=self.timeout) as answer:
                return self._answer(call, answer.status, answer.read())
        except urllib.error.HTTPError as refused:
            return self._answer(call, refused.code, refused.read())

    def close(self) -> None:
        """Nothing is held between calls; here for symmetry with ``AsyncClient``."""

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def health(self) -> JSON:
        return self.send(Calls.health())

    def simulation(self) -> JSON:
        return self.send(Calls.simulation())

    def put_simulation(self, simulation: Simulation) -> JSON:
        return self.send(Calls.put_simulation(simulation))

    def append_simulation(self, simulation: Simulation) -> JSON:
        return self.send(Calls.append_simulation(simulation))

    def delete_simulation(self) -> None:
        self.send(Calls.delete_simulation())

    def mode(self) -> str:
        return self.send(Calls.mode())

    def set_mode(self, mode: str, **arguments: Any) -> None:
        self.send(Calls.set_mode(mode, arguments))

    def destination(self) -> str:
        return self.send(Calls.destination())

    def set_destination(self, destination: str) -> None:
        self.send(Calls.set_destination(destination))

    def usage(self) -> dict[str, int]:
        return self.send(Calls.usage())

    def state(self) -> dict[str, str]:
        return self.send(Calls.state())

    def set_state(self, state: Mapping[str, str], *, patch: bool = False) -> None:
        self.send(Calls.put_state(state, patch=patch))

    def delete_state(self) -> None:
        self.send(Calls.delete_state())

    def journal(self, limit: int | None = None, offset: int | None = None) -> JSON:
        return self.send(Calls.journal(limit, offset))

    def search_journal(self, **request: str) -> list[JSON]:
        return self.send(Calls.search_journal(journal_search(**request)))

    def delete_journal(self) -> None:
        self.send(Calls.delete_journal())

    def cache(self) -> list[JSON]:
        return self.send(Calls.cache())

    def delete_cache(self) -> None:
        self.send(Calls.delete_cache())

    def data_sources(self) -> dict[str, str]:
        return self.send(Calls.data_sources())

    def put_data_source(self, name: str, csv: str) -> None:
        self.send(Calls.put_data_source(name, csv))

    def delete_data_source(self, name: str) -> None:
        self.send(Calls.delete_data_source(name))

    def logs(self, limit: int | None = None) -> list[JSON]:
        return self.send(Calls.logs(limit))

    def ca_cert(self) -> str:
        """The PEM of the CA to trust for HTTPS through the proxy (simproxy's own endpoint; empty
        when it intercepts no HTTPS)."""
        return self.send(Calls.ca_cert())


class AsyncClient(_Base):
    """The same calls for asyncio code (aiohttp); ``async with AsyncClient(...) as sp``."""

    def __init__(self, base_url: str = "http://localhost:8888", *, token: str = "", timeout: float = 30.0) -> None:
        super().__init__(base_url, token=token, timeout=timeout)
        self._session: aiohttp.ClientSession | None = None

    async def send(self, call: Call[T]) -> T:
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
        url = self.base_url + call.path
        async with self._session.request(call.method, url, data=call.body, headers=self.headers) as answer:
            return self._answer(call, answer.status, await answer.read())

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def health(self) -> JSON:
        return await self.send(Calls.health())

    async def simulation(self) -> JSON:
        return await self.send(Calls.simulation())

    async def put_simulation(self, simulation: Simulation) -> JSON:
        return await self.send(Calls.put_simulation(simulation))

    async def append_simulation(self, simulation: Simulation) -> JSON:
        return await self.send(Calls.append_simulation(simulation))

    async def delete_simulation(self) -> None:
        await self.send(Calls.delete_simulation())

    async def mode(self) -> str:
        return await self.send(Calls.mode())

    async def set_mode(self, mode: str, **arguments: Any) -> None:
        await self.send(Calls.set_mode(mode, arguments))

    async def destination(self) -> str:
        return await self.send(Calls.destination())

    async def set_destination(self, destination: str) -> None:
        await self.send(Calls.set_destination(destination))

    async def usage(self) -> dict[str, int]:
        return await self.send(Calls.usage())

    async def state(self) -> dict[str, str]:
        return await self.send(Calls.state())

    async def set_state(self, state: Mapping[str, str], *, patch: bool = False) -> None:
        await self.send(Calls.put_state(state, patch=patch))

    async def delete_state(self) -> None:
        await self.send(Calls.delete_state())

    async def journal(self, limit: int | None = None, offset: int | None = None) -> JSON:
        return await self.send(Calls.journal(limit, offset))

    async def search_journal(self, **request: str) -> list[JSON]:
        return await self.send(Calls.search_journal(journal_search(**request)))

    async def delete_journal(self) -> None:
        await self.send(Calls.delete_journal())

    async def cache(self) -> list[JSON]:
        return await self.send(Calls.cache())

    async def delete_cache(self) -> None:
        await self.send(Calls.delete_cache())

    async def data_sources(self) -> dict[str, str]:
        return await self.send(Calls.data_sources())

    async def put_data_source(self, name: str, csv: str) -> None:
        await self.send(Calls.put_data_source(name, csv))

    async def delete_data_source(self, name: str) -> None:
        await self.send(Calls.delete_data_source(name))

    async def logs(self, limit: int | None = None) -> list[JSON]:
        return await self.send(Calls.logs(limit))

    async def ca_cert(self) -> str:
        return await self.send(Calls.ca_cert())
