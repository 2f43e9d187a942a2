"""``@pytest.mark.simproxy(simulation=...)``: record a real service once, replay it without it."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.integration.upstream import start_upstream
from tests.plugin.conftest import Service, cassette, info

pytestmark = pytest.mark.slow

Run = Callable[..., pytest.RunResult]

PAY_TEST = """
import pathlib
import pytest
import requests

@pytest.mark.simproxy(simulation="cassettes/pay.json")
def test_pay():
    answer = requests.get("{url}/pay?order=7")
    assert answer.json() == {{"paid": True}}
    assert not pathlib.Path("fail").exists(), "asked to fail"
"""


def test_a_missing_cassette_is_recorded_from_the_service_then_replayed_without_it(
    pytester: pytest.Pytester, run: Run, service: Service
) -> None:
    pytester.makepyfile(test_pay=PAY_TEST.format(url=service.url))
    recorded = pytester.path / "cassettes" / "pay.json"

    run().assert_outcomes(passed=1)
    assert service.hits == ["/pay?order=7"]
    [pair] = cassette(recorded)
    assert pair["request"]["path"] == [{"matcher": "exact", "value": "/pay"}]
    assert pair["request"]["query"] == {"order": [{"matcher": "exact", "value": "7"}]}
    assert (pair["response"]["status"], pair["response"]["body"]) == (200, '{"paid": true}')
    assert [p.name for p in recorded.parent.iterdir()] == ["pay.json"]  # no temporary file left

    service.stop()
    written = recorded.read_bytes()
    run("--simproxy-record=none").assert_outcomes(passed=1)
    run().assert_outcomes(passed=1)  # "new" replays a cassette that exists
    assert recorded.read_bytes() == written
    assert service.hits == ["/pay?order=7"]


def test_record_all_rewrites_after_a_pass_and_leaves_the_file_after_a_failure(
    pytester: pytest.Pytester, run: Run, service: Service
) -> None:
    pytester.makepyfile(test_pay=PAY_TEST.format(url=service.url))
    recorded = pytester.path / "cassettes" / "pay.json"
    recorded.parent.mkdir()
    old = {"data": {"pairs": [{"request": {}, "response": {"status": 200, "body": "old"}}]}, "meta": {}}
    recorded.write_text(json.dumps(old))
    (pytester.path / "fail").touch()

    run("--simproxy-record=all").assert_outcomes(failed=1)
    assert json.loads(recorded.read_text()) == old
    assert service.hits == ["/pay?order=7"]  # it was recording: the service was asked
    assert [p.name for p in recorded.parent.iterdir()] == ["pay.json"]

    (pytester.path / "fail").unlink()
    run("--simproxy-record=all").assert_outcomes(passed=1)
    [pair] = cassette(recorded)
    assert pair["response"]["body"] == '{"paid": true}'


def test_a_cassette_that_is_no_simulation_or_missing_without_recording_is_a_test_error(
    pytester: pytest.Pytester, run: Run
) -> None:
    folder = pytester.path / "cassettes"
    folder.mkdir()
    (folder / "broken.json").write_text('{"data": {"pairs": [}')
    pairs = [{"request": {"path": "/x"}, "response": {"status": 200}}]
    invalid = {"data": {"pairs": pairs}, "meta": {"schemaVersion": "v5.3"}}
    (folder / "invalid.json").write_text(json.dumps(invalid))
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.simproxy(simulation="cassettes/broken.json")
        def test_broken():
            pass

        @pytest.mark.simproxy(simulation="cassettes/invalid.json")
        def test_invalid():
            pass

        @pytest.mark.simproxy(simulation="cassettes/missing.json")
        def test_missing():
            pass

        @pytest.mark.simproxy(simulaton="cassettes/missing.json")
        def test_misspelt():
            pass
        """
    )
    result = run("--simproxy-record=none")
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_broken*",
            "*cassettes/broken.json: not a simulation: invalid JSON at line 1, column 21: Expecting value*",
            "*ERROR at setup of test_invalid*",
            "*cassettes/invalid.json: not a simulation: the server refused it (400): *<data.pairs.0.request.path>*",
            "*ERROR at setup of test_missing*",
            "*cassettes/missing.json: no such simulation file, and --simproxy-record=none does not record one*",
            "*ERROR at setup of test_misspelt*",
            "*@pytest.mark.simproxy takes keywords simulation, mode, pairs, env; not simulaton*",
        ]
    )
    assert sorted(p.name for p in folder.iterdir()) == ["broken.json", "invalid.json"]


GLOBALS = {
    "delays": [{"urlPattern": "slow\\.test", "httpMethod": "GET", "delay": 5}],
    "delaysLogNormal": [],
    "faults": [{"urlPattern": "broken\\.test", "httpMethod": "", "fault": {"type": "connectionReset"}}],
}
LITERALS = [{"name": "answer", "value": 42}]
VARIABLES = [{"name": "who", "function": "requestBody", "arguments": ["jsonpath", "$.who"]}]

KEPT_TEST = """
import json
from pathlib import Path

import pytest
import requests

from simproxy.admin.kit.client import pair


def exported(simproxy):
    data = simproxy.client.simulation()["data"]
    return {
        "paths": [p["request"]["path"][0]["value"] for p in data["pairs"]],
        "globalActions": data["globalActions"],
        "literals": data.get("literals"),
        "variables": data.get("variables"),
    }


@pytest.mark.simproxy(simulation="cassettes/globals.json", pairs=[pair("/marked", body="marked")])
def test_the_marker_pairs_join_the_cassette(simproxy):
    after_setup = exported(simproxy)
    simproxy.add_pairs(pair("/added", body="added"))
    assert requests.get("http://api.test/added").text == "added"
    with pytest.raises(requests.ConnectionError):  # the cassette's global fault, still in effect
        requests.get("http://broken.test/cassette")
    Path("info.json").write_text(json.dumps({"after_setup": after_setup, "after_add": exported(simproxy)}))
"""


def test_marker_pairs_and_add_pairs_keep_the_cassettes_global_actions_literals_and_variables(
    pytester: pytest.Pytester, run: Run
) -> None:
    pair = {"request": {"path": [{"matcher": "exact", "value": "/cassette"}]}, "response": {"status": 200}}
    data = {"pairs": [pair], "globalActions": GLOBALS, "literals": LITERALS, "variables": VARIABLES}
    (pytester.path / "cassettes").mkdir()
    (pytester.path / "cassettes" / "globals.json").write_text(
        json.dumps({"data": data, "meta": {"schemaVersion": "v5.3"}})
    )
    pytester.makepyfile(test_kept=KEPT_TEST)

    run("--simproxy-record=none").assert_outcomes(passed=1)

    seen = info(pytester)
    kept = {"globalActions": GLOBALS, "literals": LITERALS, "variables": VARIABLES}
    assert seen["after_setup"] == {"paths": ["/cassette", "/marked"], **kept}
    assert seen["after_add"] == {"paths": ["/cassette", "/marked", "/added"], **kept}


SHARED_TESTS = {
    "test_shared": """
import pytest
import requests

pytestmark = pytest.mark.simproxy(simulation="cassettes/shared.json")

def test_first():
    assert requests.get("{url}/pay?by=first").json() == {{"paid": True}}

def test_second():
    assert requests.get("{url}/pay?by=second").json() == {{"paid": True}}
""",
    "test_param": """
import pytest
import requests

@pytest.mark.simproxy(simulation="cassettes/param.json")
@pytest.mark.parametrize("by", ["card", "cash"])
def test_pay(by):
    assert requests.get(f"{url}/pay?by={{by}}").json() == {{"paid": True}}
""",
}


@pytest.mark.parametrize("record", ["new", "all"])
def test_a_cassette_is_recorded_by_one_test_a_second_one_is_an_error_naming_the_first(
    pytester: pytest.Pytester, run: Run, service: Service, record: str
) -> None:
    pytester.makepyfile(**{name: text.format(url=service.url) for name, text in SHARED_TESTS.items()})

    result = run(f"--simproxy-record={record}")

    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "*ERROR at setup of test_second*",
            "cassettes/shared.json is recorded by test test_shared.py::test_first; "
            'give each test its own file (e.g. simulation="cassettes/test_second.json")',
            "*ERROR at setup of test_pay?cash?*",
            "cassettes/param.json is recorded by test test_param.py::test_pay?card?; "
            'give each test its own file (e.g. simulation="cassettes/test_pay-cash.json")',
        ]
    )
    assert sorted(service.hits) == ["/pay?by=card", "/pay?by=first"]  # the second ones never ran
    assert [p["request"]["query"]["by"][0]["value"] for p in cassette(pytester.path / "cassettes/shared.json")] == [
        "first"
    ]
    assert [p["request"]["query"]["by"][0]["value"] for p in cassette(pytester.path / "cassettes/param.json")] == [
        "card"
    ]


def test_a_request_made_again_while_recording_is_replayed_in_the_same_sequence(
    pytester: pytest.Pytester, run: Run
) -> None:
    upstream = start_upstream()  # GET /count answers 1, 2, 3, ...
    try:
        pytester.makepyfile(
            test_count=f"""
            import pytest
            import requests

            @pytest.mark.simproxy(simulation="cassettes/count.json")
            def test_count():
                assert [requests.get("{upstream.url("/count")}").text for _ in range(3)] == ["1", "2", "3"]
            """
        )
        run().assert_outcomes(passed=1)
        assert len(upstream.requests) == 3
    finally:
        upstream.stop()

    run("--simproxy-record=none").assert_outcomes(passed=1)  # the service is gone: the cassette answers
    assert [p["response"]["body"] for p in cassette(pytester.path / "cassettes/count.json")] == ["1", "2", "3"]
