"""Spy and diff modes, the relay of requests outside the destination filter, and the webserver's
refusal to forward to itself, against a real upstream server."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from simproxy.engine.modes.failures import PRODUCT
from tests.integration.conftest import Simproxy, simulation
from tests.integration.upstream import Upstream, start_upstream


def stub(path: str, body: str, headers: dict[str, list[str]] | None = None, status: int = 200) -> dict[str, Any]:
    return {
        "request": {"path": [{"matcher": "exact", "value": path}]},
        "response": {"status": status, "body": body, "headers": headers or {"Content-Type": ["text/plain"]}},
    }


@pytest.fixture
def sp(simproxy: Simproxy) -> Simproxy:
    for path in ("/api/v2/simulation", "/api/v2/journal", "/api/v2/diff"):
        assert simproxy.admin("DELETE", path)[0] == 200
    assert simproxy.admin("PUT", "/api/v2/hoverfly/destination", {"destination": "."})[0] == 200
    return simproxy


def put_mode(sp: Simproxy, mode: str, **arguments: Any) -> None:
    status, _, body = sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": mode, "arguments": arguments})
    assert status == 200, body


def counters(sp: Simproxy) -> dict[str, int]:
    result: dict[str, int] = sp.admin_json("GET", "/api/v2/hoverfly/usage")[1]["usage"]["counters"]
    return result


# -- spy ---------------------------------------------------------------------------------------


def test_spy_serves_hits_and_forwards_misses(sp: Simproxy, upstream: Upstream) -> None:
    assert sp.admin("PUT", "/api/v2/simulation", simulation(stub("/known", "simulated")))[0] == 200
    put_mode(sp, "spy")
    seen = len(upstream.requests)
    status, headers, body = sp.proxy(upstream.url("/known"))
    assert (status, body) == (200, b"simulated")
    assert "hoverfly" not in headers
    assert len(upstream.requests) == seen  # a hit never reaches the real service
    status, headers, body = sp.proxy(upstream.url("/unknown"))
    assert (status, body) == (200, b"real /unknown")
    assert headers["hoverfly"] == "Was-Here, Forwarded"
    assert headers["x-real"] == "yes"
    assert sp.proxy(upstream.url("/unknown"))[2] == b"real /unknown"  # a cached miss forwards again
    assert len(upstream.requests) == seen + 2
    assert [
        p["request"]["path"][0]["value"] for p in sp.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"]
    ] == ["/known"]  # nothing captured without captureOnMiss
    journal = sp.admin_json("GET", "/api/v2/journal")[1]["journal"]
    assert [(e["mode"], e["response"]["body"]) for e in journal] == [
        ("spy", "simulated"),
        ("spy", "real /unknown"),
        ("spy", "real /unknown"),
    ]


def test_spy_capture_on_miss_records_and_then_serves_the_pair(sp: Simproxy, upstream: Upstream) -> None:
    put_mode(sp, "spy", captureOnMiss=True)
    first = sp.proxy(upstream.url("/count"))[2]
    second = sp.proxy(upstream.url("/count"))[2]
    assert second == first  # the second came from the captured pair
    [captured] = sp.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"]
    assert captured["response"]["body"] == first.decode()
    assert captured["response"]["headers"]["Hoverfly"] == ["Was-Here", "Forwarded"]  # as Hoverfly captures it


def test_spy_forwarding_failure_is_502(sp: Simproxy) -> None:
    put_mode(sp, "spy")
    closed = start_upstream()
    closed.stop()
    status, _, body = sp.proxy(f"http://{closed.host}/gone")
    assert status == 502
    assert body.startswith(f"{PRODUCT} Error!\n\nThere was an error when forwarding the request".encode())


# -- diff --------------------------------------------------------------------------------------


def test_diff_serves_the_real_response_and_reports_differences(sp: Simproxy, upstream: Upstream) -> None:
    expected_echo = json.dumps({"method": "GET", "path": "/wrong", "extra": 1})
    sim = simulation(
        stub("/differs", "expected body", {"Content-Type": ["text/plain"], "X-Real": ["no"]}, status=201),
        stub("/same", "real /same", {"Content-Type": ["text/plain"]}),
        stub("/echo/doc", expected_echo, {"Content-Type": ["application/json"]}),
    )
    assert sp.admin("PUT", "/api/v2/simulation", sim)[0] == 200
    put_mode(sp, "diff")
    status, headers, body = sp.proxy(upstream.url("/differs?x=1"))
    assert (status, body, headers["hoverfly"]) == (200, b"real /differs", "Was-Here")
    assert sp.proxy(upstream.url("/same"))[2] == b"real /same"
    assert sp.proxy(upstream.url("/not-simulated"))[2] == b"real /not-simulated"
    sp.proxy(upstream.url("/echo/doc"))
    status, doc = sp.admin_json("GET", "/api/v2/diff")
    assert status == 200
    groups = {g["request"]["path"]: g for g in doc["diff"]}
    assert sorted(groups) == ["/differs", "/echo/doc"]  # no report for a match or a miss
    differs = groups["/differs"]
    assert differs["request"] == {"method": "GET", "host": upstream.host, "path": "/differs", "query": "x=1"}
    [report] = differs["diffReports"]
    assert report["diffEntries"] == [
        {"field": "status", "expected": "201", "actual": "200"},
        {"field": "header/X-Real", "expected": "[no]", "actual": "[yes]"},
        {"field": "body", "expected": "expected body", "actual": "real /differs"},
    ]
    [echo] = groups["/echo/doc"]["diffReports"]
    assert {"field": "body/path", "expected": "/wrong", "actual": "/echo/doc"} in echo["diffEntries"]
    assert {"field": "body/extra", "expected": "1", "actual": "null"} in echo["diffEntries"]
    assert counters(sp)["diff"] >= 4


def test_diff_headers_whitelist_ignores_headers(sp: Simproxy, upstream: Upstream) -> None:
    sim = simulation(stub("/hdr", "real /hdr", {"Content-Type": ["text/plain"], "X-Real": ["no"]}))
    assert sp.admin("PUT", "/api/v2/simulation", sim)[0] == 200
    put_mode(sp, "diff", headersWhitelist=["X-Real"])
    sp.proxy(upstream.url("/hdr"))
    assert sp.admin_json("GET", "/api/v2/diff")[1] == {"diff": []}


# -- destination filter and webserver ----------------------------------------------------------


def test_requests_outside_the_destination_are_relayed_untouched(sp: Simproxy, upstream: Upstream) -> None:
    put_mode(sp, "simulate")
    assert sp.admin("PUT", "/api/v2/hoverfly/destination", {"destination": "^only-this-host$"})[0] == 200
    before = counters(sp)
    status, headers, body = sp.proxy(upstream.url("/elsewhere"))
    assert (status, body) == (200, b"real /elsewhere")
    assert "hoverfly" not in headers
    assert counters(sp) == before
    assert sp.admin_json("GET", "/api/v2/journal")[1]["journal"] == []


def test_webserver_refuses_capture_and_never_forwards_to_itself(simproxy_factory: Any) -> None:
    web = simproxy_factory("-webserver")
    status, _, body = web.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})
    assert status == 400
    assert json.loads(body) == {"error": f"Cannot change the mode of {PRODUCT} to capture when running as a webserver"}
    assert web.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "spy"})[0] == 200
    status, _, body = web.proxy("/missing", headers={"Host": f"localhost:{web.proxy_port}"})
    assert status == 502
    assert b"is this simproxy itself; refusing to forward the request to it" in body
    assert counters(web)["spy"] == 1  # one request, not a loop


def test_an_upstream_that_never_answers_is_a_502_after_the_timeout(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-upstream-timeout", "300ms")
    put_mode(sp, "spy")
    with socket.socket() as silent:  # accepts connections (the kernel does) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        host = f"127.0.0.1:{silent.getsockname()[1]}"
        status, _, body = sp.proxy(f"http://{host}/hang")
    assert status == 502
    assert body.endswith(f'Got error: Get "http://{host}/hang": no answer within 0.3s'.encode())
    assert sp.admin_json("GET", "/api/v2/hoverfly/usage")[1]["usage"]["counters"]["spy"] == 1


def test_webserver_spy_and_diff_forward_to_the_host_header(simproxy_factory: Any, upstream: Upstream) -> None:
    web: Simproxy = simproxy_factory("-webserver")
    sim = simulation(stub("/known", "simulated"), stub("/differs", "expected"))
    assert web.admin("PUT", "/api/v2/simulation", sim)[0] == 200
    host = {"Host": upstream.host}
    put_mode(web, "spy")
    assert web.proxy("/known", headers=host)[2] == b"simulated"
    status, headers, body = web.proxy("/elsewhere", headers=host)
    assert (status, body, headers["hoverfly"]) == (200, b"real /elsewhere", "Was-Here, Forwarded")
    put_mode(web, "diff")
    assert web.proxy("/differs", headers=host)[2] == b"real /differs"
    [group] = web.admin_json("GET", "/api/v2/diff")[1]["diff"]
    assert group["request"]["path"] == "/differs"
