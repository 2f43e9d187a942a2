"""simproxy's import graph and its circles, for the layering tests (tests/test_layering.py checks
the whole package, tests/store/test_layout.py the store)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (
    ("admin/simproxy", "simproxy"),
    ("admin", "simproxy.admin"),
    ("engine", "simproxy.engine"),
    ("store", "simproxy.store"),
)
"""Each source folder and the package it is installed as (pyproject.toml's package-dir)."""


def module_files() -> dict[str, Path]:
    """Every module of the installed package, by its name, and its file."""
    names = {}
    for folder, package in FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            relative = path.relative_to(ROOT / folder)
            if folder == "admin" and relative.parts[0] == "simproxy":
                continue
            parts = relative.with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            names[".".join((package, *parts))] = path
    return names


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of ``modules`` it imports, by any import statement (under
    ``TYPE_CHECKING`` and inside functions too), relative ones resolved. ``from package import
    module`` names the module: the package's own ``__init__`` runs first for any of its modules,
    which no layout can avoid, so it is no edge."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                targets = {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
            else:
                continue
            graph[name] |= (targets & modules.keys()) - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found
