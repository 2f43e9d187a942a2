"""Keeping the worker processes alive and tied to the main process.

* A worker that dies abnormally (killed, crashed: a non-zero exit other than SIGTERM's) is started
  again by the main process, so an instance keeps its worker count. Sanic's manager records such a
  death but does not act on it; ``Reviver`` watches from the main process and asks the manager to
  restart the worker through its monitor channel, as a worker's own restart request does.
* A worker exits when the main process dies, even by SIGKILL (``die_with_parent`` in each worker),
  so no orphan keeps the ports.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from typing import Any

log = logging.getLogger(__name__)

CHECK_INTERVAL = 0.5
RESTART_GRACE = 10.0
"""Seconds a restart asked for is given to happen before the same worker is asked for again."""
_CLEAN_EXITS = frozenset({0, -signal.SIGTERM, -signal.SIGINT})


class Reviver:
    """A thread of the main process that restarts dead server workers until ``stop``."""

    def __init__(self, manager: Any) -> None:
        self._manager = manager
        self._stopping = threading.Event()
        self._asked: dict[str, float] = {}
        """Worker name -> when its restart was asked for (monotonic)."""
        self._thread = threading.Thread(target=self._watch, name="simproxy-reviver", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _watch(self) -> None:
        while not self._stopping.wait(CHECK_INTERVAL):
            if getattr(self._manager, "_shutting_down", False):
                return
            now = time.monotonic()
            dead = [
                p.name
                for p in self._manager.transient_processes
                if _died_abnormally(p) and now - self._asked.get(p.name, -RESTART_GRACE) >= RESTART_GRACE
            ]
            if dead:
                log.warning("worker(s) %s died; starting them again", ", ".join(dead))
                self._asked.update((name, now) for name in dead)
                self._manager.monitor_publisher.send(",".join(dead) + ":")


def _died_abnormally(process: Any) -> bool:
    exitcode = process.exitcode
    return exitcode is not None and exitcode not in _CLEAN_EXITS  # an exit code: the process has ended
