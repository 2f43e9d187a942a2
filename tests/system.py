"""Programs the tests need from Debian (kubectl, chromium): the one on PATH, else the package, installed.

Installing needs root and apt-get, which CI and the project's machines have; elsewhere the error
says which package to install.
"""

from __future__ import annotations

import os
import shutil
import subprocess


def debian_tool(command: str, *packages: str) -> str:
    """The path of ``command``, installing ``packages`` with apt-get first when it is missing."""
    found = shutil.which(command)
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise RuntimeError(f"the tests need {command}: install Debian's {' '.join(packages)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages]
    if subprocess.run(install, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, check=True)
        subprocess.run(install, env=env, capture_output=True, check=True)
    found = shutil.which(command)
    if not found:
        raise RuntimeError(f"{' '.join(packages)} installed no {command}")
    return found
