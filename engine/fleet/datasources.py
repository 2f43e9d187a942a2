"""CSV templating data sources as the fleet shares them: one versioned store document.

Admin writes go through the usual write-and-wait; a template that changes a table (``csvAddRow``
and friends) commits its recorded mutations with a compare-and-set against the version it read,
and every render that reads CSV first checks that version, so a row added on one worker is read
by the next render on any other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from simproxy.engine.templating.csv_store import CsvMutation, CsvTables

Rows = tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class CsvSources:
    version: int = 0
    tables: Mapping[str, Rows] = field(default_factory=dict)

    def copy(self) -> CsvTables:
        """Mutable tables for one render (the render may change them; the snapshot stays as it is)."""
        return CsvTables({name: [list(row) for row in rows] for name, rows in self.tables.items()})

    def with_table(self, name: str, rows: Sequence[Sequence[str]]) -> dict[str, Rows]:
        return {**self.tables, name: tuple(tuple(r) for r in rows)}

    def without(self, name: str) -> dict[str, Rows]:
        return {k: v for k, v in self.tables.items() if k != name}


def encode_sources(tables: Mapping[str, Sequence[Sequence[str]]]) -> bytes:
    return orjson.dumps({"sources": {name: [list(r) for r in rows] for name, rows in sorted(tables.items())}})


def decode_sources(version: int, body: bytes) -> CsvSources:
    raw = orjson.loads(body).get("sources") or {}
    return CsvSources(version, {str(k): tuple(tuple(str(c) for c in r) for r in rows) for k, rows in raw.items()})


def replay(sources: CsvSources, mutations: Sequence[CsvMutation]) -> dict[str, Rows]:
    """The tables after ``mutations``, made on a fresh copy of ``sources``."""
    tables = sources.copy()
    for mutation in mutations:
        tables.apply(mutation)
    return {name: tuple(tuple(r) for r in rows) for name, rows in tables.tables.items()}
