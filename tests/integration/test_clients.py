"""Hoverfly's own tools drive simproxy unchanged: what hoverctl and hoverfly-java send, and read back.

The clients (tests/integration/clients.py) send what the tools send, to the paths they use, and
hold the answers to the tools' rules: hoverctl takes only a 200 as success and sends no
Content-Type; hoverfly-java fails on keys it does not know in some views and on a null journal.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from simproxy.admin.process.redisserver import RedisServer
from tests.integration.clients import ClientError, Hoverctl, JavaClient
from tests.integration.conftest import Simproxy, pair, simulation, wait_until

USER, PASSWORD = "ops", "correct horse"
BASIC = {"Proxy-Authorization": "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()}


def test_hoverctl_logs_in_and_drives_every_command(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-auth", "-username", USER, "-password", PASSWORD)
    ctl = Hoverctl(sp.admin_port)
    assert ctl.running()
    with pytest.raises(ClientError, match="requires authentication"):
        ctl.get_mode()
    ctl.login(USER, PASSWORD)

    # mode
    assert ctl.get_mode() == ("simulate", "strongest")
    assert (
        ctl.set_mode("capture", headersWhitelist=["X-A", "X-B"], stateful=True, overwriteDuplicate=False) == "capture"
    )
    assert ctl.status() == {"mode": "capture", "webserver": False, "cors": False}
    assert ctl.set_mode("simulate", matchingStrategy="first") == "simulate"
    assert ctl.get_mode() == ("simulate", "first")

    # import (sent raw, without a Content-Type), the proxy answers from it, export with a URL pattern
    doc = simulation(
        pair("/a", "from a", destination=[{"matcher": "exact", "value": "svc.test"}]),
        pair("/b", "from b", destination=[{"matcher": "exact", "value": "svc.test"}]),
    )
    assert ctl.import_file(json.dumps(doc).encode()) == []
    assert sp.proxy("http://svc.test/a", headers=BASIC)[::2] == (200, b"from a")
    exported = ctl.export()
    assert [p["response"]["body"] for p in exported["data"]["pairs"]] == ["from a", "from b"]
    assert exported["meta"]["schemaVersion"] == "v5.3"
    only_b = ctl.export(url_pattern="svc.test/b")
    assert [p["response"]["body"] for p in only_b["data"]["pairs"]] == ["from b"]
    with pytest.raises(ClientError, match="Invalid JSON"):
        ctl.import_file(b"{not json")
    assert len(ctl.export()["data"]["pairs"]) == 2  # the bad import changed nothing

    # state: hoverctl's set is a PATCH, and it has only a delete-all
    ctl.set_state("stage", "one")
    ctl.set_state("user", "ann")
    assert ctl.state() == {"stage": "one", "user": "ann"}
    ctl.delete_state()
    assert ctl.state() == {}

    # destination, middleware, cache, logs, journal indexes, data sources, actions, diffs
    assert ctl.set_destination("svc\\.test") == "svc\\.test"
    assert ctl.get_destination() == "svc\\.test"
    assert ctl.middleware() == {"binary": "", "script": "", "remote": ""}
    ctl.flush_cache()
    assert ctl.logs(as_json=True) and all("msg" in entry for entry in ctl.logs(as_json=True))
    assert ctl.logs(as_json=False)
    ctl.set_journal_index("Request.QueryParam.id")
    assert [index["name"] for index in ctl.journal_indexes()] == ["Request.QueryParam.id"]
    ctl.delete_journal_index("Request.QueryParam.id")
    assert ctl.journal_indexes() == []
    ctl.set_csv("people", "id,name\n1,ann\n")
    assert ctl.csv_names() == ["people"]
    ctl.delete_csv("people")
    assert ctl.csv_names() == []
    assert ctl.post_serve_actions() == []
    assert ctl.diffs() == []

    ctl.delete_simulation()
    assert ctl.export()["data"]["pairs"] == []

    # stop: the shutdown call, then the process is gone and the health check finds nothing
    ctl.stop()
    assert sp.process is not None
    assert sp.process.wait(timeout=30) == 0
    assert not ctl.running()


@pytest.fixture
def fleet(simproxy_factory: Any, redis_server: RedisServer) -> tuple[Simproxy, Simproxy]:
    flags = ("-workers", "2", "-redis-url", redis_server.url, "-redis-prefix", "java-client:")
    return simproxy_factory(*flags), simproxy_factory(*flags)


def test_hoverfly_java_runs_a_test_against_a_fleet(fleet: tuple[Simproxy, Simproxy]) -> None:
    first, second = fleet
    java, other = JavaClient(first.admin_port), JavaClient(second.admin_port)
    assert java.healthy()
    info = java.info()  # Hoverfly.start() reads this and fails on keys it does not know in usage/middleware
    assert isinstance(info["version"], str) and info["version"]
    assert java.mode() == "SIMULATE"

    java.reset()  # what a rule does before each test on a remote instance
    java.set_mode("simulate")
    java.set_destination(".")
    sim = simulation(pair("/hello", "hi"), pair("/other", "o", method=[{"matcher": "exact", "value": "POST"}]))
    sim["data"]["globalActions"] = {"delays": [{"urlPattern": "none\\.test", "delay": 10, "httpMethod": "GET"}]}
    java.set_simulation(sim)
    exported = other.simulation()  # read back through the other instance, strictly
    assert len(exported["data"]["pairs"]) == 2
    assert exported["data"]["globalActions"]["delays"] == sim["data"]["globalActions"]["delays"]

    # the service under test calls its dependencies through the proxy, spread over both instances
    for sp in (first, second, first):
        assert sp.proxy("http://svc.test/hello")[::2] == (200, b"hi")
    assert second.proxy("http://svc.test/other", method="POST", body=b"x")[::2] == (200, b"o")

    # verify: the DSL's request (any destination, an exact empty body) counted on the journal's length
    assert wait_until(lambda: len(java.journal(0, 100)) == 4)
    java.verify("GET", "/hello", 3)
    java.verify("POST", "/other", 0)  # its body is not empty
    with pytest.raises(ClientError, match="Expected 1"):
        java.verify("POST", "/other", 1)
    found = other.search_journal(
        {"path": [{"matcher": "exact", "value": "/other"}], "body": [{"matcher": "exact", "value": "x"}]}
    )
    assert [entry["request"]["method"] for entry in found] == ["POST"]
    newest = java.journal(0, 2, sort="timeStarted:DESC")
    assert [entry["request"]["path"] for entry in newest] == ["/other", "/hello"]
    assert java.info()["usage"]["counters"]["simulate"] == 4

    # state, replaced then merged, seen from both instances
    java.set_state({"a": "1"})
    other.update_state({"b": "2"})
    assert java.state() == other.state() == {"a": "1", "b": "2"}
    java.delete_state()
    assert other.state() == {}

    assert java.diffs() == []
    Hoverctl(second.admin_port).set_journal_index("Request.Header.X-Id")
    assert second.proxy("http://svc.test/hello", headers={"X-Id": "7"})[0] == 200
    assert wait_until(lambda: any(index["entries"] for index in java.index_entries()))

    java.set_mode("capture", {"headersWhitelist": ["X-A"], "stateful": True})
    assert other.mode() == "CAPTURE"

    java.reset()
    assert java.journal(0, 10) == [] and other.simulation()["data"]["pairs"] == [] and other.state() == {}
