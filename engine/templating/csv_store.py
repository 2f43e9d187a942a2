"""CSV data sources: Go's ``encoding/csv`` reading and writing, and the replayable write operations.

``CsvTables`` holds the named tables a render may read and change; every change a write helper
makes is recorded as a ``CsvMutation`` so the caller can apply the same change to the shared
store, or replay it on a fresh copy of the tables after a conflicting write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from simproxy.engine.templating.values import GO_SPACE, go_parse_float

Condition = tuple[str, str, str]
"""A mini-SQL WHERE triple: (column, operator, value)."""


@dataclass(frozen=True, slots=True)
class CsvMutation:
    """One change to a table, enough to make it again.

    ``add`` appends ``row``; ``delete`` removes the rows whose ``column`` equals ``value``
    (``csvDeleteRows``); ``update`` sets ``assignments`` on the rows matching ``conditions`` and
    ``sql_delete`` removes them (``csvSqlCommand``).
    """

    kind: Literal["add", "delete", "update", "sql_delete"]
    source: str
    row: tuple[str, ...] = ()
    column: str = ""
    value: str = ""
    assignments: tuple[tuple[str, str], ...] = ()
    conditions: tuple[Condition, ...] = ()


class RaggedRow(ValueError):
    """A row shorter than the header (possible after ``csvAddRow``): Hoverfly crashes on it."""


def row_map(header: Sequence[str], row: Sequence[str]) -> dict[str, str]:
    """Go's ``mapRow``: header name to cell, for every header column."""
    if len(row) < len(header):
        raise RaggedRow(f"a row has {len(row)} fields, the header {len(header)}")
    return {name: row[i] for i, name in enumerate(header)}


def _less(a: str, b: str) -> bool:
    x, y = go_parse_float(a), go_parse_float(b)
    return x is not None and y is not None and x < y


def _greater(a: str, b: str) -> bool:
    x, y = go_parse_float(a), go_parse_float(b)
    return x is not None and y is not None and x > y


def matches(row: Mapping[str, str], conditions: Sequence[Condition]) -> bool:
    """Every condition holds; an ordering test on text that is not a number never excludes."""
    for column, op, value in conditions:
        if column not in row:
            return False
        cell = row[column]
        if op in ("=", "=="):
            if cell != value:
                return False
        elif op == "!=":
            if cell == value:
                return False
        elif op == "<":
            if _greater(cell, value) or cell_equal_number(cell, value):
                return False
        elif op == "<=":
            if _greater(cell, value):
                return False
        elif op == ">":
            if _less(cell, value) or cell_equal_number(cell, value):
                return False
        elif op == ">=" and _less(cell, value):
            return False
    return True


def cell_equal_number(a: str, b: str) -> bool:
    x, y = go_parse_float(a), go_parse_float(b)
    return x is not None and y is not None and x == y


def delete_rows(table: list[list[str]], column: str, value: str) -> int | None:
    """``csvDeleteRows``: rows whose ``column`` (exact name) equals ``value``; None without that column."""
    if not table or column not in table[0]:
        return None
    index = table[0].index(column)
    kept = [table[0]]
    for row in table[1:]:
        if len(row) <= index:
            raise RaggedRow(f"a row has no {column!r} field")
        if row[index] != value:
            kept.append(row)
    deleted = len(table) - len(kept)
    table[:] = kept
    return deleted


def sql_update(table: list[list[str]], assignments: Sequence[tuple[str, str]], conditions: Sequence[Condition]) -> int:
    if len(table) < 2:
        return 0
    header = table[0]
    changed = 0
    for row in table[1:]:
        if matches(row_map(header, row), conditions):
            changed += 1
            for column, value in assignments:
                if column in header:
                    row[header.index(column)] = value
    return changed


def sql_delete(table: list[list[str]], conditions: Sequence[Condition]) -> int:
    if len(table) < 2:
        return 0
    header = table[0]
    kept = [header] + [row for row in table[1:] if not matches(row_map(header, row), conditions)]
    deleted = len(table) - len(kept)
    table[:] = kept
    return deleted


class CsvTables:
    """Named CSV sources: rows of strings, row 0 the header. Write helpers mutate it and append to
    ``mutations`` a replayable description of each change, so the caller can apply the same change
    to the shared store (and re-apply it on a fresh copy after a conflict)."""

    __slots__ = ("mutations", "tables")

    def __init__(self, tables: Mapping[str, list[list[str]]]) -> None:
        self.tables: dict[str, list[list[str]]] = dict(tables)
        self.mutations: list[CsvMutation] = []

    def apply(self, mutation: CsvMutation) -> None:
        """Make a recorded change to these tables (nothing when the source is gone).

        Raises ``ValueError`` when a row is shorter than the header it is matched against.
        """
        table = self.tables.get(mutation.source)
        if table is None:
            return
        if mutation.kind == "add":
            table.append(list(mutation.row))
        elif mutation.kind == "delete":
            delete_rows(table, mutation.column, mutation.value)
        elif mutation.kind == "update":
            sql_update(table, mutation.assignments, mutation.conditions)
        else:
            sql_delete(table, mutation.conditions)

    def record(self, mutation: CsvMutation) -> None:
        self.mutations.append(mutation)


# ---------------------------------------------------------------------------------------------
# Go's encoding/csv


class _ParseError(ValueError):
    def __init__(self, start: int, line: int, column: int, reason: str) -> None:
        if reason == "wrong number of fields":
            text = f"record on line {line}: {reason}"
        elif start != line:
            text = f"record on line {start}; parse error on line {line}, column {column}: {reason}"
        else:
            text = f"parse error on line {line}, column {column}: {reason}"
        super().__init__(text)


_BARE_QUOTE = 'bare " in non-quoted-field'
_QUOTE = 'extraneous or missing " in quoted-field'


class _Lines:
    """Go's ``readLine``: lines keep their ``\\n``; ``\\r\\n`` becomes ``\\n``; a final ``\\r`` is dropped."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.number = 0

    def read(self) -> bytes | None:
        if self.pos >= len(self.data):
            return None
        end = self.data.find(b"\n", self.pos)
        end = len(self.data) if end < 0 else end + 1
        line = self.data[self.pos : end]
        self.pos = end
        if not line.endswith(b"\n") and line.endswith(b"\r"):
            line = line[:-1]
        self.number += 1
        if line.endswith(b"\r\n"):
            line = line[:-2] + b"\n"
        return line


def _record(lines: _Lines) -> tuple[int, list[bytes]] | None:
    """The next record and the line it starts on (empty lines are skipped)."""
    line = lines.read()
    while line in (b"\n", b""):
        line = lines.read()
    if line is None:
        return None
    start = lines.number
    return start, _fields(lines, line, start)


def _fields(lines: _Lines, line: bytes, start: int) -> list[bytes]:
    fields: list[bytes] = []
    column = 1
    while True:
        if not line.startswith(b'"'):
            comma = line.find(b",")
            field = line[:comma] if comma >= 0 else line.removesuffix(b"\n")
            quote = field.find(b'"')
            if quote >= 0:
                raise _ParseError(start, lines.number, column + quote, _BARE_QUOTE)
            fields.append(field)
            if comma < 0:
                return fields
            line = line[comma + 1 :]
            column += comma + 1
            continue
        line = line[1:]
        column += 1
        buffer = bytearray()
        line_no = lines.number
        while True:
            quote = line.find(b'"')
            if quote >= 0:
                buffer += line[:quote]
                line = line[quote + 1 :]
                column += quote + 1
                if line.startswith(b'"'):
                    buffer += b'"'
                    line = line[1:]
                    column += 1
                elif line.startswith(b","):
                    line = line[1:]
                    column += 1
                    fields.append(bytes(buffer))
                    break
                elif line in (b"", b"\n"):
                    fields.append(bytes(buffer))
                    return fields
                else:
                    raise _ParseError(start, lines.number, column - 1, _QUOTE)
            elif line:
                buffer += line
                column += len(line)
                following = lines.read()
                line = following or b""
                if line:
                    line_no += 1
                    column = 1
            else:
                raise _ParseError(start, line_no, column, _QUOTE)


def parse_csv(text: str) -> list[list[str]]:
    """Go's ``csv.NewReader(...).ReadAll()``: ``ValueError`` with Go's message on bad input."""
    lines = _Lines(text.encode("utf-8", "surrogateescape"))
    rows: list[list[str]] = []
    width: int | None = None
    while True:
        found = _record(lines)
        if found is None:
            return rows
        start, record = found
        if width is None:
            width = len(record)
        elif len(record) != width:
            raise _ParseError(start, start, 1, "wrong number of fields")
        rows.append([field.decode("utf-8", "surrogateescape") for field in record])


def _needs_quotes(field: str) -> bool:
    if field == "":
        return False
    if field == "\\." or any(c in field for c in ',"\r\n'):
        return True
    return field[0] in GO_SPACE


def format_csv(rows: Sequence[Sequence[str]]) -> str:
    """Go's ``csv.Writer``: a field is quoted only when it must be; ``\\n`` after every row."""
    out = []
    for row in rows:
        out.append(",".join('"' + field.replace('"', '""') + '"' if _needs_quotes(field) else field for field in row))
        out.append("\n")
    return "".join(out)
