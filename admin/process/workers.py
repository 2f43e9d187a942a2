"""Several workers (``-workers N``): the main process forks them, keeps their number, and stops them.

The main process has imported everything, bound the ports and written the start-up state before it
forks, so a worker is serving within milliseconds and shares the main process's memory pages
until it writes them. Each worker:

* serves the shared admin socket and a proxy socket of its own (admin/process/listeners.py);
* dies with the main process, however that one dies (the kernel sends it SIGKILL: ``die_with_parent``),
  so nothing of a killed instance keeps serving its ports;
* says on a pipe when it can serve, or why its start failed; the first workers open the admin port
  together, once every one of them can serve (SIGUSR1 from the main process).

The main process runs no event loop and no thread: it waits on that pipe and on its signals (a
wake-up pipe, no timer). A start fails as a whole if any first worker fails; later, a worker that
dies abnormally (killed, crashed) is forked again, at most once a second per worker. A stop
(SIGTERM or SIGINT to the main process, or the shutdown call, which a worker turns into a SIGTERM to
the main process) closes the main process's copy of the admin socket and asks every worker to stop;
a second stop kills them. Only simproxy's own processes are ever signalled, each by its pid.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import select
import signal
import socket
import sys
import time
import traceback
from dataclasses import dataclass
from types import FrameType

from simproxy.admin.process.serving import StoppedBeforeReady, Worker, WorkerSockets, stop_before_ready
from simproxy.admin.settings import Settings
from simproxy.engine.execution.lifeline import die_with_parent
from simproxy.engine.server.listener import DRAIN_GRACE
from simproxy.store.errors import SimproxyError

log = logging.getLogger(__name__)

RESPAWN_INTERVAL = 1.0
"""Seconds between two starts of the same worker: a worker that keeps dying does not spin the machine."""
STOP_TIMEOUT = DRAIN_GRACE + 4.0
"""Seconds the workers get to drain and exit after a stop before they are killed."""
_CLEAN_EXITS = frozenset({0, -signal.SIGTERM, -signal.SIGINT})
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_WATCHED = frozenset({*_STOP_SIGNALS, signal.SIGCHLD})


class WorkerStartFailed(SimproxyError):
    """A first worker could not start: the instance does not start (exit 1 with this message)."""


@dataclass(slots=True)
class _Slot:
    index: int
    started: float
    ready: bool = False


class Supervisor:
    """Forks ``-workers`` workers from this (the main) process and watches them until they end."""

    def __init__(self, settings: Settings, admin: socket.socket, proxies: list[socket.socket]) -> None:
        self.settings = settings
        self._admin = admin
        self._proxies = proxies
        """One bound proxy socket per first worker; each is handed to its worker and closed here."""
        self._workers: dict[int, _Slot] = {}
        self._respawn: dict[int, float] = {}
        """Index -> when (monotonic) the worker that died may be forked again."""
        self._serving = False
        """Every first worker has said it serves: from then on a dead worker is replaced, not fatal."""
        self._stopping = False
        self._stop_deadline = 0.0
        self._failure = ""
        self._ready_r, self._ready_w = os.pipe()
        self._wake_r, self._wake_w = os.pipe()

    def run(self) -> None:
        """Serve until stopped; raises ``WorkerStartFailed`` when a first worker fails to start."""
        for fd in (self._wake_r, self._wake_w, self._ready_r):
            fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK)
        previous = {sig: signal.signal(sig, _noted) for sig in _WATCHED}
        old_wakeup = signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)
        try:
            for index, sock in enumerate(self._proxies):
                self._fork(index, sock)
            self._watch()
        finally:
            signal.set_wakeup_fd(old_wakeup)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self._kill_all()
            for fd in (self._ready_r, self._ready_w, self._wake_r, self._wake_w):
                os.close(fd)
        if self._failure:
            raise WorkerStartFailed(self._failure)

    # -- forking ----------------------------------------------------------------------------

    def _fork(self, index: int, proxy: socket.socket | None = None) -> None:
        """Fork worker ``index``; a worker started again (``proxy`` None) binds its own proxy socket
        once it can serve: bound here, the socket would take its share of new connections while
        the worker may yet fail to start (the store away), and each would be reset when it exits."""
        # signals wait until each side has its own handlers (the child's would write to our wake-up pipe)
        signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
        pid = os.fork()
        if pid == 0:
            self._child(proxy, announce=index == 0 and not self._serving)  # never returns
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _WATCHED)
        if proxy is not None:
            proxy.close()
        self._workers[pid] = _Slot(index, time.monotonic())

    def _child(self, proxy: socket.socket | None, *, announce: bool) -> None:
        """In a forked worker: cut the ties to the main process's watching, serve, exit."""
        status = 0
        try:
            signal.set_wakeup_fd(-1)
            for sig in _STOP_SIGNALS:
                signal.signal(sig, stop_before_ready)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _WATCHED)
            die_with_parent(signal.SIGKILL, self.settings.main_pid)
            for fd in (self._ready_r, self._wake_r, self._wake_w):
                os.close(fd)
            for other in self._proxies:
                if other is not proxy:
                    other.close()
            main_pid = self.settings.main_pid
            worker = Worker(
                self.settings,
                WorkerSockets(self._admin, proxy),
                stop_instance=lambda: os.kill(main_pid, signal.SIGTERM),
                wait_for_fleet=not self._serving,  # a worker started again serves at once
                announce=announce,
            )
            worker.run(on_ready=lambda: self._tell(f"ready {os.getpid()}"))
        except StoppedBeforeReady:
            pass
        except BaseException as exc:
            if not isinstance(exc, SimproxyError | OSError):
                traceback.print_exc()
            self._tell(f"failed {os.getpid()} {exc}")
            status = 1
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(status)

    def _tell(self, line: str) -> None:
        """One line to the main process; short enough to be written whole (PIPE_BUF)."""
        data = line.replace("\n", " ").encode("utf-8", "replace")[: select.PIPE_BUF - 1] + b"\n"
        os.write(self._ready_w, data)

    # -- watching ---------------------------------------------------------------------------

    def _watch(self) -> None:
        pending = b""
        while self._workers or (self._respawn and not self._stopping):
            readable, _, _ = select.select([self._wake_r, self._ready_r], [], [], self._timeout())
            if self._ready_r in readable:
                pending += _read_all(self._ready_r)
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self._heard(line.decode("utf-8", "replace"))
            if self._wake_r in readable:
                for signum in _read_all(self._wake_r):
                    if signum in _STOP_SIGNALS:
                        self._stop(kill=self._stopping)
            self._reap()
            self._due()

    def _timeout(self) -> float | None:
        moments = [*self._respawn.values()] if not self._stopping else []
        if self._stopping:
            moments.append(self._stop_deadline)
        return max(0.0, min(moments) - time.monotonic()) if moments else None

    def _heard(self, line: str) -> None:
        word, _, rest = line.partition(" ")
        pid_text, _, message = rest.partition(" ")
        slot = self._workers.get(int(pid_text)) if pid_text.isdigit() else None
        if slot is None:
            return
        if word == "ready":
            slot.ready = True
            if not self._serving and len(self._workers) == len(self._proxies):
                self._serving = all(s.ready for s in self._workers.values())
                if self._serving:  # the first workers wait for this to open the admin port
                    for pid in self._workers:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGUSR1)
        elif word == "failed":
            self._failed(slot, message or "a worker failed to start")

    def _failed(self, slot: _Slot, message: str) -> None:
        if self._stopping:
            return
        if not self._serving:
            self._failure = self._failure or message
            self._stop(kill=False)
        else:
            log.error("worker %d failed to start again: %s", slot.index, message)

    def _reap(self) -> None:
        for pid in list(self._workers):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 0
            if done == 0:
                continue
            slot = self._workers.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            if self._stopping:
                continue
            if not slot.ready and not self._serving:
                self._failed(slot, f"a worker exited while starting (status {code})")
            elif code not in _CLEAN_EXITS:
                log.warning("worker %d (pid %d) died with status %d; starting it again", slot.index, pid, code)
                self._respawn[slot.index] = slot.started + RESPAWN_INTERVAL

    def _due(self) -> None:
        if self._stopping:
            if self._workers and time.monotonic() >= self._stop_deadline:
                log.warning("workers %s did not stop within %.0f s; killing them", list(self._workers), STOP_TIMEOUT)
                self._kill_all()
            return
        now = time.monotonic()
        for index, when in list(self._respawn.items()):
            if now >= when:
                del self._respawn[index]
                self._fork(index)

    # -- stopping ---------------------------------------------------------------------------

    def _stop(self, *, kill: bool) -> None:
        """Close this process's admin socket and ask every worker to stop; ``kill``: a second stop."""
        if kill:
            self._kill_all()
            return
        self._stopping = True
        self._stop_deadline = time.monotonic() + STOP_TIMEOUT
        self._respawn.clear()
        self._admin.close()
        for pid in self._workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def _kill_all(self) -> None:
        for pid in list(self._workers):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            del self._workers[pid]


def _noted(signum: int, frame: FrameType | None) -> None:
    """The signal's number is on the wake-up pipe (``signal.set_wakeup_fd``): nothing else to do here."""


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                break
            raise
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)
