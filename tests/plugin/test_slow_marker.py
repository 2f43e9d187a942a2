"""The suite's own rule (tests/processes.py): a test that starts a process without the ``slow``
marker fails, so ``pytest -m "not slow"`` never starts one."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INNER = """
import subprocess
import pytest

def test_unmarked():
    subprocess.run(["true"], check=True)

@pytest.mark.slow
def test_marked():
    subprocess.run(["true"], check=True)

def test_no_process():
    assert sum([1, 2]) == 3
"""


def test_a_process_started_by_an_unmarked_test_fails_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # tests.processes, as the suite loads it
    pytester.makepyfile(test_inner=INNER)
    pytester.makeini("[pytest]\nmarkers =\n    slow: starts a process\n")
    result = pytester.runpytest_subprocess("-p", "tests.processes", "-p", "no:cacheprovider", "-p", "no:schemathesis")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_unmarked starts a process without the slow marker: subprocess.Popen*"])
