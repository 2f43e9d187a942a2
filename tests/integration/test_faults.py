"""Fault injection (the simulation's ``fault`` and ``globalActions.faults``), seen by real clients on
real sockets: resets, closes, broken framing, garbage, dribbled and throttled answers, in proxy
mode, inside intercepted HTTPS, in webserver mode and across a Redis-backed fleet."""

from __future__ import annotations

import asyncio
import copy
import http.client
import json
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.integration.conftest import Simproxy, call, simulation
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
    """The module's simproxy, emptied, in simulate mode, every destination observed."""
    for path in ("/api/v2/simulation", "/api/v2/journal", "/api/v2/cache"):
        assert simproxy.admin("DELETE", path)[0] == 200
    assert simproxy.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200
    assert simproxy.admin("PUT", "/api/v2/hoverfly/destination", {"destination": "."})[0] == 200
    return simproxy


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
    assert 0.9 <= time.monotonic() - started < 3

    with connect(sp.proxy_port) as sock:
        started = time.monotonic()
        ask(sock, "http://faults.test/dribble")
        data, arrivals = b"", []
        while not data.endswith(body.encode()):
            data += sock.recv(65536)
            arrivals.append(time.monotonic() - started)
        assert data.startswith(b"HTTP/1.1 200 OK\r\n") and b"Content-Length: 50\r\n" in data
        assert len(arrivals) >= 4  # the head, then the pieces as they come
        assert arrivals[0] < 0.5 and arrivals[-1] >= 0.9
        ask(sock, "http://faults.test/plain")  # the connection stays usable
        again = b""
        while not again.endswith(PLAIN.encode()):
            again += sock.recv(65536)
        assert again.startswith(b"HTTP/1.1 200 OK\r\n")


def test_a_pipelined_answer_waits_for_the_dribble_before_it(sp: Simproxy) -> None:
    body = "D" * 40
    put(
        sp,
        simulation(
            faulty("/dribble", {"type": "dribble", "chunks": 4, "durationMs": 600}, body), faulty("/plain", None, PLAIN)
        ),
    )
    with connect(sp.proxy_port) as sock:
        sock.sendall(
            b"GET http://faults.test/dribble HTTP/1.1\r\nHost: faults.test\r\n\r\n"
            b"GET http://faults.test/plain HTTP/1.1\r\nHost: faults.test\r\n\r\n"
        )
        data = b""
        while not data.endswith(PLAIN.encode()):
            data += sock.recv(65536)
    assert data.count(b"HTTP/1.1 200 OK\r\n") == 2
    assert data.index(body.encode()) < data.rindex(b"HTTP/1.1 200 OK\r\n")  # in order, never interleaved


def test_bandwidth_paces_the_whole_answer(sp: Simproxy) -> None:
    body = "x" * 100_000
    put(sp, simulation(faulty("/slow", {"type": "bandwidth", "bytesPerSecond": 50_000}, body)))
    started = time.monotonic()
    response = get(sp, "http://faults.test/slow")
    took = time.monotonic() - started
    assert (response.status_code, len(response.content)) == (200, 100_000)
    assert 1.6 <= took <= 2.4  # 100 KB at 50 KB/s: 2 s, within 20%


def test_a_fraction_of_zero_never_faults(sp: Simproxy) -> None:
    put(sp, simulation(faulty("/never", {"type": "connectionReset", "fraction": 0})))
    for _ in range(20):
        assert sp.proxy("http://faults.test/never")[::2] == (200, b"ok")


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


# -- import: validation, round trip, -compat hoverfly ------------------------------------------------------------

REFUSED = [
    pytest.param({"type": "teleport"}, "data.pairs.0.response.fault.type", id="unknown-type"),
    pytest.param({"type": 5}, "data.pairs.0.response.fault.type", id="type-not-a-string"),
    pytest.param(
        {"type": "connectionReset", "fraction": 1.5}, "data.pairs.0.response.fault.fraction", id="fraction-above-1"
    ),
    pytest.param(
        {"type": "connectionReset", "fraction": "half"}, "data.pairs.0.response.fault.fraction", id="fraction-text"
    ),
    pytest.param(
        {"type": "dribble", "durationMs": 100}, "data.pairs.0.response.fault>: chunks is required", id="no-chunks"
    ),
    pytest.param(
        {"type": "dribble", "chunks": "5", "durationMs": 100}, "data.pairs.0.response.fault.chunks", id="chunks-text"
    ),
    pytest.param(
        {"type": "dribble", "chunks": 0, "durationMs": 100}, "data.pairs.0.response.fault.chunks", id="no-pieces"
    ),
    pytest.param({"type": "bandwidth"}, "data.pairs.0.response.fault>: bytesPerSecond is required", id="no-rate"),
    pytest.param({"type": "emptyResponse", "speed": 1}, "Additional property speed is not allowed", id="unknown-key"),
    pytest.param({"type": "emptyResponse", "chunks": 2}, "Additional property chunks is not allowed", id="foreign-key"),
    pytest.param("reset", "data.pairs.0.response.fault>: Invalid type", id="not-an-object"),
]


@pytest.mark.parametrize(("fault", "named"), REFUSED)
def test_a_bad_fault_is_refused_and_nothing_changes(sp: Simproxy, fault: Any, named: str) -> None:
    put(sp, simulation(faulty("/kept", {"type": "emptyResponse", "fraction": 0}, PLAIN)))
    before = sp.admin_json("GET", "/api/v2/simulation")[1]["data"]
    for method in ("PUT", "POST"):
        status, body = sp.admin_json(method, "/api/v2/simulation", simulation(faulty("/new", fault), version="v5"))
        assert status == 400
        assert body["error"].startswith("Invalid v5 simulation: [Error for <") and named in body["error"]
    assert sp.admin_json("GET", "/api/v2/simulation")[1]["data"] == before
    assert sp.proxy("http://faults.test/kept")[::2] == (200, PLAIN.encode())


def test_a_bad_global_fault_is_refused_naming_its_place(sp: Simproxy) -> None:
    put(sp, simulation(faulty("/kept", None, PLAIN)))
    before = sp.admin_json("GET", "/api/v2/simulation")[1]["data"]
    rule = {"urlPattern": "(unclosed", "fault": {"type": "emptyResponse"}}
    status, body = sp.admin_json(
        "PUT",
        "/api/v2/simulation",
        with_faults(simulation(), {"urlPattern": ".", "fault": {"type": "emptyResponse"}}, rule),
    )
    assert status == 400
    assert body["error"].startswith("Invalid simulation: data.globalActions.faults[1].urlPattern: invalid pattern")
    status, body = sp.admin_json(
        "PUT", "/api/v2/simulation", with_faults(simulation(), {"fault": {"type": "emptyResponse"}})
    )
    assert status == 400 and "Error for <data.globalActions.faults.0>: urlPattern is required" in body["error"]
    assert sp.admin_json("GET", "/api/v2/simulation")[1]["data"] == before
    assert sp.proxy("http://faults.test/kept")[::2] == (200, PLAIN.encode())


FAULTS = [
    {"type": "connectionReset", "fraction": 0.5},
    {"type": "emptyResponse"},
    {"type": "malformedChunk", "fraction": 0},
    {"type": "randomDataThenClose"},
    {"type": "dribble", "chunks": 5, "durationMs": 1000, "fraction": 0.25},
    {"type": "bandwidth", "bytesPerSecond": 1024},
]


def _with_every_fault() -> dict[str, Any]:
    doc = simulation(*(faulty(f"/{fault['type']}", fault) for fault in FAULTS))
    return with_faults(
        doc,
        {"urlPattern": "a\\.test", "httpMethod": "GET", "fault": {"type": "emptyResponse", "fraction": 0.05}},
        {"urlPattern": "b\\.test", "httpMethod": "", "fault": {"type": "bandwidth", "bytesPerSecond": 10}},
    )


def test_an_export_keeps_the_faults_and_imports_again_unchanged(sp: Simproxy) -> None:
    doc = _with_every_fault()
    put(sp, copy.deepcopy(doc))
    exported = sp.admin_json("GET", "/api/v2/simulation")[1]
    assert [p["response"]["fault"] for p in exported["data"]["pairs"]] == FAULTS
    assert exported["data"]["globalActions"]["faults"] == doc["data"]["globalActions"]["faults"]
    put(sp, exported)
    assert sp.admin_json("GET", "/api/v2/simulation")[1]["data"] == exported["data"]


def test_an_export_without_faults_is_as_before(sp: Simproxy) -> None:
    put(sp, simulation(faulty("/plain", None, PLAIN)))
    data = sp.admin_json("GET", "/api/v2/simulation")[1]["data"]
    assert data == {
        "pairs": [
            {
                "request": {"path": [{"matcher": "exact", "value": "/plain"}]},
                "response": {"status": 200, "body": PLAIN, "encodedBody": False, "templated": False},
            }
        ],
        "globalActions": {"delays": [], "delaysLogNormal": []},
    }


def test_a_redis_backed_fleet_serves_and_exports_the_faults(simproxy_factory: Any) -> None:
    fleet: Simproxy = simproxy_factory("-workers", "2")
    doc = _with_every_fault()
    put(fleet, copy.deepcopy(doc))
    exported = fleet.admin_json("GET", "/api/v2/simulation")[1]["data"]
    assert [p["response"]["fault"] for p in exported["pairs"]] == FAULTS
    assert exported["globalActions"]["faults"] == doc["data"]["globalActions"]["faults"]
    for _ in range(8):  # new connections, spread over both workers: each loaded the stored form
        with pytest.raises(http.client.RemoteDisconnected):
            call(fleet.proxy_port, "GET", "http://x.test/emptyResponse")


@pytest.mark.parametrize(
    ("actions", "pair_fault", "message"),
    [
        pytest.param(
            None,
            {"type": "emptyResponse"},
            "Error for <data.pairs.0.response>: Additional property fault is not allowed",
            id="pair",
        ),
        pytest.param(
            {"faults": []},
            None,
            "Error for <data.globalActions>: Additional property faults is not allowed",
            id="global",
        ),
    ],
)
def test_hoverflys_dialect_refuses_faults_as_hoverflys_schema_would(
    hoverfly: Simproxy, actions: dict[str, Any] | None, pair_fault: dict[str, Any] | None, message: str
) -> None:
    doc = simulation(faulty("/x", pair_fault), version="v5")
    if actions is not None:
        doc["data"]["globalActions"] = actions
    status, headers, body = hoverfly.admin("PUT", "/api/v2/simulation", doc)
    assert (status, headers["content-type"]) == (400, "text/plain; charset=utf-8")
    assert json.loads(body) == {"error": f"Invalid v5 simulation: [{message}]"}
    assert hoverfly.admin("PUT", "/api/v2/simulation", simulation(faulty("/x", None)))[0] == 200


@pytest.fixture(scope="module")
def hoverfly() -> Iterator[Simproxy]:
    proc = Simproxy("-compat", "hoverfly").start()
    yield proc
    proc.stop()
