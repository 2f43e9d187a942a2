"""The wire side of the differential harness: requests as bytes, answers as read, the servers compared.

``send`` writes one request on a fresh connection and reads the answer as it came: the status line,
every header in order with its name as written, the body (de-chunked, and whether it was chunked),
or that the server closed the connection without answering. ``ServerProcess`` starts one server
command (Hoverfly's or simproxy's) on free loopback ports in a folder of its own (its working
directory and ``HOME``) and stops it by its process id. ``Upstream`` is the local HTTP server that
capture, spy, modify and diff modes forward to: it echoes what it received as JSON and records it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from simproxy.admin.process.redisserver import free_port

TIMEOUT = 15.0
"""Longest wait for one answer (the longest delay a mined simulation asks for is below it)."""


@dataclass(frozen=True)
class Step:
    """One request of a case, to the admin port, the proxy port, or ``collect`` (files a server wrote).

    ``target`` may hold ``{upstream}`` (the local upstream's port), filled in when it is sent.
    ``compare`` False: a set-up step (a reset) whose answers are not compared. ``loose``: the answer
    holds random or time-dependent text (a random helper), so bodies are compared by shape.
    ``delay_ms``: the least delay the answer should take; only whether each server waited is compared.
    """

    port: str
    method: str
    target: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    label: str = ""
    compare: bool = True
    loose: bool = False
    delay_ms: int = 0

    def filled(self, upstream: int) -> Step:
        """The step with ``{upstream}`` replaced by the upstream server's port, in the target, headers and body."""
        port = str(upstream).encode()
        return Step(
            self.port,
            self.method,
            self.target.replace("{upstream}", str(upstream)),
            tuple((k, v.replace("{upstream}", str(upstream))) for k, v in self.headers),
            self.body.replace(b"{upstream}", port),
            self.label,
            self.compare,
            self.loose,
            self.delay_ms,
        )

    def wire(self) -> bytes:
        """The request as bytes: request line, headers (Content-Length added for a body), body."""
        lines = [f"{self.method} {self.target} HTTP/1.1"]
        names = {k.lower() for k, _ in self.headers}
        lines += [f"{k}: {v}" for k, v in self.headers]
        if self.body and "content-length" not in names and "transfer-encoding" not in names:
            lines.append(f"Content-Length: {len(self.body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + self.body

    def as_json(self) -> dict[str, Any]:
        """The step for a report: what was sent, where."""
        return {
            "port": self.port,
            "label": self.label,
            "request": self.wire().decode("utf-8", errors="replace"),
        }


@dataclass(frozen=True)
class Answer:
    """What a server answered: status 0 and ``error`` when it gave no answer."""

    status: int
    reason: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    chunked: bool = False
    error: str = ""
    elapsed: float = 0.0

    def header(self, name: str) -> str | None:
        """The first value of ``name`` (case-insensitive), None when absent."""
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    def as_json(self, limit: int = 4000) -> dict[str, Any]:
        """The answer for a report; a body longer than ``limit`` bytes is cut (its length is kept)."""
        text = self.body[:limit].decode("utf-8", errors="replace")
        out: dict[str, Any] = {"status": self.status, "reason": self.reason, "headers": [list(h) for h in self.headers]}
        out["body"] = text
        if len(self.body) > limit:
            out["body_length"] = len(self.body)
            out["body_cut"] = True
        if self.chunked:
            out["chunked"] = True
        if self.error:
            out["error"] = self.error
        return out


class _Reader:
    """Buffered reads from a socket, up to a deadline."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buffer += chunk
        return bool(chunk)

    def until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            if not self.fill():
                raise ConnectionError("connection closed")
        head, _, self.buffer = self.buffer.partition(marker)
        return head

    def exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            if not self.fill():
                raise ConnectionError("connection closed mid-body")
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def rest(self) -> bytes:
        while self.fill():
            pass
        out, self.buffer = self.buffer, b""
        return out


def send(port: int, step: Step, timeout: float = TIMEOUT) -> Answer:
    """Send ``step`` to ``127.0.0.1:port`` on a new connection and read one answer."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(step.wire())
            reader = _Reader(sock)
            try:
                head = reader.until(b"\r\n\r\n")
            except (ConnectionError, OSError) as exc:
                return Answer(0, error=f"no answer ({exc})", elapsed=time.monotonic() - started)
            status_line, *header_lines = head.decode("latin-1").split("\r\n")
            parts = status_line.split(" ", 2)
            status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
            reason = parts[2] if len(parts) > 2 else ""
            headers = tuple((k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in header_lines))
            answer = Answer(status, reason, headers)
            body, chunked, error = b"", False, ""
            try:
                if step.method == "HEAD" or status in (204, 304) or 100 <= status < 200:
                    pass
                elif (answer.header("Transfer-Encoding") or "").lower() == "chunked":
                    chunked = True
                    while True:
                        size = int(reader.until(b"\r\n").split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            break
                        body += reader.exactly(size)
                        reader.exactly(2)
                elif answer.header("Content-Length") is not None:
                    body = reader.exactly(int(answer.header("Content-Length") or "0"))
                else:
                    body = reader.rest()
            except (ConnectionError, OSError, ValueError) as exc:
                error = f"body cut short ({exc})"
            return Answer(status, reason, headers, body, chunked, error, time.monotonic() - started)
    except OSError as exc:
        return Answer(0, error=f"no answer ({exc})", elapsed=time.monotonic() - started)


# ---------------------------------------------------------------------------------------------
# servers


@dataclass
class ServerProcess:
    """One server started from ``command`` plus ``-ap A -pp P`` and ``flags``, in ``folder``."""

    name: str
    command: Sequence[str]
    flags: Sequence[str]
    folder: Path
    admin: int = 0
    proxy: int = 0
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self, timeout: float = 60.0) -> None:
        """Start the server and wait until its admin API answers and its proxy port listens."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.admin, self.proxy = free_port(), free_port()
        argv = [*self.command, "-ap", str(self.admin), "-pp", str(self.proxy), *self.flags]
        env = {**os.environ, "HOME": str(self.folder), "TMPDIR": str(self.folder)}
        with open(self.folder / "server.log", "ab") as log:
            self.process = subprocess.Popen(
                argv, cwd=self.folder, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"{self.name} exited at start ({shlex.join(argv)}); see {self.folder / 'server.log'}")
            health = send(self.admin, Step("admin", "GET", "/api/health", (("Host", "localhost"),)), timeout=2)
            if health.status == 200 and _listening(self.proxy):
                return
            time.sleep(0.05)
        self.stop()
        raise SystemExit(f"{self.name} did not start in {timeout:.0f} s: {shlex.join(argv)}")

    def stop(self) -> None:
        """Stop the server: SIGTERM to its process group (it is the group's leader), SIGKILL if it lingers."""
        process, self.process = self.process, None
        if process is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if process.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                continue

    def port(self, which: str) -> int:
        return self.admin if which == "admin" else self.proxy


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


# ---------------------------------------------------------------------------------------------
# the local upstream


class _Echo(BaseHTTPRequestHandler):
    """Answers every request with what it received, as JSON, and records it on the server."""

    protocol_version = "HTTP/1.1"
    server: _UpstreamServer

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        seen = {
            "method": self.command,
            "path": self.path,
            "headers": [[k, v] for k, v in self.headers.items()],
            "body": body.decode("utf-8", errors="replace"),
        }
        with self.server.lock:
            self.server.received.append(seen)
        status = 200
        if self.path.startswith("/status/"):
            status = int(self.path.split("/")[2].split("?")[0])
        # remote middleware gets its payload back unchanged (a valid middleware reply); the rest an echo
        out = body if self.path.startswith("/middleware") else json.dumps(seen, sort_keys=True).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Upstream", "differential")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer

    def version_string(self) -> str:
        return "differential-upstream"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the harness reports what the upstream received in its answers."""


class _UpstreamServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Echo)
        self.lock = threading.Lock()
        self.received: list[dict[str, Any]] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a proxy that closes a kept-alive connection to the upstream is not an error here."""


class Upstream:
    """The local HTTP server the proxies forward to in capture, spy, modify and diff modes."""

    def __init__(self) -> None:
        self.server = _UpstreamServer()
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, name="upstream", daemon=True)

    def __enter__(self) -> Upstream:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
