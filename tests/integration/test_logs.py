"""Hoverfly's logs (issue 19, item 1): the start-up messages in ``/api/v2/logs`` and on standard
output, in logrus's text (coloured or plain) or as one JSON object per line, and in a file; then
simproxy's own line once the instance serves (issue 37, item 8), which ``-compat hoverfly`` leaves out."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.procs import listeners
from simproxy.admin.command import COMMAND
from simproxy.admin.process.redisserver import free_port
from tests.integration.conftest import ROOT, Simproxy, call, wait_until

HOVERFLY_START = [
    "Default proxy port has been overwritten",
    "Default admin port has been overwritten",
    "Using memory backend",
    "Proxy prepared...",
    "current proxy configuration",
    "serving proxy",
    "Admin interface is starting...",
]
READY = "simproxy is ready"
START = [*HOVERFLY_START, READY]


def _when_started(read: Callable[[], str]) -> str:
    """What ``read`` gives once it holds the last start-up message."""
    text: str = wait_until(lambda: (lambda t: t if READY in t else None)(read()))
    return text


def _logged(sp: Simproxy) -> list[dict[str, Any]]:
    status, doc = sp.admin_json("GET", "/api/v2/logs")
    assert status == 200
    entries: list[dict[str, Any]] = doc["logs"]
    return entries


def test_the_start_up_is_logged_as_hoverfly_logs_it(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-cors", "-tls-verification=false")
    logged = _logged(sp)
    assert [e["msg"] for e in logged] == [
        *START[:2], "CORS has been enabled", "TLS certificate verification has been disabled", *START[2:]
    ]  # fmt: skip
    prepared = next(e for e in logged if e["msg"] == "Proxy prepared...")
    assert {k: prepared[k] for k in ("Destination", "Mode", "ProxyPort", "level")} == {
        "Destination": ".", "Mode": "simulate", "ProxyPort": str(sp.proxy_port), "level": "info"
    }  # fmt: skip
    # the console: logrus's coloured lines, whether or not it is a terminal
    console = _when_started(sp.output)
    line = next(line for line in console.splitlines() if "Proxy prepared..." in line)
    assert re.fullmatch(
        r"\x1b\[36mINFO\x1b\[0m\[\d{4}-\d\d-\d\dT[\d:]+(Z|[+-]\d\d:\d\d)\] Proxy prepared\.\.\. +"
        rf" \x1b\[36mDestination\x1b\[0m=\. \x1b\[36mMode\x1b\[0m=simulate \x1b\[36mProxyPort\x1b\[0m={sp.proxy_port}",
        line,
    )


def test_four_workers_log_the_start_up_once(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-workers", "4")
    assert [e["msg"] for e in _logged(sp)] == START
    assert _logged(sp)[-1]["workers"] == 4


def test_the_ready_line_says_where_the_dashboard_admin_api_and_proxy_are(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory()
    ready = _logged(sp)[-1]
    admin = f"http://127.0.0.1:{sp.admin_port}"
    assert {k: v for k, v in ready.items() if k != "time"} == {
        "level": "info", "msg": READY, "admin": admin, "dashboard": f"{admin}/",
        "proxy": f"127.0.0.1:{sp.proxy_port}", "workers": 1,
    }  # fmt: skip
    status, headers, page = call(sp.admin_port, "GET", "/")  # the dashboard is where the line says
    assert status == 200 and headers["content-type"].startswith("text/html") and b"<html" in page.lower()
    line = next(line for line in _when_started(sp.output).splitlines() if READY in line)
    assert re.fullmatch(
        rf"\x1b\[36mINFO\x1b\[0m\[[^]]+\] simproxy is ready +\x1b\[36madmin\x1b\[0m=\"{admin}\""
        rf" \x1b\[36mdashboard\x1b\[0m=\"{admin}/\" \x1b\[36mproxy\x1b\[0m=\"127\.0\.0\.1:{sp.proxy_port}\""
        r" \x1b\[36mworkers\x1b\[0m=1",
        line,
    ), line
    web: Simproxy = simproxy_factory("-webserver")
    assert _logged(web)[-1]["webserver"] == f"http://127.0.0.1:{web.proxy_port}" and "proxy" not in _logged(web)[-1]


def test_the_ready_line_comes_once_every_worker_serves(tmp_path: Path) -> None:
    """Seen on the console, the line means what it says: the admin API answers and every worker
    holds the proxy port (with several workers the admin port opens only then)."""
    admin, proxy = free_port(), free_port()
    out = tmp_path / "console.log"
    home = os.path.join(tempfile.gettempdir(), "simproxy-tests-home")
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "SIMPROXY_HOME": home}
    command = [*COMMAND, "-ap", str(admin), "-pp", str(proxy), "-workers", "2", "-log-no-color"]
    with out.open("wb") as sink:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                   start_new_session=True)  # fmt: skip
    try:
        lines = wait_until(lambda: [line for line in out.read_text().splitlines() if READY in line], timeout=60)
        assert call(admin, "GET", "/api/health")[0] == 200
        assert len(listeners(process.pid, proxy)) == 2
        assert len(lines) == 1 and lines[0].endswith(
            f'level=info msg="simproxy is ready" admin="http://127.0.0.1:{admin}"'
            f' dashboard="http://127.0.0.1:{admin}/" proxy="127.0.0.1:{proxy}" workers=2'
        )
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_hoverflys_dialect_logs_hoverflys_start_up_alone(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-compat", "hoverfly")
    # the ready line is made before the admin port answers its first request (the health check)
    assert [e["msg"] for e in _logged(sp)] == HOVERFLY_START
    assert READY not in sp.output()


def test_json_logs_are_one_object_per_line(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-logs", "json", "-webserver")
    out = _when_started(sp.output)
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [entry["msg"] for entry in lines] == [*START[:3], "Webserver prepared...", *START[4:]]
    for entry in lines:
        assert {"level", "msg", "time"} <= entry.keys() and entry["level"] == "info"
    assert lines[3]["WebserverPort"] == str(sp.proxy_port) and lines[3]["Mode"] == "simulate"


def test_plain_logs_to_a_file_and_not_the_console(simproxy_factory: Any, tmp_path: Path) -> None:
    file = tmp_path / "simproxy.log"
    sp: Simproxy = simproxy_factory("-logs-output", "file", "-logs-file", str(file), "-log-no-color")
    text = _when_started(lambda: file.read_text() if file.exists() else "")
    assert f'level=info msg="Proxy prepared..." Destination=. Mode=simulate ProxyPort={sp.proxy_port}' in text
    assert re.search(r'^time="[^"]+" level=info msg="Using memory backend"$', text, re.M)
    assert "Proxy prepared" not in sp.output()  # the console was not asked for


def test_a_miss_logs_hoverflys_warning_and_error_and_a_cached_miss_logs_again(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory()
    assert sp.proxy("http://api.test/nothing?b=1")[0] == 502
    assert sp.proxy("http://api.test/nothing?b=1")[0] == 502  # the same miss, answered from the cache
    logged = [e for e in _logged(sp) if e["msg"] not in START]
    assert [(e["level"], e["msg"]) for e in logged] == [
        ("warning", "Failed to find matching request from simulation"),
        ("error", "There was an error when matching"),
        ("info", "Response found interface{} cache"),
        ("error", "There was an error when matching"),
    ]
    warning, error, cached, _ = logged
    assert (warning["path"], warning["query"], warning["error"]) == ("/nothing", {"b": ["1"]}, "No match found")
    assert error["error"].startswith("Could not find a match for request, create or record a valid matcher first!")
    assert (error["mode"], error["request"]["path"], error["response"]) == (
        "simulate",
        "/nothing",
        {"error": "nil response"},
    )
    assert (cached["path"], cached["rawQuery"]) == ("/nothing", {"b": ["1"]})


def test_a_miss_is_written_to_the_console_and_the_file_as_it_is_kept(simproxy_factory: Any, tmp_path: Path) -> None:
    file = tmp_path / "simproxy.log"
    sp: Simproxy = simproxy_factory(
        "-logs", "json", "-logs-output", "console", "-logs-output", "file", "-logs-file", str(file)
    )
    assert sp.proxy("http://api.test/gone?b=1")[0] == 502
    marker = "There was an error when matching"
    for read in (sp.output, file.read_text):
        text = wait_until(lambda read=read: (lambda t: t if marker in t else None)(read()))
        lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
        warning, error = lines[-2:]
        assert (warning["level"], warning["msg"], warning["path"], warning["query"]) == (
            "warning", "Failed to find matching request from simulation", "/gone", {"b": ["1"]}
        )  # fmt: skip
        assert (error["level"], error["msg"], error["request"]["path"]) == ("error", marker, "/gone")
    kept = [e for e in _logged(sp) if e["msg"] not in START]
    assert kept == lines[-2:]  # the same records, the same fields


def test_a_miss_whose_query_is_not_utf8_is_logged_with_the_replacement_character(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory()
    assert sp.proxy("http://api.test/caf%e9?q=%e9")[0] == 502
    warning, error = [e for e in _logged(sp) if e["msg"] not in START]
    assert (warning["msg"], warning["path"], warning["query"]) == (
        "Failed to find matching request from simulation", "/caf%e9", {"q": ["\ufffd"]}
    )  # fmt: skip  # Go keeps a path whose bytes do not decode as it came
    assert (error["msg"], error["request"]["query"]) == ("There was an error when matching", {"q": ["\ufffd"]})


def test_logs_from_a_second_include_what_was_logged_later_within_that_second(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory()
    while time.time() % 1 > 0.5:  # room in this second for the request and its records
        time.sleep(0.05)
    second = int(time.time())
    assert sp.proxy("http://api.test/late")[0] == 502
    status, doc = sp.admin_json("GET", f"/api/v2/logs?from={second}")
    assert status == 200
    assert [e["msg"] for e in doc["logs"]][-2:] == [
        "Failed to find matching request from simulation", "There was an error when matching"
    ]  # fmt: skip
    assert all("@t" not in e for e in doc["logs"])  # the precise time stays inside


def test_metrics_logs_the_fleets_counts_by_mode_every_five_seconds(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-metrics")
    for _ in range(3):
        assert sp.proxy("http://api.test/counted")[0] == 502  # a miss is counted too

    def counted() -> dict[str, Any] | None:
        found = [e for e in _logged(sp) if e["msg"] == "hoverfly metrics"]
        return found[-1] if found and found[-1]["counters"]["simulate"] == 3 else None

    entry = wait_until(counted, timeout=15, interval=0.5)
    assert entry["level"] == "info"
    assert entry["counters"] == {"simulate": 3, "capture": 0, "spy": 0, "synthesize": 0, "modify": 0, "diff": 0}


def test_at_debug_level_each_journal_entry_is_logged(simproxy_factory: Any, tmp_path: Path) -> None:
    file = tmp_path / "hoverfly.log"
    sp: Simproxy = simproxy_factory("-log-level", "debug", "-logs-output", "file", "-logs-file", str(file))
    assert sp.proxy("http://api.test/debugged?x=1")[0] == 502
    text = wait_until(lambda: (lambda t: t if "journal entry" in t else None)(file.read_text()))
    line = next(line for line in text.splitlines() if 'msg="journal entry"' in line)
    assert "level=debug" in line
    logged = json.loads(json.loads(line.split(" json=", 1)[1]))  # the value is quoted, as logrus quotes it
    assert (logged["request"]["path"], logged["request"]["query"], logged["response"]["status"]) == (
        "/debugged", "x=1", 502
    )  # fmt: skip
