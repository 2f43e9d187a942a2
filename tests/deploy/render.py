"""``kustomize build`` for the tests: kubectl's built-in kustomize (tests/system.py: skipped without kubectl)."""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.system import system_tool

ROOT = Path(__file__).resolve().parents[2]
KUSTOMIZE = ROOT / "deploy" / "kubernetes"


@functools.cache
def kubectl() -> str:
    """A kubectl with kustomize built in (any since 1.14): the one on PATH (Debian's kubernetes-client)."""
    return system_tool("kubectl", "kubernetes-client")


def render(kustomization: str) -> list[dict[str, Any]]:
    """The objects ``kubectl kustomize deploy/kubernetes/<kustomization>`` prints."""
    result = subprocess.run(
        [kubectl(), "kustomize", str(KUSTOMIZE / kustomization)], capture_output=True, text=True, timeout=120
    )
    if result.returncode != 0:
        raise RuntimeError(f"kustomize failed on {kustomization}:\n{result.stderr}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def one(objects: list[dict[str, Any]], kind: str, name: str = "") -> dict[str, Any]:
    """The single object of ``kind`` named ``name``, or ``name`` plus a generator's hash suffix."""
    pattern = re.compile(rf"{re.escape(name)}(-[a-z0-9]{{10}})?")
    found = [o for o in objects if o["kind"] == kind and pattern.fullmatch(o["metadata"]["name"])]
    assert len(found) == 1, f"{len(found)} {kind} objects named {name!r}*"
    return found[0]
