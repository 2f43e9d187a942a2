"""Middleware at load: simproxy's long-lived and in-process forms against Hoverfly's process per request,
side by side on one shared core, and a post-serve action sending a webhook for every request.

    python -m benchmarks.middleware [--hoverfly PATH] [--seconds 4] [--rounds 3] [--json OUT]

Each round runs the two servers of a pair at the same time, both pinned to the same core (every
middleware process they start inherits it), each driven by ``wrk`` (else ``benchmarks.loadgen``) with 8 keep-alive
connections pinned to the other core. The middleware is a pass-through in Python that adds one
header to a simulated answer: for Hoverfly (and simproxy's default form) a program that reads one
document and exits, for ``-middleware-pool`` the same with a read loop, and for ``python:`` a function.
The report gives each side's rate per round and the median of the per-round ratios.

The webhook part runs simproxy alone: a simulated pair names a post-serve action kept alive
(``pool``) that POSTs each payload to a local server; after the load stops and the actions drain,
the server must have received one POST per request served. Loopback only; every process started
here is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.procs import descendants
from simproxy.admin.process.redisserver import free_port

ROOT = Path(__file__).resolve().parents[1]
CONNECTIONS = 8
WEBHOOK_RATE = 2000
"""Requests a second of the webhook part (an open-loop schedule, not as fast as the server goes)."""
ACTION_POOL = int(os.environ.get("ACTION_POOL", "4"))
"""The webhook action's long-lived processes (``ACTION_POOL`` in the environment changes it): with
lines pipelined, 4 keep up with 2,000 a second on the shared core, where 16 compete for it."""

ONE_SHOT = textwrap.dedent(
    """
    import json, sys
    pair = json.load(sys.stdin)
    pair["response"].setdefault("headers", {})["X-Middleware"] = ["seen"]
    json.dump(pair, sys.stdout)
    """
)
LOOP = textwrap.dedent(
    """
    import json, sys
    for line in sys.stdin:
        pair = json.loads(line)
        pair["response"].setdefault("headers", {})["X-Middleware"] = ["seen"]
        sys.stdout.write(json.dumps(pair) + "\\n")
        sys.stdout.flush()
    """
)
HOOK = textwrap.dedent(
    """
    def add_header(pair):
        pair["response"].setdefault("headers", {})["X-Middleware"] = ["seen"]
        return pair

    async def add_header_async(pair):
        pair["response"].setdefault("headers", {})["X-Middleware"] = ["seen"]
        return pair
    """
)
WEBHOOK_ACTION = textwrap.dedent(
    """
    import http.client, sys
    conn = http.client.HTTPConnection("127.0.0.1", {port})
    for line in sys.stdin:
        conn.request("POST", "/hook", body=line.encode(), headers={{"Content-Type": "application/json"}})
        conn.getresponse().read()
        print("sent", flush=True)
    """
)
WEBHOOK_SERVER = textwrap.dedent(
    """
    import asyncio, sys
    count = 0
    async def serve(reader, writer):
        global count
        while True:
            head = await reader.readuntil(b"\\r\\n\\r\\n")
            length = 0
            for line in head.split(b"\\r\\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            count += 1
            writer.write(b"HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\n\\r\\n")
    async def main():
        server = await asyncio.start_server(lambda r, w: serve_safe(r, w), "127.0.0.1", int(sys.argv[1]))
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)
        print(count, flush=True)
    async def serve_safe(r, w):
        try:
            await serve(r, w)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
    asyncio.run(main())
    """
)
PAIR = {"request": {}, "response": {"status": 200, "body": "ok", "headers": {"Content-Type": ["text/plain"]}}}


@dataclass
class Proc:
    name: str
    argv: list[str]
    admin: int
    proxy: int
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    def start(self, cpu: int) -> None:
        self.process = subprocess.Popen(
            self.argv, cwd=ROOT, env={**os.environ, **self.env}, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=lambda: os.sched_setaffinity(0, {cpu}),
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"{self.name} exited at start")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.admin}/api/health", timeout=2):
                    return
            except OSError:
                time.sleep(0.05)
        raise SystemExit(f"{self.name} did not start")

    def put(self, path: str, doc: dict[str, Any]) -> None:
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.admin}{path}", data=json.dumps(doc).encode(), method="PUT"
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            resp.read()

    def stop(self) -> None:
        if self.process is None:
            return
        for pid in [*descendants(self.process.pid), self.process.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait()


def _simproxy(name: str, flags: list[str]) -> Proc:
    admin, proxy = free_port(), free_port()
    argv = [sys.executable, "-m", "simproxy", "-ap", str(admin), "-pp", str(proxy), *flags]
    return Proc(name, argv, admin, proxy)


def _hoverfly(binary: str, script: Path, home: str) -> Proc:
    admin, proxy = free_port(), free_port()
    argv = [binary, "-ap", str(admin), "-pp", str(proxy), "-middleware", f"{sys.executable} {script}"]
    return Proc("hoverfly", argv, admin, proxy, env={"HOME": home})


WRK_SCRIPT = """
wrk.path = "http://test.example/x"
wrk.headers["Host"] = "test.example"
shown = 0
response = function(status, headers, body)
    if status ~= 200 and shown < 3 then
        shown = shown + 1
        io.write("NOT-200 " .. status .. " " .. string.sub(body, 1, 200):gsub("\\n", " ") .. "\\n")
    end
end
"""
"""wrk's request: the absolute form a proxy is sent (Hoverfly refuses any other on its proxy port);
the first three answers that are not a 200 are printed, so a round with errors says what they were."""


def _load(proc: Proc, seconds: float, cpu: int, requests: Path) -> subprocess.Popen[bytes]:
    """The load on ``proc``: ``wrk`` when the machine has it (a Python client at several thousand
    requests a second spends its own core and caps the faster side), else ``benchmarks.loadgen``."""
    if shutil.which("wrk"):
        script = requests.with_name("wrk.lua")
        if not script.exists():  # once: rewritten while the other side's wrk read it, that wrk had none
            script.write_text(WRK_SCRIPT)
        argv = ["wrk", "-t1", f"-c{CONNECTIONS}", f"-d{max(1, round(seconds))}s", "-s", str(script),
                f"http://127.0.0.1:{proc.proxy}"]  # fmt: skip
    else:
        argv = [sys.executable, "-m", "benchmarks.loadgen", str(proc.proxy), str(seconds), str(CONNECTIONS),
                str(requests)]  # fmt: skip
    return subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.PIPE, preexec_fn=lambda: os.sched_setaffinity(0, {cpu})
    )  # fmt: skip


def _rate(load: subprocess.Popen[bytes]) -> tuple[float, int, list[str]]:
    """Requests a second, errors and a few of the answers that were errors, from wrk's report or
    loadgen's JSON line."""
    out, _ = load.communicate(timeout=120)
    text = out.decode("utf-8", "replace")
    if text.lstrip().startswith("{"):
        result = json.loads(text)
        return result["requests"] / result["seconds"], result["errors"], []
    rate = re.search(r"Requests/sec:\s+([\d.]+)", text)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    sockets = re.search(r"Socket errors: (.*)", text)
    if rate is None:
        raise SystemExit(f"wrk printed no rate:\n{text}")
    samples = [line[8:] for line in text.splitlines() if line.startswith("NOT-200 ")]
    if sockets:
        samples.append(f"socket errors: {sockets[1]}")
    return float(rate[1]), int(errors[1]) if errors else 0, samples


def side_by_side(
    a: Proc, b: Proc, rounds: int, seconds: float, cores: tuple[int, int], requests: Path
) -> dict[str, Any]:
    server_cpu, load_cpu = cores
    rates: dict[str, list[float]] = {a.name: [], b.name: []}
    errors = {a.name: 0, b.name: 0}
    seen: dict[str, list[str]] = {a.name: [], b.name: []}
    for proc in (a, b):
        proc.start(server_cpu)
        proc.put("/api/v2/simulation", {"data": {"pairs": [PAIR]}, "meta": {"schemaVersion": "v5.2"}})
    try:
        for round_ in range(rounds + 1):  # round 0 warms up
            loads = [_load(proc, seconds, load_cpu, requests) for proc in (a, b)]
            for proc, load in zip((a, b), loads, strict=True):
                rate, errs, samples = _rate(load)
                if round_:
                    rates[proc.name].append(rate)
                    errors[proc.name] += errs
                    if samples:
                        seen[proc.name].extend(f"round {round_}: {sample}" for sample in samples)
    finally:
        for proc in (a, b):
            proc.stop()
    ratios = [x / y if y else float("inf") for x, y in zip(rates[a.name], rates[b.name], strict=True)]
    report: dict[str, Any] = {"rates": rates, "errors": errors, "median_ratio": statistics.median(ratios)}
    if any(seen.values()):
        report["error_samples"] = {name: lines for name, lines in seen.items() if lines}
    return report


async def _paced(port: int, rate: float, seconds: float) -> dict[str, Any]:
    """Send ``rate`` requests a second for ``seconds`` over ``CONNECTIONS`` keep-alive connections
    (each its share, on a fixed schedule, never more than one outstanding); count the answers."""
    request = b"GET http://test.example/x HTTP/1.1\r\nHost: test.example\r\n\r\n"
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.1
    answered = [0, 0]  # 200s, others

    async def connection(offset: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        interval = CONNECTIONS / rate
        n = 0
        while (due := start + offset * interval / CONNECTIONS + n * interval) < start + seconds:
            await asyncio.sleep(max(0.0, due - loop.time()))
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
            )
            await reader.readexactly(length)
            answered[0 if head.startswith(b"HTTP/1.1 200") else 1] += 1
            n += 1
        writer.close()

    await asyncio.gather(*(connection(i) for i in range(CONNECTIONS)))
    return {"requests": answered[0], "errors": answered[1], "seconds": loop.time() - start}


def webhook(seconds: float, cores: tuple[int, int], requests: Path, folder: Path) -> dict[str, Any]:
    server_cpu, load_cpu = cores
    hook_port = free_port()
    receiver = subprocess.Popen(
        [sys.executable, "-c", WEBHOOK_SERVER, str(hook_port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        preexec_fn=lambda: os.sched_setaffinity(0, {load_cpu}),
    )  # fmt: skip
    sp = _simproxy("simproxy", ["-journal-size", "0"])
    try:
        time.sleep(0.5)
        sp.start(server_cpu)
        script = WEBHOOK_ACTION.format(port=hook_port)
        sp.put("/api/v2/hoverfly/post-serve-action", {"actionName": "hook", "binary": sys.executable,
               "script": script, "pool": ACTION_POOL})  # fmt: skip
        pair = {"request": {}, "response": {"status": 200, "body": "ok", "postServeAction": "hook"}}
        sp.put("/api/v2/simulation", {"data": {"pairs": [pair]}, "meta": {"schemaVersion": "v5.2"}})
        argv = [
            sys.executable,
            "-m",
            "benchmarks.middleware",
            "--paced",
            str(sp.proxy),
            str(WEBHOOK_RATE),
            str(seconds),
        ]
        load = subprocess.Popen(
            argv, cwd=ROOT, stdout=subprocess.PIPE, preexec_fn=lambda: os.sched_setaffinity(0, {load_cpu})
        )
        out, _ = load.communicate(timeout=120)
        result = json.loads(out)
        time.sleep(3.0)  # the actions still pending drain (200 ms each, then the POST)
        with urllib.request.urlopen(f"http://127.0.0.1:{sp.admin}/metrics", timeout=10) as resp:
            metrics = [
                line
                for line in resp.read().decode().splitlines()
                if line.startswith("simproxy_post_serve_actions_total")
            ]
    finally:
        sp.stop()
        received_text, _ = receiver.communicate(b"", timeout=30)
    served = result["requests"]
    return {
        "metrics": metrics,
        "served": served, "rate": served / result["seconds"], "errors": result["errors"],
        "webhooks_received": int(received_text or 0),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hoverfly", default="/work/scratch/hoverfly/bin/hoverfly")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", default="")
    parser.add_argument("--paced", nargs=3, help=argparse.SUPPRESS)  # PORT RATE SECONDS: the load of the webhook part
    parser.add_argument("--only", nargs="*", default=[], help="per-process, pool, hook, hook-async, webhook")
    args = parser.parse_args()
    if args.paced:
        port, rate, secs = args.paced
        print(json.dumps(asyncio.run(_paced(int(port), float(rate), float(secs)))))
        return 0
    cpus = sorted(os.sched_getaffinity(0))
    cores = (cpus[-1], cpus[0])
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="simproxy-mw-bench-") as tmp:
        folder = Path(tmp)
        (folder / "one_shot.py").write_text(ONE_SHOT)
        (folder / "loop.py").write_text(LOOP)
        (folder / "hook.py").write_text(HOOK)
        requests = folder / "requests.json"
        requests.write_text(json.dumps(["GET http://test.example/x HTTP/1.1\r\nHost: test.example\r\n\r\n"]))
        home = folder / "home"
        home.mkdir()
        per_process = ["-middleware", f"{sys.executable} {folder / 'one_shot.py'}"]
        pooled = ["-middleware", f"{sys.executable} {folder / 'loop.py'}", "-middleware-pool", "2"]
        hooked = ["-middleware", f"python:{folder / 'hook.py'}:add_header"]
        hooked_async = ["-middleware", f"python:{folder / 'hook.py'}:add_header_async"]
        forms = {"per-process": per_process, "pool": pooled, "hook": hooked, "hook-async": hooked_async}
        for label, flags in forms.items():
            if args.only and label not in args.only:
                continue
            hoverfly = _hoverfly(args.hoverfly, folder / "one_shot.py", str(home))
            report[label] = side_by_side(
                _simproxy(f"simproxy-{label}", flags), hoverfly, args.rounds, args.seconds, cores, requests
            )
            print(label, json.dumps(report[label]), flush=True)
        if args.only and "webhook" not in args.only:
            return _write(report, args.json)
        report["webhook"] = webhook(args.seconds, cores, requests, folder)
        print("webhook", json.dumps(report["webhook"]), flush=True)
    return _write(report, args.json)


def _write(report: dict[str, Any], path: str) -> int:
    if path:
        Path(path).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
