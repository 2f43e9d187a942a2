"""The Python client as a library people read: every public name has a docstring and an entry in
the reference that docs/client.md renders from the docstrings (mkdocstrings, in the site
``mkdocs build`` makes), the two clients offer the same methods, and the public names import
lightly."""

from __future__ import annotations

import html
import inspect
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import simproxy
from simproxy.admin.kit import client, client_calls
from simproxy.admin.kit.client import AsyncClient, Client
from tests.processes import starts_processes

ROOT = Path(__file__).resolve().parents[3]
MODULES = (client, client_calls)


def _public(names: list[str]) -> list[str]:
    return [name for name in names if not name.startswith("_")]


def _documented_objects(*modules: ModuleType) -> Iterator[tuple[str, object]]:
    """Every public function and class the client's modules define (or the ones given), and every
    public method of those classes."""
    for module in modules or MODULES:
        for name in _public(dir(module)):
            value = getattr(module, name)
            if getattr(value, "__module__", None) != module.__name__:
                continue  # imported, or a type alias: described in the module that defines it
            if inspect.isfunction(value):
                yield name, value
            elif inspect.isclass(value):
                yield name, value
                for attribute, member in vars(value).items():
                    if not attribute.startswith("_") and callable(getattr(value, attribute)):
                        yield f"{name}.{attribute}", member


def _docstring(value: object) -> str | None:
    """The object's own docstring (a class's or a method's is not inherited here)."""
    if isinstance(value, staticmethod | classmethod):
        value = value.__func__
    return value.__doc__


def test_every_public_function_class_and_method_of_the_client_has_a_docstring() -> None:
    assert [name for name, value in _documented_objects() if not (_docstring(value) or "").strip()] == []


@pytest.fixture(scope="module")
@starts_processes
def reference(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The client's page of the documentation site, built as .ci/run builds it (strict: a warning fails)."""
    site = tmp_path_factory.mktemp("site")
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    done = subprocess.run(
        build, cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return (site / "client" / "index.html").read_text()


def _seen(page: str) -> str:
    """What a reader sees of an HTML page: its text without tags, in single spaces."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", page)).split())


def _written(docstring: str) -> str:
    """What a reader sees of a docstring's Markdown: no code marks, single spaces."""
    return " ".join(docstring.replace("`", "").split())


def test_every_public_name_of_the_client_has_an_entry_in_the_rendered_reference(reference: str) -> None:
    anchors = set(re.findall(r'id="([^"]+)"', reference))
    names = {f"{module.__name__}.{name}" for module in MODULES for name, _ in _documented_objects(module)}
    missing = sorted(name for name in names if name not in anchors)
    exported = {*client.__all__, *simproxy.__all__}
    missing += sorted(name for name in exported if not {f"{module.__name__}.{name}" for module in MODULES} & anchors)
    assert missing == []


def test_every_entry_of_the_rendered_reference_shows_its_docstring(reference: str) -> None:
    page = _seen(reference)
    unshown = []
    for module in MODULES:
        for name, value in _documented_objects(module):
            first_line = inspect.cleandoc(_docstring(value) or "").splitlines()[0]
            if _written(first_line) not in page:
                unshown.append(f"{name}: {first_line}")
    assert unshown == []


def test_the_async_client_has_the_blocking_ones_methods_under_the_same_names() -> None:
    def methods(cls: type) -> set[str]:
        return {name for name in _public(dir(cls)) if callable(getattr(cls, name))}

    assert methods(AsyncClient) - {"aclose"} == methods(Client) - {"close"}
    for name in methods(Client) - {"close", "send"}:
        blocking, awaited = inspect.signature(getattr(Client, name)), inspect.signature(getattr(AsyncClient, name))
        assert blocking.parameters == awaited.parameters, name


@pytest.mark.slow  # starts a process
def test_the_public_names_import_without_aiohttp_or_any_of_the_server() -> None:
    code = (
        "import json, sys; from simproxy import Client, AsyncClient, ClientError, ServerUnreachable, pair; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout))
    heavy = {name for name in loaded if name.partition(".")[0] in {"aiohttp", "sanic", "redis", "httptools"}}
    assert heavy == set()
    assert {name for name in loaded if name.startswith(("simproxy.engine", "simproxy.admin."))} == {
        "simproxy.admin.kit",
        "simproxy.admin.kit.client",
        "simproxy.admin.kit.client_calls",
    }
