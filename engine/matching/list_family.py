"""The list family: array, negate and the body's form matcher (spec §2.2.12-2.2.14).

``array`` compares the ``;``-separated field with a list of strings under its three config flags;
``negate`` is the opposite of exact; ``form`` holds a matcher list per urlencoded body field, each
compiled here through the registry's own ``compile`` so that every error names its JSON path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from simproxy.engine.errors import InvalidValue, SimulationError
from simproxy.engine.matching.base import Built, json_type, require_str
from simproxy.engine.simulation.model import JSON, Matcher

ARRAY_FLAGS = ("ignoreUnknown", "ignoreOrder", "ignoreOccurrences")


def negate(value: JSON, path: str) -> Built:
    """``negate``: true when the field differs from the value (Hoverfly also accepts non-strings)."""
    return Built(require_str(value, path, "negate").__ne__)


_GO_KINDS: Mapping[type, str] = MappingProxyType(
    {bool: "bool", int: "float64", float: "float64", dict: "map[string]interface {}", list: "[]interface {}"}
)
"""Go's type of each JSON value, for ``reflect.Value.String`` of an array item that is no string."""


def go_value_text(item: JSON) -> str:
    """An array item as Hoverfly reads it into a string (``reflect.Value.String``): a string as it
    is, another value as ``<float64 Value>``, ``<bool Value>``, ..., null as ``<invalid Value>``."""
    if isinstance(item, str):
        return item
    if item is None:
        return "<invalid Value>"
    return f"<{_GO_KINDS[type(item)]} Value>"


def _strings(value: JSON, path: str) -> tuple[JSON, ...]:
    if not isinstance(value, list):
        message = f"the array matcher needs an array of strings, not {json_type(value)}"
        raise InvalidValue(f"{path}.value", message)
    return tuple(value)  # items that are no strings: ``array`` says what Hoverfly makes of them


def _flags(config: Mapping[str, JSON] | None, path: str) -> tuple[bool, bool, bool]:
    config = config or {}
    for key, flag in config.items():
        if key not in ARRAY_FLAGS:
            raise SimulationError(f"{path}.config.{key}", f"unknown array option (known: {', '.join(ARRAY_FLAGS)})")
        if not isinstance(flag, bool):
            raise SimulationError(f"{path}.config.{key}", f"must be true or false, not {json_type(flag)}")
    ignore_unknown, ignore_order, ignore_occurrences = (bool(config.get(key, False)) for key in ARRAY_FLAGS)
    return ignore_unknown, ignore_order, ignore_occurrences


def array(value: JSON, config: Mapping[str, JSON] | None, path: str) -> Built:
    """``array``: the ``;``-separated field against the expected list, Hoverfly's three checks ANDed.

    known (every item expected), occurrences (each expected value as often), order (the expected
    list is a subsequence); each flag skips one. No config is exact list equality.
    """
    items = _strings(value, path)
    expected = tuple(map(go_value_text, items))
    predicate = _array_predicate(expected, *_flags(config, path))
    for i, item in enumerate(items):
        if not isinstance(item, str):
            message = f"the array matcher compares strings, not {json_type(item)}"
            behaviour = f"reads it as the string {expected[i]!r}, as Go prints it"
            raise InvalidValue(f"{path}.value[{i}]", message, predicate, behaviour)
    return Built(predicate)


def _array_predicate(
    expected: tuple[str, ...], ignore_unknown: bool, ignore_order: bool, ignore_occurrences: bool
) -> Callable[[str], bool]:
    known = frozenset(expected)
    counts = Counter(expected)

    def predicate(actual: str) -> bool:
        items = actual.split(";")
        if not ignore_unknown and not known.issuperset(items):
            return False
        if not ignore_occurrences:
            seen = Counter(items)
            if any(seen[item] != n for item, n in counts.items()):
                return False
        return ignore_order or _in_order(expected, items)

    return predicate


def _in_order(expected: tuple[str, ...], items: list[str]) -> bool:
    """Hoverfly's isInSameOrder: the expected list appears in ``items`` as a subsequence."""
    index = 0
    for item in items:
        if index == len(expected):
            break
        if item == expected[index]:
            index += 1
    return index == len(expected)


# ---------------------------------------------------------------------------------------------
# form

FormFields = tuple[tuple[str, tuple[Any, ...]], ...]


def decode_matcher(raw: JSON, path: str) -> Matcher:
    """A matcher object inside a form value, read the way the simulation codec reads one."""
    if not isinstance(raw, dict):
        raise SimulationError(path, f"a matcher must be an object, not {json_type(raw)}")
    name = raw.get("matcher")
    if name is not None and not isinstance(name, str):
        raise SimulationError(f"{path}.matcher", "the matcher name must be a string")
    config = raw.get("config")
    if config is not None and not isinstance(config, dict):
        raise SimulationError(f"{path}.config", "the matcher config must be an object")
    then = raw.get("doMatch")
    return Matcher(
        name=name or "",
        value=raw.get("value"),
        config=config,
        do_match=None if then is None else decode_matcher(then, f"{path}.doMatch"),
    )


def form_fields(value: JSON, path: str, compile_one: Callable[[Matcher, str], Any]) -> FormFields:
    """Each form field's compiled matcher list, in the value's key order (``compile_one`` compiles one)."""
    if not isinstance(value, dict):
        wrong = json_type(value)
        raise SimulationError(f"{path}.value", f"the form matcher needs an object of matcher lists, not {wrong}")
    fields = []
    for name, raw_list in value.items():
        where = f"{path}.value.{name}"
        if raw_list is None:
            raw_list = []
        if not isinstance(raw_list, list):
            raise SimulationError(where, f"a form field needs a list of matchers, not {json_type(raw_list)}")
        entries = (decode_matcher(raw, f"{where}[{i}]") for i, raw in enumerate(raw_list))
        fields.append((name, tuple(compile_one(m, f"{where}[{i}]") for i, m in enumerate(entries))))
    return tuple(fields)
