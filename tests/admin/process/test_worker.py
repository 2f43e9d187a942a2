"""A worker is assembled from its settings without Sanic (admin/process/worker.py): the admin API
only mounts what ``build_worker`` returns."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, socket, sys
    from simproxy.admin.process.worker import running_worker
    from simproxy.admin.settings import Settings

    async def main(port, imported):
        settings = Settings(proxy_port=port, imports=(imported,))
        async with running_worker(settings) as worker:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET http://shop.test/orders/7 HTTP/1.1\\r\\nHost: shop.test\\r\\n"
                         b"Connection: close\\r\\n\\r\\n")
            answer = await reader.read()
            writer.close()
            pairs = len(worker.services.runtime.snapshot.simulation.simulation.pairs)
        with socket.socket() as probe:  # closed: a new server can listen on the port again
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", port))
        head, _, body = answer.partition(b"\\r\\n\\r\\n")
        print(json.dumps({
            "status": head.split(b"\\r\\n")[0].decode(),
            "body": body.decode(),
            "pairs": pairs,
            "sanic": sorted(m for m in sys.modules if m.split(".")[0] == "sanic"),
        }))

    asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
    """
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow  # starts a process
def test_a_worker_built_without_sanic_serves_its_simulation(tmp_path: Path) -> None:
    simulation = {
        "data": {
            "pairs": [
                {
                    "request": {"path": [{"matcher": "glob", "value": "/orders/*"}]},
                    "response": {"status": 200, "body": "order {{ Request.Path.[1] }}", "templated": True},
                }
            ]
        },
        "meta": {"schemaVersion": "v5.2"},
    }
    imported = tmp_path / "simulation.json"
    imported.write_text(json.dumps(simulation))
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(_free_port()), str(imported)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {"status": "HTTP/1.1 200 OK", "body": "order 7", "pairs": 1, "sanic": []}
