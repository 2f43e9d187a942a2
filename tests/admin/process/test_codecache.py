"""``admin/process/codecache.py``: dataclasses made while ``GeneratedCode`` is entered get the very methods
they get without it, whether their code was just compiled or read back from the kept file; and
nothing of it is left once the block ends."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from simproxy.admin.process.codecache import GeneratedCode

METHODS = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__lt__")


def _make() -> type[Any]:
    return dataclasses.make_dataclass(
        "Point", [("x", int), ("y", int, dataclasses.field(default=0))], frozen=True, order=True, slots=True
    )


def _codes(cls: type[Any]) -> dict[str, object]:
    return {name: getattr(cls, name).__code__ for name in METHODS}


def test_made_and_kept_methods_are_those_dataclasses_make(tmp_path: Path) -> None:
    plain = _make()
    with GeneratedCode(tmp_path):
        made = _make()
    kept = list(tmp_path.iterdir())
    with GeneratedCode(tmp_path):
        read = _make()
    assert [path.name.startswith("dataclasses-") for path in kept] == [True]
    assert _codes(made) == _codes(plain)
    assert _codes(read) == _codes(plain)
    point = read(1)
    assert (point, repr(point), point < read(2)) == (read(1, 0), "Point(x=1, y=0)", True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    assert not hasattr(dataclasses, "exec")


def test_an_unwritable_folder_only_means_nothing_is_kept(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    with GeneratedCode(blocked / "cache"):
        made = _make()
    assert made(3).x == 3
    assert not hasattr(dataclasses, "exec")
