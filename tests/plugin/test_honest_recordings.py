"""A recording cannot lie, and a failing test says what simproxy saw (its ``simproxy`` report section)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.plugin.conftest import Service, cassette

pytestmark = pytest.mark.slow

Run = Callable[..., pytest.RunResult]

URLLIB3_TEST = """
import pytest
import urllib3

@pytest.mark.simproxy(simulation="cassettes/pay.json")
def test_pay():
    answer = urllib3.PoolManager().request("GET", "{url}/pay")  # urllib3 ignores HTTP_PROXY
    assert answer.status == 200
"""


def test_a_recording_that_captured_nothing_fails_naming_the_cause_and_writes_no_file(
    pytester: pytest.Pytester, run: Run, service: Service
) -> None:
    pytester.makepyfile(test_pay=URLLIB3_TEST.format(url=service.url))
    result = run()
    result.assert_outcomes(failed=1)
    assert service.hits == ["/pay"]  # the request went straight to the service, around simproxy
    result.stdout.fnmatch_lines(
        [
            "*simproxy recorded nothing for cassettes/pay.json: no request reached its proxy (http://127.0.0.1:*)*"
            "so the file was not written*",
            "*ignores the HTTP_PROXY and HTTPS_PROXY variables*",
            "*urllib3 used directly ignores them: urllib3.ProxyManager(simproxy.proxy_url*",
            "*aiohttp.ClientSession(trust_env=True)*",
        ]
    )
    assert not (pytester.path / "cassettes").exists()
    assert "-- simproxy --" not in result.stdout.str()  # the refusal says it all: no section repeats it
    # and the next run records again instead of replaying an empty file
    pytester.makepyfile(test_pay=URLLIB3_TEST.format(url=service.url).replace("urllib3.PoolManager()", "HTTP"))
    pytester.makeconftest(
        "import urllib3, pytest\n"
        "@pytest.fixture(autouse=True)\n"
        "def _http(simproxy):\n"
        "    import test_pay\n"
        "    test_pay.HTTP = urllib3.ProxyManager(simproxy.proxy_url)\n"
    )
    run().assert_outcomes(passed=1)
    assert [p["request"]["path"] for p in cassette(pytester.path / "cassettes" / "pay.json")] == [
        [{"matcher": "exact", "value": "/pay"}]
    ]


TOLERANT_TEST = """
import pytest
import requests

@pytest.mark.simproxy(simulation="cassettes/pay.json")
def test_pay():
    answer = requests.get("{url}/pay")
    assert answer.status_code in (200, 502)  # code that copes with a failing service
"""


def test_a_recording_made_while_the_service_was_down_fails_with_the_services_error(
    pytester: pytest.Pytester, run: Run, service: Service
) -> None:
    pytester.makepyfile(test_pay=TOLERANT_TEST.format(url=service.url))
    service.stop()
    result = run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*simproxy did not write cassettes/pay.json: while recording, 1 request could not be forwarded*",
            "*GET http://127.0.0.1:*/pay -> 502: the real service could not be reached",
            "*connection refused*",
        ]
    )
    assert not (pytester.path / "cassettes").exists()


REPLAY_MISS_TEST = """
import pytest
import requests

@pytest.mark.simproxy(simulation="cassettes/pay.json")
def test_pay():
    requests.get("{url}/pay").raise_for_status()
    requests.post("{url}/refund", data="x").raise_for_status()
"""


def test_a_failing_replay_reports_each_miss_with_its_closest_pair(
    pytester: pytest.Pytester, run: Run, service: Service
) -> None:
    pytester.makepyfile(test_pay=REPLAY_MISS_TEST.format(url=service.url).replace("    requests.post", "    #"))
    run().assert_outcomes(passed=1)  # recorded GET /pay
    service.stop()
    pytester.makepyfile(test_pay=REPLAY_MISS_TEST.format(url=service.url))
    result = run("--simproxy-record=none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*HTTPError: 502 Server Error*",
            "*- simproxy -*",
            "replaying cassettes/pay.json (simulate mode: the real service is not asked)",
            "2 requests reached simproxy's proxy; 1 got simproxy's own 502:",
            "  POST http://127.0.0.1:*/refund -> 502: no pair matched",
            '      closest pair: method exact "GET", *path exact "/pay", body exact ""',
            "      it differs on: body, path, method",
            "simproxy's log: *simproxy.log",
        ]
    )


def test_a_failing_recording_reports_that_it_was_recording_and_the_services_error(
    pytester: pytest.Pytester, run: Run, service: Service
) -> None:
    pytester.makepyfile(test_pay=REPLAY_MISS_TEST.format(url=service.url))
    service.stop()
    result = run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- simproxy -*",
            "recording cassettes/pay.json: capture mode, every request goes to the real service",
            "1 request reached simproxy's proxy; 1 got simproxy's own 502:",
            "  GET http://127.0.0.1:*/pay -> 502: the real service could not be reached",
            "      *connection refused*",
        ]
    )


def test_a_failing_test_whose_client_bypassed_the_proxy_is_told_so(pytester: pytest.Pytester, run: Run) -> None:
    pytester.makepyfile(
        test_direct="""
def test_direct(simproxy):
    raise AssertionError("the code under test reached its service some other way")
"""
    )
    result = run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- simproxy -*",
            "simulate mode, no cassette",
            "no request reached simproxy's proxy (http://127.0.0.1:*) during the test.",
            "If the code under test made one, its HTTP client ignores HTTP_PROXY and HTTPS_PROXY:",
        ]
    )


def test_the_run_lists_the_cassettes_it_wrote(pytester: pytest.Pytester, run: Run, service: Service) -> None:
    pytester.makepyfile(test_pay=TOLERANT_TEST.format(url=service.url))
    result = run()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*= simproxy =*", "recorded cassettes/pay.json (new file, 1 pair)"])
    result = run("--simproxy-record=all")
    result.stdout.fnmatch_lines(["recorded cassettes/pay.json (1 pair)"])
    assert "recorded" not in run().stdout.str()  # a replay writes nothing
