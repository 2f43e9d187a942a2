"""The ``slow`` marker is on every test that starts a process, so ``pytest -m "not slow"`` is the
quick run that starts none.

A test gets the marker when it lives where every test drives real processes (``_PROCESS_FOLDERS``)
or when a fixture it uses starts them (``@starts_processes``, or the ``redis`` side of a store test
parametrised over both stores); a test elsewhere that starts one itself is marked by hand. An audit
hook holds the rule: a process started while a test without the marker was set up or run fails
that test, naming the process.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator
from typing import Any, TypeVar

import pytest

F = TypeVar("F", bound=Callable[..., Any])

_EVENTS = frozenset({"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system"})
"""The audit events of a new process (``sys.addaudithook``); uvloop's own spawns raise none."""


def starts_processes(fixture: F) -> F:
    """Mark a fixture function as one that starts processes: every test using it gets ``slow``."""
    fixture.__starts_processes__ = True  # type: ignore[attr-defined]
    return fixture


class _Watch:
    """The test being set up or run, and the processes it started (one hook for the whole run)."""

    def __init__(self) -> None:
        self.item: pytest.Item | None = None
        self.started: list[str] = []

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event in _EVENTS and self.item is not None:
            self.started.append(f"{event} {args[:2]!r}"[:200])

    def check(self, item: pytest.Item) -> Generator[None, None, None]:
        self.item, self.started = item, []
        try:
            yield
        finally:
            started, self.item = self.started, None
        if started and item.get_closest_marker("slow") is None:
            raise pytest.fail.Exception(
                f"{item.nodeid} starts a process without the slow marker: {started[0]}", pytrace=False
            )


_PROCESS_FOLDERS = ("tests/integration/", "tests/deploy/", "tests/browser/", "tests/plugin/")
"""Folders of tests that drive real simproxy processes, Redis, kubectl or a browser by design."""


def _uses_processes(item: pytest.Item) -> bool:
    if item.nodeid.startswith(_PROCESS_FOLDERS):
        return True
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    for defs in info.name2fixturedefs.values():
        if any(getattr(d.func, "__starts_processes__", False) for d in defs):
            return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("backend") == "redis"


def pytest_configure(config: pytest.Config) -> None:
    watch = _Watch()
    sys.addaudithook(watch.audit)
    config.stash[_WATCH] = watch


_WATCH = pytest.StashKey[_Watch]()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _uses_processes(item):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    return (yield from item.config.stash[_WATCH].check(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    return (yield from item.config.stash[_WATCH].check(item))
