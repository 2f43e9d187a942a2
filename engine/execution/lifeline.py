"""Tie a child process's life to its parent's (Linux): no orphan keeps ports, files or CPU.

Used by every process simproxy starts: its forked workers, the private redis-server, the PAC child,
the instances of ``simproxy fleet``. Also reads /proc/PID/stat for the tests and benchmarks.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from pathlib import Path

PR_SET_PDEATHSIG = 1


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
