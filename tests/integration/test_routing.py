"""Routing: the upstream proxy every forwarded request goes through, and proxy-side CORS."""

from __future__ import annotations

import concurrent.futures
import time
from typing import Any

from tests.integration.conftest import Simproxy, simulation
from tests.integration.upstream import Upstream


def test_forwarded_requests_go_through_the_upstream_proxy(simproxy_factory: Any, upstream: Upstream) -> None:
    relay: Simproxy = simproxy_factory()  # a second simproxy in modify mode: a plain forwarding proxy
    assert relay.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "modify"})[0] == 200
    sp: Simproxy = simproxy_factory("-upstream-proxy", f"127.0.0.1:{relay.proxy_port}")
    assert sp.admin_json("GET", "/api/v2/hoverfly/upstream-proxy")[1] == {
        "upstreamProxy": f"http://127.0.0.1:{relay.proxy_port}"
    }
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    status, headers, body = sp.proxy(upstream.url("/via-proxy"))
    assert (status, body) == (200, b"real /via-proxy")
    assert headers["hoverfly"] == "Was-Here, Was-Here"  # one mark per simproxy on the way
    [entry] = relay.admin_json("GET", "/api/v2/journal")[1]["journal"]
    assert (entry["mode"], entry["request"]["path"]) == ("modify", "/via-proxy")


def test_cors_preflights_and_allow_headers(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-cors")
    assert sp.admin_json("GET", "/api/v2/hoverfly/cors")[1] == {
        "enabled": True,
        "allowOrigin": "*",
        "allowMethods": "GET,POST,PUT,PATCH,DELETE,HEAD,OPTIONS",
        "allowHeaders": "Content-Type,Origin,Accept,Authorization,Content-Length,X-Requested-With",
        "preflightMaxAge": 1800,
        "allowCredentials": True,
    }
    assert sp.admin_json("GET", "/api/v2/hoverfly")[1]["cors"]["enabled"] is True
    pair = {"request": {"path": [{"matcher": "exact", "value": "/api"}]}, "response": {"body": "data"}}
    assert sp.admin("PUT", "/api/v2/simulation", simulation(pair))[0] == 200
    origin = {"Origin": "http://app.test"}
    status, headers, body = sp.proxy(
        "http://svc.test/anything", "OPTIONS", headers={**origin, "Access-Control-Request-Method": "PUT"}
    )
    assert (status, body) == (200, b"")
    assert headers["access-control-allow-origin"] == "http://app.test"
    assert headers["access-control-allow-methods"] == "GET,POST,PUT,PATCH,DELETE,HEAD,OPTIONS"
    assert headers["access-control-allow-headers"].startswith("Content-Type,Origin")
    assert headers["access-control-max-age"] == "1800"
    assert headers["access-control-allow-credentials"] == "true"
    status, headers, body = sp.proxy("http://svc.test/api", headers=origin)
    assert (status, body) == (200, b"data")
    assert headers["access-control-allow-origin"] == "http://app.test"
    assert headers["access-control-allow-credentials"] == "true"
    status, headers, _ = sp.proxy("http://svc.test/missing", headers=origin)
    assert status == 502 and "access-control-allow-origin" not in headers  # a failed mode gets none
    journal = sp.admin_json("GET", "/api/v2/journal")[1]["journal"]
    assert [e["request"]["method"] for e in journal] == ["OPTIONS", "GET", "GET"]


def test_without_cors_a_preflight_is_matched_like_any_request(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory()
    assert sp.admin_json("GET", "/api/v2/hoverfly/cors")[1] == {"enabled": False}
    headers = {"Origin": "http://app.test", "Access-Control-Request-Method": "PUT"}
    assert sp.proxy("http://svc.test/x", "OPTIONS", headers=headers)[0] == 502


# Scripts that fail, and how each dialect words it: duktape, the engine that runs them, by default;
# Hoverfly's otto under -compat hoverfly (its functional suite's script among them)
PAC_ERRORS = [
    (b"BADPACFILE", (b"ReferenceError: BADPACFILE is not defined (line 1, column 1)",
                     b"ReferenceError: 'BADPACFILE' is not defined")),
    (b"function FindProxyForURL(url, host) {\n\t\t\t\t&BADPACFILE&\n\t\t\t}",
     (b"SyntaxError: unexpected token in expression: '&' (line 2, column 9)",
      b"(anonymous): Line 2:5 Unexpected token & (and 1 more errors)")),
    (b"function FindProxyForURL(url, host) {", (b"SyntaxError: unexpected token in expression: '' (line 1, column 9)",
                                                 b"(anonymous): Line 1:38 Unexpected end of input")),
]  # fmt: skip


def test_pac_file_chooses_the_upstream_proxy(simproxy_factory: Any, upstream: Upstream) -> None:
    relay: Simproxy = simproxy_factory()
    assert relay.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "modify"})[0] == 200
    sp: Simproxy = simproxy_factory()
    assert sp.admin_json("GET", "/api/v2/hoverfly/pac") == (404, {"error": "Not found"})
    pac = (
        "function FindProxyForURL(url, host) {\n"
        f'  if (shExpMatch(url, "*/via-relay*")) return "PROXY 127.0.0.1:{relay.proxy_port}; DIRECT";\n'
        '  return "DIRECT";\n}\n'
    )
    status, headers, body = sp.admin("PUT", "/api/v2/hoverfly/pac", raw=pac.encode())
    assert (status, headers["content-type"], body) == (200, "application/x-ns-proxy-autoconfig", pac.encode())
    assert sp.admin("GET", "/api/v2/service/pac")[2] == pac.encode()
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    assert sp.proxy(upstream.url("/via-relay"))[2] == b"real /via-relay"
    assert sp.proxy(upstream.url("/direct"))[2] == b"real /direct"
    paths = [e["request"]["path"] for e in relay.admin_json("GET", "/api/v2/journal")[1]["journal"]]
    assert paths == ["/via-relay"]

    # a script that does not parse: the error as the JavaScript engine that runs it words it, and where
    assert sp.admin("PUT", "/api/v2/hoverfly/pac", raw=b"function FindProxyForURL(url, host) {")[0] == 200
    status, _, body = sp.proxy(upstream.url("/broken"))
    assert status == 502
    assert body.endswith(
        b"Got error: Unable to parse PAC file\n\nSyntaxError: unexpected token in expression: '' (line 1, column 9)"
    )
    assert sp.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"][-1]["request"]["path"][0]["value"] == (
        "/direct"
    )  # the failed request recorded nothing
    for bad, words in PAC_ERRORS:
        assert sp.admin("PUT", "/api/v2/hoverfly/pac", raw=bad)[0] == 200
        status, _, body = sp.proxy(upstream.url("/bad"))
        assert status == 502 and body.endswith(b"Unable to parse PAC file\n\n" + words[0])

    assert sp.admin("DELETE", "/api/v2/hoverfly/pac")[:3:2] == (200, b"")
    assert sp.admin("GET", "/api/v2/hoverfly/pac")[0] == 404
    assert sp.admin("PUT", "/api/v2/hoverfly/pac", raw=pac.encode())[0] == 200
    assert sp.admin_json("PUT", "/api/v2/hoverfly/pac", raw=b"") == (404, {"error": "Not found"})  # empty: unset
    assert sp.proxy(upstream.url("/direct-again"))[2] == b"real /direct-again"


def test_a_pac_script_that_never_returns_fails_its_request_and_blocks_nothing(
    simproxy_factory: Any, upstream: Upstream
) -> None:
    sp: Simproxy = simproxy_factory()
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    looping = b"function FindProxyForURL(url, host) { while (true) {} }"
    assert sp.admin("PUT", "/api/v2/hoverfly/pac", raw=looping)[0] == 200
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        stuck = pool.submit(sp.proxy, upstream.url("/loops"))
        time.sleep(0.5)
        assert sp.admin("GET", "/api/v2/hoverfly/mode")[0] == 200  # the worker's event loop is free
        assert not stuck.done()
        status, _, body = stuck.result(timeout=30)
    assert status == 502 and b"Unable to parse PAC file" in body and b"more than 5 s" in body
    assert sp.admin("DELETE", "/api/v2/hoverfly/pac")[0] == 200
    assert sp.proxy(upstream.url("/after"))[2] == b"real /after"  # and the next one goes through


def test_under_compat_a_failing_pac_script_is_worded_as_hoverflys_engine_words_it(
    simproxy_factory: Any, upstream: Upstream
) -> None:
    sp: Simproxy = simproxy_factory("-compat", "hoverfly")
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    for bad, words in PAC_ERRORS:
        assert sp.admin("PUT", "/api/v2/hoverfly/pac", raw=bad)[0] == 200
        status, _, body = sp.proxy(upstream.url("/bad"))
        assert status == 502 and body.endswith(b"Unable to parse PAC file\n\n" + words[1])
