"""The store's layout: one class per role of store/base.py in each implementation, in a module of
its own (store/memory/<role>.py, store/redis/<role>.py) that its contract test mirrors
(tests/store/test_contract_<role>.py); the stores compose them; and no import circle anywhere."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any, Protocol

import pytest

from simproxy.store import (
    AuthStore,
    BatchedStore,
    BatchWriter,
    CacheStore,
    DiffStore,
    Documents,
    JournalStore,
    MemoryStore,
    SharedState,
    Store,
    Telemetry,
    Workers,
)
from tests.importgraph import circles, import_graph, module_files

ROOT = Path(__file__).resolve().parents[2]
ROLES: dict[type[Any], tuple[str, str]] = {
    Documents: ("documents", "documents"),
    Workers: ("workers", "workers"),
    SharedState: ("state", "state"),
    CacheStore: ("cache", "cache"),
    JournalStore: ("journal", "journal"),
    Telemetry: ("telemetry", "telemetry"),
    DiffStore: ("diff", "diffs"),
    AuthStore: ("auth", "auth"),
}
"""Each role: (its module in store/memory/ and store/redis/, the store's attribute holding it)."""
BATCH_WRITES = {  # the role that owns each batched write's data
    "add_counters": Telemetry,
    "cache_put": CacheStore,
    "journal_append": JournalStore,
    "logs_append": Telemetry,
    "metrics_add": Telemetry,
}


def _calls(protocol: type[Any]) -> set[str]:
    """The calls a role protocol names (its own, not those of the protocols it extends)."""
    return {name for name, value in vars(protocol).items() if inspect.isfunction(value) and not name.startswith("_")}


def test_the_store_is_the_roles_and_nothing_else() -> None:
    """A role added to ``Store`` gets a module in each implementation and a contract file (below)."""
    assert set(Store.__bases__) == {*ROLES, BatchedStore, BatchWriter, Protocol}
    # each role is an attribute of the store too, for the request path to hold
    properties = {name for name, value in vars(Store).items() if isinstance(value, property)}
    assert properties == {attribute for _, attribute in ROLES.values()} | {"errors"}
    assert set(BATCH_WRITES) == _calls(BatchWriter)


@pytest.mark.parametrize("protocol", list(ROLES), ids=lambda p: p.__name__)
def test_each_role_has_a_module_and_a_class_in_each_implementation_and_a_contract_file(protocol: type[Any]) -> None:
    module, _ = ROLES[protocol]
    own = _calls(protocol) | {name for name, role in BATCH_WRITES.items() if role is protocol}
    for implementation in ("memory", "redis"):
        found = importlib.import_module(f"simproxy.store.{implementation}.{module}")
        (role,) = (c for c in vars(found).values() if inspect.isclass(c) and c.__module__ == found.__name__)
        assert own <= set(dir(role)), (implementation, module)
    assert (ROOT / "tests" / "store" / f"test_contract_{module}.py").is_file()


def _bound_to_roles(store: object, exempt: set[str]) -> dict[str, bool]:
    """Whether each call of the store is its role's own method, bound (no frame of the store's)."""
    found = {}
    for protocol, (_, attribute) in ROLES.items():
        role = getattr(store, attribute)
        for name in (_calls(protocol) | {n for n, p in BATCH_WRITES.items() if p is protocol}) - exempt:
            call = getattr(store, name)
            found[name] = getattr(call, "__self__", None) is role and call.__func__ is getattr(type(role), name)
    return found


def test_the_in_process_stores_calls_are_its_roles_own_but_the_batch_writes() -> None:
    """A request's calls (state steps, journal lookups, ...) go straight to the role; the batch
    writes are the store's methods, since ``batch()`` hands back the store itself."""
    found = _bound_to_roles(MemoryStore(), set(BATCH_WRITES))
    assert found and all(found.values()), found


def test_the_redis_stores_calls_are_its_roles_own(redis_store) -> None:
    found = _bound_to_roles(redis_store, set())
    assert found and all(found.values()), found


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_no_store_module_imports_one_that_imports_it_back() -> None:
    graph = import_graph({name: path for name, path in module_files().items() if name.startswith("simproxy.store")})
    assert graph["simproxy.store.redis.batch"] >= {"simproxy.store.redis.journal"}  # the graph is read
    assert circles(graph) == []
