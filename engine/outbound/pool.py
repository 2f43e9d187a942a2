"""Long-lived local programs (``-middleware-pool N``): a program started once and kept, fed one
compact JSON document per line on stdin, answering one line per document on stdout.

A pool holds at most ``size`` processes for one worker. Each process holds one document at a time,
so a reply always belongs to the document it follows, and a process that fails takes only that
document with it. A process is started when a call finds none idle (so the first calls pay for the
start); one that exits, outlives the timeout, or answers with a line the caller refuses is killed
and dropped, and the next call starts a fresh one. Calls beyond the processes wait in a bounded
queue; past it, ``PoolBusy`` at once, never unbounded memory. Every process dies with the worker
(``die_with_parent``) and is killed on ``aclose``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass

from simproxy.engine.execution.lifeline import die_with_parent
from simproxy.engine.execution.tasks import TaskSet

log = logging.getLogger(__name__)

MAX_POOL = 256
"""The most long-lived processes a pool may keep (per worker)."""
LINE_LIMIT = 64 * 1024 * 1024
"""The longest reply line read from a process."""
QUEUE_PER_PROCESS = 64
"""Calls that may wait for a process, per process of the pool, before calls are refused."""
STDERR_KEPT = 4096
"""Bytes of a process's latest standard error kept to explain its failure."""


class PoolFailure(Exception):
    """A call got no usable reply: the process could not start, exited, hung or wrote garbage.
    ``reason`` says which; ``stderr`` is what the process last wrote to its standard error."""

    def __init__(self, reason: str, stderr: bytes = b"") -> None:
        super().__init__(reason)
        self.reason = reason
        self.stderr = stderr


class PoolBusy(Exception):
    """Every process is busy and the queue is full: the call was refused without waiting."""


@dataclass(frozen=True, slots=True)
class PoolKey:
    """What identifies a pool: the command it runs and how many processes it keeps."""

    command: tuple[str, ...]
    size: int


class _Process:
    """One running program, with its standard error drained into a small tail."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.stderr = bytearray()

    async def drain_stderr(self) -> None:
        pipe = self.process.stderr
        assert pipe is not None
        while chunk := await pipe.read(65536):
            self.stderr += chunk
            del self.stderr[:-STDERR_KEPT]
            log.info("Information from middleware", extra={"fields": {"stderr": chunk.decode("utf-8", "replace")}})

    def alive(self) -> bool:
        return self.process.returncode is None

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        await self.process.wait()


class ProcessPool:
    """Up to ``key.size`` long-lived processes running ``key.command`` for one worker."""

    def __init__(self, key: PoolKey, timeout: float, *, queue: int = 0) -> None:
        self.key = key
        self.timeout = timeout
        self.limit = key.size + (queue or QUEUE_PER_PROCESS * key.size)
        """Calls in flight (held by a process or waiting for one) beyond which calls are refused."""
        self._slots = asyncio.Semaphore(key.size)
        self._idle: list[_Process] = []
        self._all: set[_Process] = set()
        self._tasks = TaskSet()
        self._calls = 0
        self.replaced = 0
        """Processes killed or lost because of a failure (a started count, not a live one)."""
        self.refused = 0

    async def call(self, line: bytes, accept: Callable[[bytes], object]) -> bytes:
        """Send ``line`` (no newline inside) to a process and return its reply line, once ``accept``
        (which raises ``ValueError`` or ``TypeError`` for a reply that is not one) has taken it. Raises ``PoolBusy``
        when the queue is full and ``PoolFailure`` when the process failed (it is then replaced)."""
        if self._calls >= self.limit:
            self.refused += 1
            raise PoolBusy(f"{self._calls} calls already in flight for {self.key.size} middleware processes")
        self._calls += 1
        try:
            async with self._slots:
                proc = await self._take()
                try:
                    reply = await self._exchange(proc, line)
                    accept(reply)
                except BaseException as exc:
                    await self._drop(proc)
                    if isinstance(exc, (ValueError, TypeError)):
                        raise PoolFailure(f"the reply is not the pair's shape: {exc}", bytes(proc.stderr)) from exc
                    raise
                self._idle.append(proc)
                return reply
        finally:
            self._calls -= 1

    async def _take(self) -> _Process:
        """An idle process still running (one that died while idle is dropped, not used), else a new one."""
        while self._idle:
            proc = self._idle.pop()
            if proc.alive():
                return proc
            await self._drop(proc)
        return await self._start()

    async def _exchange(self, proc: _Process, line: bytes) -> bytes:
        process = proc.process
        assert process.stdin is not None and process.stdout is not None
        if not proc.alive():
            raise PoolFailure(f"the process had exited (status {process.returncode})", bytes(proc.stderr))
        try:
            async with asyncio.timeout(self.timeout):  # no task per call, unlike wait_for on 3.11
                process.stdin.write(line + b"\n")
                await process.stdin.drain()
                reply = await process.stdout.readuntil(b"\n")
        except TimeoutError as exc:
            raise PoolFailure(f"no answer within {self.timeout:g}s", bytes(proc.stderr)) from exc
        except asyncio.IncompleteReadError as exc:
            status = await _exit_status(process)
            raise PoolFailure(f"the process exited (status {status}) before answering", bytes(proc.stderr)) from exc
        except asyncio.LimitOverrunError as exc:
            raise PoolFailure(f"the reply line is longer than {LINE_LIMIT} bytes", bytes(proc.stderr)) from exc
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
            status = await _exit_status(process)
            raise PoolFailure(f"the process exited (status {status})", bytes(proc.stderr)) from exc
        return reply[:-1]

    async def _start(self) -> _Process:
        try:
            process = await asyncio.create_subprocess_exec(
                *self.key.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=LINE_LIMIT,
                preexec_fn=functools.partial(die_with_parent, signal.SIGKILL, os.getpid()),
            )
        except OSError as exc:
            raise PoolFailure(f"cannot start: {exc.strerror or exc}") from exc
        proc = _Process(process)
        self._all.add(proc)
        self._tasks.spawn(proc.drain_stderr(), name=f"middleware-stderr:{process.pid}")
        return proc

    async def _drop(self, proc: _Process) -> None:
        self.replaced += 1
        self._all.discard(proc)
        await proc.kill()

    async def aclose(self) -> None:
        """Kill every process and wait for them (and their standard error readers) to end."""
        procs, self._all, self._idle = list(self._all), set(), []
        for proc in procs:
            await proc.kill()
        await self._tasks.aclose()


async def _exit_status(process: asyncio.subprocess.Process) -> int | str:
    """The exit status of a process that closed its pipes, once it has exited (briefly waited for)."""
    try:
        return await asyncio.wait_for(process.wait(), 1.0)
    except TimeoutError:
        return "unknown: still running"
