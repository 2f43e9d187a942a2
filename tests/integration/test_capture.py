"""Capture mode against a real upstream server: what is recorded, and that replay gives the same bytes."""

from __future__ import annotations

import gzip
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from simproxy.engine.modes.failures import PRODUCT
from tests.integration.conftest import Simproxy
from tests.integration.upstream import BINARY, GZIP_DOC, Upstream, start_upstream


@pytest.fixture
def sp(simproxy: Simproxy) -> Simproxy:
    """The module's simproxy, emptied and in capture mode."""
    assert simproxy.admin("DELETE", "/api/v2/simulation")[0] == 200
    assert simproxy.admin("PUT", "/api/v2/state", {"state": {}})[0] == 200
    assert simproxy.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    return simproxy


def pairs(sp: Simproxy) -> list[dict[str, Any]]:
    status, doc = sp.admin_json("GET", "/api/v2/simulation")
    assert status == 200
    result: list[dict[str, Any]] = doc["data"]["pairs"]
    return result


def test_capture_forwards_and_records_the_pair(sp: Simproxy, upstream: Upstream) -> None:
    status, headers, body = sp.proxy(upstream.url("/hello?b=2&a=1&a=3"), headers={"X-Test": "one"})
    assert (status, body) == (200, b"real /hello")
    assert headers["x-real"] == "yes"
    assert headers["hoverfly"] == "Was-Here"
    assert upstream.requests[-1].path == "/hello?b=2&a=1&a=3"  # the raw query went on unchanged
    assert upstream.requests[-1].headers["X-Test"] == "one"
    [captured] = pairs(sp)
    request = captured["request"]
    assert request["path"] == [{"matcher": "exact", "value": "/hello"}]
    assert request["method"] == [{"matcher": "exact", "value": "GET"}]
    assert request["destination"] == [{"matcher": "exact", "value": upstream.host}]
    assert request["scheme"] == [{"matcher": "exact", "value": "http"}]
    assert request["body"] == [{"matcher": "exact", "value": ""}]
    assert request["query"] == {
        "a": [{"matcher": "array", "value": ["1", "3"]}],
        "b": [{"matcher": "exact", "value": "2"}],
    }
    assert "headers" not in request  # no headersWhitelist: no headers recorded
    response = captured["response"]
    assert response["status"] == 200
    assert response["body"] == "real /hello"
    assert response["headers"]["X-Real"] == ["yes"]
    assert response["headers"]["Hoverfly"] == ["Was-Here"]
    assert "fixedDelay" not in response


def test_body_matcher_follows_the_content_type(sp: Simproxy, upstream: Upstream) -> None:
    sp.proxy(upstream.url("/json"), "POST", b'{"a": 1}', {"Content-Type": "application/json"})
    sp.proxy(upstream.url("/xml"), "POST", b"<a>1</a>", {"Content-Type": "application/soap+xml"})
    sp.proxy(upstream.url("/form"), "POST", b"x=1&y=2&x=3", {"Content-Type": "application/x-www-form-urlencoded"})
    sp.proxy(upstream.url("/charset"), "POST", b'{"a": 1}', {"Content-Type": "application/json; charset=utf-8"})
    bodies = {p["request"]["path"][0]["value"]: p["request"]["body"] for p in pairs(sp)}
    assert bodies["/json"] == [{"matcher": "json", "value": '{"a": 1}'}]
    assert bodies["/xml"] == [{"matcher": "xml", "value": "<a>1</a>"}]
    assert bodies["/form"] == [
        {
            "matcher": "form",
            "value": {"x": [{"matcher": "exact", "value": "1"}], "y": [{"matcher": "exact", "value": "2"}]},
        }
    ]
    assert bodies["/charset"] == [{"matcher": "exact", "value": '{"a": 1}'}]  # does not end in json


def test_headers_whitelist(sp: Simproxy, upstream: Upstream) -> None:
    mode = {"mode": "capture", "arguments": {"headersWhitelist": ["X-One", "X-Absent"]}}
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", mode)[0] == 200
    sp.proxy(upstream.url("/named"), headers={"X-One": "1", "X-Two": "2"})
    mode = {"mode": "capture", "arguments": {"headersWhitelist": ["*"]}}
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", mode)[0] == 200
    sp.proxy(upstream.url("/all"), headers={"X-One": "1", "X-Two": "2"})
    headers = {p["request"]["path"][0]["value"]: p["request"].get("headers") for p in pairs(sp)}
    assert headers["/named"] == {"X-One": [{"matcher": "exact", "value": "1"}]}
    assert headers["/all"]["X-Two"] == [{"matcher": "exact", "value": "2"}]
    assert headers["/all"]["X-One"] == [{"matcher": "exact", "value": "1"}]


def test_first_capture_wins_unless_overwrite_duplicate(sp: Simproxy, upstream: Upstream) -> None:
    first, second = (sp.proxy(upstream.url("/count"))[2] for _ in range(2))
    assert first != second  # both went to the real service
    [captured] = pairs(sp)
    assert captured["response"]["body"] == first.decode()
    mode = {"mode": "capture", "arguments": {"overwriteDuplicate": True}}
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", mode)[0] == 200
    third = sp.proxy(upstream.url("/count"))[2]
    [captured] = pairs(sp)
    assert captured["response"]["body"] == third.decode()


def test_stateful_capture_replays_the_sequence(sp: Simproxy, upstream: Upstream) -> None:
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture", "arguments": {"stateful": True}})[0] == 200
    start = upstream.count
    answers = [sp.proxy(upstream.url("/count"))[2] for _ in range(3)]
    assert answers == [b"%d" % (start + i) for i in (1, 2, 3)]
    captured = pairs(sp)
    assert [p["request"].get("requiresState") for p in captured] == [
        {"sequence:1": "1"},
        {"sequence:1": "2"},
        {"sequence:1": "3"},
    ]
    assert [p["response"].get("transitionsState") for p in captured] == [
        {"sequence:1": "2"},
        {"sequence:1": "3"},
        None,
    ]
    assert sp.admin_json("GET", "/api/v2/state")[1] == {"state": {"sequence:1": "1"}}
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200
    replayed = [sp.proxy(upstream.url("/count"))[2] for _ in range(4)]
    assert replayed == answers + answers[-1:]


def test_capture_delay_records_the_round_trip(sp: Simproxy, upstream: Upstream) -> None:
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture", "arguments": {"captureDelay": True}})[0] == 200
    sp.proxy(upstream.url("/slow"))
    [captured] = pairs(sp)
    assert 300 <= captured["response"]["fixedDelay"] < 3000


def test_chunked_response_is_recorded_whole(sp: Simproxy, upstream: Upstream) -> None:
    status, _, body = sp.proxy(upstream.url("/chunked"))
    assert (status, body) == (200, b"first,second")
    [captured] = pairs(sp)
    assert captured["response"]["body"] == "first,second"
    assert "Transfer-Encoding" not in captured["response"]["headers"]


def test_capture_export_delete_import_simulate_is_byte_for_byte(sp: Simproxy, upstream: Upstream) -> None:
    requests: list[tuple[str, str, bytes | None, dict[str, str]]] = [
        ("/gzip", "GET", None, {"Accept-Encoding": "gzip"}),
        ("/binary", "GET", None, {}),
        ("/echo/post", "POST", b'{"k": "v"}', {"Content-Type": "application/json"}),
        ("/status/404", "GET", None, {}),
        ("/plain?q=1", "GET", None, {}),
    ]
    real = [sp.proxy(upstream.url(path), method, body, headers) for path, method, body, headers in requests]
    assert real[0][1]["content-encoding"] == "gzip"
    assert json.loads(gzip.decompress(real[0][2])) == GZIP_DOC
    assert real[1][2] == BINARY
    status, exported = sp.admin_json("GET", "/api/v2/simulation")
    assert status == 200 and len(exported["data"]["pairs"]) == len(requests)
    assert sp.admin("DELETE", "/api/v2/simulation")[0] == 200
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200
    assert sp.proxy(upstream.url("/binary"))[0] == 502  # really gone
    assert sp.admin("PUT", "/api/v2/simulation", exported)[0] == 200
    served = len(upstream.requests)
    replayed = [sp.proxy(upstream.url(path), method, body, headers) for path, method, body, headers in requests]
    assert len(upstream.requests) == served  # nothing reached the real service
    for (status, headers, body), (real_status, real_headers, real_body) in zip(replayed, real, strict=True):
        assert (status, body) == (real_status, real_body)
        for name in ("content-type", "content-encoding", "hoverfly"):
            assert headers.get(name) == real_headers.get(name)


def test_upstream_failures_are_502_and_record_nothing(sp: Simproxy, upstream: Upstream) -> None:
    closed = start_upstream()
    closed.stop()  # a port that refuses connections
    status, headers, body = sp.proxy(f"http://{closed.host}/refused")
    assert status == 502 and headers["content-type"] == "text/plain"
    assert (
        body
        == (
            f"{PRODUCT} Error!\n\nThere was an error when forwarding the request to the intended destination\n\n"
            f'Got error: Get "http://{closed.host}/refused": dial tcp {closed.host}: connect: connection refused'
        ).encode()
    )
    status, _, body = sp.proxy(upstream.url("/reset"))
    assert status == 502 and b"forwarding the request" in body
    assert pairs(sp) == []
    assert sp.proxy(upstream.url("/fine"))[0] == 200  # the worker keeps serving


def test_concurrent_identical_captures_store_one_pair(sp: Simproxy, upstream: Upstream) -> None:
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda i: sp.proxy(upstream.url(f"/same?i={i % 4}"))[0], range(64)))
    assert results == [200] * 64
    assert sorted(p["request"]["query"]["i"][0]["value"] for p in pairs(sp)) == ["0", "1", "2", "3"]


def test_capture_requests_are_journaled_and_counted(sp: Simproxy, upstream: Upstream) -> None:
    assert sp.admin("DELETE", "/api/v2/journal")[0] == 200
    before = sp.admin_json("GET", "/api/v2/hoverfly/usage")[1]["usage"]["counters"]["capture"]
    sp.proxy(upstream.url("/journaled"))
    journal = sp.admin_json("GET", "/api/v2/journal")[1]["journal"]
    assert [(e["mode"], e["request"]["path"], e["response"]["body"]) for e in journal] == [
        ("capture", "/journaled", "real /journaled")
    ]
    assert sp.admin_json("GET", "/api/v2/hoverfly/usage")[1]["usage"]["counters"]["capture"] == before + 1


def test_capture_across_instances_and_workers_stores_each_request_once(
    simproxy_factory: Any, redis_server: Any, upstream: Upstream
) -> None:
    shared = ("-redis-url", redis_server.url, "-redis-prefix", "capture-fleet:", "-workers", "2")
    a: Simproxy = simproxy_factory(*shared)
    b: Simproxy = simproxy_factory(*shared)
    assert a.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200

    def send(i: int) -> int:
        return (a if i % 2 else b).proxy(upstream.url(f"/fleet?k={i % 5}"))[0]

    with ThreadPoolExecutor(20) as pool:
        assert list(pool.map(send, range(200))) == [200] * 200
    for reader in (a, b):
        assert sorted(p["request"]["query"]["k"][0]["value"] for p in pairs(reader)) == ["0", "1", "2", "3", "4"]


def test_stateful_capture_across_workers_numbers_without_gaps(
    simproxy_factory: Any, redis_server: Any, upstream: Upstream
) -> None:
    shared = ("-redis-url", redis_server.url, "-redis-prefix", "stateful-fleet:", "-workers", "2")
    a: Simproxy = simproxy_factory(*shared)
    b: Simproxy = simproxy_factory(*shared)
    assert a.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture", "arguments": {"stateful": True}})[0] == 200

    def send(i: int) -> bytes:
        status, _, body = (a if i % 2 else b).proxy(upstream.url("/count"))
        assert status == 200
        return body

    with ThreadPoolExecutor(12) as pool:
        answers = set(pool.map(send, range(60)))
    captured = pairs(b)
    assert len(captured) == 60
    steps = sorted(int(p["request"]["requiresState"]["sequence:1"]) for p in captured)
    assert steps == list(range(1, 61))  # no gap, no step twice
    by_step = {int(p["request"]["requiresState"]["sequence:1"]): p for p in captured}
    for step in range(1, 60):
        assert by_step[step]["response"]["transitionsState"] == {"sequence:1": str(step + 1)}
    assert "transitionsState" not in by_step[60]["response"]
    assert {p["response"]["body"].encode() for p in captured} == answers  # each real answer kept once
