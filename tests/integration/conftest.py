"""Real simproxy processes, real sockets and a real redis-server for the integration tests."""

from __future__ import annotations

import contextlib
import errno
import http.client
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from benchmarks.procs import listeners
from simproxy.admin.process.redisserver import RedisServer, free_port
from tests.integration.upstream import Upstream, start_upstream
from tests.processes import starts_processes

ROOT = Path(__file__).resolve().parents[2]


class Simproxy:
    """One ``simproxy`` command (main process plus its workers) on free loopback ports."""

    def __init__(
        self,
        *flags: str,
        admin_port: int | None = None,
        proxy_port: int | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.env = env or {}
        self.cwd = cwd or ROOT
        self._fixed = (admin_port, proxy_port)
        """The ports the test asked for; the others are picked here, and picked again when taken."""
        self.admin_port = admin_port or free_port()
        self.proxy_port = proxy_port or free_port()
        self.flags = flags
        self.workers = int(flags[flags.index("-workers") + 1]) if "-workers" in flags else 1
        self.process: subprocess.Popen[bytes] | None = None
        self._out: IO[bytes] | None = None
        """Where the process's standard output and error go: a file, never a pipe that nobody reads
        while it runs (the logs would fill it and block the process)."""

    def start(self, timeout: float = 30.0) -> Simproxy:
        for attempt in itertools.count(1):
            try:
                return self._start(timeout)
            except BaseException as exc:
                self.stop()
                if not isinstance(exc, _PortTaken) or attempt == 3 or all(self._fixed):
                    raise
                # another process bound a port picked here since it was seen free: new ones
                self.admin_port = self._fixed[0] or free_port()
                self.proxy_port = self._fixed[1] or free_port()
        raise AssertionError("itertools.count never ends")

    def _start(self, timeout: float) -> Simproxy:
        cmd = [
            sys.executable,
            "-I",
            "-m",
            "simproxy",
            "-ap",
            str(self.admin_port),
            "-pp",
            str(self.proxy_port),
            *self.flags,
        ]
        # a generated CA is kept under SIMPROXY_HOME: the tests' own folder, not the user's ~/.simproxy
        home = os.path.join(tempfile.gettempdir(), "simproxy-tests-home")
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "SIMPROXY_HOME": home, **self.env}
        # its own session: a Ctrl+C in the terminal running the tests is for pytest, not for simproxy
        self._out = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop)
        self.process = subprocess.Popen(
            cmd, cwd=self.cwd, env=env, stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                output = self.output()
                error = _PortTaken if "is already in use" in output else RuntimeError
                raise error(f"simproxy exited at start:\n{output}")
            try:
                status, _, _ = self.admin("GET", "/api/health")
                if status == 200 and self._proxy_listening() and len(self.proxy_listeners()) >= self.workers:
                    return self
            except OSError:
                pass
            time.sleep(0.01)
        raise RuntimeError("simproxy did not become healthy in time")

    def _proxy_listening(self) -> bool:
        try:
            with contextlib.closing(http.client.HTTPConnection("127.0.0.1", self.proxy_port, timeout=2)) as conn:
                conn.connect()
            return True
        except OSError:
            return False

    def output(self) -> str:
        """What the process wrote to its standard output and error so far."""
        if self._out is None:
            return ""
        self._out.seek(0)
        return self._out.read().decode(errors="replace")

    def stop(self) -> None:
        if self.process is None:
            return
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
            if self.process.poll() is not None:
                break
            self.process.send_signal(sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=wait)
        if self._out is not None:
            self._out.close()
            self._out = None

    def proxy_listeners(self) -> list[int]:
        """Pids of the processes that hold a listening socket on the proxy port: the main process
        with one worker, else each worker (the main process keeps none)."""
        assert self.process is not None
        return listeners(self.process.pid, self.proxy_port)

    # -- clients -------------------------------------------------------------------------------

    def admin(
        self,
        method: str,
        path: str,
        body: Any = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 30.0,
    ) -> tuple[int, dict[str, str], bytes]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        return call(self.admin_port, method, path, data, headers, timeout)

    def admin_json(
        self, method: str, path: str, body: Any = None, raw: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        status, _, payload = self.admin(method, path, body, raw, headers)
        return status, json.loads(payload) if payload else None

    def proxy(
        self, url: str, method: str = "GET", body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        return call(self.proxy_port, method, url, body, headers)


class _PortTaken(RuntimeError):
    """simproxy could not bind a port: another process took it after it was seen free."""


def call(
    port: int,
    method: str,
    target: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> tuple[int, dict[str, str], bytes]:
    """One request on a new connection to 127.0.0.1:``port`` (new connections are what the kernel
    spreads over the workers listening there): status, headers (see ``_headers``) and body."""
    with contextlib.closing(http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)) as conn:
        conn.request(method, target, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, _headers(resp), resp.read()


def refused(port: int) -> bool:
    """A new TCP connection to 127.0.0.1:``port`` is refused: nothing listens there."""
    with socket.socket() as sock:
        sock.settimeout(2)
        return sock.connect_ex(("127.0.0.1", port)) == errno.ECONNREFUSED


def _headers(resp: http.client.HTTPResponse) -> dict[str, str]:
    """Response headers by lower-cased name; repeated lines joined with ", "."""
    out: dict[str, str] = {}
    for name, value in resp.getheaders():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.fixture
@starts_processes
def simproxy_factory() -> Iterator[Any]:
    started: list[Simproxy] = []

    def start(*flags: str, env: dict[str, str] | None = None, cwd: Path | None = None, **ports: int) -> Simproxy:
        proc = Simproxy(*flags, env=env, cwd=cwd, **ports)
        started.append(proc)
        return proc.start()

    yield start
    for proc in started:
        proc.stop()


@pytest.fixture(scope="module")
@starts_processes
def simproxy() -> Iterator[Simproxy]:
    """One single-worker simproxy on the in-process store, shared by a test module."""
    proc = Simproxy().start()
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    """A real HTTP service (tests/integration/upstream.py) for the modes that forward."""
    up = start_upstream()
    yield up
    up.stop()


@pytest.fixture(scope="session")
@starts_processes
def redis_server() -> Iterator[RedisServer]:
    with RedisServer(port=free_port()) as server:
        yield server


def emptied(simproxy: Simproxy) -> Simproxy:
    """A module's shared simproxy as a test wants it: no simulation, journal or cache, simulate
    mode, every destination observed."""
    for path in ("/api/v2/simulation", "/api/v2/journal", "/api/v2/cache"):
        assert simproxy.admin("DELETE", path)[0] == 200
    assert simproxy.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200
    assert simproxy.admin("PUT", "/api/v2/hoverfly/destination", {"destination": "."})[0] == 200
    return simproxy


def wait_until(check: Any, timeout: float = 15.0, interval: float = 0.05) -> Any:
    """Call ``check`` until it returns something true or ``timeout`` seconds pass; its last result."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(interval)


def simulation(*pairs: dict[str, Any], version: str = "v5.3") -> dict[str, Any]:
    return {"data": {"pairs": list(pairs)}, "meta": {"schemaVersion": version}}


def pair(path: str, body: str, status: int = 200, **request: Any) -> dict[str, Any]:
    return {
        "request": {"path": [{"matcher": "exact", "value": path}], **request},
        "response": {"status": status, "body": body},
    }


def sequence_pairs(steps: int) -> list[dict[str, Any]]:
    """A walk of ``steps`` answers on ``GET /next``: ``step 1`` to ``step N``, one after the other,
    each moving ``sequence:1`` to the next (the shared state every worker and pod must agree on)."""
    pairs = []
    for i in range(1, steps + 1):
        found = pair("/next", f"step {i}", requiresState={"sequence:1": str(i)})
        if i < steps:
            found["response"]["transitionsState"] = {"sequence:1": str(i + 1)}
        pairs.append(found)
    return pairs


FUZZ_CASES = pytest.StashKey[dict[str, int]]()
"""Requests generated by each schemathesis run (tests/integration/test_fuzz.py), by run."""


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Print how many requests the schemathesis runs generated."""
    counts = config.stash.get(FUZZ_CASES, {})
    if counts:
        terminalreporter.write_line(
            "schemathesis: " + ", ".join(f"{cases} cases generated ({name})" for name, cases in counts.items())
        )
