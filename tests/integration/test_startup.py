"""Start-up flags, webserver mode, the proxy's own answers, and shutdown, on real processes."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks.procs import descendants
from simproxy.admin.command import COMMAND
from simproxy.admin.process.redisserver import RedisServer, free_port
from tests.integration.conftest import ROOT, Simproxy, _cmdline, pair, simulation


def _write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


def test_import_files_are_loaded_at_start_and_merged(simproxy_factory: Any, tmp_path: Path) -> None:
    first = _write(tmp_path / "a.json", simulation(pair("/a", "from a")))
    legacy = _write(
        tmp_path / "b.json",
        {
            "data": {
                "pairs": [{"request": {"path": {"exactMatch": "/b"}}, "response": {"status": 202, "body": "from b"}}],
                "globalActions": {"delays": []},
            },
            "meta": {"schemaVersion": "v3"},
        },
    )
    sp: Simproxy = simproxy_factory("-import", first, "-import", legacy)
    assert sp.proxy("http://h/a")[2] == b"from a"
    assert sp.proxy("http://h/b")[:1] == (202,)
    pairs = sp.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"]
    assert [p["response"]["body"] for p in pairs] == ["from a", "from b"]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("sim.json", "{broken", "Failed to import given resource"),
        ("sim.yaml", "{}", "only JSON files are acceppted"),
        ("missing.json", None, "Failed to import given resource"),
    ],
)
def test_a_bad_import_stops_the_start_with_status_1(
    tmp_path: Path, name: str, content: str | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    result = subprocess.run(
        [*COMMAND, "-ap", "1", "-pp", "2", "-import", str(path)],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert message in result.stderr.decode()


def test_webserver_mode_ignores_destinations_and_refuses_capture(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-webserver")
    assert sp.admin_json("GET", "/api/v2/hoverfly")[1]["isWebServer"] is True
    sp.admin_json(
        "PUT",
        "/api/v2/simulation",
        simulation(pair("/hello", "web", destination=[{"matcher": "exact", "value": "recorded.example.com"}])),
    )
    status, _headers, body = sp.proxy("/hello", headers={"Host": f"127.0.0.1:{sp.proxy_port}"})
    assert (status, body) == (200, b"web")
    assert sp.admin_json("PUT", "/api/v2/service/mode", {"mode": "capture"}) == (
        400,
        {"error": "Cannot change the mode of simproxy to capture when running as a webserver"},
    )
    assert sp.admin_json("PUT", "/api/v2/service/mode", {"mode": "spy"})[0] == 200


def test_proxy_answers_to_non_proxy_requests(simproxy: Simproxy) -> None:
    simproxy.admin_json("PUT", "/api/v2/simulation", simulation(pair("/rel", "relative ok")))
    status, _, body = simproxy.proxy("/rel", headers={"Host": f"localhost:{simproxy.proxy_port}"})
    assert (status, body) == (500, b"This is a proxy server. Does not respond to non-proxy requests.\n")
    assert simproxy.proxy("/rel", headers={"Host": "api.example.com"})[2] == b"relative ok"
    with socket.create_connection(("127.0.0.1", simproxy.proxy_port), timeout=10) as sock:
        sock.sendall(b"GET /rel HTTP/1.0\r\n\r\n")
        reply = sock.recv(4096)
    assert reply.startswith(b"HTTP/1.1 400 ") and reply.endswith(
        b"Cannot handle requests without Host header, e.g., HTTP 1.0\n"
    )
    with socket.create_connection(("127.0.0.1", simproxy.proxy_port), timeout=10) as sock:
        sock.sendall(b"CONNECT secure.example.com:443 HTTP/1.1\r\nHost: secure.example.com:443\r\n\r\n")
        assert sock.recv(4096) == b"HTTP/1.0 200 OK\r\n\r\n"  # intercepted: TLS comes next


def test_shutdown_stops_every_process_and_the_private_redis(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-workers", "2")
    assert sp.process is not None
    children = descendants(sp.process.pid)
    assert any("redis-server" in _cmdline(pid) for pid in children)
    status, _, body = sp.admin("DELETE", "/api/v2/shutdown")
    assert (status, body) == (200, b"")
    assert sp.process.wait(timeout=20) == 0
    time.sleep(0.5)
    assert not [pid for pid in children if Path(f"/proc/{pid}").exists() and "zombie" not in _status(pid)]
    with pytest.raises(OSError), contextlib.closing(socket.create_connection(("127.0.0.1", sp.admin_port), timeout=2)):
        pass


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"


def test_an_admin_port_in_use_stops_the_start_with_status_1_and_says_which() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = subprocess.run(
            [*COMMAND, "-ap", str(port), "-pp", str(free_port())],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert f"the admin port 127.0.0.1:{port} is already in use" in result.stderr


def test_join_fleet_leaves_a_running_fleet_alone_unless_the_start_up_changed(
    simproxy_factory: Any, redis_server: RedisServer, tmp_path: Path
) -> None:
    first_file = _write(tmp_path / "first.json", simulation(pair("/v", "first")))
    second_file = _write(tmp_path / "second.json", simulation(pair("/v", "second")))
    shared = ("-redis-url", redis_server.url, "-redis-prefix", "join-fleet:", "-join-fleet")
    pod = simproxy_factory(*shared, "-import", first_file)
    assert pod.proxy("http://svc.test/v")[2] == b"first"
    # the run goes on: a new simulation, another mode, state
    pod.admin_json("PUT", "/api/v2/simulation", simulation(pair("/v", "changed at run time")))
    pod.admin_json("PUT", "/api/v2/hoverfly/mode", {"mode": "spy"})
    pod.admin_json("PUT", "/api/v2/state", {"state": {"stage": "2"}})

    same = simproxy_factory(*shared, "-import", first_file)  # a pod scaled out with the same start-up
    for sp in (pod, same):
        assert sp.proxy("http://svc.test/v")[2] == b"changed at run time"
        assert sp.admin_json("GET", "/api/v2/hoverfly/mode")[1]["mode"] == "spy"
        assert sp.admin_json("GET", "/api/v2/state")[1]["state"] == {"stage": "2"}

    rollout = simproxy_factory(*shared, "-import", second_file)  # a new ConfigMap: applied
    for sp in (pod, rollout):
        assert sp.proxy("http://svc.test/v")[2] == b"second"
        assert sp.admin_json("GET", "/api/v2/hoverfly/mode")[1]["mode"] == "simulate"

    # without the flag, every start applies its import, as Hoverfly does
    pod.admin_json("PUT", "/api/v2/simulation", simulation(pair("/v", "changed again")))
    plain = simproxy_factory("-redis-url", redis_server.url, "-redis-prefix", "join-fleet:", "-import", second_file)
    assert plain.proxy("http://svc.test/v")[2] == b"second"


def test_import_from_a_url_loads_the_simulation_and_a_bad_url_stops_the_start(
    simproxy_factory: Any, tmp_path: Path
) -> None:
    """Hoverfly's ``-import URL``: fetched with redirects followed; a URL that cannot be fetched is fatal."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    (tmp_path / "sim.json").write_text(json.dumps(simulation(pair("/from-url", "fetched"))))
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/sim.json"
        sp: Simproxy = simproxy_factory("-import", url)
        assert sp.proxy("http://api.test/from-url")[::2] == (200, b"fetched")
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
    result = subprocess.run(
        [*COMMAND, "-ap", "1", "-pp", "2", "-import", "http://127.0.0.1:9/sim.json"],
        cwd=ROOT, capture_output=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    assert 'Failed to fetch given URL, error Get "http://127.0.0.1:9/sim.json": dial tcp' in result.stderr.decode()


def test_a_start_up_import_that_is_not_json_says_where(tmp_path: Path) -> None:
    path = tmp_path / "sim.json"
    path.write_text('{"data": {"pairs": []},\n "meta": {"schemaVersion": "v5.3",}}')
    result = subprocess.run(
        [*COMMAND, "-ap", str(free_port()), "-pp", str(free_port()), "-import", str(path)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    where = "line 2, column 34: trailing comma is not allowed"
    assert f"Failed to import given resource: {path}: Invalid JSON: {where}\n" in result.stderr


@pytest.mark.parametrize(
    ("flags", "status", "first_line"),
    [
        (["-nosuchflag"], 2, "flag provided but not defined: -nosuchflag"),
        (["-journal-size", "lots"], 2, 'invalid value "lots" for flag -journal-size: parse error'),
        (["-workers"], 2, "flag needs an argument: -workers"),
        (["-log-level", "loud"], 1, 'simproxy: Unknown log-level value "loud", expected one of panic, fatal, error,'),
        (["-import", "/nonexistent/sim.json"], 1, "Failed to import given resource"),
    ],
)
def test_a_start_that_fails_exits_2_for_the_command_line_syntax_and_1_for_the_rest(
    flags: list[str], status: int, first_line: str
) -> None:
    result = subprocess.run(
        [*COMMAND, "-ap", str(free_port()), "-pp", str(free_port()), *flags],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == status, result.stderr
    assert first_line in result.stderr
    if status == 2:  # the error, maybe the flag's own entry, and a hint: never the 100 lines of usage
        assert len(result.stderr.splitlines()) <= 4
        assert result.stderr.endswith('run "simproxy -h" for the flags\n')
