"""Long-lived local programs (``-middleware-pool N``): a program started once and kept, fed one
compact JSON document per line on stdin, answering one line per document on stdout.

A pool holds at most ``size`` processes for one worker. A process is started when a call finds
none idle (so the first calls pay for the start); once every process holds a line, up to ``depth``
lines go to each without waiting for the replies before them (pipelined), and replies are matched
to lines in order. One that exits, outlives the timeout, or answers with a line the caller refuses
is killed and dropped: the line it was answering fails, the lines sent after it are sent again to
another process (they were never answered), and the next call starts a fresh one. Calls beyond the
processes wait in a bounded queue; past it, ``PoolBusy`` at once, never unbounded memory. Every
process dies with the worker (``die_with_parent``) and is killed on ``aclose``.

Each process has a reader, which hands replies out in order and holds the timeout: a line is timed
from when the process starts on it (its previous reply came), not from when it was written behind
others. A caller that goes away (its client left) leaves its line in place: the process still
answers it, and that reply is dropped, so the lines behind keep their own replies.
"""

from __future__ import annotations

import asyncio
import collections
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
PIPELINE_DEPTH = 4
"""Lines a process may hold at once: written without waiting for the replies before them, so a
process reading its input line by line finds several and answers them without a wake-up each."""
RESENDS = 3
"""Times a line is sent again after the process it waited on was lost before answering it."""
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


class _Resend(Exception):
    """The call's process was lost while the call waited behind another one: send it again."""


@dataclass(slots=True)
class _Sent:
    """A line written to a process, waiting for its reply line (replies come back in order)."""

    future: asyncio.Future[bytes]


class _Process:
    """One running program: the lines sent to it and not yet answered, in order, and a small tail of
    its standard error."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.stderr = bytearray()
        self.waiting: collections.deque[_Sent] = collections.deque()
        """Lines written and not answered yet, oldest first: the process is working on the first."""
        self.head_since = 0.0
        """When the process started on the first waiting line (loop time)."""
        self.timer: asyncio.Timeout | None = None
        """The reader's deadline while it waits for a reply: the first line's ``head_since`` plus the timeout."""
        self.dropped = False
        """Killed by the pool after a failure it has already blamed on a call."""

    async def drain_stderr(self) -> None:
        pipe = self.process.stderr
        assert pipe is not None
        while chunk := await pipe.read(65536):
            self.stderr += chunk
            del self.stderr[:-STDERR_KEPT]
            log.info("Information from middleware", extra={"fields": {"stderr": chunk.decode("utf-8", "replace")}})

    def alive(self) -> bool:
        return self.process.returncode is None and not self.dropped

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        await self.process.wait()


class ProcessPool:
    """Up to ``key.size`` long-lived processes running ``key.command`` for one worker, each holding up
    to ``depth`` lines at once (pipelined: written without waiting for the replies before them)."""

    def __init__(self, key: PoolKey, timeout: float, *, queue: int = 0, depth: int = PIPELINE_DEPTH) -> None:
        self.key = key
        self.timeout = timeout
        self.depth = depth
        self.limit = key.size * depth + (queue or QUEUE_PER_PROCESS * key.size)
        """Calls in flight (held by a process or waiting for one) beyond which calls are refused."""
        self._procs: list[_Process] = []
        self._starting = 0
        self._room: collections.deque[asyncio.Future[None]] = collections.deque()
        """Calls waiting for a process to have room, first come first served."""
        self._tasks = TaskSet()
        self._closed = False
        self._calls = 0
        self.replaced = 0
        """Processes killed or lost because of a failure (a started count, not a live one)."""
        self.refused = 0

    async def call(self, line: bytes, accept: Callable[[bytes], object]) -> bytes:
        """Send ``line`` (no newline inside) to a process and return its reply line, once ``accept``
        (which raises ``ValueError`` or ``TypeError`` for a reply that is not one) has taken it. Raises
        ``PoolBusy`` when the queue is full and ``PoolFailure`` when the process failed on this line
        (it is then replaced; lines sent after it to the same process are sent again elsewhere)."""
        if self._calls >= self.limit:
            self.refused += 1
            raise PoolBusy(f"{self._calls} calls already in flight for {self.key.size} middleware processes")
        self._calls += 1
        try:
            for _ in range(RESENDS):
                try:
                    return await self._once(line, accept)
                except _Resend:
                    continue
            raise PoolFailure(f"the line was sent {RESENDS} times and every process was lost before answering")
        finally:
            self._calls -= 1
            self._make_room()

    async def _once(self, line: bytes, accept: Callable[[bytes], object]) -> bytes:
        """One line to a process; its reply, or how it failed, comes through the process's reader
        (``_read``), which also holds the timeout: a line is timed from when the process starts on
        it, not from when it was written behind others."""
        proc = await self._take()
        loop = asyncio.get_running_loop()
        sent = _Sent(loop.create_future())
        process = proc.process
        assert process.stdin is not None
        proc.waiting.append(sent)
        if len(proc.waiting) == 1:  # the process starts on it now
            proc.head_since = loop.time()
            if proc.timer is not None:
                proc.timer.reschedule(proc.head_since + self.timeout)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, RuntimeError):
            process.stdin.write(line + b"\n")  # a process that is gone: its reader says so, to this line too
            await process.stdin.drain()
        reply = await sent.future  # a caller that goes leaves its line waiting: the reply is read and dropped
        try:
            accept(reply)
        except (ValueError, TypeError) as exc:
            await self._drop(proc)
            raise PoolFailure(f"the reply is not the pair's shape: {exc}", bytes(proc.stderr)) from exc
        return reply

    async def _take(self) -> _Process:
        """The live process with the fewest lines waiting; a new one when every process holds a line
        and the pool is not full; else wait until one has room."""
        while True:
            if self._closed:
                raise PoolFailure("the middleware was replaced or the worker is stopping")
            live = [p for p in self._procs if p.alive()]
            best = min(live, key=lambda p: len(p.waiting), default=None)
            if best is not None and not best.waiting:
                return best
            if len(live) + self._starting < self.key.size:
                return await self._start()
            if best is not None and len(best.waiting) < self.depth:
                return best
            room: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._room.append(room)
            try:
                await room
            finally:
                with contextlib.suppress(ValueError):
                    self._room.remove(room)

    def _make_room(self) -> None:
        while self._room:
            room = self._room.popleft()
            if not room.done():
                room.set_result(None)
                return

    async def _read(self, proc: _Process) -> None:
        """Hand each reply line to the oldest line waiting on ``proc``; when its output ends, the
        oldest line is the one it failed on (unless the pool already blamed one) and the others are
        sent again."""
        stdout = proc.process.stdout
        assert stdout is not None
        loop = asyncio.get_running_loop()
        failure: PoolFailure | None = None
        try:
            while True:
                async with asyncio.timeout(None) as timer:  # no deadline while nothing waits
                    proc.timer = timer
                    if proc.waiting:
                        timer.reschedule(proc.head_since + self.timeout)
                    reply = await stdout.readuntil(b"\n")
                proc.timer = None
                if proc.waiting:
                    sent = proc.waiting.popleft()
                    if not sent.future.done():
                        sent.future.set_result(reply[:-1])
                    proc.head_since = loop.time()  # it starts on the next line now
        except TimeoutError:  # the process outlived the timeout on its first line: that line fails
            proc.timer = None
            if not proc.dropped:
                await self._drop(proc)
                failure = PoolFailure(f"no answer within {self.timeout:g}s", bytes(proc.stderr))
        except asyncio.IncompleteReadError:
            if not proc.dropped and proc.waiting:
                status = await _exit_status(proc.process)
                failure = PoolFailure(f"the process exited (status {status}) before answering", bytes(proc.stderr))
        except asyncio.LimitOverrunError:
            failure = PoolFailure(f"the reply line is longer than {LINE_LIMIT} bytes", bytes(proc.stderr))
        if not proc.dropped:
            await self._drop(proc)
        waiting, proc.waiting = list(proc.waiting), collections.deque()
        for index, sent in enumerate(waiting):
            if not sent.future.done():
                sent.future.set_exception(failure if failure is not None and index == 0 else _Resend())
        self._make_room()

    async def _start(self) -> _Process:
        self._starting += 1
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
        finally:
            self._starting -= 1
        proc = _Process(process)
        self._procs.append(proc)
        self._tasks.spawn(proc.drain_stderr(), name=f"middleware-stderr:{process.pid}")
        self._tasks.spawn(self._read(proc), name=f"middleware-stdout:{process.pid}")
        return proc

    async def _drop(self, proc: _Process) -> None:
        if proc.dropped:
            return
        proc.dropped = True
        self.replaced += 1
        with contextlib.suppress(ValueError):
            self._procs.remove(proc)
        await proc.kill()

    async def aclose(self) -> None:
        """Kill every process and wait for them (and their readers) to end."""
        self._closed = True
        procs, self._procs = list(self._procs), []
        for proc in procs:
            proc.dropped = True
            await proc.kill()
        await self._tasks.aclose()


async def _exit_status(process: asyncio.subprocess.Process) -> int | str:
    """The exit status of a process that closed its pipes, once it has exited (briefly waited for)."""
    try:
        return await asyncio.wait_for(process.wait(), 1.0)
    except TimeoutError:
        return "unknown: still running"
