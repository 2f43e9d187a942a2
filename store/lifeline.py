"""Tie a child process's life to its parent's (Linux): no orphan keeps ports, files or CPU.

Used by every process simproxy starts: Sanic's workers, the private redis-server, the PAC child.
A process started by a library, where simproxy cannot ask it to die with its parent (Sanic's
shared-state manager), is given a ``Reaper`` instead: a small process that ends it when simproxy's
main process dies without a chance to stop it (SIGKILL, the OOM killer).

Run as ``python -m store.lifeline PID:START...``: the reaper's own entry point.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

PR_SET_PDEATHSIG = 1
_NORMAL_STOP = b"stop"


def die_with_parent(sig: int = signal.SIGTERM, parent: int | None = None) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent dies.

    With ``parent`` (the pid the parent had), a parent that died before the request was made is
    noticed too: this process then exits at once. Does nothing where ``prctl`` does not exist.
    """
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, sig)
        if parent is not None and os.getppid() != parent:
            os.kill(os.getpid(), sig)


def proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (so the process state is ``[0]`` and
    field N of proc(5) is ``[N - 3]``); None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()  # the name, in parentheses, may hold spaces and ")"


def start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), to tell it from a later process given the same
    pid; None when there is no such process, or only its zombie."""
    fields = proc_stat(pid)
    return None if fields is None or fields[0] == "Z" else int(fields[19])  # starttime: field 22 of proc(5)


class Reaper:
    """Ends ``pids`` if this process dies before calling ``close``.

    The reaper reads a pipe only this process holds: the kernel closes it when this process dies,
    however it dies, and the reaper then terminates each pid that is still the process it was.
    ``close`` is the normal stop: it writes a word before closing, and the reaper leaves the pids
    alone. (Asking for the parent's pid instead is a race: a dying process's files are closed
    before its children are given to another parent.)
    """

    def __init__(self, pids: Sequence[int]) -> None:
        targets = [f"{pid}:{started}" for pid in pids if (started := start_time(pid)) is not None]
        self._process = subprocess.Popen(
            [sys.executable, "-m", "store.lifeline", *targets],
            stdin=subprocess.PIPE,
            start_new_session=True,  # a terminal's Ctrl+C is for simproxy, which stops the pids itself
        )

    def close(self) -> None:
        self._process.communicate(_NORMAL_STOP, timeout=10)  # writes, closes the pipe, waits


def _reap(argv: Sequence[str]) -> int:
    targets = [tuple(int(part) for part in arg.split(":")) for arg in argv]
    if sys.stdin.buffer.read() == _NORMAL_STOP:  # read until end of file: the parent closed the pipe, or died
        return 0  # a normal stop: the parent ends its helpers itself
    for pid, started in targets:
        if start_time(pid) == started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
    return 0


if __name__ == "__main__":
    sys.exit(_reap(sys.argv[1:]))
