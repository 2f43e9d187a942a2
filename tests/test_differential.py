"""The differential harness end to end, simproxy against itself (CI has no Hoverfly binary).

Both sides are ``simproxy -compat hoverfly``, fed every corpus mined from a tiny Hoverfly-like tree
the test writes: the harness must start and stop its servers, run every case, and find the two in
full agreement (what it normalises is what differs between two runs of the same server).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from benchmarks import differential
from tests.difftree import write_tree

pytestmark = pytest.mark.slow


def test_simproxy_agrees_with_itself_on_every_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = write_tree(tmp_path / "hoverfly")
    out = tmp_path / "report.json"
    twin = shlex.join([sys.executable, "-I", "-m", "simproxy", "-compat", "hoverfly"])
    argv = ["--hoverfly", twin, "--hoverfly-src", str(tree), "--json", str(out), "--rounds", "2"]
    assert differential.main([*argv, "--workdir", str(tmp_path / "servers")]) == 0

    report = json.loads(out.read_text())
    rows = {row["corpus"]: row for row in report["table"]}
    assert list(rows) == list(differential.CORPORA)
    for name, row in rows.items():
        assert row["cases"] > 0, name
        assert row["same"] == row["cases"], (name, report["groups"][:3])
    assert report["groups"] == [] and report["incidents"] == []
    assert report["both_lengths"] == {"hoverfly": 0, "simproxy": 0}
    assert rows["simulations"]["cases"] == 4 and rows["matchers"]["cases"] == 4
    assert rows["simulations"]["exchanges"] > 4 * 3  # PUT, export, the pairs' requests, misses, state, journal
    assert report["versions"]["hoverfly"] == report["versions"]["simproxy"] != ""
    assert report["matcher_expectations"] == {"agree": 4, "total": 4}  # simproxy answers as the Go tests expect
    collected = [seen for case in report["cases"] for seen in case.get("collected", [])]
    assert collected == [True, True]  # the local action wrote its file, the remote one reached the upstream
    printed = capsys.readouterr().out
    assert "0 groups of differences" in printed


def test_unknown_corpus_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as refused:
        differential.main(["--hoverfly", "x", "--hoverfly-src", str(tmp_path), "--corpus", "nothing"])
    assert refused.value.code == 2
