"""The suite tests the source tree through the installed ``simproxy`` package: the README's test
command installs it in editable strict mode, which links each source file into a tree of its own.
A module added since that install is not linked yet, and a plain install is a copy: both would test
something other than the tree, so the run stops at once and says which install command mends it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# where each source folder goes in the installed package (pyproject.toml's package-dir)
FOLDERS = (("admin/simproxy", ()), ("admin", ("admin",)), ("engine", ("engine",)), ("store", ("store",)))
INSTALL = "pip install -e '.[test]' --config-settings editable_mode=strict"

pytest_plugins = ["tests.processes"]  # the slow marker on every test that starts a process


def _unlinked(package: Path) -> list[str]:
    """Source files that the installed package does not show as themselves."""
    found = []
    for folder, beneath in FOLDERS:
        for source in sorted((ROOT / folder).rglob("*.py")):
            relative = source.relative_to(ROOT / folder)
            if folder == "admin" and relative.parts[0] == "simproxy":
                continue
            installed = package.joinpath(*beneath, *relative.parts)
            if not installed.exists() or not installed.samefile(source):
                found.append(str(source.relative_to(ROOT)))
    return found


def pytest_configure(config: pytest.Config) -> None:
    spec = importlib.util.find_spec("simproxy")
    if spec is None or spec.origin is None:
        raise pytest.UsageError(f"simproxy is not installed: run `{INSTALL}` in the repository")
    unlinked = _unlinked(Path(spec.origin).parent)
    if unlinked:
        shown = ", ".join(unlinked[:5]) + (f" and {len(unlinked) - 5} more" if len(unlinked) > 5 else "")
        raise pytest.UsageError(
            f"the installed simproxy ({Path(spec.origin).parent}) does not show {shown} from this tree: "
            f"run `{INSTALL}` again (a strict editable install links the files there were at the time)"
        )
