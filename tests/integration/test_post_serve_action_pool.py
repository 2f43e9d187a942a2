"""Post-serve actions kept alive (``pool``, ``-post-serve-action-pool``) and run in-process (``python:``):
every served pair reaches the action, failures are counted in the journal and in ``/metrics``."""

from __future__ import annotations

import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, simulation
from tests.integration.test_post_serve_actions import ACTIONS, wait_for, with_action

pytestmark = pytest.mark.slow

# Appends "<pid> <path>" per pair to the file ``out`` (put in the script's text) and answers "done".
RECORDER = textwrap.dedent(
    """
    import json, os, sys
    for line in sys.stdin:
        pair = json.loads(line)
        if pair["request"]["path"] == "/fail":
            sys.exit(5)
        with open({out!r}, "a") as f:
            f.write(f"{{os.getpid()}} {{pair['request']['path']}}\\n")
        print("done", flush=True)
    """
)
HOOK = textwrap.dedent(
    """
    import os

    def record(pair):
        if pair["request"]["path"] == "/fail":
            raise RuntimeError("the webhook is down")
        with open({out!r}, "a") as f:
            f.write(f"{{os.getpid()}} {{pair['request']['path']}}\\n")
    """
)


@pytest.fixture
def sp(simproxy_factory: Any) -> Simproxy:
    proc: Simproxy = simproxy_factory("-journal-size", "2000")
    return proc


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _serve(sp: Simproxy, count: int) -> None:
    def one(i: int) -> int:
        return sp.proxy(f"http://test.example/n{i}")[0]

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(one, range(count))) == {200}


def _failed_metric(sp: Simproxy) -> float:
    text = sp.admin("GET", "/metrics")[2].decode()
    for line in text.splitlines():
        if line.startswith('simproxy_post_serve_actions_total{result="failed"}'):
            return float(line.split()[-1])
    return 0.0


def test_a_long_lived_action_gets_every_pair_and_records_each_in_the_journal(sp: Simproxy, tmp_path: Path) -> None:
    out = tmp_path / "seen.txt"
    action = {"actionName": "rec", "binary": sys.executable, "script": RECORDER.format(out=str(out)), "pool": 2}
    status, listed = sp.admin_json("PUT", ACTIONS, action)
    assert status == 200 and listed["actions"][0]["pool"] == 2
    assert sp.admin("PUT", "/api/v2/simulation", simulation(with_action("rec")))[0] == 200
    _serve(sp, 60)
    wait_for(lambda: len(_lines(out)) == 60)
    pids = {line.split()[0] for line in _lines(out)}
    assert 1 <= len(pids) <= 2  # kept alive, not a process per action
    assert sorted(line.split()[1] for line in _lines(out)) == sorted(f"/n{i}" for i in range(60))

    def recorded() -> bool:
        journal = sp.admin_json("GET", "/api/v2/journal")[1]["journal"]
        return len(journal) == 60 and all("completed" in e.get("postServeAction", {}) for e in journal)

    wait_for(recorded)
    assert sp.proxy("http://test.example/fail")[0] == 200  # the answer is not held up by the action
    wait_for(lambda: _failed_metric(sp) == 1.0)

    def failed_recorded() -> bool:
        last = sp.admin_json("GET", "/api/v2/journal")[1]["journal"][-1]
        return bool(last["request"]["path"] == "/fail" and last.get("postServeAction", {}).get("failed"))

    wait_for(failed_recorded)
    _serve(sp, 3)  # a fresh process takes over
    wait_for(lambda: len(_lines(out)) == 63)


def test_a_python_hook_action_from_the_flag(simproxy_factory: Any, tmp_path: Path) -> None:
    out = tmp_path / "seen.txt"
    hook = tmp_path / "hook.py"
    hook.write_text(HOOK.format(out=str(out)))
    sp: Simproxy = simproxy_factory("-post-serve-action", f"rec python:{hook}:record 0")
    assert sp.admin_json("GET", ACTIONS)[1] == {"actions": [{"actionName": "rec", "binary": f"python:{hook}:record"}]}
    assert sp.admin("PUT", "/api/v2/simulation", simulation(with_action("rec")))[0] == 200
    _serve(sp, 20)
    wait_for(lambda: len(_lines(out)) == 20)
    assert {line.split()[0] for line in _lines(out)} == {str(pid) for pid in sp.proxy_listeners()}  # in-process
    assert sp.proxy("http://test.example/fail")[0] == 200
    wait_for(lambda: _failed_metric(sp) == 1.0)


def test_the_action_pool_is_checked(sp: Simproxy) -> None:
    status, error = sp.admin_json("PUT", ACTIONS, {"actionName": "x", "remote": "http://hook.test/", "pool": 2})
    assert status == 400 and error["error"].startswith("pool applies to a local program only")
    assert sp.admin_json("PUT", ACTIONS, {"actionName": "x", "binary": "cat", "pool": 999})[0] == 400
