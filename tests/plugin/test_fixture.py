"""The ``simproxy`` fixture: one server per session, a fresh start per test, the environment set for
the test only, HTTPS through its CA, ``verify`` on the journal, nothing left running afterwards."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.conftest import refused
from tests.plugin.conftest import INNER_INI, gone, info

pytestmark = pytest.mark.slow

Run = Callable[..., pytest.RunResult]

SESSION = """
import json
import os
import sys
import urllib.request
from pathlib import Path

import pytest
import requests

from simproxy.admin.kit.client import Call, pair


def children():
    return [
        stat.parent.name
        for stat in Path("/proc").glob("[0-9]*/stat")
        if stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[1] == str(os.getpid())
    ]


def test_0_nothing_runs_before_a_test_uses_the_fixture():
    assert children() == []
    assert "simproxy.admin.kit.harness" not in sys.modules


def test_1_first(simproxy):
    assert os.environ["HTTP_PROXY"] == os.environ["https_proxy"] == simproxy.proxy_url
    assert os.environ["REQUESTS_CA_BUNDLE"] == os.environ["SSL_CERT_FILE"] == str(simproxy.ca_path)
    assert "NO_PROXY" not in os.environ
    assert simproxy.ca_cert_path.read_text().startswith("-----BEGIN CERTIFICATE-----")
    assert simproxy.ca_path.read_text().endswith(simproxy.ca_cert_path.read_text())  # the bundle ends with it
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # HTTP_PROXY is simproxy's proxy
    config = json.load(direct.open(simproxy.admin_url + "/api/v2/hoverfly"))
    assert config["cors"]["enabled"] is True  # simproxy_args in the ini

    simproxy.add_pairs(pair("/pay", method="GET", destination="api.test", body="paid"))
    assert requests.get("http://api.test/pay?b=2&a=1").text == "paid"
    assert requests.get("http://api.test/pay", proxies=simproxy.proxies).text == "paid"
    assert len(simproxy.verify(method="get", path="/pay", times=2)) == 2
    simproxy.verify(destination="api.test", query={"a": "1", "b": "2"}, times=1)
    simproxy.verify(path="/pay", query="a=1&b=2", at_least=1)
    simproxy.client.set_state({"basket": "full"})
    assert simproxy.mode("spy") == "spy"
    Path("info.json").write_text(json.dumps({"admin_url": simproxy.admin_url, "pid": simproxy.server.pid}))


def test_2_second_sees_nothing_of_the_first(simproxy):
    assert simproxy.admin_url == json.loads(Path("info.json").read_text())["admin_url"]  # the same server
    assert simproxy.client.simulation()["data"]["pairs"] == []
    assert simproxy.journal() == []
    assert simproxy.client.state() == {}
    assert simproxy.mode() == "simulate"
    assert requests.get("http://api.test/pay").status_code == 502


def test_3_the_environment_is_restored():
    assert os.environ["NO_PROXY"] == "keep.me"
    assert os.environ["REQUESTS_CA_BUNDLE"] == "/the/usual/bundle.pem"
    assert "HTTP_PROXY" not in os.environ and "https_proxy" not in os.environ


def test_4_verify_names_the_closest_requests(simproxy):
    simproxy.add_pairs(pair("/pay", body="paid"))
    requests.get("http://api.test/pay")
    requests.post("http://api.test/other?x=1", data="hello")
    requests.delete("http://elsewhere.test/")
    simproxy.verify(method="POST", path="/pay", times=1)


@pytest.mark.simproxy(simulation="cassettes/tls.json", pairs=[pair("/added", body="added")])
def test_5_https_through_the_ca(simproxy, monkeypatch):
    assert requests.get("https://secure.test/hello").text == "over TLS"
    assert simproxy.requests_session().get("https://secure.test/hello").text == "over TLS"
    with simproxy.httpx_client() as client:
        assert client.get("https://secure.test/hello").text == "over TLS"
    simproxy.verify(destination="secure.test", path="/hello", times=3)
    assert requests.get("https://secure.test/added").text == "added"  # the marker's pairs, after the file's

    monkeypatch.setitem(sys.modules, "httpx", None)  # as if httpx were not installed
    with pytest.raises(ImportError, match="needs httpx: pip install httpx"):
        simproxy.httpx_client()


@pytest.mark.simproxy(mode="spy", env=False)
def test_6_the_marker_sets_the_mode_and_can_leave_the_environment_alone(simproxy):
    assert simproxy.mode() == "spy"
    assert "HTTP_PROXY" not in os.environ and os.environ["NO_PROXY"] == "keep.me"
    assert simproxy.mode("spy", {"captureOnMiss": True}) == "spy"  # arguments as a mapping
    assert simproxy.client.send(Call("GET", "/api/v2/hoverfly/mode", json.loads))["arguments"]["captureOnMiss"]
    assert simproxy.mode("capture", stateful=True) == "capture"  # or as keywords
"""

TLS_PAIR = {
    "request": {
        "destination": [{"matcher": "exact", "value": "secure.test"}],
        "path": [{"matcher": "exact", "value": "/hello"}],
    },
    "response": {"status": 200, "body": "over TLS"},
}


def test_one_server_per_session_a_fresh_start_per_test_and_verify(
    pytester: pytest.Pytester, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "keep.me")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/the/usual/bundle.pem")
    pytester.makepyfile(test_session=SESSION)
    (pytester.path / "cassettes").mkdir()
    tls = {"data": {"pairs": [TLS_PAIR]}, "meta": {"schemaVersion": "v5.3"}}
    (pytester.path / "cassettes" / "tls.json").write_text(json.dumps(tls))
    pytester.makeini(INNER_INI + "simproxy_args = -cors\n")

    result = run("-v")

    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_4_verify_names_the_closest_requests FAILED*",
            "E * simproxy.verify: expected exactly 1 request with method='POST', path='/pay'; 0 matched.",
            "E * Closest of the 3 journal entries:",
            "E *   GET http://api.test/pay -> 200   (differs on method)",
            "E *   POST http://api.test/other?x=1 -> 502   (differs on path)",
            "E *   DELETE http://elsewhere.test/ -> 502   (differs on method, path)",
        ]
    )
    server = info(pytester)
    assert gone(server["pid"])  # stopped with the session
    assert refused(int(server["admin_url"].rsplit(":", 1)[1]))


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    code = (
        "import sys, pytest; before = set(sys.modules); import simproxy.admin.kit.pytest_plugin; "
        "print(sorted(set(sys.modules) - before))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['simproxy', 'simproxy.admin', 'simproxy.admin.kit', 'simproxy.admin.kit.pytest_plugin']"


TRUSTED = """
import os
from pathlib import Path

import requests

from simproxy.admin.kit.client import pair


def test_https_intercepted_and_tunnelled_blind_both_verify(simproxy):
    bundle = simproxy.ca_path.read_text()
    assert os.environ["SSL_CERT_FILE"] == os.environ["REQUESTS_CA_BUNDLE"] == str(simproxy.ca_path)
    assert Path("{system}").read_text().strip() in bundle  # the machine's CAs ...
    assert simproxy.ca_cert_path.read_text().strip() in bundle  # ... and simproxy's
    assert simproxy.ca_cert_path.read_text().startswith("-----BEGIN CERTIFICATE-----")

    simproxy.add_pairs(pair("/hello", destination="simulated.test", body="simulated"))
    simproxy.client.set_destination("simulated.test")  # any other host: a blind tunnel to it
    real = "https://localhost:{port}/hello"
    assert requests.get("https://simulated.test/hello").text == "simulated"  # simproxy's certificate
    assert requests.get(real).text == "real /hello"  # the real service's, through the tunnel
    with simproxy.httpx_client() as client:
        assert client.get("https://simulated.test/hello").text == "simulated"
        assert client.get(real).text == "real /hello"
    simproxy.verify(destination="simulated.test", times=2)
    assert len(simproxy.journal()) == 2  # the tunnelled requests were not intercepted
"""


def test_the_ca_bundle_is_the_systems_and_simproxys(
    pytester: pytest.Pytester, run: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from simproxy.engine.server.certs import LeafCertificates, generate_ca
    from tests.integration.upstream import start_upstream

    real_ca = generate_ca("a real service's CA", "tests")
    system = tmp_path / "system-bundle.pem"  # stands for the machine's bundle: OpenSSL reads SSL_CERT_FILE
    system.write_bytes(real_ca.cert_pem)
    monkeypatch.setenv("SSL_CERT_FILE", str(system))
    upstream = start_upstream(LeafCertificates(real_ca).context("localhost"))
    try:
        pytester.makepyfile(test_trusted=TRUSTED.replace("{system}", str(system)).replace("{port}", str(upstream.port)))
        run().assert_outcomes(passed=1)
        assert [seen.path for seen in upstream.requests] == ["/hello", "/hello"]
    finally:
        upstream.stop()
