"""Read an OpenAPI / Swagger document and inline its ``$ref``s.

The text is JSON or YAML (YAML 1.1 through PyYAML's safe loader, which also reads JSON). A
``$ref`` is local (``#/components/schemas/Pet``) or names a file beside the document
(``common.yaml#/Error``), read through the ``read`` callable the caller passes (so this module does
no I/O of its own). Every reference is replaced by its target, each target resolved once and
shared. A schema that contains itself (a tree node with children) is legitimate: the inner
occurrence becomes ``{}`` (any value), which keeps generation and validation finite. A reference
that only leads to references and back to itself, or one whose target does not exist, is refused
with an ``OpenAPIError`` naming where it was met.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote

import orjson

from simproxy.engine.errors import SimulationError

Reader = Callable[[str], bytes]


class OpenAPIError(SimulationError):
    """A document that cannot be read as an API description; ``path`` says where (dotted)."""


@dataclass(frozen=True, slots=True)
class Document:
    """A document with every ``$ref`` inlined: ``version`` is ``2.0``, ``3.0`` or ``3.1``; ``read``
    reads a file beside it (an example's ``externalValue``), None when it has no folder."""

    version: str
    root: dict[str, Any]
    read: Reader | None = field(default=None, compare=False, repr=False)


def dumps(value: Any) -> str:
    """Compact JSON text of a document's value; integers beyond 64 bits (real documents hold
    some, in ``maximum``) go through the standard library, which writes them exactly."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def parse_text(raw: bytes, name: str = "") -> Any:
    """The YAML or JSON value of ``raw``; an ``OpenAPIError`` with line and column when it is neither.
    PyYAML is imported by the first document read (15 ms a start would pay for nothing)."""
    import yaml

    # libyaml's safe loader reads a large document several times faster than the pure-Python one
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(raw, Loader=loader)  # a safe loader either way
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown place"
        raise OpenAPIError(name, f"not YAML or JSON at {where}: {exc.problem}") from exc
    except yaml.YAMLError as exc:
        raise OpenAPIError(name, f"not YAML or JSON: {exc}") from exc


def declared_version(doc: Any) -> str | None:
    """``2.0``, ``3.0`` or ``3.1`` when ``doc`` declares itself an API description, else None."""
    if not isinstance(doc, dict):
        return None
    if str(doc.get("swagger", "")).startswith("2."):
        return "2.0"
    openapi = str(doc.get("openapi", ""))
    if openapi.startswith("3.0"):
        return "3.0"
    if openapi.startswith("3.1"):
        return "3.1"
    return None


def looks_like_openapi(raw: bytes) -> bool:
    """Whether ``raw`` is a YAML or JSON document declaring ``openapi`` or ``swagger`` at its top."""
    try:
        return declared_version(parse_text(raw)) is not None
    except OpenAPIError:
        return False


def load_document(raw: bytes, read: Reader | None = None, name: str = "") -> Document:
    """Parse ``raw``, check it is OpenAPI 3.0/3.1 or Swagger 2.0, and inline every ``$ref``.

    ``read(relative_path)`` returns the bytes of a file a reference names; without it, only local
    references resolve.
    """
    doc = parse_text(raw, name)
    if not isinstance(doc, dict):
        raise OpenAPIError(name, "not an OpenAPI document: the top level is not a mapping")
    version = declared_version(doc)
    if version is None:
        found = doc.get("openapi", doc.get("swagger"))
        detail = f"version {found} is not supported" if found is not None else "no `openapi` or `swagger` member"
        raise OpenAPIError(name, f"not an OpenAPI 3.0/3.1 or Swagger 2.0 document: {detail}")
    paths = doc.get("paths", {})
    if not isinstance(paths, dict):
        raise OpenAPIError("paths", "must be a mapping of path templates to operations")
    resolved = _Resolver(doc, read).inline(doc, "", ())
    return Document(version, resolved, read)


class _Resolver:
    """Inlines references; ``files`` holds each external file parsed once, ``done`` each target resolved."""

    def __init__(self, root: dict[str, Any], read: Reader | None) -> None:
        self.read = read
        self.files: dict[str, Any] = {"": root}
        self.done: dict[tuple[str, str], Any] = {}
        # targets that are themselves only a reference: a loop made of nothing else never ends
        self.bare: set[tuple[str, str]] = set()

    def inline(self, node: Any, file: str, stack: tuple[tuple[str, str], ...], where: str = "") -> Any:
        if isinstance(node, list):
            return [self.inline(item, file, stack, f"{where}[{i}]") for i, item in enumerate(node)]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._follow(ref, file, stack, where)
        return {key: self.inline(value, file, stack, _join(where, str(key))) for key, value in node.items()}

    def _follow(self, ref: str, file: str, stack: tuple[tuple[str, str], ...], where: str) -> Any:
        target = self._target(ref, file)
        if target in self.done:
            return self.done[target]
        if target in stack:
            # a schema holding itself is fine unless the loop is made of nothing but references
            loop = stack[stack.index(target) :]
            if all(step in self.bare for step in loop):
                chain = " -> ".join(_show(step) for step in (*loop, target))
                raise OpenAPIError(_join(where, "$ref"), f"reference cycle: {chain}")
            return {}
        node = self._lookup(target, ref, _join(where, "$ref"))
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            self.bare.add(target)
        value = self.inline(node, target[0], (*stack, target), _show(target))
        self.done[target] = value
        return value

    def _target(self, ref: str, file: str) -> tuple[str, str]:
        location, _, pointer = ref.partition("#")
        if not location:
            return file, pointer
        joined = PurePosixPath(file).parent / location if file else PurePosixPath(location)
        return _normal(joined), pointer

    def _lookup(self, target: tuple[str, str], ref: str, where: str) -> Any:
        file, pointer = target
        if file not in self.files:
            if self.read is None:
                detail = "references to other files need the document's folder"
                raise OpenAPIError(where, f"cannot resolve {ref!r}: {detail}")
            try:
                raw = self.read(file)
            except OSError as exc:
                raise OpenAPIError(where, f"cannot resolve {ref!r}: {file}: {exc.strerror or exc}") from exc
            self.files[file] = parse_text(raw, file)
        node = self.files[file]
        for part in pointer.split("/")[1:] if pointer else ():
            key = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise OpenAPIError(where, f"cannot resolve {ref!r}: no {key!r} in {_show((file, pointer))}")
        return node


def _normal(path: PurePosixPath) -> str:
    """``a/../b.yaml`` -> ``b.yaml``; a path climbing above the document's folder is kept as written."""
    parts: list[str] = []
    for part in path.parts:
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _show(target: tuple[str, str]) -> str:
    file, pointer = target
    return f"{file}#{pointer}"
