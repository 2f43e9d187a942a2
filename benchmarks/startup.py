"""Start, stop and restart times of a simproxy instance, and of another server with ``--compare``.

Run from the repository root::

    python -m benchmarks.startup                                        # 10 runs, 1 and 4 workers
    python -m benchmarks.startup --runs 3 --workers 1
    python -m benchmarks.startup --compare hoverfly                     # Hoverfly in the same run
    python -m benchmarks.startup --cmd "simproxy"                       # another simproxy command

Every figure is the median over ``--runs`` runs, in milliseconds, each instance on fresh free
loopback ports:

- start: from just before the exec to ``GET /api/health`` answering 200 and the proxy port accepting
  a TCP connection (both polled every 2 ms);
- shutdown: from sending ``DELETE /api/v2/shutdown`` to its answer, to both ports being free (a new
  socket with SO_REUSEADDR, without SO_REUSEPORT, can bind them on 127.0.0.1; polled every 1 ms), and
  to the process's exit;
- SIGTERM: from the signal to both ports being free, and to the exit;
- restart: the old instance is put in capture mode, then from the shutdown call, a new instance is
  started on the same ports as soon as the call has answered, and timed until it is healthy and
  answers ``GET /api/v2/hoverfly/mode`` with the default ``simulate``. A start that exits (its port
  still taken) is started again, as a supervisor would; the runs where the old instance answered are
  counted (it must be none).

With ``--compare CMD`` each run measures that server too (one worker: it is given ``-ap`` and ``-pp``
only), the servers taking turns within the run so that the machine's drift falls on all of them.
Every process a run starts is ended by its pid, even when a measurement fails or times out.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.procs import descendants
from simproxy.admin.command import COMMAND
from simproxy.admin.process.listeners import Endpoint
from simproxy.admin.process.redisserver import free_port
from simproxy.engine.execution.lifeline import start_time

ROOT = Path(__file__).resolve().parents[1]
START_POLL = 0.002
"""Seconds between two looks at a starting instance's ports."""
STOP_POLL = 0.001
"""Seconds between two looks at a stopping instance's ports and process."""
START_TIMEOUT = 30.0
STOP_TIMEOUT = 30.0
FIGURES = {
    "start": "start: healthy + proxy port accepting",
    "shutdown answered": "shutdown call: answered",
    "shutdown free": "shutdown call: ports free",
    "shutdown exit": "shutdown call: process exited",
    "sigterm free": "SIGTERM: ports free",
    "sigterm exit": "SIGTERM: process exited",
    "restart": "restart: new instance healthy",
}
"""Timed figures, in milliseconds, and their rows' labels."""
COUNTS = {
    "old answered": "restart: runs the old instance answered",
    "failed starts": "restart: starts that exited (retried)",
}
"""Counted figures, summed over the runs."""


class BenchmarkFailed(Exception):
    """An instance could not be measured (it did not start, or did not take the capture mode)."""


class StartTimeout(BenchmarkFailed):
    """An instance did not answer within ``START_TIMEOUT``."""


@dataclass(frozen=True)
class Target:
    """A server to measure: a command and, for simproxy, its number of workers."""

    name: str
    template: str
    """The command; given ``-ap``, ``-pp`` (and ``-workers``) unless it holds ``{admin}`` and ``{proxy}``."""
    workers: int | None = None

    def argv(self, admin: int, proxy: int) -> list[str]:
        if "{admin}" in self.template:
            return shlex.split(self.template.format(admin=admin, proxy=proxy, workers=self.workers))
        flags = ["-ap", str(admin), "-pp", str(proxy)]
        if self.workers is not None:
            flags += ["-workers", str(self.workers)]
        return [*shlex.split(self.template), *flags]


@dataclass
class Instance:
    """A started server: its process, its ports and the processes it started (seen while it ran)."""

    process: subprocess.Popen[bytes]
    admin: int
    proxy: int
    log: Path
    family: dict[int, int | None] = field(default_factory=dict)
    """pid -> start time of every process seen under it, to end them by pid once it is gone."""

    @property
    def ports(self) -> tuple[int, int]:
        return self.admin, self.proxy

    def note_family(self) -> None:
        for pid in descendants(self.process.pid):
            self.family.setdefault(pid, start_time(pid))

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


@dataclass(frozen=True)
class Launcher:
    """Starts a target's instances with the run's environment, each logging to a file of the run's folder."""

    env: dict[str, str]
    folder: Path

    def launch(self, target: Target, admin: int, proxy: int) -> Instance:
        fd, log = tempfile.mkstemp(prefix="instance-", suffix=".log", dir=self.folder)
        with os.fdopen(fd, "wb") as out:
            process = subprocess.Popen(
                target.argv(admin, proxy), cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        return Instance(process, admin, proxy, Path(log))


def end(instance: Instance) -> None:
    """Stop the instance and every process seen under it, each by its pid: SIGTERM, then SIGKILL."""
    process = instance.process
    if process.poll() is None:
        instance.note_family()
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if process.poll() is not None:
            break
        process.send_signal(sig)
        try:
            process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
    for sig in (signal.SIGTERM, signal.SIGKILL):
        left = _alive(instance.family)
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 2.0
        while left and time.monotonic() < deadline:
            time.sleep(0.01)
            left = _alive({pid: instance.family[pid] for pid in left})
        if not left:
            return


def _alive(family: dict[int, int | None]) -> list[int]:
    """The pids still held by the very process that was seen (not a zombie, not a later one)."""
    return [pid for pid, started in family.items() if started is not None and start_time(pid) == started]


# ---------------------------------------------------------------------------------------------
# probes


def _request(port: int, method: str, path: str, body: bytes | None = None, timeout: float = 2.0) -> tuple[int, bytes]:
    """One admin API call on loopback: its status and body (raises OSError when nothing answers)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def healthy(port: int) -> bool:
    """``GET /api/health`` answers 200."""
    try:
        return _request(port, "GET", "/api/health")[0] == 200
    except (OSError, http.client.HTTPException):
        return False


def accepting(port: int) -> bool:
    """A TCP connection to the port is accepted (the kernel's backlog counts: nobody need read it)."""
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def port_free(port: int) -> bool:
    """A new socket with SO_REUSEADDR (and without SO_REUSEPORT) can bind 127.0.0.1:``port``: the test
    simproxy's shutdown call waits for (connections left in TIME_WAIT do not count)."""
    return Endpoint("127.0.0.1", port, "probed").free()


def mode(port: int) -> str | None:
    """The mode ``GET /api/v2/hoverfly/mode`` answers, or None when it does not."""
    try:
        status, body = _request(port, "GET", "/api/v2/hoverfly/mode")
        return str(json.loads(body)["mode"]) if status == 200 else None
    except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError):
        return None


def set_capture(instance: Instance) -> None:
    """Put the instance in capture mode, and check that every answer says so (with several workers, too)."""
    status, body = _request(instance.admin, "PUT", "/api/v2/hoverfly/mode", json.dumps({"mode": "capture"}).encode())
    if status != 200:
        raise BenchmarkFailed(f"PUT /api/v2/hoverfly/mode answered {status}: {body[:200]!r}")
    deadline = time.monotonic() + 5.0
    seen = 0
    while seen < 4:  # on fresh connections: a worker that has not taken it yet would say so
        if time.monotonic() > deadline:
            raise BenchmarkFailed("the old instance did not answer with capture mode within 5 s")
        seen = seen + 1 if mode(instance.admin) == "capture" else 0


@dataclass
class PendingCall:
    """An HTTP request sent without waiting for its answer; ``poll`` reads what has come so far."""

    sock: socket.socket
    received: bytes = b""
    status: int | None = None
    """The answer's status, once its status line is in."""
    closed: bool = False
    """The connection closed (or broke) before a status line came."""

    @classmethod
    def send(cls, port: int, method: str, path: str) -> PendingCall:
        sock = socket.create_connection(("127.0.0.1", port), timeout=2.0)
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        sock.sendall(head.encode())
        sock.setblocking(False)
        return cls(sock)

    @property
    def done(self) -> bool:
        return self.status is not None or self.closed

    def poll(self) -> bool:
        """Read what has arrived; True once the status line is in or the connection is closed."""
        if self.done:
            return True
        try:
            chunk = self.sock.recv(4096)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        self.received += chunk
        if b"\r\n" in self.received:
            parts = self.received.split(b"\r\n", 1)[0].split()
            self.status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        elif not chunk:
            self.closed = True
        return self.done

    def close(self) -> None:
        self.sock.close()


# ---------------------------------------------------------------------------------------------
# measurements


def _ms(since: float, at: float | None) -> float | None:
    return None if at is None else (at - since) * 1000


def wait_ready(instance: Instance, deadline: float) -> float | None:
    """When the instance became healthy with its proxy port accepting; None if its process exited first."""
    is_healthy = is_accepting = False
    while time.perf_counter() < deadline:
        if instance.process.poll() is not None:
            return None
        is_accepting = is_accepting or accepting(instance.proxy)
        is_healthy = is_healthy or healthy(instance.admin)
        if is_healthy and is_accepting:
            now = time.perf_counter()
            instance.note_family()
            return now
        time.sleep(START_POLL)
    raise StartTimeout(f"no answer within {START_TIMEOUT:.0f} s:\n{instance.log_tail()}")


def start(launcher: Launcher, target: Target) -> tuple[Instance, float]:
    """A new instance on fresh ports, once ready, and the milliseconds it took from the exec."""
    admin, proxy = free_port(), free_port()
    began = time.perf_counter()
    instance = launcher.launch(target, admin, proxy)
    try:
        ready = wait_ready(instance, began + START_TIMEOUT)
        if ready is None:
            code = instance.process.returncode
            raise BenchmarkFailed(f"{target.name} exited at start ({code}):\n{instance.log_tail()}")
    except BaseException:
        end(instance)
        raise
    return instance, (ready - began) * 1000


@dataclass(frozen=True)
class Stopped:
    """Milliseconds from the stop to each event; None when it did not happen within ``STOP_TIMEOUT``."""

    answered: float | None
    """The shutdown call's status line came (None for a signal, or a call the connection dropped)."""
    ports_free: float | None
    exited: float | None


def watch_stop(instance: Instance, began: float, call: PendingCall | None = None) -> Stopped:
    """Poll the ports, the process (and the shutdown call) until all is done, from ``began``."""
    answered = free = exited = None
    held = set(instance.ports)
    while (now := time.perf_counter()) < began + STOP_TIMEOUT:
        if call is not None and answered is None and call.poll() and call.status is not None:
            answered = now
        held = {port for port in held if not port_free(port)}
        if free is None and not held:
            free = now
        if exited is None and instance.process.poll() is not None:
            exited = now
        if free is not None and exited is not None and (call is None or call.done):
            break
        time.sleep(STOP_POLL)
    return Stopped(_ms(began, answered), _ms(began, free), _ms(began, exited))


def shutdown(instance: Instance) -> Stopped:
    """``DELETE /api/v2/shutdown``, watched to the answer, the ports free and the exit."""
    instance.note_family()
    began = time.perf_counter()
    call = PendingCall.send(instance.admin, "DELETE", "/api/v2/shutdown")
    try:
        return watch_stop(instance, began, call)
    finally:
        call.close()


def sigterm(instance: Instance) -> Stopped:
    """SIGTERM to the instance's process, watched to the ports free and the exit."""
    instance.note_family()
    began = time.perf_counter()
    instance.process.send_signal(signal.SIGTERM)
    return watch_stop(instance, began)


@dataclass(frozen=True)
class Restarted:
    healthy: float | None
    """Milliseconds from the shutdown call to the new instance answering (None: not within ``START_TIMEOUT``)."""
    old_answered: bool
    """The old instance answered once the new one was started (its capture mode showed)."""
    failed_starts: int
    """New instances that exited before they were ready (their port still taken), then started again."""


def restart(launcher: Launcher, target: Target) -> Restarted:
    """Stop an instance in capture mode by the shutdown call, and start a new one on its ports at once."""
    old, _ = start(launcher, target)
    started: list[Instance] = []
    try:
        set_capture(old)
        old.note_family()
        began = time.perf_counter()
        deadline = began + START_TIMEOUT
        call = PendingCall.send(old.admin, "DELETE", "/api/v2/shutdown")
        try:
            while not call.poll() and time.perf_counter() < deadline:
                time.sleep(STOP_POLL)
        finally:
            call.close()
        return _await_new(launcher, target, old, began, started)
    finally:
        for instance in [old, *started]:
            end(instance)


def _await_new(launcher: Launcher, target: Target, old: Instance, began: float, started: list[Instance]) -> Restarted:
    """Start the new instance on ``old``'s ports (again, when it exits) until it, not ``old``, answers."""
    deadline = began + START_TIMEOUT
    old_answered = False
    started.append(launcher.launch(target, old.admin, old.proxy))
    while True:
        try:
            ready = wait_ready(started[-1], deadline)
        except StartTimeout:
            return Restarted(None, old_answered, len(started) - 1)
        if ready is None:
            started.append(launcher.launch(target, old.admin, old.proxy))
            continue
        answer = mode(started[-1].admin)  # the same port as the old instance's
        if answer == "simulate":
            return Restarted((ready - began) * 1000, old_answered, len(started) - 1)
        old_answered = old_answered or answer == "capture"
        time.sleep(START_POLL)


# ---------------------------------------------------------------------------------------------
# runs


@dataclass
class Samples:
    """One target's figures over the runs (None: not measured in that run, see ``Stopped``)."""

    times: dict[str, list[float | None]] = field(default_factory=lambda: {key: [] for key in FIGURES})
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))

    def add(self, figures: dict[str, float | None], restarted: Restarted) -> None:
        for key, value in figures.items():
            self.times[key].append(value)
        self.counts["old answered"] += restarted.old_answered
        self.counts["failed starts"] += restarted.failed_starts


def one_run(launcher: Launcher, target: Target) -> tuple[dict[str, float | None], Restarted]:
    """Every figure once: a start and a shutdown call, a start and a SIGTERM, a restart."""
    instance, started = start(launcher, target)
    try:
        by_call = shutdown(instance)
    finally:
        end(instance)
    instance, _ = start(launcher, target)
    try:
        by_signal = sigterm(instance)
    finally:
        end(instance)
    restarted = restart(launcher, target)
    figures = {
        "start": started,
        "shutdown answered": by_call.answered,
        "shutdown free": by_call.ports_free,
        "shutdown exit": by_call.exited,
        "sigterm free": by_signal.ports_free,
        "sigterm exit": by_signal.exited,
        "restart": restarted.healthy,
    }
    return figures, restarted


def warm_up(launcher: Launcher, target: Target) -> None:
    """One start that is not measured: a generated CA is kept, the files are in the page cache."""
    instance, _ = start(launcher, target)
    end(instance)


def run(targets: Sequence[Target], runs: int, simproxy_home: Path | None = None) -> dict[str, Samples]:
    """``runs`` runs of every target, taking turns (in a rotating order) within each run."""
    results = {target.name: Samples() for target in targets}
    with tempfile.TemporaryDirectory(prefix="simproxy-startup-") as folder:
        env = dict(os.environ, SIMPROXY_HOME=str(simproxy_home or Path(folder) / "home"))
        launcher = Launcher(env, Path(folder))
        for target in targets:
            warm_up(launcher, target)
        for n in range(runs):
            order = [*targets[n % len(targets) :], *targets[: n % len(targets)]]
            for target in order:
                figures, restarted = one_run(launcher, target)
                results[target.name].add(figures, restarted)
                print(f"run {n + 1}/{runs}  {target.name:<16}{_progress(figures, restarted)}", flush=True)
    return results


def _progress(figures: dict[str, float | None], restarted: Restarted) -> str:
    def ms(key: str) -> str:
        value = figures[key]
        return "-" if value is None else f"{value:.0f}"

    old = ", old instance answered" if restarted.old_answered else ""
    return (
        f"start {ms('start')} ms, shutdown {ms('shutdown answered')}/{ms('shutdown free')}/{ms('shutdown exit')} ms"
        f" (answer/free/exit), SIGTERM {ms('sigterm free')}/{ms('sigterm exit')} ms, restart {ms('restart')} ms"
        f" ({restarted.failed_starts} failed starts{old})"
    )


# ---------------------------------------------------------------------------------------------
# report


def _median(values: list[float | None]) -> float | None:
    measured = [v for v in values if v is not None]
    return statistics.median(measured) if measured else None


def _cell(values: list[float | None]) -> str:
    median = _median(values)
    text = "-" if median is None else f"{median:,.1f}"
    measured = sum(v is not None for v in values)
    return text if measured == len(values) else f"{text} ({measured}/{len(values)})"


def report(results: dict[str, Samples], runs: int, ours: str | None = None, compared: str | None = None) -> list[str]:
    """The table: one row per figure, one column per target, and ``ours`` / ``compared`` when both are given."""
    names = list(results)
    pair = (results[ours], results[compared]) if ours in results and compared in results else None
    ratio = pair is not None
    width = max(16, *(len(name) + 2 for name in names))
    header = f"{f'median ms of {runs} runs':<42}" + "".join(f"{name:>{width}}" for name in names)
    lines = [header + (f"{'ratio':>10}" if ratio else ""), "-" * (len(header) + (10 if ratio else 0))]
    for key, label in FIGURES.items():
        row = f"{label:<42}" + "".join(f"{_cell(results[name].times[key]):>{width}}" for name in names)
        if pair is not None:
            a, b = _median(pair[0].times[key]), _median(pair[1].times[key])
            row += f"{a / b:>9.2f}x" if a is not None and b else f"{'-':>10}"
        lines.append(row)
    for key, label in COUNTS.items():
        lines.append(f"{label:<42}" + "".join(f"{results[name].counts[key]:>{width},}" for name in names))
    lines.append("")
    lines.append("(k/N): the median of the k runs of N that gave the figure (the others timed out after 30 s,")
    lines.append("or the shutdown call's connection closed without an answer)")
    if ratio:
        lines.append(f"ratio: {ours} / {compared}")
    return lines


def targets(cmd: str, workers: Sequence[int], compare: str | None) -> list[Target]:
    """simproxy with each number of workers, then the compared server (one worker, no ``-workers``)."""
    found = [Target(f"simproxy {n}w", cmd, n) for n in workers]
    if compare:
        name = f"{Path(shlex.split(compare)[0]).name} 1w"
        if any(target.name == name for target in found):  # another simproxy (a commit before): its own column
            name = f"compared {name}"
        found.append(Target(name, compare))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--workers", default="1,4", help="simproxy's -workers values, comma-separated")
    parser.add_argument("--cmd", default=shlex.join(COMMAND), help="the simproxy command")
    parser.add_argument("--compare", metavar="CMD", help="another server, given -ap and -pp (or {admin}, {proxy})")
    args = parser.parse_args(argv)
    chosen = targets(args.cmd, [int(n) for n in args.workers.split(",")], args.compare)
    try:
        results = run(chosen, args.runs)
    except BenchmarkFailed as failure:
        raise SystemExit(f"benchmark failed: {failure}") from failure
    ours = "simproxy 1w" if "simproxy 1w" in results else None
    compared = chosen[-1].name if args.compare else None
    print()
    for line in report(results, args.runs, ours, compared):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
