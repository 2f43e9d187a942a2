"""Post-serve actions: the API, the import check, local and remote runs, and the journal's record."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, simulation
from tests.integration.upstream import Upstream

ACTIONS = "/api/v2/hoverfly/post-serve-action"


@pytest.fixture
def sp(simproxy_factory: Any) -> Simproxy:
    proc: Simproxy = simproxy_factory("-journal-size", "2000")
    return proc


def with_action(name: str, body: str = "served") -> dict[str, Any]:
    return {"request": {}, "response": {"status": 200, "body": body, "postServeAction": name}}


def wait_for(check: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_the_api_sets_lists_and_deletes_actions(sp: Simproxy) -> None:
    assert sp.admin_json("GET", ACTIONS) == (200, {})
    local = {"actionName": "zeta", "binary": "sh", "script": "cat", "delayInMs": 100}
    assert sp.admin_json("PUT", ACTIONS, local)[0] == 200
    status, listed = sp.admin_json("PUT", ACTIONS, {"actionName": "alpha", "remote": "http://hook.test/cb"})
    assert status == 200
    status, listed = sp.admin_json("PUT", ACTIONS, {"actionName": "  ", "binary": "sh", "script": "true"})
    assert listed == {
        "actions": [
            {"actionName": "alpha", "remote": "http://hook.test/cb"},
            local,
            {"binary": "sh", "script": "true"},  # the fallback: no name, listed last
        ]
    }
    assert sp.admin_json("GET", "/api/v2/service/post-serve-action") == (200, listed)
    assert sp.admin_json("PUT", ACTIONS, {"actionName": "x", "remote": "not a url"}) == (
        400,
        {"error": "remote host is invalid"},
    )
    assert sp.admin_json("PUT", ACTIONS, {"actionName": "x", "delayInMs": "soon"}) == (
        400,
        {"error": 'Malformed JSON: "delayInMs" must be a whole number, not "soon"'},
    )
    assert sp.admin_json("DELETE", f"{ACTIONS}/nope") == (400, {"error": "invalid action name passed"})
    status, listed = sp.admin_json("DELETE", f"{ACTIONS}/zeta")
    assert status == 200
    assert [a.get("actionName") for a in listed["actions"]] == ["alpha", None]


def test_an_import_naming_an_unknown_action_is_refused_without_a_fallback(sp: Simproxy) -> None:
    status, error = sp.admin_json("PUT", "/api/v2/simulation", simulation(with_action("hook")))
    assert status == 500 and error["error"].endswith("invalid post server action name provided")
    assert sp.admin_json("PUT", ACTIONS, {"actionName": "hook", "binary": "sh", "script": "true"})[0] == 200
    assert sp.admin("PUT", "/api/v2/simulation", simulation(with_action("hook")))[0] == 200
    assert sp.admin_json("PUT", ACTIONS, {"binary": "sh", "script": "true"})[0] == 200  # a fallback ...
    assert sp.admin("PUT", "/api/v2/simulation", simulation(with_action("anything")))[0] == 200  # ... takes any name


def test_a_local_action_runs_after_the_response_with_the_pair(sp: Simproxy, tmp_path: Path) -> None:
    out = tmp_path / "payload.json"
    script = f"cat > {out}.tmp && mv {out}.tmp {out}\n"
    action = {"actionName": "save", "binary": "sh", "script": script, "delayInMs": 300}
    assert sp.admin_json("PUT", ACTIONS, action)[0] == 200
    assert sp.admin("PUT", "/api/v2/simulation", simulation(with_action("save", "the body")))[0] == 200
    status, _, body = sp.proxy("http://svc.test/orders?id=7")
    assert (status, body) == (200, b"the body")
    assert not out.exists()  # the action waits 200 ms + delayInMs, after the response
    wait_for(out.exists)
    pair = json.loads(out.read_text())
    assert pair["request"]["path"] == "/orders" and pair["request"]["query"] == "id=7"
    assert pair["response"]["body"] == "the body" and pair["response"]["postServeAction"] == "save"

    def recorded() -> bool:
        return sp.admin_json("GET", "/api/v2/journal")[1]["journal"][0]["postServeAction"] is not None

    wait_for(recorded)
    record = sp.admin_json("GET", "/api/v2/journal")[1]["journal"][0]["postServeAction"]
    assert record["name"] == "save"
    assert set(record) == {"name", "invoked", "completed"}
    assert record["invoked"] <= record["completed"]


def test_five_hundred_remote_actions_all_run_and_none_delays_its_response(sp: Simproxy, upstream: Upstream) -> None:
    hook = upstream.url("/callback")
    assert sp.admin_json("PUT", ACTIONS, {"actionName": "hook", "remote": hook, "delayInMs": 2000})[0] == 200
    assert sp.admin("PUT", "/api/v2/simulation", simulation(with_action("hook")))[0] == 200

    def callbacks() -> list[Any]:
        return [r for r in list(upstream.requests) if r.path == "/callback"]

    with ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(lambda i: sp.proxy(f"http://svc.test/item/{i}")[2], range(500)))
    assert answers == [b"served"] * 500
    assert callbacks() == []  # every response came back before any action started
    wait_for(lambda: len(callbacks()) >= 500)
    seen = callbacks()
    assert len(seen) == 500
    assert {json.loads(r.body)["request"]["path"] for r in seen} == {f"/item/{i}" for i in range(500)}
    correlation = {r.headers["X-CORRELATION-ID"] for r in seen}
    assert len(correlation) == 500

    def all_recorded() -> bool:
        journal = sp.admin_json("GET", "/api/v2/journal?limit=1000")[1]["journal"]
        return sum(e["postServeAction"] is not None for e in journal) == 500

    wait_for(all_recorded)
    journal = sp.admin_json("GET", "/api/v2/journal?limit=1000")[1]["journal"]
    records = [e["postServeAction"] for e in journal]
    assert {r["correlationId"] for r in records} == correlation
    assert {(r["name"], r["status"]) for r in records} == {("hook", 200)}


def test_a_request_sent_again_byte_for_byte_gets_an_entry_and_an_action_record_each(
    sp: Simproxy, upstream: Upstream
) -> None:
    """The journal keeps a request served again as a run of entries; each entry is still its own,
    and the action's record written into one entry of the run leaves the others as they were."""
    hook = upstream.url("/callback")
    assert sp.admin_json("PUT", ACTIONS, {"actionName": "hook", "remote": hook})[0] == 200
    assert sp.admin("PUT", "/api/v2/simulation", simulation(with_action("hook")))[0] == 200
    conn = http.client.HTTPConnection("127.0.0.1", sp.proxy_port, timeout=10)
    for _ in range(8):  # one connection, the same bytes each time
        conn.request("GET", "http://svc.test/again")
        assert conn.getresponse().read() == b"served"
    conn.close()

    def all_recorded() -> bool:
        journal = sp.admin_json("GET", "/api/v2/journal")[1]["journal"]
        return len(journal) == 8 and all(e["postServeAction"] is not None for e in journal)

    wait_for(all_recorded)
    journal = sp.admin_json("GET", "/api/v2/journal")[1]["journal"]
    assert len({e["id"] for e in journal}) == 8
    started = [e["timeStarted"] for e in journal]
    assert started == sorted(started)
    assert {e["request"]["path"] for e in journal} == {"/again"}
    correlation = [e["postServeAction"]["correlationId"] for e in journal]
    assert len(set(correlation)) == 8
    callbacks = [r for r in list(upstream.requests) if r.path == "/callback"]  # the upstream is shared
    called = [r.headers["X-CORRELATION-ID"] for r in callbacks if json.loads(r.body)["request"]["path"] == "/again"]
    assert sorted(called) == sorted(correlation)
    metrics = sp.admin("GET", "/metrics")[2].decode()
    assert "\nsimproxy_journal_entries 8.0\n" in metrics  # each amend split the run, and the count held


def test_spy_hits_do_not_run_actions(sp: Simproxy, upstream: Upstream) -> None:
    hook = upstream.url("/spy-callback")
    assert sp.admin_json("PUT", ACTIONS, {"actionName": "hook", "remote": hook})[0] == 200
    assert sp.admin("PUT", "/api/v2/simulation", simulation(with_action("hook")))[0] == 200
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "spy"})[0] == 200
    assert sp.proxy("http://svc.test/x")[2] == b"served"
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200
    assert sp.proxy("http://svc.test/x")[2] == b"served"
    wait_for(lambda: any(r.path == "/spy-callback" for r in list(upstream.requests)))
    time.sleep(0.5)
    assert sum(r.path == "/spy-callback" for r in list(upstream.requests)) == 1  # the simulate one only
