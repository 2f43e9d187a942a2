"""The servers the end-to-end benchmarks drive, and the requests they send them.

A ``Server`` is a command started on free loopback ports (simproxy, Hoverfly or anything that speaks
its admin API, or the machine's ceiling), made ready for a workload by ``prepare``: its simulation
and state loaded through the admin API and one answer checked. ``request_text`` and ``lua_script``
write a workload's requests as raw HTTP and as wrk's script. ``benchmarks/e2e.py`` runs servers one
after the other, ``benchmarks/sidebyside.py`` two at a time; both take them from here.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.procs import listeners
from benchmarks.workloads import Request, Workload
from simproxy.admin.process.redisserver import free_port

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Server:
    name: str
    argv: list[str]
    admin: int
    proxy: int
    loads_simulation: bool = True
    cpu: int | None = None
    """The one core the server and every process and thread it starts may run on (None: any)."""
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self) -> None:
        cpu = self.cpu
        self.process = subprocess.Popen(
            self.argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=None if cpu is None else lambda: os.sched_setaffinity(0, {cpu}),
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"{self.name} exited at start: {shlex.join(self.argv)}")
            if _listening(self.proxy) and (not self.loads_simulation or _healthy(self.admin)):
                return
            time.sleep(0.01)
        raise SystemExit(f"{self.name} did not start: {shlex.join(self.argv)}")

    def stop(self) -> None:
        process = self.process
        if process is None:
            return
        for sig in (signal.SIGTERM, signal.SIGTERM, signal.SIGKILL):
            if process.poll() is not None:
                break
            os.killpg(process.pid, sig)
            try:
                process.wait(timeout=8)
            except subprocess.TimeoutExpired:
                continue
        self.process = None

    def rss_mb(self, field: str = "VmHWM") -> list[float]:
        """Resident memory of each process serving the proxy port: its peak (``VmHWM``) or now (``VmRSS``)."""
        if self.process is None:
            return []
        sizes = []
        for pid in listeners(self.process.pid, self.proxy):
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            match = re.search(rf"{field}:\s+(\d+) kB", status)
            if match:
                sizes.append(int(match[1]) / 1024)
        return sizes


def simproxy_server(workers: int, flags: Sequence[str], redis_url: str) -> Server:
    admin, proxy = free_port(), free_port()
    argv = [
        sys.executable,
        "-I",
        "-m",
        "simproxy",
        "-ap",
        str(admin),
        "-pp",
        str(proxy),
        "-workers",
        str(workers),
        *flags,
    ]
    if redis_url:
        argv += ["-redis-url", redis_url, "-redis-prefix", f"bench-{admin}:"]
    return Server(f"simproxy ({workers}w{', redis' if workers > 1 or redis_url else ''})", argv, admin, proxy)


def command_server(template: str, name: str = "") -> Server:
    admin, proxy = free_port(), free_port()
    argv = shlex.split(template.format(admin=admin, proxy=proxy))
    return Server(name or Path(argv[0]).name, argv, admin, proxy)


def ceiling_server() -> Server:
    proxy = free_port()
    return Server("ceiling", [sys.executable, "-m", "benchmarks.ceiling", str(proxy)], 0, proxy, loads_simulation=False)


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=1) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


# ---------------------------------------------------------------------------------------------
# load


def request_text(req: Request, n: int | None = None) -> str:
    path = req.path if n is None else req.path.replace("{n}", str(n))
    lines = [f"{req.method} {req.target(path)} HTTP/1.1", f"Host: {req.host}"]
    lines += [f"{k}: {v}" for k, v in req.headers]
    if req.body:
        lines.append(f"Content-Length: {len(req.body.encode())}")
    return "\r\n".join(lines) + "\r\n\r\n" + req.body


def lua_script(workload: Workload) -> str:
    """wrk's script: the workload's request, or one of them at random, ``{n}`` the run's number (its
    start second: rounds are seconds apart) and a counter."""

    def one(req: Request) -> str:
        headers = ", ".join(f'["{k}"] = "{v}"' for k, v in (("Host", req.host), *req.headers))
        body = json.dumps(req.body) if req.body else "nil"
        path = json.dumps(req.target(req.path)).replace("{n}", '" .. run .. "." .. counter .. "')
        return f'wrk.format("{req.method}", {path}, {{{headers}}}, {body})'

    if not workload.random_pick and "{n}" not in workload.requests[0].path:
        return f"request = function() return {one(workload.requests[0])} end\n"
    cases = "\n".join(f"  if i == {i} then return {one(r)} end" for i, r in enumerate(workload.requests))
    pick = f"math.random(0, {len(workload.requests) - 1})" if workload.random_pick else "0"
    head = "run = os.time() % 1000000\ncounter = 0\n"
    return f"{head}request = function()\n  counter = counter + 1\n  local i = {pick}\n{cases}\nend\n"


def _put(admin: int, path: str, doc: dict[str, Any]) -> None:
    request = urllib.request.Request(f"http://127.0.0.1:{admin}{path}", data=json.dumps(doc).encode(), method="PUT")
    with urllib.request.urlopen(request, timeout=120) as resp:
        resp.read()


def _check(port: int, workload: Workload) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request_text(workload.requests[0], 0).encode("latin-1"))
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length:\s*(\d+)", head)[1])  # type: ignore[index]
        while len(body) < length:
            body += sock.recv(65536)
    status = int(head.split(b" ", 2)[1])
    if status != workload.status or (workload.expect and body != workload.expect):
        raise SystemExit(f"{workload.name}: unexpected answer {head.splitlines()[0]!r} {body[:200]!r}")


def prepare(server: Server, workload: Workload) -> None:
    """Start ``server``, load the workload's simulation and state, and check one answer."""
    server.start()
    try:
        if server.loads_simulation:
            simulation = {"data": {"pairs": workload.pairs}, "meta": {"schemaVersion": "v5.3"}}
            _put(server.admin, "/api/v2/simulation", simulation)
            if workload.state:
                _put(server.admin, "/api/v2/state", {"state": workload.state})
            _check(server.proxy, workload)
    except BaseException:
        server.stop()
        raise
