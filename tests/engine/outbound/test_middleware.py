"""The middleware payload, the reply rules and the local runner (real subprocesses)."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import time
from pathlib import Path

import orjson
import pytest

from simproxy.engine.execution.scripts import run_program
from simproxy.engine.fleet.config import MiddlewareSpec
from simproxy.engine.outbound.middleware import (
    Exchange,
    MiddlewareError,
    MiddlewareRunner,
    decode_exchange,
    encode_exchange,
)
from simproxy.engine.outbound.upstream import Upstream
from simproxy.engine.simulation.model import Response
from simproxy.engine.wire.request import RequestDetails


def request(
    raw_query: str = "b=2&a=x%20y", body: str = "", headers: dict[str, list[str]] | None = None
) -> RequestDetails:
    return RequestDetails.build("POST", "http", "api.test", "/p", raw_query, body, headers or {"X-A": ["1"]})


def test_payload_shape_is_hoverflys() -> None:
    response = Response(status=200, body=b"ok", headers=(("Content-Type", ("text/plain",)),), post_serve_action="cb")
    raw = encode_exchange(Exchange(request(), response))
    assert b"\n" not in raw
    doc = json.loads(raw)
    assert list(doc) == ["response", "request"]
    assert doc["response"] == {
        "status": 200, "body": "ok", "encodedBody": False,
        "headers": {"Content-Type": ["text/plain"]}, "postServeAction": "cb",
    }  # fmt: skip
    assert list(doc["request"]) == ["path", "method", "destination", "scheme", "query", "formData", "body", "headers"]
    assert doc["request"]["query"] == "a=x y&b=2"  # sorted, values unescaped
    assert doc["request"]["formData"] is None
    assert doc["request"]["headers"] == {"X-A": ["1"]}


def test_payload_without_response_has_status_zero_and_binary_bodies_are_base64() -> None:
    doc = json.loads(encode_exchange(Exchange(request(), None)))
    assert doc["response"] == {"status": 0, "body": "", "encodedBody": False}
    binary = Response(status=200, body=bytes(range(256)))
    doc = json.loads(encode_exchange(Exchange(request(), binary)))
    assert doc["response"]["encodedBody"] is True
    assert base64.b64decode(doc["response"]["body"]) == bytes(range(256))


def test_reply_replaces_the_pair() -> None:
    sent = Exchange(request(), None)
    reply = json.loads(encode_exchange(sent))
    reply["request"]["path"] = "/changed"
    reply["request"]["query"] = "z=1 2"
    reply["response"] = {
        "status": 201, "body": base64.b64encode(b"\x00\x01").decode(), "encodedBody": True,
        "headers": {"X": ["y"]}, "fixedDelay": 15, "logNormalDelay": {"min": 1, "max": 9, "mean": 3, "median": 2},
    }  # fmt: skip
    result = decode_exchange(orjson.dumps(reply), sent)
    assert result.request.path == "/changed"
    assert result.request.query == {"z": ["1 2"]}
    assert result.request.raw_query == "z=1%202"  # Go's path escaping, as Hoverfly re-encodes it
    assert result.response is not None
    assert (result.response.status, result.response.body, result.response.fixed_delay) == (201, b"\x00\x01", 15)
    assert result.response.log_normal_delay is not None and result.response.log_normal_delay.max == 9
    unchanged = decode_exchange(encode_exchange(sent), sent)
    # Hoverfly loses the raw query once middleware answered, even unchanged: sorted and re-encoded
    assert unchanged.request.raw_query == "a=x%20y&b=2"


def test_reply_without_query_is_refused() -> None:
    sent = Exchange(request(), None)
    reply = json.loads(encode_exchange(sent))
    del reply["request"]["query"]
    with pytest.raises(ValueError, match="query"):
        decode_exchange(orjson.dumps(reply), sent)


def run(spec: MiddlewareSpec, exchange: Exchange, timeout: float = 10.0) -> Exchange:
    async def go() -> Exchange:
        upstream = Upstream()
        runner = MiddlewareRunner(upstream, timeout=timeout)
        try:
            return await runner.run(spec, exchange)
        finally:
            runner.close()
            await upstream.aclose()

    return asyncio.run(go())


@pytest.mark.slow  # starts a process
def test_empty_output_keeps_the_pair() -> None:
    sent = Exchange(request(), Response(status=200, body=b"same"))
    assert run(MiddlewareSpec(binary="true"), sent) is sent


@pytest.mark.slow  # starts a process
def test_a_hung_middleware_is_killed_after_the_timeout() -> None:
    started = time.monotonic()
    with pytest.raises(MiddlewareError, match=r"no answer within 0\.3s"):
        run(
            MiddlewareSpec(binary=sys.executable, script="import time\ntime.sleep(30)\n"),
            Exchange(request(), None),
            0.3,
        )
    assert time.monotonic() - started < 10


@pytest.mark.slow  # starts a process
def test_failure_text_names_command_and_streams() -> None:
    script = "import sys\nsys.stdin.read()\nprint('partial')\nsys.stderr.write('bad')\nsys.exit(2)\n"
    with pytest.raises(MiddlewareError) as failure:
        run(MiddlewareSpec(binary=sys.executable, script=script), Exchange(request(), None))
    text = str(failure.value)
    assert text.startswith(f"Middleware failed\nCommand: {sys.executable} ")
    assert "\nexit status 2\n\nSTDIN:\n{" in text
    assert text.endswith("\n\nSTDOUT:\npartial\n\n\nSTDERR:\nbad")


@pytest.mark.slow  # starts a process
def test_a_program_past_its_time_is_killed_not_left_running(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(30)\n"
    with pytest.raises(TimeoutError):
        asyncio.run(run_program([sys.executable, "-c", script], b"", 1.0))
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped: not even a zombie is left


HOOKS = """
def meddle(pair):
    pair["request"]["headers"]["X-A"].append("changed in place")
    pair["request"]["headers"]["X-New"] = ["added"]
    pair["request"]["path"] = "/elsewhere"
    pair["response"]["headers"] = {"X-Hooked": ["yes"]}
    return pair
"""


@pytest.mark.parametrize("rewrite_request", [True, False])
def test_a_hook_changing_its_document_in_place_leaves_the_sent_request_alone(
    tmp_path: Path, rewrite_request: bool
) -> None:
    hooks = tmp_path / "hooks.py"
    hooks.write_text(HOOKS)
    sent_request = request()
    sent = Exchange(sent_request, Response(status=200, body=b"ok"))

    async def main() -> Exchange:
        upstream = Upstream()
        runner = MiddlewareRunner(upstream)
        try:
            spec = MiddlewareSpec(binary=f"python:{hooks}:meddle")
            return await runner.run(spec, sent, rewrite_request=rewrite_request)
        finally:
            await runner.aclose()
            await upstream.aclose()

    result = asyncio.run(main())
    assert sent_request.headers == {"X-A": ["1"]}  # the request the journal records is untouched
    assert result.response is not None and result.response.headers == (("X-Hooked", ("yes",)),)
    if rewrite_request:
        assert result.request.path == "/elsewhere"
        assert result.request.headers == {"X-A": ["1", "changed in place"], "X-New": ["added"]}
    else:  # a caller reading only the response gets the sent request back, not a rebuilt one
        assert result.request is sent_request
