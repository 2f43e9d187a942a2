"""HTTP/2 on the proxy port and the webserver, through real clients: curl (prior knowledge,
``Upgrade: h2c``, ALPN ``h2`` inside an intercepted CONNECT tunnel), httpx with ``http2=True``,
and the h2 library for what only frames show (streams, resets, GOAWAY, windows)."""

from __future__ import annotations

import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h2.errors
import httpx
import hyperframe.frame
import pytest

from simproxy.engine.server.certs import LeafCertificates, generate_ca
from tests.integration.conftest import Simproxy, emptied, pair, simulation
from tests.integration.h2client import H2Client
from tests.integration.h2server import Http2Service, start_http2_service
from tests.integration.test_middleware import SYNTH
from tests.processes import starts_processes
from tests.system import system_tool

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SERVICE_CA = generate_ca("untrusted HTTP/2 test CA", "tests")


@pytest.fixture(scope="module")
def h2_service() -> Iterator[Http2Service]:
    """A real HTTPS service that speaks HTTP/2 only."""
    service = start_http2_service(LeafCertificates(SERVICE_CA, alpn=("h2",)).context("localhost"))
    yield service
    service.stop()


@pytest.fixture(scope="module")
@starts_processes
def web() -> Iterator[Simproxy]:
    """One simproxy in ``-webserver`` mode, shared by the module's tests."""
    proc = Simproxy("-webserver").start()
    yield proc
    proc.stop()


@pytest.fixture
def sp(web: Simproxy) -> Simproxy:
    return emptied(web)


def put(sp: Simproxy, *pairs: dict[str, Any]) -> None:
    assert sp.admin("PUT", "/api/v2/simulation", simulation(*pairs))[0] == 200


def curl(*args: str) -> tuple[str, str]:
    """curl's body and ``%{http_version}`` (after a newline)."""
    done = subprocess.run(
        [system_tool("curl", "curl"), "-sS", "--max-time", "20", "-w", "\n%{http_version}", *args],
        capture_output=True,
        check=True,
        timeout=30,
    )
    body, _, version = done.stdout.decode().rpartition("\n")
    return body, version


def templated(path: str) -> dict[str, Any]:
    """A pair answering with what templating sees of the request (``Request.Path``: its segments, joined)."""
    found = pair(path, "{{Request.Method}} {{Request.Host}} {{Request.Path}} {{Request.QueryParam.q}}")
    found["response"]["templated"] = True
    return found


def journal(sp: Simproxy) -> list[dict[str, Any]]:
    status, body = sp.admin_json("GET", "/api/v2/journal")
    assert status == 200
    entries: list[dict[str, Any]] = body["journal"]
    return entries


# -- the three ways in, real clients ------------------------------------------------------------


def test_curl_with_prior_knowledge_gets_the_simulated_answer_over_http2(sp: Simproxy) -> None:
    put(sp, templated("/h2/hello"))
    url = f"http://127.0.0.1:{sp.proxy_port}/h2/hello?q=x"
    assert curl("--http2-prior-knowledge", url) == (f"GET 127.0.0.1:{sp.proxy_port} h2hello x", "2")
    assert curl("--http1.1", url) == (f"GET 127.0.0.1:{sp.proxy_port} h2hello x", "1.1")
    entries = journal(sp)
    assert [e["request"].get("protocol") for e in entries] == ["HTTP/2.0", None]
    assert entries[0]["request"]["path"] == "/h2/hello" and entries[0]["request"]["query"] == "q=x"


def test_curl_upgrade_h2c_is_switched_and_answered_on_stream_one(sp: Simproxy) -> None:
    put(sp, templated("/h2/up"))
    body, version = curl("--http2", f"http://127.0.0.1:{sp.proxy_port}/h2/up?q=1")
    assert (body, version) == (f"GET 127.0.0.1:{sp.proxy_port} h2up 1", "2")
    assert journal(sp)[0]["request"]["protocol"] == "HTTP/2.0"


def echoing(path: str, body: str) -> dict[str, Any]:
    """A POST pair that matches ``body`` only, answering ``got`` and it."""
    found = pair(path, f"got {body}", method=[{"matcher": "exact", "value": "POST"}])
    found["request"]["body"] = [{"matcher": "exact", "value": body}]
    return found


def test_an_upgrade_with_a_body_stays_http1_and_its_body_is_read(sp: Simproxy) -> None:
    put(sp, echoing("/h2/post", "data"))
    body, version = curl("--http2", "-d", "data", f"http://127.0.0.1:{sp.proxy_port}/h2/post")
    assert (body, version) == ("got data", "1.1")
    assert journal(sp)[0]["request"]["body"] == "data"


def test_an_upgrade_not_taken_is_a_plain_request_and_what_follows_it_is_answered(sp: Simproxy) -> None:
    put(sp, echoing("/ws/post", "hello"), pair("/after", "after"))
    upgrade = b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
    sent = (
        b"POST /ws/post HTTP/1.1\r\nHost: h\r\n" + upgrade + b"Content-Length: 5\r\n\r\nhello"
        b"GET /after HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=10) as sock:
        sock.sendall(sent)  # both requests in one write
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
    assert got.count(b"HTTP/1.1 200 OK") == 2
    assert got.index(b"got hello") < got.index(b"after")
    (first,) = [e["request"] for e in journal(sp) if e["request"]["path"] == "/ws/post"]
    assert first["headers"]["Upgrade"] == ["websocket"] and first["body"] == "hello"


def test_proxy_port_speaks_h2c_and_alpn_h2_inside_an_intercepted_tunnel(simproxy_factory: Any, tmp_path: Path) -> None:
    proxy: Simproxy = simproxy_factory()
    put(proxy, templated("/h2/secure"))
    status, _, pem = proxy.admin("GET", "/api/v2/hoverfly/ca-cert")
    assert status == 200
    ca = tmp_path / "ca.pem"
    ca.write_bytes(pem)
    port = proxy.proxy_port
    tunnelled = ("--cacert", str(ca), "-x", f"http://127.0.0.1:{port}", "https://example.test/h2/secure?q=s")
    assert curl("--http2", *tunnelled) == ("GET example.test h2secure s", "2")
    assert curl("--http1.1", *tunnelled) == ("GET example.test h2secure s", "1.1")
    h2c = ("--http2-prior-knowledge", "--connect-to", f"example.test:80:127.0.0.1:{port}")
    assert curl(*h2c, "http://example.test/h2/secure?q=c") == ("GET example.test h2secure c", "2")
    trusted = ssl.create_default_context(cafile=str(ca))
    with httpx.Client(http2=True, proxy=f"http://127.0.0.1:{port}", verify=trusted, timeout=20) as client:
        answers = [client.get("https://example.test/h2/secure", params={"q": str(n)}) for n in range(3)]
    assert [(a.http_version, a.text) for a in answers] == [
        ("HTTP/2", f"GET example.test h2secure {n}") for n in range(3)
    ]
    entries = journal(proxy)
    assert [(e["request"]["scheme"], e["request"].get("protocol")) for e in entries] == [
        ("https", "HTTP/2.0"),
        ("https", None),
        ("http", "HTTP/2.0"),
        *[("https", "HTTP/2.0")] * 3,
    ]


def test_http2_by_default_and_http1_only_under_compat_hoverfly(sp: Simproxy, simproxy_factory: Any) -> None:
    with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=10) as sock:
        sock.sendall(PREFACE)
        answer = sock.recv(4096)
    assert answer[3:5] == b"\x04\x00"  # the server's preface: a SETTINGS frame, no ACK flag
    hoverfly: Simproxy = simproxy_factory("-webserver", "-compat", "hoverfly")
    with_trailers = pair("/h2/compat", "compat")
    with_trailers["response"]["trailers"] = {"grpc-status": ["0"]}
    status, _, text = hoverfly.admin("PUT", "/api/v2/simulation", simulation(with_trailers))
    assert status == 400 and b"Additional property trailers is not allowed" in text
    put(hoverfly, pair("/h2/compat", "compat"))
    with socket.create_connection(("127.0.0.1", hoverfly.proxy_port), timeout=10) as sock:
        sock.sendall(PREFACE)
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 400")  # no HTTP/2 server preface: Hoverfly has no HTTP/2
    assert curl("--http2", f"http://127.0.0.1:{hoverfly.proxy_port}/h2/compat") == ("compat", "1.1")


# -- streams ------------------------------------------------------------------------------------


def test_a_slow_stream_holds_no_other_on_the_same_connection(sp: Simproxy) -> None:
    slow = pair("/h2/slow", "slow")
    slow["response"]["fixedDelay"] = 1500
    put(sp, slow, pair("/h2/fast", "fast"))
    client = H2Client(sp.proxy_port)
    try:
        start = time.monotonic()
        first = client.request("/h2/slow")
        others = [client.request("/h2/fast") for _ in range(5)]
        client.read(lambda: client.done(*others))
        fast_done = time.monotonic() - start
        client.read(lambda: client.done(first))
    finally:
        client.close()
    assert fast_done < 1.0
    assert all(bytes(client.answers[sid].body) == b"fast" for sid in others)
    slow_answer = client.answers[first]
    assert slow_answer.status == 200 and bytes(slow_answer.body) == b"slow"
    assert slow_answer.done_at is not None and slow_answer.done_at - start >= 1.4


def test_a_tiny_window_still_receives_a_large_body_whole(sp: Simproxy) -> None:
    body = "".join(f"{n:07d}\n" for n in range(40_000))  # 320 KB
    put(sp, pair("/h2/large", body))
    client = H2Client(sp.proxy_port, window=100)
    try:
        sid = client.request("/h2/large")
        client.read(lambda: client.done(sid), timeout=30)
    finally:
        client.close()
    answer = client.answers[sid]
    assert answer.status == 200 and answer.body.decode() == body
    assert max(answer.frames) <= 100 and len(answer.frames) >= len(body) // 100


def test_connection_reset_fault_resets_only_its_stream(sp: Simproxy) -> None:
    broken = pair("/h2/reset", "never")
    broken["response"]["fault"] = {"type": "connectionReset"}
    put(sp, broken, pair("/h2/fine", "fine"))
    client = H2Client(sp.proxy_port)
    try:
        reset, fine = client.request("/h2/reset"), client.request("/h2/fine")
        client.read(lambda: client.done(reset, fine))
        again = client.request("/h2/fine")
        client.read(lambda: client.done(again))
    finally:
        client.close()
    assert client.answers[reset].reset == h2.errors.ErrorCodes.INTERNAL_ERROR
    assert bytes(client.answers[fine].body) == b"fine" and bytes(client.answers[again].body) == b"fine"
    assert client.goaway is None
    assert len(journal(sp)) == 3


def test_empty_response_fault_is_a_goaway(sp: Simproxy) -> None:
    empty = pair("/h2/empty", "never")
    empty["response"]["fault"] = {"type": "emptyResponse"}
    put(sp, empty)
    client = H2Client(sp.proxy_port)
    try:
        sid = client.request("/h2/empty")
        client.read(lambda: client.goaway is not None and client.closed)
    finally:
        client.close()
    assert client.goaway is not None and client.goaway.error_code == h2.errors.ErrorCodes.INTERNAL_ERROR
    assert client.answers[sid].headers == {}


def test_dribble_paces_one_stream_and_not_the_others(sp: Simproxy) -> None:
    dribbled = pair("/h2/dribble", "abcdefghij")
    dribbled["response"]["fault"] = {"type": "dribble", "chunks": 5, "durationMs": 1000}
    put(sp, dribbled, pair("/h2/fine", "fine"))
    client = H2Client(sp.proxy_port)
    try:
        start = time.monotonic()
        slow, fine = client.request("/h2/dribble"), client.request("/h2/fine")
        client.read(lambda: client.done(fine))
        fine_at = time.monotonic() - start
        client.read(lambda: client.done(slow))
    finally:
        client.close()
    answer = client.answers[slow]
    assert bytes(answer.body) == b"abcdefghij" and len(answer.frames) == 5
    assert answer.done_at is not None and answer.done_at - start >= 0.9
    assert fine_at < 0.5


# -- limits and protection ----------------------------------------------------------------------


def test_garbage_after_the_preface_gets_goaway_and_others_are_untouched(sp: Simproxy) -> None:
    put(sp, pair("/h2/fine", "fine"))
    bystander = H2Client(sp.proxy_port)
    client = H2Client(sp.proxy_port)
    try:
        client.sock.sendall(b"\x00\x00\x05\xee\x07\x00\x00\x00\x00" * 3)  # SETTINGS with a length that is no 6n
        client.read(lambda: client.closed)
    finally:
        client.close()
    assert client.goaway is not None
    assert client.goaway.error_code in (h2.errors.ErrorCodes.PROTOCOL_ERROR, h2.errors.ErrorCodes.FRAME_SIZE_ERROR)
    try:
        sid = bystander.request("/h2/fine")
        bystander.read(lambda: bystander.done(sid))
    finally:
        bystander.close()
    assert bytes(bystander.answers[sid].body) == b"fine"


def test_rapid_reset_ends_the_connection(sp: Simproxy) -> None:
    slow = pair("/h2/slow", "slow")
    slow["response"]["fixedDelay"] = 5000
    put(sp, slow)
    client = H2Client(sp.proxy_port)
    start = time.monotonic()
    try:
        for _ in range(1000):
            if client.closed:
                break
            try:
                client.request("/h2/slow", reset=True)
            except OSError:
                break  # the server ended it: its GOAWAY is read below
        client.read(lambda: client.goaway is not None)
    finally:
        client.close()
    assert client.goaway is not None and client.goaway.error_code == h2.errors.ErrorCodes.ENHANCE_YOUR_CALM
    assert time.monotonic() - start < 5
    assert curl("--http2-prior-knowledge", f"http://127.0.0.1:{sp.proxy_port}/h2/none")[1] == "2"


def resident_kb(pid: int) -> int:
    """The resident memory of process ``pid``, in KB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_continuation_flood_is_cut_short(sp: Simproxy) -> None:
    (worker,) = sp.proxy_listeners()
    before = resident_kb(worker)
    client = H2Client(sp.proxy_port)
    block = client.conn.encoder.encode([(":method", "GET"), (":path", "/"), (":scheme", "http"), (":authority", "h")])
    headers = hyperframe.frame.HeadersFrame(1, data=block)  # no END_HEADERS: CONTINUATION frames must follow
    filler = hyperframe.frame.ContinuationFrame(1, data=b"\x00" * 16_000).serialize()
    start, sent = time.monotonic(), 0
    try:
        client.sock.sendall(headers.serialize())
        for _ in range(2000):  # 32 MB, were it all read
            client.sock.sendall(filler)
            sent += 1
    except OSError:
        pass  # the server closed: the rest was never taken
    client.read(lambda: client.closed)
    client.close()
    assert client.goaway is not None and client.goaway.error_code == h2.errors.ErrorCodes.PROTOCOL_ERROR
    assert client.closed and time.monotonic() - start < 5  # ended by the server, what it sent after dropped
    assert resident_kb(worker) - before < 16 * 1024


def test_a_header_list_beyond_the_limit_ends_the_connection(simproxy_factory: Any) -> None:
    small: Simproxy = simproxy_factory("-webserver", "-max-header-size", "8KB")
    client = H2Client(small.proxy_port)
    try:
        sid = client.conn.get_next_available_stream_id()
        big = [(":method", "GET"), (":path", "/"), (":scheme", "http"), (":authority", "h"), ("x-big", "v" * 12_000)]
        client.conn.send_headers(sid, big, end_stream=True)
        client.flush()
        client.read(lambda: client.closed)
    finally:
        client.close()
    assert client.goaway is not None and client.goaway.error_code == h2.errors.ErrorCodes.ENHANCE_YOUR_CALM


# -- the real service over HTTP/2 ---------------------------------------------------------------


def test_capture_spy_and_diff_reach_an_http2_service_over_http2_and_the_capture_is_replayed(
    simproxy_factory: Any, h2_service: Http2Service, tmp_path: Path
) -> None:
    proxy: Simproxy = simproxy_factory("-tls-verification=false")
    ca = tmp_path / "ca.pem"
    ca.write_bytes(proxy.admin("GET", "/api/v2/hoverfly/ca-cert")[2])
    through = ("--http2", "--cacert", str(ca), "-x", f"http://127.0.0.1:{proxy.proxy_port}")
    url = f"https://localhost:{h2_service.port}/captured?n=1"
    assert proxy.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    seen = len(h2_service.seen)
    assert curl(*through, url) == ("served over h2: GET /captured?n=1", "2")
    assert h2_service.seen[seen][":authority"] == f"localhost:{h2_service.port}"  # it came over HTTP/2
    assert proxy.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200
    assert curl(*through, url) == ("served over h2: GET /captured?n=1", "2")
    assert curl("--http1.1", *through[1:], url) == ("served over h2: GET /captured?n=1", "1.1")
    assert len(h2_service.seen) == seen + 1  # replayed from the capture, not asked again
    captured = proxy.admin_json("GET", "/api/v2/simulation")[1]
    pairs = captured["data"]["pairs"]
    assert pairs[0]["response"]["headers"]["X-Upstream"] == ["h2"]
    assert pairs[0]["response"]["trailers"] == {"Grpc-Status": ["0"]}  # passed through, and kept
    assert proxy.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "spy"})[0] == 200
    assert curl(*through, f"https://localhost:{h2_service.port}/spied") == ("served over h2: GET /spied", "2")
    assert len(h2_service.seen) == seen + 2
    expected = pair("/diffed", "simulated")
    expected["request"]["destination"] = [{"matcher": "exact", "value": f"localhost:{h2_service.port}"}]
    put(proxy, expected)
    assert proxy.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "diff"})[0] == 200
    assert curl(*through, f"https://localhost:{h2_service.port}/diffed") == ("served over h2: GET /diffed", "2")
    [report] = proxy.admin_json("GET", "/api/v2/diff")[1]["diff"]
    assert {"field": "body", "expected": "simulated", "actual": "served over h2: GET /diffed"} in (
        report["diffReports"][0]["diffEntries"]
    )
    assert len(h2_service.seen) == seen + 3


def test_request_bodies_are_bounded_over_all_the_streams_of_a_connection(simproxy_factory: Any) -> None:
    small: Simproxy = simproxy_factory("-webserver", "-max-body-size", "40KB")
    put(small, pair("/h2/upload", "stored", method=[{"matcher": "exact", "value": "POST"}]))
    client = H2Client(small.proxy_port)
    try:
        first = client.request("/h2/upload", method="POST", end=False)
        client.body(first, b"a" * 30_000, end=False)
        second = client.request("/h2/upload", method="POST", end=False)
        client.body(second, b"b" * 30_000, end=False)  # 60 KB arriving at once: over the 40 KB
        client.read(lambda: client.answers[second].done_at is not None)
        client.body(first, b"", end=True)
        client.read(lambda: client.done(first))
    finally:
        client.close()
    assert client.answers[second].status == 413
    assert client.answers[first].status == 200 and bytes(client.answers[first].body) == b"stored"


def test_trailers_set_in_a_response_follow_the_body(sp: Simproxy) -> None:
    answer = pair("/h2/trailers", "payload")
    answer["response"]["trailers"] = {"grpc-status": ["0"], "grpc-message": ["fine"]}
    put(sp, answer, pair("/h2/none", "none"))
    client = H2Client(sp.proxy_port)
    try:
        sid, plain = client.request("/h2/trailers"), client.request("/h2/none")
        client.read(lambda: client.done(sid, plain))
    finally:
        client.close()
    got = client.answers[sid]
    assert got.status == 200 and bytes(got.body) == b"payload"
    assert got.trailers == {"grpc-message": "fine", "grpc-status": "0"}
    assert client.answers[plain].trailers == {}
    exported = sp.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"][0]["response"]
    assert exported["trailers"] == {"grpc-message": ["fine"], "grpc-status": ["0"]}


def test_an_idle_http2_connection_gets_goaway_after_the_idle_timeout(simproxy_factory: Any) -> None:
    quick: Simproxy = simproxy_factory("-webserver", "-idle-timeout", "1s")
    put(quick, pair("/h2/once", "once"))
    client = H2Client(quick.proxy_port)
    try:
        sid = client.request("/h2/once")
        client.read(lambda: client.done(sid))
        idle = time.monotonic()
        client.read(lambda: client.closed, timeout=10)
    finally:
        client.close()
    assert bytes(client.answers[sid].body) == b"once"
    assert client.goaway is not None and client.goaway.error_code == h2.errors.ErrorCodes.NO_ERROR
    assert 1 <= time.monotonic() - idle < 5


def test_a_request_that_stops_arriving_gets_408_on_its_stream(simproxy_factory: Any) -> None:
    quick: Simproxy = simproxy_factory("-webserver", "-read-timeout", "1s")
    put(quick, pair("/h2/post", "posted", method=[{"matcher": "exact", "value": "POST"}]))
    client = H2Client(quick.proxy_port)
    try:
        sid = client.request("/h2/post", method="POST", end=False)
        client.body(sid, b"half a body", end=False)  # and then nothing more
        client.read(lambda: client.done(sid), timeout=10)
    finally:
        client.close()
    assert client.answers[sid].status == 408


def test_middleware_makes_the_answer_of_an_http2_stream(simproxy_factory: Any, tmp_path: Path) -> None:
    script = tmp_path / "synth.py"
    script.write_text(SYNTH)
    synthesizing: Simproxy = simproxy_factory("-webserver", "-middleware", f"{sys.executable} {script}")
    assert synthesizing.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "synthesize"})[0] == 200
    url = f"http://127.0.0.1:{synthesizing.proxy_port}/made?x=1"
    assert curl("--http2-prior-knowledge", url) == ("made for GET /made?x=1", "2")
    assert journal(synthesizing)[0]["request"]["protocol"] == "HTTP/2.0"


def test_a_stopping_server_answers_the_streams_in_flight_then_says_goaway(simproxy_factory: Any) -> None:
    stopping: Simproxy = simproxy_factory("-webserver")
    slow = pair("/h2/slow", "slow")
    slow["response"]["fixedDelay"] = 1000
    put(stopping, slow)
    client = H2Client(stopping.proxy_port)
    try:
        sid = client.request("/h2/slow")
        time.sleep(0.2)
        assert stopping.process is not None
        stopping.process.send_signal(signal.SIGTERM)
        client.read(lambda: client.closed, timeout=15)
    finally:
        client.close()
    assert client.answers[sid].status == 200 and bytes(client.answers[sid].body) == b"slow"
    assert client.goaway is not None and client.goaway.error_code == h2.errors.ErrorCodes.NO_ERROR
