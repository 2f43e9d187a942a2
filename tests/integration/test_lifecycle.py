"""The process lifecycle (issue 16), seen from outside on real processes and sockets.

A killed main process leaves nothing answering on its ports, no process and no private Redis
socket; a stop (the shutdown call, SIGTERM) refuses new connections at once while the requests in
flight are answered, then exits 0; a start on the ports of an instance just stopped never reaches
the old instance; a start that fails exits non-zero with its reason, leaves nothing behind and
signals no process but its own.

Every process a test starts, and every process those leave running, is ended by pid at the end of
the test: the test process is the child subreaper of whatever it starts (see ``Launcher``).
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import errno
import http.client
import json
import os
import select
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TypeVar

import pytest

from benchmarks.procs import descendants
from simproxy.admin.command import COMMAND
from simproxy.admin.process.redisserver import free_port
from simproxy.engine.execution.lifeline import start_time
from tests.integration import conftest
from tests.integration.conftest import (
    ROOT,
    Simproxy,
    _cmdline,
    call,
    pair,
    refused,
    simulation,
    wait_until,
)

pytestmark = pytest.mark.slow

CYCLES = 100
"""Stop-then-start cycles on the same ports with one worker."""
WORKER_CYCLES = 5
"""The same with ``-workers 2``."""
SLOW_MS = 1500
"""The delay of the request left in flight when a stop arrives."""
PROBE_SECONDS = 0.3
"""How long the ports of a killed instance are probed."""
HOME = os.path.join(tempfile.gettempdir(), "simproxy-tests-home")
"""SIMPROXY_HOME, as tests/integration/conftest.py sets it: the generated CA is kept there."""
PR_SET_CHILD_SUBREAPER = 36
T = TypeVar("T")


# -- processes ---------------------------------------------------------------------------------


class Launcher:
    """Starts ``simproxy`` commands for one test, and ends by pid every process they leave.

    While a test runs, the test process is a child subreaper: a process left running by one it
    started (a worker outliving its main process, a simproxy whose bash has exited) becomes its
    child instead of init's, so ``leftovers`` finds it however it was orphaned. Each command runs
    with a temporary folder of its own (TMPDIR): the private redis-server's socket appears there,
    and nothing may remain there once the command is gone.
    """

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        # short: the private redis-server's Unix socket path must fit in 108 bytes
        self.tmp = Path(tempfile.mkdtemp(prefix="lifecycle-"))
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", "SIMPROXY_HOME": HOME, "TMPDIR": str(self.tmp)}
        self._before = _alive(_my_descendants())
        self._processes: list[subprocess.Popen[bytes]] = []
        self._instances: list[Simproxy] = []

    @staticmethod
    def command(*flags: str) -> list[str]:
        return [*COMMAND, *flags]

    def spawn(self, args: list[str], stdout: int | IO[bytes]) -> subprocess.Popen[bytes]:
        # its own session: a process group signalled by what it starts is never pytest's
        process = subprocess.Popen(
            args, cwd=ROOT, env=self.env, stdout=stdout, stderr=subprocess.STDOUT, start_new_session=True
        )
        self._processes.append(process)
        return process

    def run(self, args: list[str]) -> tuple[int, str]:
        """Run a command to its end: its exit status and its output."""
        process = self.spawn(args, subprocess.PIPE)
        out, _ = process.communicate(timeout=60)
        return process.returncode, out.decode(errors="replace")

    def serve(self, args: list[str], log: str) -> subprocess.Popen[bytes]:
        """Start a command that keeps running; its output goes to ``log`` (see ``log_text``)."""
        with open(self.logs / log, "wb") as out:
            return self.spawn(args, out)

    def log_text(self, log: str) -> str:
        return (self.logs / log).read_text(errors="replace")

    def simproxy(self, workers: int = 1) -> Simproxy:
        """A started simproxy (conftest's ``Simproxy``: healthy, every worker listening)."""
        flags = ("-workers", str(workers)) if workers > 1 else ()
        instance = Simproxy(*flags, env={"TMPDIR": str(self.tmp)})
        self._instances.append(instance)
        return instance.start()

    def leftovers(self) -> list[str]:
        """Processes started during the test that are still alive (zombies aside), each as its pid
        and command line; the processes the test started itself and has not seen end are not counted."""
        running = {p.pid for p in self._processes if p.poll() is None}
        running |= {s.process.pid for s in self._instances if s.process is not None and s.process.poll() is None}
        left = _alive(_my_descendants()) - self._before
        return sorted(f"{pid} {_cmdline(pid)}" for pid, _ in left if pid not in running)

    def redis_entries(self) -> list[str]:
        """The private redis-server's entries in the temporary folder (a socket, or a folder holding one)."""
        return sorted(entry.name for entry in self.tmp.glob("simproxy-redis-*"))

    def temporary_entries(self) -> list[str]:
        return sorted(entry.name for entry in self.tmp.iterdir())

    def close(self) -> None:
        for instance in self._instances:
            instance.stop()
        for process in self._processes:
            _end(process)
        left = _alive(_my_descendants()) - self._before
        for pid, started in left:
            if start_time(pid) == started:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for pid, _ in left:  # adopted (the test process is their subreaper): reaped here, by pid
            wait_until(lambda pid=pid: _reaped(pid), timeout=5)
        shutil.rmtree(self.tmp, ignore_errors=True)


@pytest.fixture
def launcher(tmp_path: Path) -> Iterator[Launcher]:
    _set_subreaper(True)
    own = Launcher(tmp_path)
    try:
        yield own
    finally:
        try:
            own.close()
        finally:
            _set_subreaper(False)


def _set_subreaper(on: bool) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _my_descendants() -> list[int]:
    """Every process below the test process, the children of each of its threads included."""
    me = os.getpid()
    found = []
    for task in os.listdir(f"/proc/{me}/task"):
        with contextlib.suppress(OSError):
            for child in map(int, Path(f"/proc/{me}/task/{task}/children").read_text().split()):
                found += [child, *descendants(child)]
    return found


def _alive(pids: list[int]) -> set[tuple[int, int]]:
    """The pids that are running processes (not zombies), with their start times."""
    return {(pid, started) for pid in pids if (started := start_time(pid)) is not None}


def _reaped(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG)[0] != 0
    except ChildProcessError:
        return True  # not (or no longer) a child of the test process


def _end(process: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
        if process.poll() is not None:
            break
        process.send_signal(sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=wait)
    if process.stdout is not None:
        process.stdout.close()


# -- sockets -----------------------------------------------------------------------------------


def _try_request(port: int, request: bytes) -> str:
    """``refused``, ``closed`` (connected, then closed without a byte of answer), ``answered``, or
    ``silent`` (connected, and neither answered nor closed within a second)."""
    with socket.socket() as sock:
        sock.settimeout(1)
        failed = sock.connect_ex(("127.0.0.1", port))
        if failed:
            return "refused" if failed == errno.ECONNREFUSED else errno.errorcode.get(failed, str(failed))
        try:
            sock.sendall(request)
            answer = sock.recv(1024)
        except ConnectionError:
            return "closed"
        except TimeoutError:
            return "silent"
        status_line = answer.split(b"\r\n", 1)[0].decode(errors="replace")
        return f"answered {status_line}" if answer else "closed"


def _probe_ports(sp: Simproxy, seconds: float) -> collections.Counter[str]:
    """New connections to both ports, one after the other for ``seconds``: what each one got."""
    requests = {
        sp.admin_port: ("admin", b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        sp.proxy_port: ("proxy", b"GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n"),
    }
    outcomes: collections.Counter[str] = collections.Counter()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for port, (label, request) in requests.items():
            outcomes[f"{label} {_try_request(port, request)}"] += 1
    return outcomes


@contextlib.contextmanager
def _held(port: int) -> Iterator[None]:
    """Another program listening on ``port`` (no SO_REUSEADDR, no SO_REUSEPORT)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen(1)
        yield


def _read_by_server(server_port: int, client_port: int) -> bool:
    """The server's end of the connection from ``client_port`` exists and has read all it was sent
    (its receive queue in /proc/net/tcp is empty): the request is in the server's hands."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = (int(address.rsplit(":", 1)[1], 16) for address in fields[1:3])
        if (local, remote) == (server_port, client_port) and fields[3] == "01":  # ESTABLISHED
            return int(fields[4].split(":")[1], 16) == 0
    return False


@contextlib.contextmanager
def _request_in_flight(sp: Simproxy) -> Iterator[http.client.HTTPConnection]:
    """A request to a pair answered after ``SLOW_MS``, sent and read by simproxy; its answer is
    left unread (``_answer``)."""
    slow = pair("/slow", "finished")
    slow["response"]["fixedDelay"] = SLOW_MS
    assert sp.admin_json("PUT", "/api/v2/simulation", simulation(slow))[0] == 200
    with contextlib.closing(http.client.HTTPConnection("127.0.0.1", sp.proxy_port, timeout=30)) as conn:
        conn.request("GET", "http://h/slow")
        assert conn.sock is not None
        client_port = conn.sock.getsockname()[1]
        assert wait_until(lambda: _read_by_server(sp.proxy_port, client_port), timeout=10, interval=0.005)
        yield conn


def _pending(conn: http.client.HTTPConnection) -> bool:
    """Nothing has come back on the connection yet: no answer, no close."""
    assert conn.sock is not None
    return not select.select([conn.sock], [], [], 0)[0]


def _answer(conn: http.client.HTTPConnection) -> tuple[int, bytes]:
    resp = conn.getresponse()
    return resp.status, resp.read()


def _came_back(conn: http.client.HTTPConnection) -> str:
    """What came back on the connection, for a message: the answer, or how it failed."""
    try:
        return repr(_answer(conn))
    except (OSError, http.client.HTTPException) as exc:
        return repr(exc)


# -- a killed main process ---------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_a_killed_main_process_leaves_nothing_answering_no_process_and_no_redis_socket(
    launcher: Launcher, workers: int
) -> None:
    sp = launcher.simproxy(workers)
    assert sp.process is not None
    assert sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/", "still here")))[0] == 200
    if workers > 1:  # the private redis-server's socket is in the temporary folder the test gave it
        assert launcher.redis_entries()
    sp.process.kill()
    sp.process.wait()
    outcomes = _probe_ports(sp, PROBE_SECONDS)
    assert {outcome.split()[1] for outcome in outcomes} <= {"refused", "closed"}, outcomes
    assert wait_until(lambda: not launcher.leftovers(), timeout=5), launcher.leftovers()
    assert wait_until(lambda: not launcher.redis_entries(), timeout=5), launcher.redis_entries()


# -- stopping ----------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_the_shutdown_call_refuses_new_connections_before_it_answers_and_answers_the_request_in_flight(
    launcher: Launcher, workers: int
) -> None:
    sp = launcher.simproxy(workers)
    assert sp.process is not None
    with _request_in_flight(sp) as in_flight:
        assert sp.admin("DELETE", "/api/v2/shutdown")[::2] == (200, b"")
        closed = {"proxy": refused(sp.proxy_port), "admin": refused(sp.admin_port)}
        pending = _pending(in_flight)
        assert closed == {"proxy": True, "admin": True}, (
            "a new connection was accepted after the shutdown call answered"
        )
        assert pending, (
            f"the request in flight was answered or cut before the shutdown call answered: {_came_back(in_flight)}"
        )
        assert _answer(in_flight) == (200, b"finished")
    assert sp.process.wait(timeout=20) == 0


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_refuses_new_connections_on_both_ports_and_answers_the_request_in_flight(
    launcher: Launcher, workers: int
) -> None:
    sp = launcher.simproxy(workers)
    assert sp.process is not None
    with _request_in_flight(sp) as in_flight:
        sp.process.send_signal(signal.SIGTERM)
        assert wait_until(lambda: refused(sp.admin_port), timeout=10, interval=0.005), "the admin port still accepts"
        proxy_refused, pending = refused(sp.proxy_port), _pending(in_flight)
        assert proxy_refused, "the proxy port accepted a new connection after the admin port refused one"
        assert pending, (
            f"the admin port accepted new connections until the request in flight ended: {_came_back(in_flight)}"
        )
        assert _answer(in_flight) == (200, b"finished")
    assert sp.process.wait(timeout=20) == 0


# -- stop, then start on the same ports --------------------------------------------------------


def _first_answer(launcher: Launcher, process: subprocess.Popen[bytes], log: str, request: Callable[[], T]) -> T:
    """The first answer ``request`` gets (connections refused or reset are tried again)."""

    def attempt() -> T | None:
        if process.poll() is not None:
            pytest.fail(f"simproxy exited with status {process.returncode}:\n{launcher.log_text(log)}")
        try:
            return request()
        except OSError:
            return None

    answer: T | None = wait_until(attempt, timeout=30, interval=0.002)
    assert answer is not None, f"no answer within 30 s:\n{launcher.log_text(log)}"
    return answer


def _serve_one_cycle(
    launcher: Launcher, admin_port: int, proxy_port: int, workers: int, cycle: int
) -> subprocess.Popen[bytes]:
    """Start simproxy on the ports; its first answers are its own (no pairs, a miss), then it
    answers this cycle's simulation. Returns the running process."""
    log = f"cycle-{cycle}.log"
    flags = ["-ap", str(admin_port), "-pp", str(proxy_port), *(["-workers", str(workers)] if workers > 1 else [])]
    process = launcher.serve(launcher.command(*flags), log)
    status, _, body = _first_answer(launcher, process, log, lambda: call(admin_port, "GET", "/api/v2/simulation"))
    assert (status, json.loads(body)["data"]["pairs"]) == (200, []), f"cycle {cycle}: {body!r}"
    miss = _first_answer(launcher, process, log, lambda: call(proxy_port, "GET", "http://h/who"))
    assert miss[0] == 502, f"cycle {cycle}: {miss[0]} {miss[2]!r}"
    put = call(admin_port, "PUT", "/api/v2/simulation", json.dumps(simulation(pair("/who", f"cycle-{cycle}"))).encode())
    assert put[0] == 200, put
    answers = [call(proxy_port, "GET", "http://h/who")[::2] for _ in range(2 * workers)]
    assert answers == [(200, f"cycle-{cycle}".encode())] * len(answers)
    return process


@pytest.mark.parametrize(("workers", "cycles"), [(1, CYCLES), (2, WORKER_CYCLES)])
def test_a_start_on_the_ports_of_an_instance_just_stopped_never_reaches_the_old_instance(
    launcher: Launcher, workers: int, cycles: int
) -> None:
    first = free_port(2)  # below the ephemeral range: no outgoing connection takes them between cycles
    admin_port, proxy_port = first, first + 1
    # an instance stopped by the shutdown call, which answers once its ports are free: the next
    # start does not wait for its exit
    exiting: subprocess.Popen[bytes] | None = None
    for cycle in range(cycles):
        process = _serve_one_cycle(launcher, admin_port, proxy_port, workers, cycle)
        if exiting is not None:
            assert exiting.wait(timeout=20) == 0
            exiting = None
        if cycle % 2 == 0:
            assert call(admin_port, "DELETE", "/api/v2/shutdown")[::2] == (200, b"")
            exiting = process
        else:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=20) == 0
    if exiting is not None:
        assert exiting.wait(timeout=20) == 0
    assert wait_until(lambda: not launcher.leftovers(), timeout=5), launcher.leftovers()
    assert wait_until(lambda: not launcher.redis_entries(), timeout=5), launcher.redis_entries()


# -- a start that fails ------------------------------------------------------------------------


@pytest.mark.parametrize("taken", ["proxy", "admin"])
def test_a_start_with_two_workers_failing_on_a_taken_port_signals_no_process_but_its_own(
    launcher: Launcher, taken: str
) -> None:
    first = free_port(2)
    ports = {"admin": first, "proxy": first + 1}
    simproxy = shlex.join(launcher.command("-workers", "2", "-ap", str(ports["admin"]), "-pp", str(ports["proxy"])))
    with _held(ports[taken]):
        # simproxy runs in bash's process group (bash, not simproxy, has a session of its own)
        status, output = launcher.run(["bash", "-c", f'{simproxy}; echo "exit=$?"'])
    assert status == 0, f"bash ended with status {status}:\n{output}"
    exits = [line for line in output.splitlines() if line.startswith("exit=")]
    assert len(exits) == 1 and exits != ["exit=0"], output
    assert f"the {taken} port 127.0.0.1:{ports[taken]} is already in use" in output
    assert wait_until(lambda: not launcher.leftovers(), timeout=5), launcher.leftovers()


FAILED_STARTS = {
    "a bad flag": (["-nosuchflag"], None, "flag provided but not defined: -nosuchflag"),
    "an unreadable import": (["-import", "/nonexistent.json"], None, "Failed to import given resource"),
    "a taken proxy port": ([], "proxy", "the proxy port 127.0.0.1:{port} is already in use"),
    "a taken admin port": ([], "admin", "the admin port 127.0.0.1:{port} is already in use"),
}


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("failure", list(FAILED_STARTS))
def test_a_failed_start_exits_non_zero_with_its_reason_and_leaves_no_process_nor_temporary_file(
    launcher: Launcher, failure: str, workers: int
) -> None:
    flags, taken, message = FAILED_STARTS[failure]
    first = free_port(2)
    ports = {"admin": first, "proxy": first + 1}
    worker_flags = ["-workers", str(workers)] if workers > 1 else []
    command = launcher.command("-ap", str(ports["admin"]), "-pp", str(ports["proxy"]), *worker_flags, *flags)
    with _held(ports[taken]) if taken else contextlib.nullcontext():
        status, output = launcher.run(command)
    assert status > 0, f"status {status}:\n{output}"
    assert message.format(port=ports[taken] if taken else 0) in output
    assert wait_until(lambda: not launcher.leftovers(), timeout=5), launcher.leftovers()
    assert wait_until(lambda: not launcher.temporary_entries(), timeout=5), launcher.temporary_entries()


def test_the_suites_own_start_takes_new_ports_when_one_it_picked_is_taken_before_simproxy_binds_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the race the suite meets now and then: a port seen free is bound by another process before
    # simproxy binds it; simproxy exits ("already in use") and the suite's start tries two new ports
    with socket.create_server(("127.0.0.1", 0)) as other:
        taken = int(other.getsockname()[1])
        picks = iter([free_port(), taken])
        monkeypatch.setattr(conftest, "free_port", lambda: next(picks, None) or free_port())
        simproxy = Simproxy()
        assert simproxy.proxy_port == taken
        try:
            simproxy.start()
            assert simproxy.proxy_port != taken
            assert simproxy.admin_json("PUT", "/api/v2/simulation", simulation(pair("/moved", "here")))[0] == 200
            assert simproxy.proxy("http://test.local/moved")[2] == b"here"
        finally:
            simproxy.stop()
