"""In-process Python hooks (``-middleware python:package.module:function``, or
``python:/path/to/file.py:function``): a function imported once
per worker, called with the middleware payload as a dict, returning the reply as a dict (or None:
the pair stays as it was). An ``async def`` hook is awaited on the worker's loop; a plain one runs in
a thread of the worker's ``ThreadLanes``, off the loop, so a slow hook delays only the requests that
wait for it, and a quick one costs a queue put rather than an executor round trip.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import traceback
from collections.abc import Callable
from types import ModuleType
from typing import Any

from simproxy.engine.execution.lanes import ThreadLanes

PREFIX = "python:"


class HookError(Exception):
    """The hook could not be loaded, raised, or returned something that is not a reply."""


def hook_name(binary: str) -> str:
    """``package.module:function`` from a middleware binary of the ``python:`` form, else ``""``."""
    return binary[len(PREFIX) :].strip() if binary.startswith(PREFIX) else ""


def last_line(exc: BaseException) -> str:
    """The last line of ``exc``'s traceback: ``ValueError: bad header``."""
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


def load_hook(name: str) -> Callable[[dict[str, Any]], Any]:
    """Import ``package.module`` (or the file ``/path/to/module.py``) and return its ``function``;
    ``HookError`` says why it cannot."""
    module_name, _, attribute = name.rpartition(":")
    if not module_name or not attribute:
        raise HookError(f"{name!r} is not of the form package.module:function")
    try:
        module = _import_file(module_name) if module_name.endswith(".py") else importlib.import_module(module_name)
    except Exception as exc:  # any error the module raises while it is imported
        raise HookError(f"cannot import {module_name}: {last_line(exc)}") from exc
    func = getattr(module, attribute, None)
    if not callable(func):
        raise HookError(f"{module_name} has no function {attribute}")
    return func  # type: ignore[no-any-return]


def _import_file(path: str) -> ModuleType:
    """The module in the Python file at ``path``, run once (not added to ``sys.modules``)."""
    spec = importlib.util.spec_from_file_location(f"simproxy_hook_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Hooks:
    """The hooks one worker has loaded, each imported once, called by name."""

    def __init__(self) -> None:
        self._loaded: dict[str, tuple[Callable[[dict[str, Any]], Any], bool]] = {}
        """Each hook, and whether it is a coroutine function (asked once, not per call)."""
        self._lanes = ThreadLanes(name="simproxy-hook")

    def _get(self, name: str) -> tuple[Callable[[dict[str, Any]], Any], bool]:
        loaded = self._loaded.get(name)
        if loaded is None:
            func = load_hook(name)
            loaded = self._loaded[name] = (func, inspect.iscoroutinefunction(func))
        return loaded

    async def call(self, name: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The hook's reply to ``payload``; ``HookError`` (with the traceback's last line) when it raised
        or answered with something other than a dict or None."""
        func, is_async = self._get(name)
        try:
            if is_async:
                reply = await func(payload)
            else:
                reply = await self._lanes.call(func, payload)
        except Exception as exc:  # the hook's own error, whatever it is
            raise HookError(last_line(exc)) from exc
        if reply is not None and not isinstance(reply, dict):
            raise HookError(f"the hook returned {type(reply).__name__}, not a dict")
        return reply

    async def aclose(self) -> None:
        """Stop the threads that run plain hooks."""
        await self._lanes.aclose()
