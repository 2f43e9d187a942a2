"""Fault injection (the simulation's ``fault`` and ``globalActions.faults``), seen by real clients on
real sockets: resets, closes, broken framing, garbage, dribbled and throttled answers, in proxy
mode, inside intercepted HTTPS and in webserver mode; what a fault leaves of the worker's time and
of the answers before it (what is refused at import, exported, and loaded by a fleet's workers:
tests/integration/test_fault_imports.py)."""

from __future__ import annotations

import asyncio
import http.client
import signal
import socket
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.integration.conftest import Simproxy, emptied, simulation
from tests.integration.upstream import Upstream

PLAIN = "plain answer"


def faulty(path: str, fault: dict[str, Any] | None, body: str = "ok", status: int = 200) -> dict[str, Any]:
    response: dict[str, Any] = {"status": status, "body": body}
    if fault is not None:
        response["fault"] = fault
    return {"request": {"path": [{"matcher": "exact", "value": path}]}, "response": response}


def with_faults(doc: dict[str, Any], *rules: dict[str, Any]) -> dict[str, Any]:
    doc["data"]["globalActions"] = {"faults": list(rules)}
    return doc


@pytest.fixture
def sp(simproxy: Simproxy) -> Simproxy:
    return emptied(simproxy)


def put(sp: Simproxy, doc: dict[str, Any]) -> None:
    status, _, body = sp.admin("PUT", "/api/v2/simulation", doc)
    assert status == 200, body


def proxies(sp: Simproxy) -> dict[str, str]:
    proxy = f"http://127.0.0.1:{sp.proxy_port}"
    return {"http": proxy, "https": proxy}


def get(sp: Simproxy, url: str, **kwargs: Any) -> requests.Response:
    return requests.get(url, proxies=proxies(sp), timeout=30, **kwargs)


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def ask(sock: socket.socket, url: str) -> None:
    sock.sendall(f"GET {url} HTTP/1.1\r\nHost: faults.test\r\n\r\n".encode())


def until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (a reset raises ``ConnectionResetError``)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def cause_chain(exc: BaseException) -> str:
    """What a client error says, down to its causes (requests wraps urllib3 wraps http.client)."""
    parts = []
    seen: BaseException | None = exc
    while seen is not None:
        parts.append(repr(seen))
        seen = seen.__cause__ or seen.__context__
    return " <- ".join(parts)


# -- each fault, through real clients ---------------------------------------------------------------


def test_connection_reset_is_an_rst_and_the_request_is_still_journaled(sp: Simproxy) -> None:
    put(sp, simulation(faulty("/reset", {"type": "connectionReset"})))
    with pytest.raises(requests.exceptions.ConnectionError) as caught:
        get(sp, "http://faults.test/reset")
    assert "ConnectionResetError" in cause_chain(caught.value)
    with connect(sp.proxy_port) as sock:
        ask(sock, "http://faults.test/reset")
        with pytest.raises(ConnectionResetError):
            until_closed(sock)
    journal = sp.admin_json("GET", "/api/v2/journal")[1]["journal"]
    assert [(e["request"]["path"], e["response"]["status"], e["response"]["body"]) for e in journal] == [
        ("/reset", 200, "ok"),
        ("/reset", 200, "ok"),
    ]  # the answer the simulation chose, as for any request


def test_empty_response_closes_without_a_byte(sp: Simproxy) -> None:
    put(sp, simulation(faulty("/empty", {"type": "emptyResponse"})))
    with pytest.raises(requests.exceptions.ConnectionError) as caught:
        get(sp, "http://faults.test/empty")
    assert "RemoteDisconnected" in cause_chain(caught.value)
    with connect(sp.proxy_port) as sock:
        ask(sock, "http://faults.test/empty")
        assert until_closed(sock) == b""


def test_malformed_chunk_breaks_the_chunked_body(sp: Simproxy) -> None:
    pair = faulty("/malformed", {"type": "malformedChunk"}, body="a body", status=201)
    pair["response"]["headers"] = {"Content-Length": ["6"], "X-Kept": ["yes"]}
    put(sp, simulation(pair))
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        get(sp, "http://faults.test/malformed")
    with connect(sp.proxy_port) as sock:
        ask(sock, "http://faults.test/malformed")
        head, _, rest = until_closed(sock).partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"HTTP/1.1 201 Created"
    assert b"Transfer-Encoding: chunked" in lines and b"X-Kept: yes" in lines
    assert not any(line.lower().startswith(b"content-length") for line in lines)
    size = rest.split(b"\r\n", 1)[0]
    with pytest.raises(ValueError):
        int(size, 16)  # no chunk size where the first chunk should start


def test_random_data_then_close_is_no_http_answer(sp: Simproxy) -> None:
    put(sp, simulation(faulty("/random", {"type": "randomDataThenClose"})))
    with pytest.raises(requests.exceptions.ConnectionError) as caught:
        get(sp, "http://faults.test/random")
    assert "BadStatusLine" in cause_chain(caught.value)
    sizes = set()
    for _ in range(5):
        with connect(sp.proxy_port) as sock:
            ask(sock, "http://faults.test/random")
            data = until_closed(sock)
        assert 256 <= len(data) <= 2048 and not data.startswith(b"H")
        sizes.add(data)
    assert len(sizes) == 5  # random each time


def test_dribble_sends_the_body_in_pieces_over_the_duration(sp: Simproxy) -> None:
    """The body's last piece comes no sooner than the duration after the head. Only that bound is
    exact: on a loaded machine pieces may come later, and several at once."""
    body = "0123456789" * 5
    put(
        sp,
        simulation(
            faulty("/dribble", {"type": "dribble", "chunks": 5, "durationMs": 1000}, body),
            faulty("/plain", None, PLAIN),
        ),
    )
    started = time.monotonic()
    response = get(sp, "http://faults.test/dribble")
    assert (response.status_code, response.text) == (200, body)
    assert 0.9 <= time.monotonic() - started < 10

    with connect(sp.proxy_port) as sock:
        started = time.monotonic()
        ask(sock, "http://faults.test/dribble")
        data, arrivals = b"", []
        while not data.endswith(body.encode()):
            data += sock.recv(65536)
            arrivals.append((time.monotonic() - started, len(data)))
        assert data.startswith(b"HTTP/1.1 200 OK\r\n") and b"Content-Length: 50\r\n" in data
        assert len(arrivals) >= 3  # the head, then the pieces as they come
        assert arrivals[0][1] < len(data) and arrivals[-1][0] >= 0.9  # the head came before the body ended
        ask(sock, "http://faults.test/plain")  # the connection stays usable
        again = b""
        while not again.endswith(PLAIN.encode()):
            again += sock.recv(65536)
        assert again.startswith(b"HTTP/1.1 200 OK\r\n")


def test_bandwidth_paces_the_whole_answer(sp: Simproxy) -> None:
    """100 KB at 50 KB/s: 2 s. The limit holds within 20% (the rate seen is at most 1.2 times the
    limit); the upper bound (2x the time) is only the tolerance of a loaded machine, where the
    pacer, rather than burst to catch up after a stall, pushes its schedule back."""
    body = "x" * 100_000
    put(sp, simulation(faulty("/slow", {"type": "bandwidth", "bytesPerSecond": 50_000}, body)))
    started = time.monotonic()
    response = get(sp, "http://faults.test/slow")
    took = time.monotonic() - started
    assert (response.status_code, len(response.content)) == (200, 100_000)
    assert 100_000 / took <= 1.2 * 50_000 and took <= 4.0


def test_a_fraction_of_zero_never_faults(sp: Simproxy) -> None:
    put(sp, simulation(faulty("/never", {"type": "connectionReset", "fraction": 0})))
    for _ in range(20):
        assert sp.proxy("http://faults.test/never")[::2] == (200, b"ok")


def test_a_reset_comes_after_the_pipelined_answers_before_it(sp: Simproxy) -> None:
    """A big answer the client reads slowly, then a reset pipelined after it: the whole answer
    arrives, then the reset (none of it is dropped from the server's buffers by the RST)."""
    size = 8 * 1024 * 1024
    put(sp, simulation(faulty("/big", None, "b" * size), faulty("/reset", {"type": "connectionReset"})))
    with connect(sp.proxy_port) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        sock.sendall(
            b"GET http://faults.test/big HTTP/1.1\r\nHost: faults.test\r\n\r\n"
            b"GET http://faults.test/reset HTTP/1.1\r\nHost: faults.test\r\n\r\n"
        )
        data = b""
        with pytest.raises(ConnectionResetError):
            for _ in range(40):  # slowly at first: the server's buffers are full when the reset's turn comes
                data += sock.recv(16 * 1024)
                time.sleep(0.01)
            while chunk := sock.recv(1024 * 1024):
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and f"Content-Length: {size}".encode() in head
    assert len(body) == size and body == b"b" * size  # whole, and nothing after it


def test_a_dribble_without_a_body_delays_its_head(sp: Simproxy) -> None:
    """A dribble's answer ends at least ``durationMs`` after it began, also when it has no body to
    dribble (an empty one, or a HEAD): its head, which completes it, waits instead."""
    dribble = {"type": "dribble", "chunks": 5, "durationMs": 600}
    put(sp, simulation(faulty("/nothing", dribble, ""), faulty("/something", dribble, "a body of a few bytes")))
    for method, url in (("GET", "/nothing"), ("HEAD", "/something")):
        started = time.monotonic()
        response = requests.request(method, f"http://faults.test{url}", proxies=proxies(sp), timeout=30)
        took = time.monotonic() - started
        assert (response.status_code, response.content) == (200, b"")
        assert took >= 0.55, (method, url)


def test_other_connections_are_answered_during_a_dribble_of_many_pieces(sp: Simproxy) -> None:
    """Dribbles of 10,000 pieces each, all due at once (durationMs 0), on 1 MB bodies: the worker
    answers another connection meanwhile (the pieces due go out in one write, and the loop turns)."""
    body = "d" * 1_000_000
    put(
        sp,
        simulation(
            faulty("/many", {"type": "dribble", "chunks": 10_000, "durationMs": 0}, body),
            faulty("/plain", None, PLAIN),
        ),
    )
    request = b"GET http://faults.test/many HTTP/1.1\r\nHost: faults.test\r\nConnection: close\r\n\r\n"

    def dribbled(results: list[int]) -> None:
        with connect(sp.proxy_port) as sock:
            sock.sendall(request)
            results.append(len(until_closed(sock)))

    results: list[int] = []
    clients = [threading.Thread(target=dribbled, args=(results,)) for _ in range(4)]
    for client in clients:
        client.start()
    started = time.monotonic()
    assert sp.proxy("http://faults.test/plain")[::2] == (200, PLAIN.encode())
    took = time.monotonic() - started
    for client in clients:
        client.join(30)
    assert len(results) == 4 and all(size > len(body) for size in results)
    assert took < 1


def test_a_worker_stops_at_once_with_dribbles_whose_clients_left(simproxy_factory: Any) -> None:
    """Clients that left in the middle of minute-long dribbles leave nothing behind that a stop
    waits for."""
    alone: Simproxy = simproxy_factory()
    put(alone, simulation(faulty("/slow", {"type": "dribble", "chunks": 10, "durationMs": 60_000}, "x" * 100)))
    for _ in range(5):
        with connect(alone.proxy_port) as sock:
            ask(sock, "http://faults.test/slow")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n")  # the head came; then the client leaves
    assert alone.process is not None
    started = time.monotonic()
    alone.process.send_signal(signal.SIGTERM)
    assert alone.process.wait(timeout=30) == 0
    assert time.monotonic() - started < 5


# -- inside intercepted HTTPS and in webserver mode ------------------------------------------------------


def ca_file(sp: Simproxy, folder: Path) -> Path:
    path = folder / "ca.pem"
    path.write_bytes(sp.admin("GET", "/api/v2/hoverfly/ca-cert")[2])
    return path


def test_faults_inside_an_intercepted_https_tunnel(sp: Simproxy, tmp_path: Path) -> None:
    body = "secret" * 10
    put(
        sp,
        simulation(
            faulty("/dribble", {"type": "dribble", "chunks": 5, "durationMs": 1000}, body),
            faulty("/reset", {"type": "connectionReset"}),
        ),
    )
    ca = ca_file(sp, tmp_path)
    started = time.monotonic()
    response = get(sp, "https://secure.faults.test/dribble", verify=str(ca))
    assert (response.status_code, response.text) == (200, body)
    assert time.monotonic() - started >= 0.9

    # the reset under TLS: the TCP connection carrying the tunnel gets the RST (Python's ssl module
    # would report it as a plain end of stream, so the TLS records are read off the raw socket)
    with connect(sp.proxy_port) as raw:
        raw.sendall(b"CONNECT secure.faults.test:443 HTTP/1.1\r\nHost: secure.faults.test:443\r\n\r\n")
        assert raw.recv(1024).startswith(b"HTTP/1.0 200")
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = ssl.create_default_context(cafile=str(ca)).wrap_bio(
            incoming, outgoing, server_hostname="secure.faults.test"
        )
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                raw.sendall(outgoing.read())
                incoming.write(raw.recv(65536))
        raw.sendall(outgoing.read())
        tls.write(b"GET /reset HTTP/1.1\r\nHost: secure.faults.test\r\n\r\n")
        raw.sendall(outgoing.read())
        with pytest.raises(ConnectionResetError):
            until_closed(raw)


def test_faults_in_webserver_mode(simproxy_factory: Any) -> None:
    web: Simproxy = simproxy_factory("-webserver")
    put(web, simulation(faulty("/reset", {"type": "connectionReset"}), faulty("/empty", {"type": "emptyResponse"})))
    base = f"http://127.0.0.1:{web.proxy_port}"
    with pytest.raises(requests.exceptions.ConnectionError) as caught:
        requests.get(f"{base}/reset", timeout=30)
    assert "ConnectionResetError" in cause_chain(caught.value)
    with pytest.raises(requests.exceptions.ConnectionError) as caught:
        requests.get(f"{base}/empty", timeout=30)
    assert "RemoteDisconnected" in cause_chain(caught.value)


# -- global faults -------------------------------------------------------------------------------------


def test_global_faults_match_like_delays_and_a_pairs_own_fault_wins(sp: Simproxy) -> None:
    doc = simulation(faulty("/plain", None, PLAIN), faulty("/own", {"type": "malformedChunk"}))
    with_faults(
        doc,
        {"urlPattern": "faulty\\.test/first", "httpMethod": "GET", "fault": {"type": "connectionReset"}},
        {"urlPattern": "faulty\\.test", "httpMethod": "GET", "fault": {"type": "emptyResponse"}},
    )
    put(sp, doc)
    with pytest.raises(http.client.RemoteDisconnected):
        sp.proxy("http://faulty.test/plain")  # a hit
    with pytest.raises(http.client.RemoteDisconnected):
        sp.proxy("http://faulty.test/missing")  # a miss's 502 too
    with pytest.raises(ConnectionResetError):
        sp.proxy("http://faulty.test/first")  # the first rule that applies
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        get(sp, "http://faulty.test/own")  # the pair's own fault, not the global one
    assert sp.proxy("http://faulty.test/plain", method="POST", body=b"")[::2] == (200, PLAIN.encode())
    assert sp.proxy("http://elsewhere.test/plain")[::2] == (200, PLAIN.encode())
    assert sp.proxy("http://elsewhere.test/missing")[0] == 502


def test_global_faults_apply_to_forwarded_answers_but_not_to_relayed_ones(sp: Simproxy, upstream: Upstream) -> None:
    put(sp, with_faults(simulation(), {"urlPattern": ".", "fault": {"type": "emptyResponse"}}))
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "spy"})[0] == 200
    with pytest.raises(http.client.RemoteDisconnected):
        sp.proxy(upstream.url("/spied"))  # spy forwarded the miss; its answer gets the fault
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "modify"})[0] == 200
    with pytest.raises(http.client.RemoteDisconnected):
        sp.proxy(upstream.url("/modified"))
    assert sp.admin("PUT", "/api/v2/hoverfly/destination", {"destination": "^only-this-host$"})[0] == 200
    assert sp.proxy(upstream.url("/relayed"))[::2] == (200, b"real /relayed")  # outside the destination filter
    assert [seen.path for seen in upstream.requests[-3:]] == ["/spied", "/modified", "/relayed"]


# -- the fraction, under load ------------------------------------------------------------------------------


async def _answered(port: int, target: str, count: int, concurrency: int = 48) -> tuple[int, int]:
    """(answered 200, closed without a byte) of ``count`` requests, each on a new connection."""
    request = f"GET {target} HTTP/1.1\r\nHost: load.test\r\nConnection: close\r\n\r\n".encode()
    answered = empty = 0
    left = count

    async def client() -> None:
        nonlocal answered, empty, left
        while left > 0:
            left -= 1
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            data = await reader.read()
            writer.close()
            if data.startswith(b"HTTP/1.1 200 OK\r\n") and data.endswith(b"ok"):
                answered += 1
            elif data == b"":
                empty += 1

    await asyncio.gather(*(client() for _ in range(concurrency)))
    return answered, empty


def test_a_global_fraction_faults_that_share_of_ten_thousand_requests(sp: Simproxy) -> None:
    put(
        sp,
        with_faults(
            simulation(faulty("/load", None)),
            {"urlPattern": "load", "fault": {"type": "emptyResponse", "fraction": 0.05}},
        ),
    )
    answered, empty = asyncio.run(_answered(sp.proxy_port, "http://load.test/load", 10_000))
    assert answered + empty == 10_000
    assert 400 <= empty <= 600  # 5% +- 1% (the count's standard deviation is 22)


def test_a_pair_fraction_faults_that_share_of_its_requests(sp: Simproxy) -> None:
    put(sp, simulation(faulty("/some", {"type": "emptyResponse", "fraction": 0.25})))
    answered, empty = asyncio.run(_answered(sp.proxy_port, "http://load.test/some", 2_000))
    assert answered + empty == 2_000
    assert 400 <= empty <= 600  # 25% +- 5% (the count's standard deviation is 19)
