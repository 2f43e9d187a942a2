"""Fault injection at import: the 400s naming what is wrong, the round trip through an export, the
stored form a Redis-backed fleet's workers load, and Hoverfly's dialect refusing simproxy's own
members (what the faults do on the wire: tests/integration/test_faults.py)."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, emptied, simulation, wait_until
from tests.integration.test_faults import PLAIN, ask, connect, faulty, put, until_closed, with_faults


@pytest.fixture
def sp(simproxy: Simproxy) -> Simproxy:
    return emptied(simproxy)


# -- import: validation, round trip, -compat hoverfly ------------------------------------------------------------

REFUSED = [
    # one of each kind of refusal (tests/admin/api/test_simfile_faults.py has every case with its whole text):
    # an unknown value, a number beyond what Go holds, a missing member, a member of the wrong type
    pytest.param({"type": "teleport"}, "data.pairs.0.response.fault.type", id="unknown-type"),
    pytest.param(
        {"type": "bandwidth", "bytesPerSecond": 2**64},
        "data.pairs.0.response.fault.bytesPerSecond>: Must be less than or equal to 10000000000",
        id="rate-beyond-64-bits",
    ),
    pytest.param(
        {"type": "dribble", "durationMs": 100}, "data.pairs.0.response.fault>: chunks is required", id="no-chunks"
    ),
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


@pytest.mark.parametrize(
    ("where", "path"),
    [
        pytest.param("fixedDelay", "data.pairs[0].response.fixedDelay", id="fixedDelay"),
        pytest.param("delay", "data.globalActions.delays[0].delay", id="global-delay"),
    ],
)
def test_a_delay_beyond_gos_int_is_refused_naming_its_place(sp: Simproxy, where: str, path: str) -> None:
    """Hoverfly decodes delays into Go's int and refuses a larger number; so does simproxy, with a
    400 naming the field (it used to store nothing and answer 500)."""
    put(sp, simulation(faulty("/kept", None, PLAIN)))
    doc = simulation(faulty("/new", None))
    if where == "fixedDelay":
        doc["data"]["pairs"][0]["response"]["fixedDelay"] = 1e20
    else:
        doc["data"]["globalActions"] = {"delays": [{"urlPattern": ".", "delay": 1e20}]}
    for method in ("PUT", "POST"):
        status, body = sp.admin_json(method, "/api/v2/simulation", doc)
        assert (status, body["error"]) == (
            400,
            f"Invalid simulation: {path}: 1e+20 is not a whole number of milliseconds from -2^63 to 2^63 - 1",
        )
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


def serving_worker(sp: Simproxy, sock: socket.socket) -> int | None:
    """The worker (its pid) that accepted ``sock``'s connection to the proxy port: the one holding
    the socket whose far end is ``sock`` (read from /proc, Linux)."""
    client_port = sock.getsockname()[1]

    def holder() -> int | None:
        inodes = {
            fields[9]
            for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
            if (fields := line.split())
            and int(fields[1].rsplit(":", 1)[1], 16) == sp.proxy_port
            and int(fields[2].rsplit(":", 1)[1], 16) == client_port
        } - {"0"}  # 0: not accepted yet
        for pid in sp.proxy_listeners():
            with contextlib.suppress(OSError):
                if any(os.readlink(f"/proc/{pid}/fd/{fd}")[8:-1] in inodes for fd in os.listdir(f"/proc/{pid}/fd")):
                    return pid
        return None

    return wait_until(holder, timeout=10)  # type: ignore[no-any-return]


def test_a_redis_backed_fleet_serves_and_exports_the_faults(simproxy_factory: Any) -> None:
    fleet: Simproxy = simproxy_factory("-workers", "2")
    doc = _with_every_fault()
    put(fleet, copy.deepcopy(doc))
    exported = fleet.admin_json("GET", "/api/v2/simulation")[1]["data"]
    assert [p["response"]["fault"] for p in exported["pairs"]] == FAULTS
    assert exported["globalActions"]["faults"] == doc["data"]["globalActions"]["faults"]
    workers, faulted = set(fleet.proxy_listeners()), set()
    assert len(workers) == 2
    for _ in range(200):  # new connections, until each worker (each loaded the stored form) answered
        with connect(fleet.proxy_port) as sock:
            worker = serving_worker(fleet, sock)
            ask(sock, "http://x.test/emptyResponse")
            assert until_closed(sock) == b""
        faulted.add(worker)
        if faulted == workers:
            break
    assert faulted == workers


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
