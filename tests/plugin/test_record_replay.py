"""``@pytest.mark.simproxy(simulation=...)``: record a real service once, replay it without it."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.plugin.conftest import Service, cassette

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
