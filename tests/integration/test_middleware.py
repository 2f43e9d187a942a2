"""Middleware (local programs and a remote URL) in every mode that runs it, and the API that sets it."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from simproxy.engine.modes.failures import PRODUCT
from tests.integration.conftest import Simproxy, simulation
from tests.integration.upstream import Upstream, start_upstream

# Upper-cases the response body, adds a header, and says which request it saw.
UPPER = textwrap.dedent(
    """
    import json, sys
    pair = json.load(sys.stdin)
    response = pair["response"]
    response["body"] = response["body"].upper()
    response.setdefault("headers", {})["X-Middleware"] = ["saw " + pair["request"]["path"]]
    json.dump(pair, sys.stdout)
    """
)
# Makes a response out of nothing (synthesize), from the request.
SYNTH = textwrap.dedent(
    """
    import json, sys
    pair = json.load(sys.stdin)
    req = pair["request"]
    pair["response"] = {"status": 201, "body": "made for " + req["method"] + " " + req["path"] + "?" + req["query"],
                        "encodedBody": False, "headers": {"Content-Type": ["text/plain"]}}
    json.dump(pair, sys.stdout)
    """
)
# Modify: on the way out adds a header and rewrites the path; on the way back sets the status to 299.
MODIFY = textwrap.dedent(
    """
    import json, sys
    pair = json.load(sys.stdin)
    if pair["response"]["status"] == 0:
        pair["request"]["headers"]["X-Added"] = ["by middleware"]
        pair["request"]["path"] = "/echo" + pair["request"]["path"]
    else:
        pair["response"]["status"] = 299
    json.dump(pair, sys.stdout)
    """
)
FAIL = "import sys\nsys.stderr.write('broken on purpose')\nsys.exit(3)\n"
GARBAGE = "print('this is not json')\n"


@pytest.fixture(scope="module")
def sp() -> Iterator[Simproxy]:
    proc = Simproxy("-enable-middleware-api").start()
    yield proc
    proc.stop()


@pytest.fixture(autouse=True)
def reset(sp: Simproxy) -> None:
    assert sp.admin("PUT", "/api/v2/hoverfly/middleware", {"binary": "", "script": "", "remote": ""})[0] == 200
    assert sp.admin("DELETE", "/api/v2/simulation")[0] == 200
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200


def set_middleware(sp: Simproxy, script: str = "", remote: str = "") -> tuple[int, Any]:
    body = {"binary": sys.executable if script else "", "script": script, "remote": remote}
    return sp.admin_json("PUT", "/api/v2/hoverfly/middleware", body)


def test_put_sets_after_a_trial_run_and_get_shows_it(sp: Simproxy) -> None:
    status, view = set_middleware(sp, UPPER)
    assert status == 200
    assert view == {"binary": sys.executable, "script": UPPER, "remote": ""}
    assert sp.admin_json("GET", "/api/v2/hoverfly/middleware") == (200, view)
    assert sp.admin_json("GET", "/api/v2/hoverfly")[1]["middleware"] == view


def test_put_refuses_what_cannot_run(sp: Simproxy) -> None:
    status, error = sp.admin_json("PUT", "/api/v2/hoverfly/middleware", {"script": "print(1)"})
    assert (status, error) == (422, {"error": "cannot run script with no binary"})
    status, error = set_middleware(sp, FAIL)
    assert status == 422
    assert error["error"].startswith(f"Middleware failed\nCommand: {sys.executable} ")
    assert "exit status 3" in error["error"] and "STDERR:\nbroken on purpose" in error["error"]
    status, error = sp.admin_json("PUT", "/api/v2/hoverfly/middleware", {"binary": "/no/such/binary"})
    assert status == 422 and error["error"].startswith("Middleware failed to start")
    assert sp.admin("PUT", "/api/v2/hoverfly/middleware", raw=b"{not json")[0] == 400
    assert sp.admin_json("GET", "/api/v2/hoverfly/middleware")[1] == {"binary": "", "script": "", "remote": ""}


def test_put_is_not_there_without_the_flag(simproxy_factory: Any) -> None:
    plain: Simproxy = simproxy_factory()
    assert plain.admin("PUT", "/api/v2/hoverfly/middleware", {"binary": "cat"})[0] == 404


def test_simulate_hits_go_through_middleware_with_the_actual_request(sp: Simproxy) -> None:
    pair = {
        "request": {"path": [{"matcher": "glob", "value": "/thing/*"}]},
        "response": {"status": 200, "body": "original", "headers": {"Content-Type": ["text/plain"]}},
    }
    assert sp.admin("PUT", "/api/v2/simulation", simulation(pair))[0] == 200
    assert set_middleware(sp, UPPER)[0] == 200
    status, headers, body = sp.proxy("http://test.example/thing/42")
    assert (status, body) == (200, b"ORIGINAL")
    assert headers["x-middleware"] == "saw /thing/42"
    assert sp.proxy("http://test.example/other")[0] == 502  # a miss does not reach the middleware


def test_synthesize_makes_the_response(sp: Simproxy) -> None:
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "synthesize"})[0] == 200
    status, _, body = sp.proxy("http://test.example/synth")
    assert status == 502
    context = "There was an error when creating a synthetic response"
    assert body == f"{PRODUCT} Error!\n\n{context}\n\nGot error: Middleware not set".encode()
    assert set_middleware(sp, SYNTH)[0] == 200
    status, _, body = sp.proxy("http://test.example/synth?b=2&a=1", "POST", b"x")
    assert (status, body) == (201, b"made for POST /synth?a=1&b=2")
    journal = sp.admin_json("GET", "/api/v2/journal")[1]["journal"]
    assert journal[-1]["mode"] == "synthesize" and journal[-1]["response"]["status"] == 201


def test_modify_rewrites_request_and_response(sp: Simproxy, upstream: Upstream) -> None:
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "modify"})[0] == 200
    status, _, body = sp.proxy(upstream.url("/plain"))  # no middleware: a transparent proxy
    assert (status, body) == (200, b"real /plain")
    assert set_middleware(sp, MODIFY)[0] == 200
    status, _, body = sp.proxy(upstream.url("/thing"))
    assert status == 299
    seen = json.loads(body)
    assert seen["path"] == "/echo/thing"
    assert seen["headers"]["X-Added"] == "by middleware"


def test_capture_records_the_request_the_middleware_made(sp: Simproxy, upstream: Upstream) -> None:
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    assert set_middleware(sp, MODIFY)[0] == 200
    status, _, body = sp.proxy(upstream.url("/captured"))
    assert status == 200 and json.loads(body)["path"] == "/echo/captured"
    [pair] = sp.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"]
    assert pair["request"]["path"] == [{"matcher": "exact", "value": "/echo/captured"}]


def test_remote_middleware(sp: Simproxy, upstream: Upstream) -> None:
    assert sp.admin("PUT", "/api/v2/simulation", simulation({"request": {}, "response": {"body": "x"}}))[0] == 200
    status, view = set_middleware(sp, remote=upstream.url("/middleware"))
    assert (status, view) == (200, {"binary": "", "script": "", "remote": upstream.url("/middleware")})
    assert sp.proxy("http://test.example/anything")[2] == b"remote saw /anything"
    closed = start_upstream()
    closed.stop()
    status, error = set_middleware(sp, remote=f"http://{closed.host}/middleware")
    assert status == 422 and error["error"].startswith("Error when communicating with remote middleware:")


@pytest.mark.parametrize(
    ("script", "expected"),
    [(FAIL, "Middleware failed"), (GARBAGE, "Failed to unmarshal JSON from middleware")],
)
def test_a_failing_middleware_is_a_502_and_the_worker_keeps_serving(
    sp: Simproxy, tmp_path: Path, script: str, expected: str
) -> None:
    assert sp.admin("PUT", "/api/v2/simulation", simulation({"request": {}, "response": {"body": "fine"}}))[0] == 200
    # set through the config so the trial run does not refuse it: a middleware that breaks later
    path = tmp_path / "later.py"
    path.write_text("import sys\nsys.stdout.write(sys.stdin.read())\n")
    assert set_middleware(sp, path.read_text())[0] == 200
    sp_script = {"binary": sys.executable, "script": script, "remote": ""}
    assert sp.admin("PUT", "/api/v2/hoverfly/middleware", sp_script)[0] == 422  # refused by the trial ...
    assert sp.proxy("http://test.example/x")[2] == b"fine"  # ... and the working one kept
    # a middleware that passes the trial but fails on real traffic
    flaky = (
        "import sys, json\npair = json.load(sys.stdin)\nif pair['request']['path'] != '/':\n"
        + textwrap.indent(script, "    ")
        + "\nelse:\n    json.dump(pair, sys.stdout)\n"
    )
    assert set_middleware(sp, flaky)[0] == 200
    status, headers, body = sp.proxy("http://test.example/x")
    assert status == 502 and headers["content-type"] == "text/plain"
    text = body.decode()
    assert text.startswith(f"{PRODUCT} Error!\n\nThere was an error when executing middleware\n\nGot error: {expected}")
    assert set_middleware(sp)[0] == 200 and sp.proxy("http://test.example/x")[2] == b"fine"


def test_concurrent_requests_run_their_middleware_side_by_side(sp: Simproxy, tmp_path: Path) -> None:
    """200 requests through a shell middleware that sleeps 200 ms: they overlap instead of queueing."""
    log = tmp_path / "calls.log"
    script = f'echo "start $(date +%s%N)" >> {log}\nsleep 0.2\necho "end $(date +%s%N)" >> {log}\ncat\n'
    assert sp.admin("PUT", "/api/v2/simulation", simulation({"request": {}, "response": {"body": "slow"}}))[0] == 200
    status, _ = sp.admin_json("PUT", "/api/v2/hoverfly/middleware", {"binary": "sh", "script": script, "remote": ""})
    assert status == 200
    log.write_text("")  # forget the trial run
    started = time.monotonic()
    with ThreadPoolExecutor(200) as pool:
        answers = list(pool.map(lambda i: sp.proxy(f"http://test.example/{i}")[2], range(200)))
    print(f"200 requests through a 200 ms middleware: {time.monotonic() - started:.2f} s")
    assert answers == [b"slow"] * 200
    events = sorted((int(t), kind) for kind, t in (line.split() for line in log.read_text().splitlines()))
    assert sum(kind == "start" for _, kind in events) == 200
    running = peak = 0
    for _, kind in events:
        running += 1 if kind == "start" else -1
        peak = max(peak, running)
    assert peak >= 10  # one by one, the peak would be 1 (and the run 40 s)


def test_webserver_synthesize_with_middleware_from_the_flag(simproxy_factory: Any, tmp_path: Path) -> None:
    script = tmp_path / "synth.py"
    script.write_text(SYNTH)
    web: Simproxy = simproxy_factory("-webserver", "-middleware", f"{sys.executable} {script}")
    assert web.admin_json("GET", "/api/v2/hoverfly/middleware")[1] == {
        "binary": sys.executable, "script": SYNTH, "remote": ""
    }  # fmt: skip
    assert web.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "synthesize"})[0] == 200
    status, _, body = web.proxy("/made?x=1", headers={"Host": "anything.test"})
    assert (status, body) == (201, b"made for GET /made?x=1")


def test_a_middleware_that_never_reads_its_input_answers_every_request(sp: Simproxy) -> None:
    """``printf`` a fixed response and exit: the pipe it never read breaks, which is no error (Hoverfly);
    every second request sends a body larger than a pipe holds, so that the write surely meets it closed."""
    request = '"request": {"path": "/", "method": "GET", "destination": "d", "scheme": "http", "query": "", "body": ""}'
    fixed = f'{{{request}, "response": {{"status": 201, "body": "fixed", "encodedBody": false, "headers": {{}}}}}}'
    middleware = {"binary": "sh", "script": f"printf '%s' '{fixed}'\n", "remote": ""}
    assert sp.admin("PUT", "/api/v2/hoverfly/middleware", middleware)[0] == 200
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "synthesize"})[0] == 200
    big = b"x" * 200_000

    def one(n: int) -> tuple[int, bytes]:
        status, _, body = sp.proxy(f"http://test.example/fixed/{n}", "POST", big if n % 2 else b"small")
        return status, body

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(one, range(1_000)))
    assert answers == [(201, b"fixed")] * 1_000


@pytest.mark.parametrize(
    ("binary", "cause"),
    [("notpython", 'exec: "notpython": executable file not found in $PATH'),
     ("/no/such/binary", "fork/exec /no/such/binary: no such file or directory")],
)  # fmt: skip
def test_a_middleware_that_cannot_start_is_worded_as_go_words_it(sp: Simproxy, binary: str, cause: str) -> None:
    status, error = sp.admin_json("PUT", "/api/v2/hoverfly/middleware", {"binary": binary, "script": "", "remote": ""})
    assert status == 422
    assert error["error"].startswith(f"Middleware failed to start\nCommand: {binary}\n{cause}\n")


@pytest.mark.parametrize("mode", ["modify", "capture"])
def test_after_middleware_the_query_is_forwarded_as_hoverfly_re_encodes_it(
    sp: Simproxy, upstream: Upstream, mode: str
) -> None:
    """Middleware's answer carries the query decoded: Hoverfly parses and re-encodes it (sorted, Go's
    path escaping), so the real service sees ``b%20c,d`` for ``b+c%2Cd``. Without middleware the raw
    query goes on as it came (test_capture)."""
    assert sp.admin("PUT", "/api/v2/hoverfly/middleware", {"binary": "cat", "script": "", "remote": ""})[0] == 200
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": mode})[0] == 200
    status, _, _ = sp.proxy(upstream.url("/echo?test=a&test=b+c%2Cd&z=1&a=2&a=1"))
    assert status == 200
    assert upstream.requests[-1].path == "/echo?a=1&a=2&test=a&test=b%20c,d&z=1"


# What Hoverfly v1.12.10 answers for each middleware output (seen on the real binary): the cause line
# of its 422 is Go's json.Unmarshal error, and a reply of whitespace alone is decoded too.
GO_WORDED = [
    ("print('this is not JSON')\n", "invalid character 'h' in literal true (expecting 'r')", "this is not JSON\n"),
    ("print('{\"response\": tru}')\n", "invalid character '}' in literal true (expecting 'e')", '{"response": tru}\n'),
    ("import sys\nsys.stdout.write('{\"a\":1} x')\n", "invalid character 'x' after top-level value", '{"a":1} x'),
    ("print(' ')\n", "unexpected end of JSON input", " \n"),
]


@pytest.mark.parametrize(("script", "cause", "stdout"), GO_WORDED)
def test_compat_hoverfly_words_a_reply_that_is_not_json_as_go_does(
    simproxy_factory: Any, script: str, cause: str, stdout: str
) -> None:
    hoverfly = simproxy_factory("-compat", "hoverfly", "-enable-middleware-api")
    middleware = {"binary": sys.executable, "script": script, "remote": ""}
    status, headers, body = hoverfly.admin("PUT", "/api/v2/hoverfly/middleware", middleware)
    assert (status, headers["content-type"]) == (422, "text/plain; charset=utf-8")
    message, command, said, *rest = json.loads(body)["error"].split("\n")
    assert (message, said) == ("Failed to unmarshal JSON from middleware", cause)
    assert command.startswith(f"Command: {sys.executable} ")
    assert "\n".join(rest).endswith(f"\n\nSTDOUT:\n{stdout}")


def test_compat_hoverfly_words_a_remote_reply_that_is_not_json_as_go_does(
    simproxy_factory: Any, upstream: Upstream
) -> None:
    hoverfly = simproxy_factory("-compat", "hoverfly", "-enable-middleware-api")
    url = upstream.url("/status/200")  # answers 200 "status 200"
    status, error = hoverfly.admin_json("PUT", "/api/v2/hoverfly/middleware", {"remote": url})
    assert status == 422
    message, said, where, *_ = error["error"].split("\n")
    assert (message, said, where) == (
        "Error when trying to serialize response from remote middleware",
        "invalid character 's' looking for beginning of value",
        f"URL: {url}",
    )
