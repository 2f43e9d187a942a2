"""``hot_value``: a frozen dataclass for the values made on every proxied request.

A ``@dataclass(frozen=True)`` enforces immutability at run time through its ``__init__``, which
stores each field with ``object.__setattr__``: for the request's 11 fields that is 1.7 us against
0.23 us for a plain slotted dataclass, paid on every request. ``hot_value`` keeps the guarantee
where it is checked anyway, in mypy (strict on engine/), which sees a frozen dataclass and rejects
any assignment to a field, and builds a plain slotted dataclass at run time. Equality, ``repr`` and
``dataclasses.replace`` are the same; such values are not hashable (none of them is used as a key).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def hot_value(cls: type[T]) -> type[T]:
    return dataclass(slots=True)(cls)
