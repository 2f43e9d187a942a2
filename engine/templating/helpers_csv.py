"""The CSV data-source helpers: ``csv``, ``csvMatchingRows``, ``csvAsMap``, ``csvAsArray``,
``csvAddRow``, ``csvDeleteRows``, ``csvCountRows`` and ``csvSqlCommand``.

Writes change the render's ``CsvTables`` and record a ``CsvMutation`` each. A row shorter than
the header (Hoverfly crashes on it) and an empty source read by the mini-SQL fail the render.
"""

from __future__ import annotations

from typing import Any, Literal

from simproxy.engine.templating.csv_sql import EmptySource, SqlError, parse_sql
from simproxy.engine.templating.csv_store import (
    CsvMutation,
    RaggedRow,
    delete_rows,
    matches,
    row_map,
    sql_delete,
    sql_update,
)
from simproxy.engine.templating.evaluate import Call
from simproxy.engine.templating.values import RenderFailure, StrList, go_format


def _tables(call: Call) -> dict[str, list[list[str]]]:
    tables: dict[str, list[list[str]]] = call.rt.csv.tables
    return tables


def evaluation_text(name: str, params: list[Any]) -> str:
    """Hoverfly's ``getEvaluationString``: ``{{ name p1 p2 }}`` from the evaluated arguments."""
    return "{{ " + name + " " + "".join(go_format(param, "v") + " " for param in params) + "}}"


def _rows_as_maps(header: list[str], rows: list[list[str]]) -> list[dict[str, str]]:
    return [{header[i]: cell for i, cell in enumerate(row) if i < len(header)} for row in rows]


def csv_lookup(call: Call, source: str, key_column: str, key_value: str, return_column: str) -> str:
    """``csv``: the first row whose key matches (case-insensitive), else the last ``*`` row."""
    table = _tables(call).get(source)
    if not table:
        return evaluation_text("csv", call.params)
    lowered = [name.lower() for name in table[0]]
    if key_column.lower() not in lowered or return_column.lower() not in lowered:
        return evaluation_text("csv", call.params)
    key_index, return_index = lowered.index(key_column.lower()), lowered.index(return_column.lower())
    wanted = call.rt.services.dynamic_value(call.scope, key_value).lower()
    fallback = ""
    for row in table[1:]:
        if len(row) <= key_index:
            raise RenderFailure("csv: a row is shorter than the header (Hoverfly crashes)")
        key = row[key_index]
        if key.lower() == wanted or key == "*":
            if len(row) <= return_index:
                raise RenderFailure("csv: a row is shorter than the header (Hoverfly crashes)")
            if key.lower() == wanted:
                return row[return_index]
            fallback = row[return_index]
    return fallback or evaluation_text("csv", call.params)


def csv_matching_rows(call: Call, source: str, column: str, value: str) -> list[dict[str, str]]:
    table = _tables(call).get(source)
    if not table or column not in table[0]:
        return []
    index = table[0].index(column)
    header = table[0]
    return _rows_as_maps(header, [row for row in table[1:] if index < len(row) and row[index] == value])


def csv_as_array(call: Call, source: str) -> list[StrList]:
    return [StrList(row) for row in _tables(call).get(source, [])]


def csv_as_map(call: Call, source: str) -> list[dict[str, str]]:
    table = _tables(call).get(source)
    return _rows_as_maps(table[0], table[1:]) if table else []


def csv_add_row(call: Call, source: str, row: StrList | None) -> str:
    table = _tables(call).get(source)
    if table is not None:
        table.append(list(row or ()))
        call.rt.csv.record(CsvMutation("add", source, row=tuple(row or ())))
    return ""


def csv_delete_rows(call: Call, source: str, column: str, value: str, output: bool) -> str:
    table = _tables(call).get(source)
    if table is None:
        return ""
    try:
        deleted = delete_rows(table, column, value)
    except RaggedRow as exc:
        raise RenderFailure(f"csvDeleteRows: {exc} (Hoverfly crashes)") from exc
    if deleted is None:
        return ""
    call.rt.csv.record(CsvMutation("delete", source, column=column, value=value))
    return str(deleted) if output else ""


def csv_count_rows(call: Call, source: str) -> str:
    table = _tables(call).get(source)
    if table is None:
        return ""
    return str(len(table) - 1) if table else "0"


def csv_sql_command(call: Call, command: str) -> list[dict[str, str]] | None:
    tables = _tables(call)
    try:
        statement = parse_sql(command, tables)
    except EmptySource as exc:
        raise RenderFailure(f"csvSqlCommand: {exc} (Hoverfly crashes)") from exc
    except SqlError:
        return []
    table = tables[statement.source]
    try:
        if statement.kind == "SELECT":
            header = table[0]
            rows = [row_map(header, row) for row in table[1:]]
            return [{c: row[c] for c in statement.columns} for row in rows if matches(row, statement.conditions)]
        if statement.kind == "UPDATE":
            sql_update(table, statement.assignments, statement.conditions)
        else:
            sql_delete(table, statement.conditions)
    except RaggedRow as exc:
        raise RenderFailure(f"csvSqlCommand: {exc} (Hoverfly crashes)") from exc
    kind: Literal["update", "sql_delete"] = "update" if statement.kind == "UPDATE" else "sql_delete"
    call.rt.csv.record(
        CsvMutation(kind, statement.source, assignments=statement.assignments, conditions=statement.conditions)
    )
    return None
