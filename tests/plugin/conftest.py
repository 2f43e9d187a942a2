"""The pytest plugin (admin/kit/pytest_plugin.py) as its users meet it: each test writes test files and
runs them in a new pytest process (pytester), which loads the plugin through its entry point and
starts its own simproxy."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.processes import starts_processes

INNER_ARGS = (
    "-p",
    "no:cacheprovider",
    # the heavy plugins of this environment (4 s of imports per run); the plugin under test still
    # loads through its entry point like every installed one
    *("-p", "no:schemathesis", "-p", "no:hypothesispytest", "-p", "no:faker", "-p", "no:anyio"),
)
INNER_INI = """
[pytest]
addopts = --strict-markers --strict-config
filterwarnings = error
"""
CA_HOME = "/tmp/simproxy-tests-home"
"""simproxy keeps the CA it generates there (pytester moves HOME, which would make one per run)."""


def pytest_configure(config: pytest.Config) -> None:
    # not ``pytest_plugins = ["pytester"]``: pytest refuses that outside the top-level conftest
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


@pytest.fixture
@starts_processes
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Callable[..., pytest.RunResult]:
    """Run pytest on the test files written with ``pytester``, in a new process."""
    monkeypatch.setenv("SIMPROXY_HOME", CA_HOME)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeini(INNER_INI)

    def run(*args: str) -> pytest.RunResult:
        return pytester.runpytest_subprocess(*INNER_ARGS, *args, timeout=120)

    return run


def info(pytester: pytest.Pytester, name: str = "info.json") -> dict[str, Any]:
    """What an inner test wrote down for the outer one (``json.dump`` to ``name`` in its folder)."""
    return dict(json.loads((pytester.path / name).read_text()))


@dataclass
class Service:
    """A real HTTP service on a free loopback port: ``GET /pay`` answers ``{"paid": true}``."""

    server: ThreadingHTTPServer
    hits: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def service() -> Iterator[Service]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.hits.append(self.path)
            body = b'{"paid": true}' if self.path.startswith("/pay") else b"not here"
            self.send_response(200 if self.path.startswith("/pay") else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    seen = Service(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield seen
    if seen.server.socket.fileno() != -1:
        seen.stop()


def gone(pid: int) -> bool:
    """No process ``pid`` runs (a zombie waiting for init counts as gone)."""
    from simproxy.engine.execution.lifeline import start_time

    return start_time(pid) is None


def cassette(path: Path) -> list[dict[str, Any]]:
    """The pairs of a simulation file."""
    return list(json.loads(path.read_text())["data"]["pairs"])
