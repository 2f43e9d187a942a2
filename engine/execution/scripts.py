"""Running local programs for middleware and post-serve actions: their script texts written to files a
worker can run (once per text), and one run with stdin given, stdout and stderr collected, bounded in time."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finished:
    returncode: int
    stdout: bytes
    stderr: bytes


async def run_program(command: Sequence[str], stdin: bytes, seconds: float) -> Finished:
    """Run ``command`` with ``stdin`` and wait for it to exit. Raises ``OSError`` when it cannot start
    and ``TimeoutError`` when it runs longer than ``seconds``; then, as when the caller is cancelled, the program
    is killed and reaped, never left running."""
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(_communicate(process, stdin), seconds)
    except (TimeoutError, asyncio.CancelledError):
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise
    return Finished(process.returncode if process.returncode is not None else -1, stdout, stderr)


async def _communicate(process: asyncio.subprocess.Process, stdin: bytes) -> tuple[bytes, bytes]:
    """Feed ``stdin`` while reading stdout and stderr, until the program exits. A program may exit
    without reading its input (``printf`` a fixed answer): the broken pipe is not an error, as in
    Hoverfly (``Process.communicate`` lets uvloop's "handler is closed" through at random)."""
    assert process.stdout is not None and process.stderr is not None
    stdout, stderr, _ = await asyncio.gather(process.stdout.read(), process.stderr.read(), _feed(process, stdin))
    await process.wait()
    return stdout, stderr


async def _feed(process: asyncio.subprocess.Process, data: bytes) -> None:
    pipe = process.stdin
    assert pipe is not None
    try:
        if data:
            pipe.write(data)
            await pipe.drain()
    except (BrokenPipeError, ConnectionResetError, RuntimeError):
        pass  # the program closed its input (or exited) before reading all of it
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            pipe.close()


class ScriptFiles:
    """One private folder per worker, removed on ``close``; a file per distinct script text."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._paths: dict[str, str] = {}
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def path(self, script: str) -> str:
        digest = hashlib.sha256(script.encode()).hexdigest()
        path = self._paths.get(digest)
        if path is None:
            if self._folder is None:
                self._folder = tempfile.TemporaryDirectory(prefix=self._prefix)
            path = os.path.join(self._folder.name, f"script_{digest[:16]}")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(script)
            self._paths[digest] = path
        return path

    def close(self) -> None:
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None
        self._paths.clear()
