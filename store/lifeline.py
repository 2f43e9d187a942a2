"""Tie a child process's life to its parent's (Linux): no orphan keeps ports, files or CPU.

Used by every process simproxy starts: Sanic's workers, the private redis-server, the PAC child.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal

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
