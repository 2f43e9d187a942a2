"""Long-lived middleware (``pool``, ``-middleware-pool``) and in-process Python hooks (``python:``), through
real simproxy and middleware processes: what a failing process costs (only the request it held), the
bounded queue (503 beyond it, memory flat), and the order of pipelined answers."""

from __future__ import annotations

import os
import signal
import socket
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Simproxy

pytestmark = pytest.mark.slow

# One JSON document per line in, one per line out; the path says what to do.
LOOP = textwrap.dedent(
    """
    import json, os, signal, sys, time
    for line in sys.stdin:
        pair = json.loads(line)
        path, query = pair["request"]["path"], pair["request"]["query"]
        if path == "/die":
            os.kill(os.getpid(), signal.SIGKILL)
        if path == "/slowdie":
            time.sleep(0.4)
            os.kill(os.getpid(), signal.SIGKILL)
        if path == "/hang":
            time.sleep(60)
        if path == "/garbage":
            print("this is not the reply", flush=True)
            continue
        if query.startswith("s="):
            time.sleep(float(query[2:]))
        pair["response"] = {"status": 200, "body": path, "headers": {"X-Pid": [str(os.getpid())]}}
        sys.stdout.write(json.dumps(pair) + "\\n")
        sys.stdout.flush()
    """
)
# Reads its input raw and says, for each line, how many whole lines it had in hand when it took it.
BATCHES = textwrap.dedent(
    """
    import json, os, sys, time
    buffer = b""
    while chunk := os.read(0, 1 << 20):
        buffer += chunk
        *lines, buffer = buffer.split(b"\\n")
        for line in lines:
            pair = json.loads(line)
            path = pair["request"]["path"]
            if path == "/first":
                time.sleep(0.5)
            pair["response"] = {"status": 200, "body": path, "headers": {"X-In-Hand": [str(len(lines))]}}
            sys.stdout.write(json.dumps(pair) + "\\n")
            sys.stdout.flush()
    """
)
EXITS = "import sys\nsys.stderr.write('no licence found')\nsys.exit(4)\n"
HOOKS = textwrap.dedent(
    """
    import asyncio, os, threading, time

    def rewrite(pair):
        path = pair["request"]["path"]
        if path == "/boom":
            raise ValueError("bad thing in the hook")
        if path == "/slow":
            time.sleep(1.5)
        pair["response"] = {"status": 200, "body": "sync " + path, "headers": {
            "X-Pid": [str(os.getpid())], "X-Thread": [threading.current_thread().name]}}
        return pair

    async def arewrite(pair):
        await asyncio.sleep(0)
        pair["response"] = {"status": 200, "body": "async " + pair["request"]["path"]}
        return pair

    def wrong(pair):
        return [1, 2]

    def sleepy(pair):
        time.sleep(0.3)
        pair["response"] = {"status": 200, "body": "slept"}
        return pair
    """
)


@pytest.fixture(scope="module")
def sp() -> Iterator[Simproxy]:
    proc = Simproxy("-enable-middleware-api", "-middleware-timeout", "1s", "-middleware-queue", "8").start()
    assert proc.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "synthesize"})[0] == 200
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hooks") / "hooks.py"
    path.write_text(HOOKS)
    return path


def set_pool(sp: Simproxy, size: int, script: str = LOOP) -> tuple[int, Any]:
    return sp.admin_json(
        "PUT", "/api/v2/hoverfly/middleware", {"binary": sys.executable, "script": script, "pool": size}
    )


def pid_of(sp: Simproxy, path: str = "/ok") -> int:
    status, headers, body = sp.proxy(f"http://test.example{path}")
    assert (status, body) == (200, path.encode())
    return int(headers["x-pid"])


def test_a_pool_keeps_its_processes_and_the_api_shows_it(sp: Simproxy) -> None:
    status, view = set_pool(sp, 2)
    assert (status, view) == (200, {"binary": sys.executable, "script": LOOP, "remote": "", "pool": 2})
    assert sp.admin_json("GET", "/api/v2/hoverfly/middleware") == (200, view)
    pids = {pid_of(sp, f"/n{i}") for i in range(12)}
    assert 1 <= len(pids) <= 2  # a process per request would have shown 12
    assert all(Path(f"/proc/{pid}").exists() for pid in pids)


def test_the_pool_is_checked(sp: Simproxy) -> None:
    assert set_pool(sp, -1) == (422, {"error": "pool must be from 0 (a process per request) to 256"})
    status, error = sp.admin_json("PUT", "/api/v2/hoverfly/middleware", {"remote": "http://mw.test/", "pool": 2})
    assert status == 422 and error["error"].startswith("pool applies to a local program only")
    status, error = sp.admin_json("PUT", "/api/v2/hoverfly/middleware", {"binary": "cat", "pool": "2"})
    assert status == 400 and "pool" in error["error"]


def test_a_process_killed_mid_request_fails_that_request_only(sp: Simproxy) -> None:
    assert set_pool(sp, 1)[0] == 200
    before = pid_of(sp)
    status, _, body = sp.proxy("http://test.example/die")
    assert status == 502
    assert b"Middleware failed" in body and b"the process exited (status -9) before answering" in body
    after = pid_of(sp)
    assert after != before and not Path(f"/proc/{before}/cmdline").exists()


@pytest.mark.parametrize(
    ("first", "failure"),
    [
        ("/slowdie", b"before answering"),
        ("/hang", b"no answer within 1s"),
        ("/garbage", b"the reply is not the pair's shape"),
    ],
)
def test_requests_pipelined_behind_a_failing_one_are_sent_again_not_failed(
    sp: Simproxy, first: str, failure: bytes
) -> None:
    assert set_pool(sp, 1)[0] == 200  # one process: the requests after the first wait on it, pipelined
    before = pid_of(sp)
    answers: dict[str, tuple[int, dict[str, str], bytes]] = {}

    def ask(path: str) -> None:
        answers[path] = sp.proxy(f"http://test.example{path}")

    first_thread = threading.Thread(target=ask, args=(first,))
    first_thread.start()
    time.sleep(0.15)  # the first line is with the process; the next ones are written behind it
    behind = [threading.Thread(target=ask, args=(f"/behind{i}",)) for i in range(3)]
    for thread in behind:
        thread.start()
    for thread in [first_thread, *behind]:
        thread.join(20)
    status, _, body = answers[first]
    assert status == 502 and failure in body
    for i in range(3):
        status, headers, body = answers[f"/behind{i}"]
        assert (status, body) == (200, f"/behind{i}".encode())  # answered by the process that replaced it
        assert int(headers["x-pid"]) != before


def test_lines_are_pipelined_to_a_busy_process_and_answered_in_order(sp: Simproxy) -> None:
    assert set_pool(sp, 1, BATCHES)[0] == 200
    answers: dict[str, tuple[int, dict[str, str], bytes]] = {}

    def ask(path: str) -> None:
        answers[path] = sp.proxy(f"http://test.example{path}")

    first = threading.Thread(target=ask, args=("/first",))
    first.start()
    time.sleep(0.2)  # the process is busy with the first line
    behind = [threading.Thread(target=ask, args=(f"/next{i}",)) for i in range(3)]
    for thread in behind:
        thread.start()
    for thread in [first, *behind]:
        thread.join(20)
    assert all(answers[f"/next{i}"][::2] == (200, f"/next{i}".encode()) for i in range(3))
    # written while the process was busy, the three lines were waiting in its input together
    assert [int(answers[f"/next{i}"][1]["x-in-hand"]) for i in range(3)] == [3, 3, 3]


def test_a_pipelined_line_is_timed_from_when_the_process_starts_on_it(sp: Simproxy) -> None:
    assert set_pool(sp, 1)[0] == 200  # -middleware-timeout 1s; four lines of 0.4 s each on one process
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda i: sp.proxy(f"http://test.example/t{i}?s=0.4")[::2], range(4)))
    assert answers == [(200, f"/t{i}".encode()) for i in range(4)]  # the last waited 1.6 s, 0.4 s its own


def test_a_client_gone_mid_request_leaves_the_replies_behind_it_in_their_places(sp: Simproxy) -> None:
    assert set_pool(sp, 1)[0] == 200
    gone = socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=5)
    gone.sendall(b"GET http://test.example/gone?s=0.5 HTTP/1.1\r\nHost: test.example\r\n\r\n")
    time.sleep(0.1)  # the process is on it
    answers: dict[str, tuple[int, dict[str, str], bytes]] = {}

    def ask(path: str) -> None:
        answers[path] = sp.proxy(f"http://test.example{path}")

    behind = [threading.Thread(target=ask, args=(f"/after{i}",)) for i in range(2)]
    for thread in behind:
        thread.start()
    time.sleep(0.1)  # written behind it
    gone.close()  # its client leaves before the reply
    for thread in behind:
        thread.join(20)
    assert [answers[f"/after{i}"][::2] for i in range(2)] == [(200, b"/after0"), (200, b"/after1")]


def test_a_process_that_died_while_idle_costs_no_request(sp: Simproxy) -> None:
    assert set_pool(sp, 1)[0] == 200
    before = pid_of(sp)
    os.kill(before, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while Path(f"/proc/{before}").exists() and time.monotonic() < deadline:  # until the worker has reaped it
        time.sleep(0.02)
    assert pid_of(sp) != before  # answered by a fresh process, not a 502


def test_a_hanging_process_is_killed_after_the_timeout_and_replaced(sp: Simproxy) -> None:
    assert set_pool(sp, 1)[0] == 200
    before = pid_of(sp)
    started = time.monotonic()
    status, _, body = sp.proxy("http://test.example/hang")
    assert status == 502 and b"no answer within 1s" in body
    assert time.monotonic() - started < 5
    assert pid_of(sp) != before


def test_a_process_writing_garbage_is_replaced(sp: Simproxy) -> None:
    assert set_pool(sp, 1)[0] == 200
    before = pid_of(sp)
    status, _, body = sp.proxy("http://test.example/garbage")
    assert status == 502 and b"the reply is not the pair's shape" in body
    assert b"STDIN:\n{" in body  # the document it was given, as for a process per request
    assert pid_of(sp) != before


def test_a_program_that_exits_at_start_is_refused_with_its_reason(sp: Simproxy) -> None:
    status, error = set_pool(sp, 1, EXITS)
    assert status == 422
    assert "the process exited (status 4)" in error["error"] or "the process had exited" in error["error"]


def test_the_flags_start_a_pool_and_a_dying_program_is_a_502_each_time(simproxy_factory: Any, tmp_path: Path) -> None:
    script = tmp_path / "exits.py"
    script.write_text(EXITS)
    sp: Simproxy = simproxy_factory("-synthesize", "-middleware", f"{sys.executable} {script}", "-middleware-pool", "2")
    for _ in range(3):
        status, _, body = sp.proxy("http://test.example/any")
        assert status == 502 and b"exited (status 4)" in body and b"no licence found" in body
    good = tmp_path / "loop.py"
    good.write_text(LOOP)
    sp2: Simproxy = simproxy_factory("-synthesize", "-middleware", f"{sys.executable} {good}", "-middleware-pool", "2")
    assert pid_of(sp2) > 0


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_flood_beyond_the_queue_is_refused_with_503_and_memory_stays_flat(sp: Simproxy) -> None:
    assert set_pool(sp, 1)[0] == 200
    worker = sp.proxy_listeners()[0]

    def one(i: int) -> tuple[int, bytes]:
        status, _, body = sp.proxy(f"http://test.example/f{i}?s=0.05")
        return status, body

    def flood(n: int) -> list[tuple[int, bytes]]:
        with ThreadPoolExecutor(40) as pool:
            return list(pool.map(one, range(n)))

    flood(80)  # warm up: the worker's buffers and the thread pool of this test
    rss = _rss_kb(worker)
    answers = flood(400)
    grown_mb = (_rss_kb(worker) - rss) / 1024
    statuses = [status for status, _ in answers]
    assert set(statuses) <= {200, 503}
    assert statuses.count(503) >= 100 and statuses.count(200) >= 9
    busy = next(body for status, body in answers if status == 503)
    assert b"Middleware busy" in busy and b"for 1 middleware processes" in busy
    assert grown_mb < 20, f"the worker grew by {grown_mb:.1f} MB"
    assert pid_of(sp) > 0  # and it still answers


def test_pipelined_answers_come_back_in_order(sp: Simproxy) -> None:
    assert set_pool(sp, 3)[0] == 200
    count = 11  # the 3 processes and the 8 the queue holds (-middleware-queue): none refused
    requests = b"".join(
        f"GET http://test.example/p{i}?s=0.0{(count - i) % 3} HTTP/1.1\r\nHost: test.example\r\n\r\n".encode()
        for i in range(count)
    )
    with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=20) as sock:
        sock.sendall(requests)
        reader = sock.makefile("rb")
        answers = [_read_answer(reader) for _ in range(count)]
    assert answers == [(200, f"/p{i}".encode()) for i in range(count)]


def _read_answer(reader: Any) -> tuple[int, bytes]:
    """One HTTP/1.1 answer framed by Content-Length, read off a connection that holds more."""
    status = int(reader.readline().split()[1])
    length = 0
    while (line := reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return status, reader.read(length)


def test_a_sync_hook_runs_in_the_worker_off_the_event_loop(sp: Simproxy, hooks: Path) -> None:
    body = {"binary": f"python:{hooks}:rewrite"}
    assert sp.admin_json("PUT", "/api/v2/hoverfly/middleware", body)[0] == 200
    status, headers, answer = sp.proxy("http://test.example/x")
    assert (status, answer) == (200, b"sync /x")
    assert int(headers["x-pid"]) in sp.proxy_listeners()  # in-process: the worker itself
    assert headers["x-thread"] != "MainThread"
    slow: list[int] = []
    thread = threading.Thread(target=lambda: slow.append(sp.proxy("http://test.example/slow")[0]))
    thread.start()
    time.sleep(0.2)
    started = time.monotonic()
    assert sp.proxy("http://test.example/fast")[2] == b"sync /fast"
    assert time.monotonic() - started < 1.0  # not behind the slow one
    thread.join()
    assert slow == [200]


def test_hook_errors_reach_the_502_body(sp: Simproxy, hooks: Path) -> None:
    assert sp.admin_json("PUT", "/api/v2/hoverfly/middleware", {"binary": f"python:{hooks}:rewrite"})[0] == 200
    status, _, body = sp.proxy("http://test.example/boom")
    assert status == 502
    assert b"Middleware hook failed" in body and b"ValueError: bad thing in the hook" in body
    status, error = sp.admin_json("PUT", "/api/v2/hoverfly/middleware", {"binary": f"python:{hooks}:wrong"})
    assert status == 422 and "the hook returned list, not a dict" in error["error"]
    status, error = sp.admin_json("PUT", "/api/v2/hoverfly/middleware", {"binary": "python:no_such_module:f"})
    assert status == 422 and "cannot import no_such_module: ModuleNotFoundError" in error["error"]
    status, error = sp.admin_json(
        "PUT", "/api/v2/hoverfly/middleware", {"binary": f"python:{hooks}:rewrite", "pool": 2}
    )
    assert status == 422 and "python: hook" in error["error"]


def test_compat_hoverfly_ignores_the_pool_member(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-compat", "hoverfly", "-enable-middleware-api")
    status, view = set_pool(sp, 2)
    assert (status, view) == (200, {"binary": sys.executable, "script": LOOP, "remote": ""})
    assert sp.admin_json("GET", "/api/v2/hoverfly")[1]["middleware"] == view


def test_hook_calls_beyond_the_queue_are_refused_with_503(sp: Simproxy, hooks: Path) -> None:
    assert sp.admin_json("PUT", "/api/v2/hoverfly/middleware", {"binary": f"python:{hooks}:sleepy"})[0] == 200
    with ThreadPoolExecutor(30) as pool:
        answers = list(pool.map(lambda i: sp.proxy(f"http://test.example/h{i}")[::2], range(30)))
    assert {status for status, _ in answers} == {200, 503}
    assert sum(status == 503 for status, _ in answers) >= 15  # -middleware-queue 8: at most 8 at once
    assert next(body for status, body in answers if status == 503).endswith(b"8 calls already in flight")


def test_an_async_hook_from_the_flag(simproxy_factory: Any, hooks: Path) -> None:
    sp: Simproxy = simproxy_factory("-synthesize", "-middleware", f"python:{hooks}:arewrite")
    assert sp.proxy("http://test.example/y")[::2] == (200, b"async /y")
    assert os.path.exists(hooks)
