"""A Python client of the admin API, for tests and scripts: ``Client`` (blocking) and ``AsyncClient``.

It speaks the admin API v2 of any simproxy or Hoverfly (it uses the ``/api/v2/hoverfly/...``
spelling both answer to)::

    from simproxy import Client, pair

    with Client("http://localhost:8888") as sp:
        sp.put_simulation([pair("/hello", json={"hi": 1})])
        sp.set_mode("simulate")
        ...
        assert len(sp.search_journal(method="GET", path="/hello")) == 1

Every call is described once (``Calls`` in ``client_calls``: method, path, body, and how to read the
answer); the two clients only send it, the blocking one with the standard library, the async one
with aiohttp (imported on first use). Failures are ``ClientError``: ``ApiError`` when the server
refused a call (its status and error text), ``ServerUnreachable`` when no answer came. The reference
is docs/client.md.
"""

from __future__ import annotations

import errno
import http.client
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from simproxy.admin.kit.client_calls import (
    CONFIG,
    JSON,
    SCHEMA_VERSION,
    Call,
    Calls,
    Query,
    Simulation,
    Values,
    error_text,
    journal_search,
    pair,
    simulation_document,
)
from simproxy.store.errors import SimproxyError

if TYPE_CHECKING:
    import aiohttp

__all__ = (
    "CONFIG",
    "JSON",
    "SCHEMA_VERSION",
    "ApiError",
    "AsyncClient",
    "Call",
    "Calls",
    "Client",
    "ClientError",
    "Query",
    "ServerUnreachable",
    "Simulation",
    "Values",
    "error_text",
    "journal_search",
    "pair",
    "simulation_document",
)

T = TypeVar("T")


class ClientError(SimproxyError):
    """A call of ``Client`` or ``AsyncClient`` failed: ``ApiError`` or ``ServerUnreachable``."""


class ApiError(ClientError):
    """The admin API refused a call: ``status`` (the HTTP status), ``message`` (the server's
    ``{"error": ...}`` text, or its plain-text body) and ``call`` (``"PUT /api/v2/hoverfly/mode"``)."""

    def __init__(self, status: int, message: str, call: str) -> None:
        super().__init__(f"{call}: {status} {message}")
        self.status = status
        self.message = message
        self.call = call


class ServerUnreachable(ClientError, ConnectionError):
    """No answer came from the admin API at ``url``: ``reason`` says why (connection refused,
    unknown host, no answer within the timeout, connection closed), ``call`` what was being sent.
    It is also a ``ConnectionError`` (an ``OSError``), as the error underneath (``__cause__``) was."""

    def __init__(self, url: str, reason: str, call: str) -> None:
        super().__init__(f"{call}: cannot reach simproxy's admin API at {url}: {reason}")
        self.url = url
        self.reason = reason
        self.call = call


def unreachable_reason(error: BaseException, timeout: float) -> str:
    """Why a call got no answer, from the error urllib or aiohttp raised, in a few words."""
    cause = getattr(error, "reason", None) if isinstance(error, urllib.error.URLError) else error
    cause = getattr(cause, "os_error", cause)  # aiohttp's connector errors carry the socket's
    if isinstance(cause, TimeoutError):
        return f"no answer within {timeout:g} s"
    if isinstance(cause, socket.gaierror):
        return f"unknown host ({cause.strerror})"
    if isinstance(cause, ConnectionRefusedError) or getattr(cause, "errno", None) == errno.ECONNREFUSED:
        return "connection refused (is it running, on this port?)"
    if isinstance(cause, http.client.RemoteDisconnected | ConnectionResetError):
        return "the connection was closed before an answer came"
    if isinstance(cause, http.client.HTTPException):
        return f"the answer is not HTTP ({type(cause).__name__}: {cause})"
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror[:1].lower() + cause.strerror[1:]
    return str(cause) or type(cause).__name__


class _Base:
    def __init__(self, base_url: str = "http://localhost:8888", *, token: str = "", timeout: float = 30.0) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{base_url!r}: the admin API's URL is wanted, such as 'http://localhost:8888'")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json"}
        if token:
            self._authorize(token)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r})"

    @staticmethod
    def _answer(call: Call[T], status: int, body: bytes) -> T:
        if status != 200:
            raise ApiError(status, error_text(body), call.describe())
        return call.read(body)

    def _authorize(self, token: str) -> str:
        self.headers["Authorization"] = f"Bearer {token}"
        return token

    def _unreachable(self, call: Call[Any], error: BaseException) -> ServerUnreachable:
        return ServerUnreachable(self.base_url, unreachable_reason(error, self.timeout), call.describe())

    @staticmethod
    def _journal_done(entries: list[JSON], offset: int, page: JSON) -> bool:
        """Whether paging through the journal is over, ``entries`` read from ``offset`` on."""
        found = (page or {}).get("journal") or []
        return not found or offset + len(entries) >= int((page or {}).get("total") or 0)


class Client(_Base):
    """Blocking client of the admin API at ``base_url`` (the standard library's HTTP), for
    ``with Client(...) as sp`` or plain use.

    ``token`` is sent as ``Authorization: Bearer`` (for ``-auth``; or call ``login``); ``timeout``
    bounds each call in seconds. It never goes through ``HTTP_PROXY`` (which, in a test, usually
    points at simproxy itself). Every method raises ``ApiError`` when the server
    refuses the call and ``ServerUnreachable`` when no answer comes; ``ValueError`` for a
    ``base_url`` that is not an http(s) URL."""

    def __init__(self, base_url: str = "http://localhost:8888", *, token: str = "", timeout: float = 30.0) -> None:
        super().__init__(base_url, token=token, timeout=timeout)
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def send(self, call: Call[T]) -> T:
        """Send one ``Call`` (see ``Calls``) and return what its ``read`` makes of a 200 answer; the
        way to reach an endpoint this class has no method for."""
        url = self.base_url + call.path
        request = urllib.request.Request(url, data=call.body, method=call.method, headers=self.headers)
        try:
            try:
                with self._opener.open(request, timeout=self.timeout) as answer:
                    status, body = answer.status, answer.read()
            except urllib.error.HTTPError as refused:
                status, body = refused.code, refused.read()
        except (OSError, http.client.HTTPException) as error:  # URLError is an OSError
            raise self._unreachable(call, error) from error
        return self._answer(call, status, body)

    def close(self) -> None:
        """Nothing is held between calls; here for symmetry with ``AsyncClient.aclose``."""

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def health(self) -> JSON:
        """``GET /api/health``: ``{"message": "simproxy is healthy"}`` once the server is up."""
        return self.send(Calls.health())

    def login(self, username: str, password: str) -> str:
        """``POST /api/token-auth``: log in to a server started with ``-auth``; the token it gives
        is sent with every later call of this client, and returned. Wrong credentials are
        ``ApiError`` 401 (429 after three failures)."""
        return self._authorize(self.send(Calls.login(username, password)))

    def simulation(self) -> JSON:
        """``GET /api/v2/simulation``: the simulation document (``data.pairs``, ``data.globalActions``,
        ``meta``)."""
        return self.send(Calls.simulation())

    def put_simulation(self, simulation: Simulation) -> JSON:
        """``PUT /api/v2/simulation``: replace the simulation with ``simulation`` (a document, a
        pair or a list of pairs, JSON text or a file's path: see ``simulation_document``). Returns
        the server's answer: the simulation as stored, or ``{"warnings": [...]}``. A refused
        document (``ApiError``, 400) changes nothing."""
        return self.send(Calls.put_simulation(simulation))

    def append_simulation(self, simulation: Simulation) -> JSON:
        """``POST /api/v2/simulation``: add ``simulation``'s pairs after the current ones (its
        global delays, literals and variables replace the current ones, Hoverfly's rule). Returns
        what ``put_simulation`` returns."""
        return self.send(Calls.append_simulation(simulation))

    def delete_simulation(self) -> None:
        """``DELETE /api/v2/simulation``: remove every pair and global action (and flush the cache)."""
        self.send(Calls.delete_simulation())

    def mode(self) -> str:
        """``GET /api/v2/hoverfly/mode``: the mode's name, such as ``"simulate"``."""
        return self.send(Calls.mode())

    def set_mode(self, mode: str, arguments: Mapping[str, Any] | None = None, /, **more: Any) -> None:
        """``PUT /api/v2/hoverfly/mode``: switch to ``mode`` (``simulate``, ``spy``, ``capture``,
        ``modify``, ``synthesize``, ``diff``) with its arguments, given as a mapping, as keywords or
        both (keywords win): ``set_mode("spy", {"captureOnMiss": True})``, ``set_mode("capture", stateful=True)``.
        The names are the API's (``matchingStrategy``, ``headersWhitelist``, ``overwriteDuplicate``...).
        An unknown mode is ``ApiError`` 400."""
        self.send(Calls.set_mode(mode, {**(arguments or {}), **more}))

    def destination(self) -> str:
        """``GET /api/v2/hoverfly/destination``: the pattern of the hosts simproxy acts on (``.``: all)."""
        return self.send(Calls.destination())

    def set_destination(self, destination: str) -> None:
        """``PUT /api/v2/hoverfly/destination``: act only on hosts matching the regular expression
        ``destination``; others are tunnelled or forwarded untouched."""
        self.send(Calls.set_destination(destination))

    def state(self) -> dict[str, str]:
        """``GET /api/v2/state``: the state map (``{}`` when empty)."""
        return self.send(Calls.state())

    def set_state(self, state: Mapping[str, str], *, patch: bool = False) -> None:
        """``PUT /api/v2/state``: replace the state with ``state``; with ``patch=True``,
        ``PATCH``: set those keys and keep the others."""
        self.send(Calls.set_state(state, patch=patch))

    def delete_state(self) -> None:
        """``DELETE /api/v2/state``: empty the state."""
        self.send(Calls.delete_state())

    def journal(self, limit: int | None = None, offset: int = 0, *, sort: str | None = None) -> list[JSON]:
        """The journal's entries (dicts with ``request``, ``response``, ``mode``, ``timeStarted``,
        ``latency``, ``id``), oldest first: every entry from ``offset`` on, read a page at a time
        with ``GET /api/v2/journal``, or at most ``limit`` of them in one call (none for a ``limit``
        of 0, which the server would read as its default). ``sort`` is
        ``"timeStarted:desc"``, ``"latency:asc"``... A journal turned off (``-journal-size 0``) is
        ``ApiError`` 500."""
        if limit is not None:
            return list(self.journal_page(limit, offset, sort=sort).get("journal") or []) if limit > 0 else []
        entries: list[JSON] = []
        while True:
            page = self.journal_page(None, offset + len(entries), sort=sort)
            entries += page.get("journal") or []
            if self._journal_done(entries, offset, page):
                return entries

    def journal_page(self, limit: int | None = None, offset: int | None = None, *, sort: str | None = None) -> JSON:
        """``GET /api/v2/journal``: one page as the server sends it, ``{"journal": [...],
        "indexes": [...], "offset": ..., "limit": ..., "total": ...}`` (``total``: every entry;
        without ``limit`` the server's page holds 500, or 25 under ``-compat hoverfly``)."""
        return self.send(Calls.journal_page(limit, offset, sort))

    def search_journal(
        self,
        request: Mapping[str, Any] | None = None,
        *,
        method: str | None = None,
        path: str | None = None,
        destination: str | None = None,
        scheme: str | None = None,
        query: Query | None = None,
        headers: Mapping[str, Values] | None = None,
        body: str | None = None,
    ) -> list[JSON]:
        """``POST /api/v2/journal``: the entries whose request has exactly what is given, oldest
        first: ``search_journal(method="GET", path="/hello", query="a=1&b=2")``. ``query`` is a
        string or a mapping (``""``: no query); ``headers`` maps names to a value or a list of them;
        ``request`` is a v5 request matcher set for any other matcher, e.g.
        ``{"path": [{"matcher": "glob", "value": "/api/*"}]}``. Nothing given: ``[]``."""
        search = journal_search(
            request,
            method=method,
            path=path,
            destination=destination,
            scheme=scheme,
            query=query,
            headers=headers,
            body=body,
        )
        return self.send(Calls.search_journal(search))

    def delete_journal(self) -> None:
        """``DELETE /api/v2/journal``: remove every entry (and the journal's indexes)."""
        self.send(Calls.delete_journal())

    def cache(self) -> list[JSON]:
        """``GET /api/v2/cache``: the cached lookups (``key``, ``matchingPair``, ``closestMiss``...)."""
        return self.send(Calls.cache())

    def delete_cache(self) -> None:
        """``DELETE /api/v2/cache``: flush the request cache."""
        self.send(Calls.delete_cache())

    def data_sources(self) -> dict[str, str]:
        """``GET /api/v2/hoverfly/templating-data-source/csv``: each CSV data source's text by name."""
        return self.send(Calls.data_sources())

    def put_data_source(self, name: str, csv: str) -> None:
        """``PUT /api/v2/hoverfly/templating-data-source/csv``: set the CSV data source ``name``
        (the text, header row first) that templates read with ``csv`` helpers."""
        self.send(Calls.put_data_source(name, csv))

    def delete_data_source(self, name: str) -> None:
        """``DELETE /api/v2/hoverfly/templating-data-source/csv/<name>``: remove that data source."""
        self.send(Calls.delete_data_source(name))

    def usage(self) -> dict[str, int]:
        """``GET /api/v2/hoverfly/usage``: the requests handled in each mode, ``{"simulate": 3, ...}``."""
        return self.send(Calls.usage())

    def logs(self, limit: int | None = None) -> list[JSON]:
        """``GET /api/v2/logs``: the newest log entries (``level``, ``msg``, ``time``...), at most
        ``limit`` (the server's default: 500)."""
        return self.send(Calls.logs(limit))

    def ca_cert(self) -> str:
        """``GET /api/v2/hoverfly/ca-cert``: the PEM of the CA to trust for HTTPS through the proxy
        (simproxy's own endpoint; empty when it intercepts no HTTPS)."""
        return self.send(Calls.ca_cert())


class AsyncClient(_Base):
    """The same calls for asyncio code (aiohttp, imported on first call):
    ``async with AsyncClient(...) as sp`` (or ``await sp.aclose()`` when done). Each method sends
    what the ``Client`` method of its name sends and returns the same, awaited; the errors are
    the same too."""

    def __init__(self, base_url: str = "http://localhost:8888", *, token: str = "", timeout: float = 30.0) -> None:
        super().__init__(base_url, token=token, timeout=timeout)
        self._session: aiohttp.ClientSession | None = None

    async def send(self, call: Call[T]) -> T:
        """Send one ``Call`` (see ``Calls``) and return what its ``read`` makes of a 200 answer."""
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
        url = self.base_url + call.path
        try:
            async with self._session.request(call.method, url, data=call.body, headers=self.headers) as answer:
                status, body = answer.status, await answer.read()
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError) as error:
            raise self._unreachable(call, error) from error
        return self._answer(call, status, body)

    async def aclose(self) -> None:
        """Close the connections held (the aiohttp session); the next call opens new ones."""
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
        """``GET /api/health``: ``{"message": ...}`` once the server is up."""
        return await self.send(Calls.health())

    async def login(self, username: str, password: str) -> str:
        """``POST /api/token-auth``: log in; the token is sent with every later call, and returned."""
        return self._authorize(await self.send(Calls.login(username, password)))

    async def simulation(self) -> JSON:
        """``GET /api/v2/simulation``: the simulation document."""
        return await self.send(Calls.simulation())

    async def put_simulation(self, simulation: Simulation) -> JSON:
        """``PUT /api/v2/simulation``: replace the simulation; the server's answer (``Client.put_simulation``)."""
        return await self.send(Calls.put_simulation(simulation))

    async def append_simulation(self, simulation: Simulation) -> JSON:
        """``POST /api/v2/simulation``: add the pairs after the current ones (``Client.append_simulation``)."""
        return await self.send(Calls.append_simulation(simulation))

    async def delete_simulation(self) -> None:
        """``DELETE /api/v2/simulation``: remove every pair and global action."""
        await self.send(Calls.delete_simulation())

    async def mode(self) -> str:
        """``GET /api/v2/hoverfly/mode``: the mode's name."""
        return await self.send(Calls.mode())

    async def set_mode(self, mode: str, arguments: Mapping[str, Any] | None = None, /, **more: Any) -> None:
        """``PUT /api/v2/hoverfly/mode``: switch mode, arguments as a mapping and/or keywords (``Client.set_mode``)."""
        await self.send(Calls.set_mode(mode, {**(arguments or {}), **more}))

    async def destination(self) -> str:
        """``GET /api/v2/hoverfly/destination``: the pattern of the hosts simproxy acts on."""
        return await self.send(Calls.destination())

    async def set_destination(self, destination: str) -> None:
        """``PUT /api/v2/hoverfly/destination``: act only on hosts matching ``destination``."""
        await self.send(Calls.set_destination(destination))

    async def state(self) -> dict[str, str]:
        """``GET /api/v2/state``: the state map."""
        return await self.send(Calls.state())

    async def set_state(self, state: Mapping[str, str], *, patch: bool = False) -> None:
        """``PUT /api/v2/state`` (``PATCH`` with ``patch=True``: keep the other keys)."""
        await self.send(Calls.set_state(state, patch=patch))

    async def delete_state(self) -> None:
        """``DELETE /api/v2/state``: empty the state."""
        await self.send(Calls.delete_state())

    async def journal(self, limit: int | None = None, offset: int = 0, *, sort: str | None = None) -> list[JSON]:
        """The journal's entries from ``offset`` on, all of them or at most ``limit`` (``Client.journal``)."""
        if limit is not None:
            return list((await self.journal_page(limit, offset, sort=sort)).get("journal") or []) if limit > 0 else []
        entries: list[JSON] = []
        while True:
            page = await self.journal_page(None, offset + len(entries), sort=sort)
            entries += page.get("journal") or []
            if self._journal_done(entries, offset, page):
                return entries

    async def journal_page(
        self, limit: int | None = None, offset: int | None = None, *, sort: str | None = None
    ) -> JSON:
        """``GET /api/v2/journal``: one page as the server sends it, with ``total`` (``Client.journal_page``)."""
        return await self.send(Calls.journal_page(limit, offset, sort))

    async def search_journal(
        self,
        request: Mapping[str, Any] | None = None,
        *,
        method: str | None = None,
        path: str | None = None,
        destination: str | None = None,
        scheme: str | None = None,
        query: Query | None = None,
        headers: Mapping[str, Values] | None = None,
        body: str | None = None,
    ) -> list[JSON]:
        """``POST /api/v2/journal``: the entries whose request has exactly what is given (``Client.search_journal``)."""
        search = journal_search(
            request,
            method=method,
            path=path,
            destination=destination,
            scheme=scheme,
            query=query,
            headers=headers,
            body=body,
        )
        return await self.send(Calls.search_journal(search))

    async def delete_journal(self) -> None:
        """``DELETE /api/v2/journal``: remove every entry."""
        await self.send(Calls.delete_journal())

    async def cache(self) -> list[JSON]:
        """``GET /api/v2/cache``: the cached lookups."""
        return await self.send(Calls.cache())

    async def delete_cache(self) -> None:
        """``DELETE /api/v2/cache``: flush the request cache."""
        await self.send(Calls.delete_cache())

    async def data_sources(self) -> dict[str, str]:
        """``GET /api/v2/hoverfly/templating-data-source/csv``: each CSV data source's text by name."""
        return await self.send(Calls.data_sources())

    async def put_data_source(self, name: str, csv: str) -> None:
        """``PUT /api/v2/hoverfly/templating-data-source/csv``: set the CSV data source ``name``."""
        await self.send(Calls.put_data_source(name, csv))

    async def delete_data_source(self, name: str) -> None:
        """``DELETE /api/v2/hoverfly/templating-data-source/csv/<name>``: remove that data source."""
        await self.send(Calls.delete_data_source(name))

    async def usage(self) -> dict[str, int]:
        """``GET /api/v2/hoverfly/usage``: the requests handled in each mode."""
        return await self.send(Calls.usage())

    async def logs(self, limit: int | None = None) -> list[JSON]:
        """``GET /api/v2/logs``: the newest log entries, at most ``limit``."""
        return await self.send(Calls.logs(limit))

    async def ca_cert(self) -> str:
        """``GET /api/v2/hoverfly/ca-cert``: the PEM of the CA to trust for HTTPS through the proxy."""
        return await self.send(Calls.ca_cert())
