"""Imports point one way: admin -> engine -> store, and each third-party package has one home."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.importgraph import circles, import_graph, module_files

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("admin", "engine", "store")
ALLOWED = {"admin": {"admin", "engine", "store"}, "engine": {"engine", "store"}, "store": {"store"}}
# third-party modules with one sanctioned home
HOMES = {"sanic": {"admin"}, "redis": {"store"}, "httptools": {"engine"}, "re2": {"engine"}}


def _modules(path: Path) -> set[str]:
    """Every module a file imports by its absolute name."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _unprefixed(module: str) -> str:
    """``simproxy.engine.matching`` is ``engine.matching`` here; ``simproxy`` itself lives in admin/."""
    if module == "simproxy":
        return "admin"
    return module.removeprefix("simproxy.")


def _imports(path: Path) -> set[str]:
    """The top-level names a file imports: ``admin``, ``engine`` and ``store`` for simproxy's own."""
    return {_unprefixed(module).split(".")[0] for module in _modules(path)}


def test_simproxy_is_imported_by_its_installed_name_everywhere() -> None:
    """The folders are installed beneath ``simproxy``: a bare ``import engine`` would load a user's module."""
    bare = {
        f"{path.relative_to(ROOT)}: {module}"
        for folder in (*PACKAGES, "tests", "benchmarks")
        for path in (ROOT / folder).rglob("*.py")
        for module in _modules(path)
        if module.split(".")[0] in PACKAGES
    }
    assert bare == set()


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_point_one_way(package: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(found & set(PACKAGES) - ALLOWED[package])
        for path in (ROOT / package).rglob("*.py")
        if (found := _imports(path)) & set(PACKAGES) - ALLOWED[package]
    }
    assert offenders == {}


# engine's rooms, bottom first: a module imports only from its own room or from a lower layer
ENGINE_LAYERS = (
    {"errors", "version"},
    {"gocompat", "execution", "auth", "openapi"},
    {"simulation"},
    {"wire"},
    {"templating"},
    {"matching"},
    {"journal"},
    {"fleet"},
    {"outbound"},
    {"modes"},
    {"server"},
)
RANK = {room: rank for rank, rooms in enumerate(ENGINE_LAYERS) for room in rooms}


def _engine_modules(path: Path) -> set[str]:
    """The engine modules a file imports, named from ``engine`` (``engine.matching.cache``)."""
    return {name for module in _modules(path) if (name := _unprefixed(module)).startswith("engine.")}


def _room(parts: tuple[str, ...]) -> str:
    """``engine.matching.cache`` and ``engine/matching/cache.py`` are both in the room ``matching``."""
    name = parts[1]
    return name[:-3] if name.endswith(".py") else name


def test_every_engine_module_has_a_room() -> None:
    rooms = {_room(path.relative_to(ROOT).parts) for path in (ROOT / "engine").rglob("*.py")} - {"__init__"}
    assert rooms - set(RANK) == set()


def test_engine_rooms_import_downwards() -> None:
    offenders = set()
    for path in (ROOT / "engine").rglob("*.py"):
        parts = path.relative_to(ROOT).parts
        if parts[1] == "__init__.py":
            continue
        room = _room(parts)
        for module in _engine_modules(path):
            target = _room(tuple(module.split(".")))
            if target != room and RANK[target] >= RANK[room]:
                offenders.add(f"{'/'.join(parts)} imports {module}")
    assert offenders == set()


# admin's rooms and what each may import of simproxy: the foundation (settings, errors, command)
# sits beneath them all; the testing kit drives a server over HTTP and imports none of it
ADMIN_ROOMS = {
    "foundation": {"foundation", "engine", "store"},
    "dashboard": {"dashboard", "foundation"},
    "api": {"api", "dashboard", "foundation", "engine", "store"},
    "process": {"process", "api", "dashboard", "foundation", "engine", "store"},
    "kit": {"kit", "command", "store.errors", "engine.execution.lifeline"},
    "simproxy": {"simproxy", "kit", "process"},
}
"""``store.errors`` (the root of the one error tree) and ``engine.execution.lifeline`` (a child's
parent-death signal) are the kit's two leaves from below: neither loads anything else of the server."""
ADMIN_FOUNDATION = {"settings", "errors", "command", "__init__"}


def _admin_room(parts: tuple[str, ...]) -> str:
    """``admin/api/state.py`` and ``admin.api.state`` are in ``api``; ``admin/settings.py`` in the foundation."""
    name = parts[1].removesuffix(".py") if len(parts) > 1 else "__init__"
    return "foundation" if name in ADMIN_FOUNDATION else name


_LEAVES = frozenset({"store.errors", "engine.execution.lifeline"})


def _admin_targets(path: Path) -> set[str]:
    """What a file in admin/ imports of simproxy: admin rooms (``command`` and ``simproxy`` named
    apart), ``engine`` and ``store`` (``_LEAVES`` by their own names)."""
    found = set()
    for module in _modules(path):
        if module != "simproxy" and not module.startswith("simproxy."):
            continue
        name = _unprefixed(module)
        parts = tuple(name.split("."))
        if module == "simproxy":
            found.add("simproxy")
        elif name in _LEAVES:
            found.add(name)
        elif parts[0] == "admin":
            found.add("command" if parts[1:2] == ("command",) else _admin_room(parts))
        else:
            found.add(parts[0])
    return found


def test_tests_mirror_the_rooms() -> None:
    """tests/engine/<room>/ and tests/admin/<room>/ are rooms of engine and admin; what sits at
    tests/engine/ itself tests one of engine's top-level modules."""
    for package, rooms in (("engine", set(RANK)), ("admin", set(ADMIN_ROOMS))):
        folders = {p.name for p in (ROOT / "tests" / package).iterdir() if p.is_dir() and p.name != "__pycache__"}
        assert folders - rooms == set(), package
    top = {p.stem.removeprefix("test_") for p in (ROOT / "tests" / "engine").glob("test_*.py")}
    assert top - {p.stem for p in (ROOT / "engine").glob("*.py")} == set()


def test_every_admin_module_has_a_room() -> None:
    rooms = {_admin_room(path.relative_to(ROOT).parts) for path in (ROOT / "admin").rglob("*.py")}
    assert rooms == set(ADMIN_ROOMS)


def test_admin_rooms_import_what_their_floor_allows() -> None:
    offenders = set()
    for path in (ROOT / "admin").rglob("*.py"):
        room = _admin_room(path.relative_to(ROOT).parts)
        allowed = ADMIN_ROOMS[room] | {"command"} | (_LEAVES if room != "kit" else set())
        for target in _admin_targets(path) - allowed:
            offenders.add(f"{path.relative_to(ROOT)} imports {target}")
    assert offenders == set()


@pytest.mark.parametrize("module", sorted(HOMES))
def test_third_party_packages_stay_in_their_home(module: str) -> None:
    users = {
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if module in _imports(path) and package not in HOMES[module]
    }
    assert users == set()


def test_no_module_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if (n := len(path.read_text().splitlines())) > 600
    }
    assert long == {}


_MUTABLE_CALLS = {"list", "dict", "set", "bytearray", "defaultdict", "Counter", "OrderedDict", "deque"}


def _module_level_mutables(text: str) -> list[str]:
    """Names a module binds, at its top level, to a mutable container: state shared between requests."""
    found = []
    for node in ast.parse(text).body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        value = node.value
        literal = isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp))
        call = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _MUTABLE_CALLS
        if literal or call:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            found.append(ast.unparse(target))
    return found


def test_the_mutable_state_check_sees_literals_and_constructors() -> None:
    text = "A = {}\nB: list[int] = []\nC = defaultdict(list)\nD = ()\nE = frozenset({1})\nF = MappingProxyType({})\n"
    assert _module_level_mutables(text) == ["A", "B", "C"]


def test_no_module_level_mutable_state() -> None:
    """Tables are MappingProxyType, tuples or frozensets; what changes lives in an object."""
    found = {
        f"{path.relative_to(ROOT)}: {name}"
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        for name in _module_level_mutables(path.read_text())
    }
    assert found == set()


def test_every_package_directory_is_installed_beneath_simproxy() -> None:
    """``pip install .`` (the README's first command) ships every package, subpackages included, as
    ``simproxy.<folder>...``, and the root package from admin/simproxy: nothing else at the top."""
    import tomllib

    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping = {folder: name for name, folder in setuptools["package-dir"].items()}
    found = set()
    for package in PACKAGES:
        for init in (ROOT / package).rglob("__init__.py"):
            folder = init.parent.relative_to(ROOT)
            home = next(p for p in (folder, *folder.parents) if str(p) in mapping)
            found.add(".".join((mapping[str(home)], *folder.relative_to(home).parts)))
    assert "simproxy.engine.templating" in found and "simproxy" in found
    assert set(setuptools["packages"]) == found
    assert {name.split(".")[0] for name in found} == {"simproxy"}


def test_the_circle_finder_sees_a_circle_through_any_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_importcircles() -> None:
    """No module imports, even lazily or for types alone, a module that imports it back."""
    assert circles(import_graph(module_files())) == []
