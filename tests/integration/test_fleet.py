"""``simproxy fleet 3 -workers 2``: three instances, six workers, one Redis, one proxy port."""

from __future__ import annotations

import concurrent.futures
import os
import re
import signal
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from benchmarks.procs import listeners
from simproxy.admin.command import COMMAND
from simproxy.admin.process.redisserver import free_port
from tests.integration.conftest import ROOT, call, wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, int]]:
    block = free_port(4)  # the instances take admin, admin + 1 and admin + 2
    admin, proxy = block, block + 3
    command = [*COMMAND, "fleet", "3", "-workers", "2", "-ap", str(admin), "-pp", str(proxy),
               "-journal-size", "5000"]  # fmt: skip
    log = tmp_path / "fleet.log"
    with log.open("wb") as err:
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
    try:
        up = wait_until(lambda: all(_healthy(admin + i) for i in range(3)), timeout=60, interval=0.2)
        if not up:
            pytest.fail(f"the fleet did not start:\n{log.read_text(errors='replace')[:3000]}")
        yield process, admin, proxy
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _healthy(port: int) -> bool:
    try:
        return call(port, "GET", "/api/health")[0] == 200
    except OSError:
        return False


def test_a_fleet_of_three_shares_one_simulation_state_and_journal(
    fleet: tuple[subprocess.Popen[bytes], int, int],
) -> None:
    process, admin, proxy = fleet
    # 3 instances x 2 workers, all on the one proxy port
    assert wait_until(lambda: len(listeners(process.pid, proxy)) == 6, timeout=30), listeners(process.pid, proxy)
    flip = [
        {"request": {"path": [{"matcher": "exact", "value": "/flip"}], "requiresState": {"side": side}},
         "response": {"status": 200, "body": side, "transitionsState": {"side": other}}}
        for side, other in (("a", "b"), ("b", "a"))
    ]  # fmt: skip
    hello = {"request": {"path": [{"matcher": "exact", "value": "/hello"}]}, "response": {"status": 200, "body": "hi"}}
    doc = {"data": {"pairs": [hello, *flip]}, "meta": {"schemaVersion": "v5"}}
    assert call(admin + 1, "PUT", "/api/v2/simulation", orjson.dumps(doc))[0] == 200  # through one instance
    assert call(admin + 2, "PUT", "/api/v2/state", b'{"state": {"side": "a"}}')[0] == 200

    def through_proxy(path: str) -> bytes:
        return call(proxy, "GET", f"http://svc.test{path}")[2]  # a new connection each: spread by the kernel

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        answers = Counter(pool.map(through_proxy, ["/hello"] * 2_900))
    assert answers == Counter({b"hi": 2_900})
    flips = [through_proxy("/flip") for _ in range(100)]  # one after the other: the state walks a, b, a, ...
    assert flips == [b"a", b"b"] * 50

    for i in range(3):  # every instance sees the whole fleet's journal and counters
        status, _, body = call(admin + i, "GET", "/api/v2/journal?limit=1")
        assert status == 200 and orjson.loads(body)["total"] == 3_000
        usage = orjson.loads(call(admin + i, "GET", "/api/v2/hoverfly/usage")[2])
        assert usage["metrics"]["counters"]["simulate"] == 3_000
        metrics = call(admin + i, "GET", "/metrics")[2].decode()
        served = re.search(r'simproxy_requests_total\{mode="simulate",outcome="hit"\} ([0-9.e+]+)', metrics)
        assert served and float(served[1]) > 0, f"instance {i} served nothing"  # the kernel spread them
    os.kill(process.pid, signal.SIGTERM)
    assert process.wait(timeout=40) == 0
    assert wait_until(lambda: not listeners(process.pid, proxy), timeout=10)
