"""Programs some tests need from the system (Debian's chromium and chromedriver, kubectl).

The tests never install anything: ``.ci/run`` installs these before the suite. A run without one
skips the tests that need it and says which package to install, except in CI (``CI=true``), where a
missing tool is a failure: CI must run every test.
"""

from __future__ import annotations

import os
import shutil

import pytest


def in_ci() -> bool:
    """Whether this run is CI's (``CI`` set to ``true`` or ``1``, as CI services and ``.ci/run`` set it)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


def system_tool(command: str, package: str) -> str:
    """The path of ``command`` on PATH; otherwise the test is skipped (failed in CI) naming ``package``."""
    found = shutil.which(command)
    if found:
        return found
    reason = f"{command} is not on PATH: install Debian's {package} (.ci/run does) to run this test"
    if in_ci():
        pytest.fail(f"CI=true: {reason}", pytrace=False)
    pytest.skip(reason)
