"""The Python client as a library people read: every public name has a docstring and a place in
docs/client.md, the two clients offer the same methods, and the public names import lightly."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import simproxy
from simproxy.admin.kit import client, client_calls
from simproxy.admin.kit.client import AsyncClient, Client

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "client.md"
MODULES = (client, client_calls)


def _public(names: list[str]) -> list[str]:
    return [name for name in names if not name.startswith("_")]


def _documented_objects() -> Iterator[tuple[str, object]]:
    """Every public function and class the client's modules define, and every public method of those classes."""
    for module in MODULES:
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


def test_every_public_name_of_the_client_is_named_in_the_reference() -> None:
    text = REFERENCE.read_text()
    blocks = re.findall(r"```.*?```", text, flags=re.DOTALL)
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    code = " ".join([*blocks, *re.findall(r"`([^`]+)`", prose)])  # names count only where written as code
    names = {name.rsplit(".", 1)[-1] for name, _ in _documented_objects()}
    names |= {*client.__all__, *simproxy.__all__}
    missing = sorted(name for name in names if not re.search(rf"\b{re.escape(name)}\b", code))
    assert missing == []


def test_the_async_client_has_the_blocking_ones_methods_under_the_same_names() -> None:
    def methods(cls: type) -> set[str]:
        return {name for name in _public(dir(cls)) if callable(getattr(cls, name))}

    assert methods(AsyncClient) - {"aclose"} == methods(Client) - {"close"}
    for name in methods(Client) - {"close", "send"}:
        blocking, awaited = inspect.signature(getattr(Client, name)), inspect.signature(getattr(AsyncClient, name))
        assert blocking.parameters == awaited.parameters, name


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
