"""A simproxy for a test session, and the object one test drives it with.

``Server`` is the session's simproxy: ``python -I -m simproxy`` (admin/command.py) on free loopback ports, started
on first use and stopped by ``close()``, at interpreter exit, or (Linux) by the kernel as soon as
the process that started it dies, SIGKILL included. Or it is an instance already running (a
simproxy or a Hoverfly), given by its two URLs, which is never started nor stopped.

A started simproxy is on ports ``free_ports`` saw free a moment before; another process may take
one first. The start then counts only once the admin API that answers names the started process
(``GET /api/v2/service/workers``: each instance is ``host:pid:token``), so a test never talks to
someone else's server; the simproxy that could not bind exits, and the start is tried again.

``Simproxy`` is what one test sees: the admin client, the URLs, the CA bundle (the system's CAs and
simproxy's), proxy settings for the usual HTTP clients, and ``verify`` on the journal. The pytest
plugin (admin/kit/pytest_plugin.py) hands it out as the ``simproxy`` fixture; nothing here needs pytest.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from simproxy.admin.command import COMMAND
from simproxy.admin.kit.client import JSON, SCHEMA_VERSION, ApiError, Call, Client, Simulation
from simproxy.admin.kit.report import entry_line
from simproxy.engine.execution.lifeline import die_with_parent
from simproxy.store.errors import SimproxyError

if TYPE_CHECKING:
    import httpx
    import requests

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "CURL_CA_BUNDLE")
CLEARED_VARIABLES = ("NO_PROXY", "no_proxy")
"""Removed while a test runs: a ``NO_PROXY`` of the machine would send some hosts around simproxy."""

Scalar = str | int | float | bool
"""A value ``verify`` compares a query parameter with."""

JOURNAL_PAGE = 500
CLOSEST_SHOWN = 5
STOP_WAIT = 10.0
"""Seconds simproxy is given to stop on SIGTERM before it is killed."""
WORKERS = "/api/v2/service/workers"
KEPT_BY_AN_APPEND = ("globalActions", "literals", "variables")
"""What ``POST /api/v2/simulation`` replaces with the appended document's (Hoverfly's rule): an
append that keeps the simulation carries the current ones."""


class HarnessError(SimproxyError):
    """The test harness cannot give a test its simproxy: it did not start, stopped answering, or
    has no CA to trust. admin.kit.cassettes.CassetteError is one too."""


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """How the session gets its simproxy: started with ``args``, or the one at ``admin_url`` and
    ``proxy_url``; ``ca_cert`` is a CA file to trust instead of the one the admin API serves."""

    args: tuple[str, ...] = ()
    admin_url: str = ""
    proxy_url: str = ""
    ca_cert: str = ""
    start_timeout: float = 60.0

    def __post_init__(self) -> None:
        if bool(self.admin_url) != bool(self.proxy_url):
            raise ValueError("an external simproxy needs both its admin URL and its proxy URL")

    @property
    def external(self) -> bool:
        return bool(self.admin_url)


@dataclass(frozen=True, slots=True)
class Endpoints:
    admin_url: str
    proxy_url: str


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports the kernel had free a moment ago."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in socks]


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def system_ca_bundle(exclude: Path | None = None) -> Path | None:
    """The CA bundle the machine's TLS clients trust: OpenSSL's default file (the one
    ``SSL_CERT_FILE`` names, when set), else certifi's; None when there is neither. ``exclude`` (a
    bundle written here, which ``SSL_CERT_FILE`` names during a test) is never the answer."""
    paths = ssl.get_default_verify_paths()
    candidates = [paths.cafile, paths.openssl_cafile]
    with contextlib.suppress(ImportError):
        import certifi

        candidates.append(certifi.where())
    for candidate in candidates:
        if not candidate or not Path(candidate).is_file():
            continue
        if exclude is not None and exclude.exists() and Path(candidate).samefile(exclude):
            continue
        return Path(candidate)
    return None


def instance_pids(workers: JSON) -> set[int]:
    """The main process ids of the instances ``GET /api/v2/service/workers`` lists (``host:pid:token``)."""
    pids: set[int] = set()
    instances = workers.get("instances") if isinstance(workers, dict) else None
    for instance in instances if isinstance(instances, list) else []:
        fields = str(instance.get("id", "") if isinstance(instance, dict) else "").rsplit(":", 2)
        if len(fields) == 3 and fields[1].isdigit():
            pids.add(int(fields[1]))
    return pids


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (simproxy stops its workers and its Redis), then SIGKILL if it lingers."""
    for sig, wait in ((signal.SIGTERM, STOP_WAIT), (signal.SIGKILL, STOP_WAIT)):
        if process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=wait)


class Server:
    """The session's simproxy (see the module's docstring); ``folder`` keeps its log and CA file."""

    def __init__(self, settings: ServerSettings, folder: Path) -> None:
        self.settings = settings
        self.folder = folder
        self._owner = os.getpid()
        self._process: subprocess.Popen[bytes] | None = None
        self._endpoints: Endpoints | None = None
        self._ca: Path | None = None
        self._ca_fetched = False
        self._bundle: Path | None = None
        self._destination: str | None = None
        self._log_start = 0
        self._failed: HarnessError | None = None
        """Why the start failed: every later test gets the same error at once, not another start."""

    @property
    def log_path(self) -> Path:
        return self.folder / "simproxy.log"

    @property
    def pid(self) -> int | None:
        """The started process's id; None for an external instance or before the first use."""
        return self._process.pid if self._process is not None else None

    def endpoints(self) -> Endpoints:
        """The URLs, starting simproxy on first use (or again, if it died meanwhile)."""
        if self.settings.external:
            return Endpoints(self.settings.admin_url.rstrip("/"), self.settings.proxy_url.rstrip("/"))
        if self._failed is not None:
            raise HarnessError(str(self._failed))
        if self._process is None or self._process.poll() is not None or self._endpoints is None:
            try:
                self._start()
            except HarnessError as error:
                self._failed = error
                raise
        assert self._endpoints is not None
        return self._endpoints

    def client(self) -> Client:
        return Client(self.endpoints().admin_url)

    def ca_cert_path(self) -> Path | None:
        """simproxy's CA certificate: the configured file, else the admin API's, fetched once and
        written to the session folder; None when there is none (a Hoverfly has no such endpoint)."""
        if self.settings.ca_cert:
            return Path(self.settings.ca_cert)
        if not self._ca_fetched:
            try:
                pem = self.client().ca_cert()
            except ApiError:
                pem = ""
            self._ca = self.folder / "simproxy-ca.pem" if pem.strip() else None
            if self._ca is not None:
                self._ca.write_text(pem)
            self._bundle = None
            self._ca_fetched = True
        return self._ca

    def ca_bundle_path(self) -> Path | None:
        """The CA file the tests trust: the system's bundle (``system_ca_bundle``), then simproxy's
        CA, written once to the session folder. So HTTPS that simproxy intercepts and HTTPS it
        tunnels blind (a host outside the destination), or that bypasses it, both verify. None
        when simproxy has no CA (``ca_cert_path``)."""
        ca = self.ca_cert_path()
        if ca is None:
            return None
        if self._bundle is None:
            bundle = self.folder / "ca-bundle.pem"
            system = system_ca_bundle(exclude=bundle)
            parts = [system.read_text(errors="replace")] if system is not None else []
            parts.append(ca.read_text())
            bundle.write_text("\n".join(part.rstrip("\n") for part in parts) + "\n")
            self._bundle = bundle
        return self._bundle

    def reset(self) -> None:
        """Back to a fresh start, through the admin API: no simulation, journal, state or cache;
        simulate mode; the destination the session began with. A started simproxy that no longer
        answers (a test shut it down, or it crashed) is replaced by a new one."""
        try:
            self._reset()
        except OSError:
            if self.settings.external or self._process is None:
                raise
            self.close()
            self._reset()

    def _reset(self) -> None:
        client = self.client()
        client.set_mode("simulate")
        client.delete_simulation()
        try:
            client.delete_journal()
        except ApiError as error:
            if "disabled" not in error.message.lower():  # -journal-size 0: nothing to delete
                raise
        client.delete_state()
        client.delete_cache()
        destination = client.destination()
        if self._destination is None:
            self._destination = destination
        elif destination != self._destination:
            client.set_destination(self._destination)

    def close(self) -> None:
        """Stop the started simproxy (not an external one); nothing to do when there is none. A
        process forked from the one that started it (its atexit handlers copied) stops nothing."""
        process, self._process = self._process, None
        if process is None or os.getpid() != self._owner:
            return
        atexit.unregister(self.close)
        _stop(process)

    def _start(self) -> None:
        self.close()  # one that died: reaped, and its atexit handler dropped
        self._ca_fetched = False
        self.folder.mkdir(parents=True, exist_ok=True)
        for attempt in range(3):
            admin_port, proxy_port = free_ports(2)
            command = [*COMMAND, "-ap", str(admin_port), "-pp", str(proxy_port)]
            command += self.settings.args
            with self.log_path.open("ab") as log:
                self._log_start = log.tell()
                log.write(f"$ {' '.join(command)}\n".encode())
                log.flush()
                self._process = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    # a Ctrl-C in the terminal is for pytest, which then stops simproxy itself
                    start_new_session=True,
                    preexec_fn=functools.partial(die_with_parent, signal.SIGTERM, os.getpid()),
                )
            atexit.register(self.close)
            endpoints = Endpoints(f"http://127.0.0.1:{admin_port}", f"http://127.0.0.1:{proxy_port}")
            if self._wait(self._process, endpoints, proxy_port, retry=attempt < 2):
                self._endpoints = endpoints
                return
            self.close()  # again, on two other ports

    def _wait(self, process: subprocess.Popen[bytes], endpoints: Endpoints, proxy_port: int, retry: bool) -> bool:
        """True once the started process answers; False when it could not bind a port (taken since
        free_ports saw it free) and another start may be tried."""
        client = Client(endpoints.admin_url, timeout=2)
        deadline = time.monotonic() + self.settings.start_timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                log = self._log_excerpt()
                if retry and "already in use" in log:  # a port taken since free_ports saw it free
                    return False
                self.close()
                raise HarnessError(f"simproxy exited at start (status {process.returncode}):\n{log}")
            with contextlib.suppress(OSError, ApiError, ValueError):  # ValueError: an answer that is no JSON
                # the port may be another process's (our child then exits: "already in use"); the
                # proxy port is bound before the admin API answers, so ours answering means both are
                if client.health() is not None and _answered_by(client, process) and _listening(proxy_port):
                    return True
            time.sleep(0.02)
        self.close()
        raise HarnessError(f"simproxy did not answer within {self.settings.start_timeout:g} s:\n{self._log_excerpt()}")

    def _log_excerpt(self, keep: int = 8) -> str:
        """What the last start wrote: its first and last ``keep`` lines (a usage error comes first;
        a failure at start, after the start-up lines, last)."""
        try:
            with self.log_path.open("rb") as log:
                log.seek(self._log_start)
                lines = log.read().decode(errors="replace").splitlines()
        except OSError:
            return ""
        if len(lines) > 2 * keep + 1:
            lines = [*lines[:keep], f"[... {len(lines) - 2 * keep} more lines in {self.log_path} ...]", *lines[-keep:]]
        return "\n".join(lines)


def _answered_by(client: Client, process: subprocess.Popen[bytes]) -> bool:
    """Whether the admin API ``client`` reaches is the started ``process`` (its main pid among the
    instances; with a shared store, the fleet's other instances are listed too). An instance with
    ``-auth`` does not say: the process must still be running then."""
    try:
        workers = client.send(Call("GET", WORKERS, lambda body: json.loads(body) if body.strip() else None))
    except ApiError as error:
        if error.status != 401:
            raise
        return process.poll() is None
    return process.pid in instance_pids(workers)


def proxy_env(proxy_url: str, ca_path: Path | None) -> dict[str, str]:
    """The variables that send the usual HTTP clients (requests, httpx, urllib, curl, most SDKs)
    through simproxy and make them trust the CA bundle ``ca_path``."""
    env = dict.fromkeys(PROXY_VARIABLES, proxy_url)
    if ca_path is not None:
        env.update(dict.fromkeys(CA_VARIABLES, str(ca_path)))
    return env


class Simproxy:
    """One test's view of the session's simproxy (the ``simproxy`` fixture)."""

    def __init__(self, server: Server) -> None:
        endpoints = server.endpoints()
        self.server = server
        self.client: Client = server.client()
        self.admin_url = endpoints.admin_url
        self.proxy_url = endpoints.proxy_url

    def __repr__(self) -> str:
        return f"<Simproxy admin={self.admin_url} proxy={self.proxy_url}>"

    @property
    def ca_path(self) -> Path:
        """The CA bundle (PEM file) to trust for HTTPS: the system's CAs and simproxy's, so both an
        intercepted host and one simproxy tunnels blind (or a real host reached directly) verify."""
        path = self.server.ca_bundle_path()
        if path is None:
            raise self._no_ca()
        return path

    @property
    def ca_cert_path(self) -> Path:
        """simproxy's CA certificate alone (PEM file)."""
        path = self.server.ca_cert_path()
        if path is None:
            raise self._no_ca()
        return path

    def _no_ca(self) -> HarnessError:
        return HarnessError(
            f"{self.admin_url} serves no CA certificate (GET /api/v2/hoverfly/ca-cert); "
            "give its file with --simproxy-ca-cert (ini: simproxy_ca_cert)"
        )

    @property
    def proxies(self) -> dict[str, str]:
        """For ``requests``: ``requests.get(url, proxies=simproxy.proxies, verify=simproxy.ca_path)``."""
        return {"http": self.proxy_url, "https": self.proxy_url}

    @property
    def env(self) -> dict[str, str]:
        """The environment the fixture sets while a test runs (``NO_PROXY`` is removed too)."""
        return proxy_env(self.proxy_url, self.server.ca_bundle_path())

    def requests_session(self) -> requests.Session:
        """A ``requests.Session`` going through simproxy and trusting the CA bundle."""
        import requests

        session = requests.Session()
        session.proxies.update(self.proxies)
        session.verify = str(self.ca_path)
        return session

    def httpx_client(self, **options: Any) -> httpx.Client:
        """An ``httpx.Client`` going through simproxy and trusting the CA bundle (``options`` are passed on)."""
        try:
            import httpx
        except ImportError as missing:
            raise ImportError("simproxy.httpx_client() needs httpx: pip install httpx") from missing
        verify = ssl.create_default_context(cafile=str(self.ca_path))
        return httpx.Client(proxy=self.proxy_url, verify=verify, **options)

    def put_simulation(self, simulation: Simulation) -> JSON:
        """Replace the simulation: a document, a list of pairs, or a file's path."""
        return self.client.put_simulation(simulation)

    def add_pairs(self, *pairs: Mapping[str, Any]) -> JSON:
        """Add pairs (``admin.kit.client.pair(...)`` or v5 dicts) after the simulation's, keeping the
        rest of it: global delays and faults, literals, variables, and the state (sequences too).

        A bare append (``client.append_simulation``) replaces the first three with the appended
        document's, Hoverfly's rule: this one carries the current ones along."""
        current = (self.client.simulation() or {}).get("data") or {}
        kept = {key: current[key] for key in KEPT_BY_AN_APPEND if current.get(key) is not None}
        document = {"data": {"pairs": [dict(p) for p in pairs], **kept}, "meta": {"schemaVersion": SCHEMA_VERSION}}
        return self.client.append_simulation(document)

    def mode(self, mode: str | None = None, arguments: Mapping[str, Any] | None = None, /, **more: Any) -> str:
        """The mode; with ``mode``, switch to it first, its arguments as a mapping and/or keywords
        (``simproxy.mode("spy")``, ``simproxy.mode("spy", {"captureOnMiss": True})``)."""
        if mode is not None:
            self.client.set_mode(mode, arguments, **more)
        elif arguments or more:
            raise TypeError("simproxy.mode() takes arguments only with a mode to switch to")
        return self.client.mode()

    def journal(self) -> list[JSON]:
        """Every journal entry, oldest first."""
        entries: list[JSON] = []
        while True:
            page = self.client.journal_page(limit=JOURNAL_PAGE, offset=len(entries))
            found = list(page.get("journal") or [])
            entries += found
            if not found or len(entries) >= int(page.get("total") or 0):
                return entries

    def verify(
        self,
        method: str | None = None,
        path: str | None = None,
        destination: str | None = None,
        query: str | Mapping[str, Scalar | Sequence[Scalar]] | None = None,
        body: JSON = None,
        times: int | None = None,
        at_least: int | None = None,
    ) -> list[JSON]:
        """Assert on the journal: the requests with everything given number ``times``, or at least
        ``at_least``, or at least one. Returns them; raises ``AssertionError`` naming the closest
        entries otherwise.

        ``method`` matches in any case; ``path`` and ``destination`` exactly. ``query`` is a query
        string (``"id=7&tag=a"``) or a mapping of names to values, each a string, number or boolean
        or a list of them (``{"id": 7}`` is ``id=7``; ``True`` is ``true``), compared in any order.
        ``body`` is the exact text when a string; any other JSON value (a dict, list, number,
        boolean) is compared with the request's body read as JSON."""
        __tracebackhide__ = True  # pytest shows the test's line, not this one
        if times is not None and at_least is not None:
            raise TypeError("verify() takes times or at_least, not both")
        expected = Expectation.of(method=method, path=path, destination=destination, query=query, body=body)
        entries = self.journal()
        matched = [entry for entry in entries if not expected.misses(entry)]
        least = 1 if at_least is None else at_least
        wanted = f"exactly {times}" if times is not None else f"at least {least}"
        if len(matched) != times if times is not None else len(matched) < least:
            raise AssertionError(expected.report(wanted, len(matched), entries))
        return matched


@dataclass(frozen=True, slots=True)
class Expectation:
    """The request fields ``verify`` was given, compared with journal entries."""

    fields: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, **given: Any) -> Expectation:
        """The fields given (not None); a value of the wrong type is a ``TypeError`` naming the field."""
        for name in ("method", "path", "destination"):
            if given.get(name) is not None and not isinstance(given[name], str):
                raise TypeError(f"verify({name}=...) takes a string, not {type(given[name]).__name__}")
        if given.get("query") is not None:
            _query(given["query"])  # its TypeError names what it takes
        return cls(tuple((name, value) for name, value in given.items() if value is not None))

    def misses(self, entry: JSON) -> list[str]:
        """The given fields this entry's request differs on."""
        request = entry.get("request") or {}
        return [name for name, value in self.fields if not _same(name, value, request.get(name))]

    def describe(self) -> str:
        return ", ".join(f"{name}={value!r}" for name, value in self.fields) or "any request"

    def report(self, wanted: str, count: int, entries: list[JSON]) -> str:
        noun = "request" if wanted.endswith(" 1") else "requests"
        lines = [f"simproxy.verify: expected {wanted} {noun} with {self.describe()}; {count} matched."]
        if not entries:
            return "\n".join([*lines, "The journal is empty."])
        ranked = sorted(entries, key=lambda entry: len(self.misses(entry)))[:CLOSEST_SHOWN]
        lines.append(f"Closest of the {len(entries)} journal entries:")
        for entry in ranked:
            missed = self.misses(entry)
            lines.append(f"  {entry_line(entry)}   ({'differs on ' + ', '.join(missed) if missed else 'matches'})")
        return "\n".join(lines)


def _scalar_text(value: Any) -> str:
    """A query value as it appears in a URL: strings as they are, ``7`` as ``7``, ``True`` as ``true``."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    raise TypeError(
        "verify(query=...) takes a query string or a mapping of names to values, each a string, number "
        f"or boolean or a list of them; got {type(value).__name__} {value!r}"
    )


def _query(value: str | Mapping[str, Any]) -> dict[str, list[str]]:
    if isinstance(value, str):
        return {name: sorted(values) for name, values in parse_qs(value, keep_blank_values=True).items()}
    if not isinstance(value, Mapping):
        raise TypeError(f"verify(query=...) takes a query string or a mapping, not {type(value).__name__}")
    return {
        str(name): sorted(map(_scalar_text, given if isinstance(given, list | tuple) else [given]))
        for name, given in value.items()
    }


def _same(name: str, expected: Any, actual: Any) -> bool:
    if actual is None:
        return False
    if name == "method":
        return str(expected).upper() == str(actual).upper()
    if name == "query":
        return _query(expected) == _query(str(actual))
    if name == "body" and not isinstance(expected, str):
        try:
            return bool(json.loads(str(actual)) == expected)
        except ValueError:  # a body that is no JSON equals no JSON value
            return False
    return bool(expected == actual)
