"""Flow control on the proxy port: a client that sends without reading holds a bounded part of a worker.

Each test measures the resident memory (VmRSS) of the process serving the proxy port while a raw
socket client misbehaves for ``WATCH`` seconds, and stops early once the bound is passed. Meanwhile a
request on another connection to the same worker must still be answered; afterwards the client that
stopped reading gets what it is owed once it reads.
"""

from __future__ import annotations

import contextlib
import http.client
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, pair, simulation

pytestmark = pytest.mark.slow

WATCH = 5.0
"""Seconds a client misbehaves while the worker's memory is watched."""
HEADROOM_MB = 100.0
"""How far over its idle resident memory the worker may grow meanwhile."""
STUB_SIZE = 100_000
PAD = 4000
"""Padding header of each pipelined request: a few hundred of them fill the kernel's buffers."""
MAX_REQUESTS = 50_000
"""The most requests the pipelining client sends, whatever simproxy does with them."""
FLOOD_LIMIT = 2 * 1024**3
"""The most bytes a tunnel's flooding side sends, whatever the other side does."""
PROBE_AFTER = 1.0
"""Seconds into the watch when another connection asks the same worker for an answer."""
PROBE_TIMEOUT = 5.0
SMALL_BUFFER = 32 * 1024
"""SO_SNDBUF/SO_RCVBUF of the misbehaving clients: the kernel holds little of what they owe."""
OUTSIDE = ("-destination", "http://svc.test")
"""A destination that takes the probes' plain HTTP requests and leaves out every CONNECT of these
tests (a destination naming a scheme decides which CONNECTs are intercepted): each is a blind tunnel."""


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` in MB (VmRSS in /proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def _get(port: int, path: str) -> tuple[int, bytes]:
    """One proxied GET on a new connection, waiting at most ``PROBE_TIMEOUT`` seconds for it."""
    with contextlib.closing(http.client.HTTPConnection("127.0.0.1", port, timeout=PROBE_TIMEOUT)) as conn:
        conn.request("GET", f"http://svc.test{path}", headers={"Host": "svc.test"})
        resp = conn.getresponse()
        return resp.status, resp.read()


@dataclass
class Watch:
    """The worker's resident memory while a client misbehaves, and a probe from another connection."""

    sp: Simproxy
    pid: int = 0
    idle: float = 0.0
    peak: float = 0.0
    probe: str = "not run"
    started: float = 0.0
    elapsed: float = 0.0

    def __post_init__(self) -> None:
        [self.pid] = self.sp.proxy_listeners()  # one worker: the main process serves the proxy port
        for _ in range(3):  # warm: the first answers load what the worker imports lazily
            assert _get(self.sp.proxy_port, "/small") == (200, b"small")
        self.idle = self.peak = rss_mb(self.pid)
        self.started = time.monotonic()

    @property
    def bound(self) -> float:
        return self.idle + HEADROOM_MB

    def running(self) -> bool:
        """Sample the memory, probe once after ``PROBE_AFTER``; False once the watch is over or the
        bound is passed (there is no point in letting a worker grow further)."""
        self.peak = max(self.peak, rss_mb(self.pid))
        self.elapsed = elapsed = time.monotonic() - self.started
        if self.probe == "not run" and elapsed > PROBE_AFTER:
            try:
                status, body = _get(self.sp.proxy_port, "/small")
                self.probe = "answered" if (status, body) == (200, b"small") else f"got {status} {body[:80]!r}"
            except OSError as exc:
                self.probe = f"failed: {exc!r}"
        return elapsed < WATCH and self.peak <= self.bound

    def check(self) -> None:
        figures = f"idle {self.idle:.0f} MB, peak {self.peak:.0f} MB in {self.elapsed:.2f} s, bound {self.bound:.0f} MB"
        print(f"worker RSS: {figures}")
        assert self.peak <= self.bound, f"the worker grew past its bound: {figures}"
        assert self.probe == "answered", f"another connection to the worker: {self.probe}"


def _client(port: int, small: bool = True) -> socket.socket:
    """A connection to simproxy, with small kernel buffers unless told otherwise (a sender as fast as
    it can be needs the kernel's own)."""
    sock = socket.socket()
    if small:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SMALL_BUFFER)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL_BUFFER)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    return sock


def _writable(sock: socket.socket) -> bool:
    """Whether the kernel takes more of what ``sock`` sends (waiting a moment for it)."""
    return bool(select.select([], [sock], [], 0.02)[1])


def _stubs() -> dict[str, Any]:
    big = {
        "request": {"path": [{"matcher": "exact", "value": "/big"}]},
        "response": {
            "status": 200,
            "body": "b" * STUB_SIZE,
            "headers": {"X-N": ["{{ Request.QueryParam.n }}"]},
            "templated": True,
        },
    }
    return simulation(big, pair("/small", "small"))


def _request(n: int, close: bool = False, target: bytes = b"http://svc.test/big") -> bytes:
    last = b"Connection: close\r\n" if close else b""
    return b"GET %s?n=%d HTTP/1.1\r\nHost: svc.test\r\nX-Pad: %s\r\n%s\r\n" % (target, n, b"p" * PAD, last)


def _send(sock: socket.socket, data: bytes) -> int:
    """Bytes of ``data`` the kernel (or the TLS layer) took at once, 0 when none."""
    try:
        return sock.send(data)
    except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
        return 0


def _answers(data: bytearray) -> Iterator[tuple[int, dict[str, str], int]]:
    """Status, headers and end of each whole response in ``data`` (Content-Length framed)."""
    pos = 0
    while (end := data.find(b"\r\n\r\n", pos)) != -1:
        lines = bytes(data[pos:end]).decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:])
        pos = end + 4 + int(headers["content-length"])
        if pos > len(data):
            return
        yield int(lines[0].split()[1]), headers, pos


def _read_all(sock: socket.socket, rest: bytes) -> list[tuple[int, str]]:
    """Send ``rest`` while reading everything until simproxy closes: (status, X-N) of each answer."""
    sock.setblocking(False)
    out: list[tuple[int, str]] = []
    buffer = bytearray()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        rest = rest[_send(sock, rest) :] if rest else rest
        try:
            chunk = sock.recv(1 << 20)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            select.select([sock], [], [], 0.01)
            continue
        except (ssl.SSLEOFError, ConnectionResetError):
            chunk = b""
        if not chunk:
            return out
        buffer += chunk
        consumed = 0
        for status, headers, end in _answers(buffer):
            out.append((status, headers.get("x-n", "")))
            consumed = end
        del buffer[:consumed]
    raise AssertionError(f"simproxy did not close the connection after {len(out)} answers")


def _pipeline_without_reading(watch: Watch, sock: socket.socket, target: bytes = b"http://svc.test/big") -> None:
    """Pipeline requests on ``sock`` without reading while ``watch`` runs, then read: every answer
    owed comes, in order."""
    sock.setblocking(False)
    sent, pending = 0, _request(0, target=target)
    while watch.running():
        if sent < MAX_REQUESTS and _writable(sock):  # the kernel takes what fits, then nothing
            pending = pending[_send(sock, pending) :]
            if not pending:
                sent += 1
                pending = _request(sent, target=target)
    watch.check()
    print(f"requests accepted while nothing was read: {sent}")
    # the rest of a request cut in half, then one that closes: every answer comes, in order, once read
    cut = pending != _request(sent, target=target)
    last = sent + cut
    answers = _read_all(sock, (pending if cut else b"") + _request(last, close=True, target=target))
    assert answers == [(200, str(n)) for n in range(last + 1)]


def test_a_client_pipelining_without_reading_holds_a_bounded_part_of_the_worker(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory()
    assert sp.admin("PUT", "/api/v2/simulation", _stubs())[0] == 200
    watch = Watch(sp)
    with _client(sp.proxy_port) as sock:
        _pipeline_without_reading(watch, sock)


def _intercepted(sp: Simproxy) -> ssl.SSLSocket:
    """A CONNECT that simproxy intercepts, with the TLS handshake done."""
    raw = _client(sp.proxy_port)
    raw.sendall(b"CONNECT svc.test:443 HTTP/1.1\r\nHost: svc.test:443\r\n\r\n")
    assert _head(raw) == b"HTTP/1.0 200 OK\r\n\r\n"
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # the certificate is not what is tested
    return context.wrap_socket(raw, server_hostname="svc.test")


def test_the_same_inside_an_intercepted_https_tunnel(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory()
    assert sp.admin("PUT", "/api/v2/simulation", _stubs())[0] == 200
    _intercepted(sp).close()  # warm: the host's certificate is made and TLS loaded before the idle figure
    watch = Watch(sp)
    with _intercepted(sp) as sock:
        _pipeline_without_reading(watch, sock, target=b"/big")


def _head(sock: socket.socket) -> bytes:
    """The answer to a CONNECT, read byte by byte: what follows it is the tunnel's."""
    head = b""
    while b"\r\n\r\n" not in head:
        byte = sock.recv(1)
        assert byte and len(head) < 4096, f"no whole answer to the CONNECT: {head[:200]!r}"
        head += byte
    return head


@dataclass
class Peer:
    """A real host on loopback for blind tunnels: it floods whoever connects, or never reads."""

    flood: bool
    stop: threading.Event = field(default_factory=threading.Event)
    moved: int = 0
    """Bytes it sent (flood) or that reached it (never: it does not read)."""
    listener: socket.socket = field(init=False)
    threads: list[threading.Thread] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL_BUFFER)  # a deaf peer holds little
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.listener.settimeout(0.2)
        self.threads.append(threading.Thread(target=self._accept, daemon=True))
        self.threads[0].start()

    @property
    def port(self) -> int:
        return int(self.listener.getsockname()[1])

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        """Flood ``conn`` (bounded by ``FLOOD_LIMIT`` and the watch), or hold it without reading."""
        deadline = time.monotonic() + WATCH + 3
        chunk = b"f" * 65536
        conn.settimeout(0.2)
        with conn:
            while not self.stop.is_set() and time.monotonic() < deadline and self.moved < FLOOD_LIMIT:
                if not self.flood:
                    time.sleep(0.05)
                    continue
                try:
                    self.moved += conn.send(chunk)
                except TimeoutError:
                    continue
                except OSError:
                    return

    def close(self) -> None:
        self.stop.set()
        self.listener.close()
        for thread in self.threads:
            thread.join(timeout=5)


@pytest.fixture
def peer_factory() -> Iterator[Callable[[bool], Peer]]:
    peers: list[Peer] = []

    def start(flood: bool) -> Peer:
        peers.append(Peer(flood))
        return peers[-1]

    yield start
    for peer in peers:
        peer.close()


def _tunnel(sp: Simproxy, peer: Peer, small: bool = True) -> socket.socket:
    """A blind tunnel to ``peer`` through simproxy (the destination leaves its host out)."""
    sock = _client(sp.proxy_port, small)
    try:
        sock.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (peer.port, peer.port))
        assert _head(sock) == b"HTTP/1.0 200 Connection established\r\n\r\n"
    except BaseException:
        sock.close()  # else its ResourceWarning fails whichever test the collector runs in
        raise
    return sock


def test_a_tunnel_client_that_never_reads_holds_a_bounded_part_of_the_worker(
    simproxy_factory: Any, peer_factory: Callable[[bool], Peer]
) -> None:
    sp: Simproxy = simproxy_factory(*OUTSIDE)
    assert sp.admin("PUT", "/api/v2/simulation", _stubs())[0] == 200
    peer = peer_factory(True)
    watch = Watch(sp)
    with _tunnel(sp, peer) as sock:
        while watch.running():
            time.sleep(0.02)
        watch.check()
        print(f"bytes the flooding host got rid of while nothing was read: {peer.moved}")
        received = 0
        while received < 1 << 20:  # the tunnel still carries the host's bytes once the client reads
            chunk = sock.recv(65536)
            assert chunk == b"f" * len(chunk) and chunk
            received += len(chunk)


def test_a_tunnel_host_that_never_reads_holds_a_bounded_part_of_the_worker(
    simproxy_factory: Any, peer_factory: Callable[[bool], Peer]
) -> None:
    sp: Simproxy = simproxy_factory(*OUTSIDE)
    assert sp.admin("PUT", "/api/v2/simulation", _stubs())[0] == 200
    peer = peer_factory(False)
    watch = Watch(sp)
    chunk = b"c" * 65536
    with _tunnel(sp, peer, small=False) as sock:
        sock.setblocking(False)
        sent = 0
        while watch.running():
            if sent < FLOOD_LIMIT and _writable(sock):
                sent += sock.send(chunk)
        watch.check()
    print(f"bytes the client got rid of into a tunnel to a host that never reads: {sent}")
    assert sent < 100 * 1024**2  # the client is held back: only what the buffers on the way take


MALFORMED = ("::::", "::1", "host:", "host:0", "host:65536", "host:12a", "[::1", "[nonsense]:443", ":443", "h@st:443")


def test_a_connect_to_a_malformed_authority_is_400(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory()
    for authority in MALFORMED:
        with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=10) as sock:
            sock.sendall(b"CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n" % authority.encode())
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n"), (authority, answer)
        assert b"Content-Type: text/plain\r\n" in answer and b"Connection: close\r\n" in answer
        assert answer.endswith(b"Bad Request: CONNECT needs host:port\n"), (authority, answer)


def test_a_client_that_stops_reading_its_answers_is_disconnected_after_the_idle_timeout(
    simproxy_factory: Any,
) -> None:
    """Its memory is bounded, its connection is not kept for ever: with nothing read for
    ``-idle-timeout``, the worker drops it."""
    sp: Simproxy = simproxy_factory("-idle-timeout", "1s")
    assert sp.admin("PUT", "/api/v2/simulation", _stubs())[0] == 200
    with _client(sp.proxy_port, small=False) as sock:
        sock.setblocking(False)
        sent = 0
        while sent < 2000 and _send(sock, _request(sent)):  # far more answers than the buffers hold
            sent += 1
        time.sleep(4)  # not reading: the idle timeout passes, a sweep (every second) sees it
        sock.settimeout(5)
        received = 0
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(1 << 20):
                received += len(chunk)
        assert received < sent * STUB_SIZE  # dropped before it was answered in full
