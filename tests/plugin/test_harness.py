"""The harness's ``Server`` on its own (no pytest in between): ports another process answers on are
not taken for the simproxy it started."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from simproxy.admin.kit import harness
from simproxy.admin.kit.client import Call
from simproxy.admin.kit.harness import Server, ServerSettings, instance_pids
from tests.plugin.conftest import CA_HOME, gone

pytestmark = pytest.mark.slow

ANOTHER_SIMPROXY = {"message": "Hoverfly is healthy", "instances": [{"id": "elsewhere:1:abcdef", "workers": []}]}
"""What the other server answers to everything: healthy, and an instance that is not ours."""


def workers(server: Server) -> Any:
    return server.client().send(Call("GET", harness.WORKERS, json.loads))


def test_ports_another_server_answers_on_are_not_taken_for_the_started_simproxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    class Other(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = json.dumps(ANOTHER_SIMPROXY).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    # another simproxy (another xdist worker's, say) took both ports since free_ports saw them free
    other = ThreadingHTTPServer(("127.0.0.1", 0), Other)
    other.daemon_threads = True
    threading.Thread(target=other.serve_forever, daemon=True).start()
    other_proxy = socket.create_server(("127.0.0.1", 0))
    taken = [int(other.server_address[1]), int(other_proxy.getsockname()[1])]
    given: list[list[int]] = []
    free_ports = harness.free_ports

    def ports(count: int) -> list[int]:
        given.append(taken if not given else free_ports(count))
        return given[-1]

    monkeypatch.setattr(harness, "free_ports", ports)
    monkeypatch.setenv("SIMPROXY_HOME", CA_HOME)
    server = Server(ServerSettings(), tmp_path)
    try:
        endpoints = server.endpoints()

        assert len(given) == 2 and endpoints.admin_url == f"http://127.0.0.1:{given[1][0]}"
        assert "/api/health" in asked  # the other server answered, and was not believed
        log = server.log_path.read_text()
        assert f"the admin port 127.0.0.1:{taken[0]} is already in use" in log  # the first start gave up
        pid = server.pid
        assert pid is not None and instance_pids(workers(server)) == {pid}
        assert server.client().mode() == "simulate"
    finally:
        server.close()
        other.shutdown()
        other.server_close()
        other_proxy.close()
    assert gone(pid)


@pytest.mark.parametrize(
    ("answer", "pids"),
    [
        ({"instances": [{"id": "host:123:a1b2c3"}, {"id": "other.host:45:ffffff"}], "workers": 2}, {123, 45}),
        ({"instances": [{"id": "no pid here"}, "not an object"]}, set()),
        ({"message": "Hoverfly is healthy"}, set()),
        (["a list"], set()),
        (None, set()),
    ],
)
def test_instance_pids_reads_the_main_pids_of_the_instances_listed(answer: Any, pids: set[int]) -> None:
    assert instance_pids(answer) == pids
