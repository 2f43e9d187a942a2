"""The mini-SQL of ``csvSqlCommand``: Hoverfly's regular-expression parser of SELECT, UPDATE, DELETE.

WHERE keeps every ``col OP 'value'`` triple it finds and ANDs them; ``OR`` and unquoted values
are ignored. Selected and SET columns must exist exactly. Go's ``\\s`` is ``[\\t\\n\\f\\r ]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from simproxy.engine.templating.csv_store import Condition
from simproxy.engine.templating.values import go_trim_space

_S = r"[\t\n\f\r ]"
_FLAGS = re.IGNORECASE | re.ASCII
_SELECT = re.compile(rf"SELECT{_S}+(.+){_S}+FROM{_S}+([\w-]+){_S}*(?:WHERE{_S}+(.+))?\Z", _FLAGS)
_UPDATE = re.compile(rf"UPDATE{_S}+([\w-]+){_S}+SET{_S}+(.+?)(?:{_S}+WHERE{_S}+(.+))?\Z", _FLAGS)
_DELETE = re.compile(rf"DELETE{_S}+FROM{_S}+([\w-]+){_S}*(?:WHERE{_S}+(.+))?\Z", _FLAGS)
_CONDITION = re.compile(rf"(\w+){_S}*(==|=|!=|<=|>=|<|>){_S}*'([^']*)'", re.ASCII)


class SqlError(ValueError):
    """The command is not one Hoverfly's parser accepts (the helper then returns no rows)."""


@dataclass(frozen=True, slots=True)
class Statement:
    kind: Literal["SELECT", "UPDATE", "DELETE"]
    source: str
    columns: tuple[str, ...] = ()
    assignments: tuple[tuple[str, str], ...] = ()
    conditions: tuple[Condition, ...] = ()


def _conditions(where: str | None) -> tuple[Condition, ...]:
    return tuple((m.group(1), m.group(2), m.group(3)) for m in _CONDITION.finditer(where or ""))


def _split_outside_quotes(text: str) -> list[str]:
    parts, current, quote = [], [], ""
    for char in text:
        if char in "'\"":
            if not quote:
                quote = char
            elif char == quote:
                quote = ""
            current.append(char)
        elif char == "," and not quote:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] in "'\"" and text[0] == text[-1]:
        return text[1:-1]
    return text


def parse_sql(command: str, tables: dict[str, list[list[str]]]) -> Statement:
    """Parse a command against the tables it names; ``SqlError`` when Hoverfly would refuse it."""
    query = go_trim_space(command)
    upper = query.upper()
    if upper.startswith("SELECT"):
        found = _SELECT.match(query)
        if found is None:
            raise SqlError("invalid query format")
        header = _header(tables, found.group(2))
        wanted = go_trim_space(found.group(1))
        columns = tuple(header) if wanted == "*" else tuple(go_trim_space(c) for c in wanted.split(","))
        for column in columns:
            if column not in header:
                raise SqlError(f"invalid column provided: {column}")
        return Statement("SELECT", found.group(2), columns=columns, conditions=_conditions(found.group(3)))
    if upper.startswith("UPDATE"):
        found = _UPDATE.match(query)
        if found is None:
            raise SqlError("invalid UPDATE query format")
        header = _header(tables, found.group(1))
        assignments: dict[str, str] = {}
        for part in _split_outside_quotes(found.group(2)):
            key, equals, value = go_trim_space(part).partition("=")
            if not equals:
                raise SqlError(f"invalid SET clause: {part}")
            if go_trim_space(key) not in header:
                raise SqlError(f"invalid column provided: {go_trim_space(key)}")
            assignments[go_trim_space(key)] = _unquote(go_trim_space(value))
        return Statement(
            "UPDATE", found.group(1), assignments=tuple(assignments.items()), conditions=_conditions(found.group(3))
        )
    if upper.startswith("DELETE"):
        found = _DELETE.match(query)
        if found is None:
            raise SqlError("invalid DELETE query format")
        if found.group(1) not in tables:
            raise SqlError("data source does not exist")
        return Statement("DELETE", found.group(1), conditions=_conditions(found.group(2)))
    raise SqlError("invalid query type")


class EmptySource(SqlError):
    """The source has no rows at all, not even a header: Hoverfly crashes reading its header."""


def _header(tables: dict[str, list[list[str]]], source: str) -> list[str]:
    table = tables.get(source)
    if table is None:
        raise SqlError("data source does not exist")
    if not table:
        raise EmptySource(f"data source {source} is empty")
    return table[0]
