"""Tests never install anything: a missing system tool skips the tests that need it, except in CI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.system import system_tool

ROOT = Path(__file__).resolve().parent


def test_a_missing_tool_skips_naming_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="install Debian's kubernetes-client"):
        system_tool("kubectl", "kubernetes-client")


@pytest.mark.parametrize("value", ["true", "1", "TRUE"])
def test_a_missing_tool_fails_in_ci(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="CI=true: chromedriver is not on PATH"):
        system_tool("chromedriver", "chromium-driver")


def test_a_tool_on_path_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = tmp_path / "kubectl"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    assert system_tool("kubectl", "kubernetes-client") == str(tool)


def test_no_test_runs_a_package_manager() -> None:
    """Installing is .ci/run's job: no test calls apt-get, apt, dpkg or pip install."""
    command = re.compile(r"""["'](apt-get|apt|dpkg|yum|dnf|apk)["']|["']pip["'],\s*["']install["']""")
    found = {
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*.py")
        if path.name != Path(__file__).name and command.search(path.read_text())
    }
    assert found == set()
