"""Which processes serve a port: read from /proc (Linux), for the benchmarks and the integration tests."""

from __future__ import annotations

import os
from pathlib import Path

from simproxy.engine.execution.lifeline import proc_stat


def descendants(pid: int) -> list[int]:
    """Every process started by ``pid``, children first."""
    out: list[int] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        out.extend(int(c) for c in children)
        todo.extend(int(c) for c in children)
    return out


def listening_inodes(port: int) -> set[str]:
    """Socket inodes listening on ``port`` (IPv4 and IPv6)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def listeners(pid: int, port: int) -> list[int]:
    """``pid`` and its descendants that hold a listening socket on ``port`` (one per worker)."""
    inodes = listening_inodes(port)
    found = []
    for candidate in [pid, *descendants(pid)]:
        try:
            fds = [os.readlink(f"/proc/{candidate}/fd/{fd}") for fd in os.listdir(f"/proc/{candidate}/fd")]
        except OSError:
            continue
        if any(fd.startswith("socket:[") and fd[8:-1] in inodes for fd in fds):
            found.append(candidate)
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time the processes have used so far (time a hypervisor stole is not in it)."""
    total = 0
    for pid in pids:
        fields = proc_stat(pid)
        if fields is None:
            raise ProcessLookupError(pid)
        total += int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of proc(5)
    return total / os.sysconf("SC_CLK_TCK")
