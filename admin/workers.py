"""Keeping the worker processes alive and tied to the main process.

* A worker that dies abnormally (killed, crashed: a non-zero exit other than SIGTERM's) is started
  again by the main process, so an instance keeps its worker count. Sanic's manager records such a
  death but does not act on it; ``Reviver`` watches from the main process and asks the manager to
  restart the worker through its monitor channel, as a worker's own restart request does.
* A worker exits when the main process dies, even by SIGKILL (``die_with_parent`` in each worker),
  so no orphan keeps the ports.
* A stop (SIGTERM, SIGINT) before every worker has said it is ready ends the start. Sanic's
  manager, while it waits for those first acknowledgements, puts the stop message its signal
  handler sends back on its own channel and reads it again, forever (the main process spun at full
  speed, its workers already stopped, until a second signal): ``_wait_for_ack`` replaces that wait
  on the manager and hands a stop on to the manager's monitor loop, which shuts down as usual.
  The signals themselves are carried out by the Reviver's thread (see ``Reviver.start``).
"""

from __future__ import annotations

import logging
import queue
import signal
import threading
import time
from functools import partial
from typing import Any

log = logging.getLogger(__name__)

CHECK_INTERVAL = 0.5
RESTART_GRACE = 10.0
"""Seconds a restart asked for is given to happen before the same worker is asked for again."""
_CLEAN_EXITS = frozenset({0, -signal.SIGTERM, -signal.SIGINT})


class StoppedBeforeReady(BaseException):
    """A stop signal arrived before Sanic's manager started the workers: unwinds the start (exit 0)."""


class Reviver:
    """A thread of the main process that restarts dead server workers, and carries out the stop
    signals, until ``stop``."""

    def __init__(self, manager: Any) -> None:
        self._manager = manager
        self._stopping = threading.Event()
        self._signals: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._asked: dict[str, float] = {}
        """Worker name -> when its restart was asked for (monotonic)."""
        self._thread = threading.Thread(target=self._watch, name="simproxy-reviver", daemon=True)

    def start(self, stop_requested: threading.Event) -> None:
        """Start watching; called in the main process after the manager exists, before its workers.

        ``stop_requested``: a stop signal came before the manager took the signals over. From
        here on a stop signal only queues its number: Sanic's own handler updates the workers'
        shared state from inside the signal handler, on the connection the main thread may be in
        the middle of using, which garbles that state (seen as exit 1 or a hang on an early stop).
        This thread, on a connection of its own, runs that handler's steps instead.
        """
        if stop_requested.is_set() or getattr(self._manager, "_shutting_down", False):
            raise StoppedBeforeReady  # no worker runs yet: the manager starts them after this
        self._manager.wait_for_ack = partial(_wait_for_ack, self._manager)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda signum, frame: self._signals.put(signum))  # reentrant-safe
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _watch(self) -> None:
        while not self._stopping.is_set():
            try:
                signum = self._signals.get(timeout=CHECK_INTERVAL)
            except queue.Empty:
                self._revive()
                continue
            try:  # Sanic's stop: terminate the workers, end the monitor loop; a second one kills
                self._manager.shutdown_signal(signum, None)
            except Exception:  # its kill raises ServerKilled once the workers are killed
                log.info("workers killed on a second stop signal")

    def _revive(self) -> None:
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


def _wait_for_ack(manager: Any) -> None:
    """Sanic's ``WorkerManager.wait_for_ack``, except that a stop message ends the wait.

    A stop (``None``, sent by the manager's stop handler) asks every worker started so far to
    terminate and is passed on to the monitor loop, which reads it and shuts down. A worker that failed
    at start ("__TERMINATE_EARLY__") or no acknowledgement within the manager's threshold stops the
    start as Sanic does.
    """
    misses = 0
    while not manager._all_workers_ack():
        if manager.monitor_subscriber.poll(0.1):
            message = manager.monitor_subscriber.recv()
            if message is None:  # a stop: it may have come while workers were still being started
                manager.shutdown()  # so every worker started by now is asked to terminate
                manager.monitor_publisher.send(None)  # for the monitor loop, which now ends
                return
            if message != "__TERMINATE_EARLY__":
                manager.monitor_publisher.send(message)
                continue
            misses = manager.THRESHOLD
        misses += 1
        if misses > manager.THRESHOLD:
            log.error("Not all workers acknowledged a successful start. Shutting down.")
            manager.kill()
