"""No simproxy outlives its pytest, however pytest ends; an instance given by URL is used as it is."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from simproxy.admin.kit.harness import Server, ServerSettings
from tests.integration.conftest import refused, wait_until
from tests.plugin.conftest import INNER_ARGS, INNER_INI, gone, info

pytestmark = pytest.mark.slow

Run = Callable[..., pytest.RunResult]

WAITING = """
import json
import os
import time
from pathlib import Path

def test_waits(simproxy):
    info = {"pid": simproxy.server.pid, "admin_url": simproxy.admin_url, "pytest": os.getpid()}
    Path("info.json.tmp").write_text(json.dumps(info))
    os.replace("info.json.tmp", "info.json")
    time.sleep(120)
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["killed", "interrupted"])
def test_no_simproxy_outlives_a_pytest_that_is_killed_or_interrupted(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sig: signal.Signals
) -> None:
    monkeypatch.setenv("SIMPROXY_HOME", "/tmp/simproxy-tests-home")
    pytester.makeini(INNER_INI)
    pytester.makepyfile(test_waiting=WAITING)
    with (tmp_path / "output").open("w+") as output:
        inner = subprocess.Popen(
            [sys.executable, "-m", "pytest", *INNER_ARGS, "-s", "test_waiting.py"],
            cwd=pytester.path,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a signal for it is not one for this process
            # a suite started in the background inherits SIGINT ignored, and so would this pytest
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        server: dict[str, Any] = {}
        try:
            assert wait_until(lambda: (pytester.path / "info.json").exists(), timeout=60), output.read()
            server = info(pytester)
            assert server["pytest"] == inner.pid and not gone(server["pid"])

            inner.send_signal(sig)
            inner.wait(timeout=60)  # SIGINT: pytest first stops simproxy (SIGTERM, then SIGKILL after 10 s)
            # a graceful stop takes well under a second, but seconds on a loaded 2-core VM: the bound
            # only proves that the process goes away
            assert wait_until(lambda: gone(server["pid"]), timeout=20)
            assert refused(int(server["admin_url"].rsplit(":", 1)[1]))
            if sig == signal.SIGINT:  # pytest stopped it itself, and said why it ended
                output.seek(0)
                assert "KeyboardInterrupt" in output.read()
        finally:
            with contextlib.suppress(ProcessLookupError):
                inner.kill()
            inner.wait()
            if server and not gone(server["pid"]):  # the test failed: leave nothing behind all the same
                os.kill(server["pid"], signal.SIGKILL)


def test_an_instance_given_by_its_urls_is_used_and_left_running(
    pytester: pytest.Pytester, run: Run, tmp_path: Path
) -> None:
    outside = Server(ServerSettings(), tmp_path)
    try:
        urls = outside.endpoints()
        pytester.makepyfile(
            test_given="""
            import json
            from pathlib import Path
            import requests

            def test_given(simproxy):
                requests.get("http://api.test/seen-by-the-outside")
                Path("info.json").write_text(json.dumps({"admin_url": simproxy.admin_url, "pid": simproxy.server.pid}))
            """
        )
        run(f"--simproxy-url={urls.admin_url}", f"--simproxy-proxy-url={urls.proxy_url}").assert_outcomes(passed=1)

        assert info(pytester) == {"admin_url": urls.admin_url, "pid": None}
        assert [e["request"]["path"] for e in outside.client().journal()] == ["/seen-by-the-outside"]
    finally:
        outside.close()
    assert refused(int(urls.admin_url.rsplit(":", 1)[1]))


def test_an_admin_url_without_a_proxy_url_is_a_usage_error(pytester: pytest.Pytester, run: Run) -> None:
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = run("--simproxy-url=http://127.0.0.1:1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--simproxy-url and --simproxy-proxy-url go together: give both or neither*"])


def test_a_simproxy_that_cannot_start_is_a_test_error_quoting_it(pytester: pytest.Pytester, run: Run) -> None:
    pytester.makepyfile(test_start="def test_start(simproxy):\n    pass\n\ndef test_again(simproxy):\n    pass\n")
    result = run("--simproxy-args=-no-such-flag")
    result.assert_outcomes(errors=2)  # one start, and its error again for the next test
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_start*",
            "simproxy exited at start (status 2):",
            "$ * -I -m simproxy -ap * -pp * -no-such-flag",
            "flag provided but not defined: -no-such-flag",
            "*(simproxy's log: *simproxy.log)",
        ]
    )


def test_a_simproxy_stopped_by_a_test_is_started_again_for_the_next(pytester: pytest.Pytester, run: Run) -> None:
    pytester.makepyfile(
        test_restart="""
        from simproxy.admin.kit.client import Call

        def test_stops_it(simproxy):
            simproxy.client.send(Call("DELETE", "/api/v2/shutdown", lambda body: None))

        def test_next(simproxy):
            assert simproxy.mode() == "simulate"
            assert simproxy.journal() == []
        """
    )
    run().assert_outcomes(passed=2)
