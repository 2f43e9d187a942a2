"""The Dockerfile's build stage, without a container runtime: its context builds the wheel it installs."""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.deploy.render import ROOT

pytestmark = pytest.mark.slow


def _context(into: Path) -> None:
    """Copy what ``docker build .`` sends: everything ``.dockerignore`` lets through."""
    rules = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    rules = [rule for rule in rules if rule and not rule.startswith("#")]

    def sent(relative: str) -> bool:
        keep = True
        for rule in rules:
            negated = rule.startswith("!")
            pattern = rule.lstrip("!").rstrip("/")
            parts = relative.split("/")
            prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
            if any(fnmatch.fnmatch(p, pattern) for p in prefixes) or fnmatch.fnmatch(
                relative, pattern.replace("**/", "*")
            ):
                keep = negated
        return keep

    for path in ROOT.rglob("*"):
        relative = path.relative_to(ROOT).as_posix()
        if path.is_file() and not relative.startswith(".git/") and sent(relative):
            target = into / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def test_the_build_context_makes_a_wheel_with_the_entrypoint_and_the_package_data(tmp_path: Path) -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    copied = re.findall(r"^COPY (?!--from)(.+?) \S+$", dockerfile, re.M)
    context = tmp_path / "context"
    _context(context)
    for sources in copied:
        for source in sources.split():
            assert (context / source).exists(), f"the Dockerfile copies {source}, which .dockerignore leaves out"
    assert not (context / "tests").exists() and not (context / ".venv").exists()
    assert not list(context.rglob("__pycache__"))

    out = tmp_path / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(context)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = out.glob("simproxy-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(archive.read(n).decode() for n in names if n.endswith("entry_points.txt"))
    assert re.search(r"^simproxy = simproxy\.admin\.process\.cli:main$", entry_points, re.M)
    assert {
        "simproxy/admin/process/cli.py",
        "simproxy/engine/server/protocol.py",
        "simproxy/store/redis/__init__.py",
    } <= names
    assert {"simproxy/py.typed", "simproxy/__init__.py", "simproxy/__main__.py"} <= names
    assert any(n.startswith("simproxy/admin/api/schemas/") and n.endswith(".json") for n in names)
    # one import package at the top: nothing a user's own admin, engine or store could meet
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {"simproxy"}
    # the image's ENTRYPOINT is that script, run as the unprivileged user made in the same stage
    assert re.search(r'^ENTRYPOINT \["simproxy"\]$', dockerfile, re.M)
    assert re.search(r"^USER 10001$", dockerfile, re.M) and "--uid 10001" in dockerfile
