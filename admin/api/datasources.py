"""``/api/v2/service/templating-data-source/csv``: the CSV data sources templates read and change."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.responses import json_response, path_name, services
from simproxy.admin.api.views import load_object, typed
from simproxy.admin.errors import BadRequest, NotFound
from simproxy.engine.fleet.cas import until_written
from simproxy.engine.fleet.datasources import CsvSources, Rows
from simproxy.engine.fleet.runtime import Runtime
from simproxy.engine.gocompat.dialect import Dialect
from simproxy.engine.templating.csv_store import format_csv, parse_csv


def _view(csv: CsvSources, dialect: Dialect) -> dict[str, list[dict[str, str]]]:
    """``{"csvDataSources": [...]}``; Hoverfly omits the empty list (``{}``)."""
    sources = [{"name": name, "data": format_csv(rows)} for name, rows in sorted(csv.tables.items())]
    return {"csvDataSources": sources} if sources or not dialect.is_hoverfly else {}


async def get_sources(request: Request) -> HTTPResponse:
    runtime = services(request).runtime
    return json_response(_view(await runtime.fresh_csv(), runtime.dialect))


async def put_source(request: Request) -> HTTPResponse:
    body = load_object(request.body)
    name = typed(body, "name", str, "")
    data = typed(body, "data", str, "")
    try:
        rows = parse_csv(data)
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc
    runtime = services(request).runtime
    return json_response(_view(await _write(runtime, lambda csv: csv.with_table(name, rows)), runtime.dialect))


async def delete_source(request: Request, name: str) -> HTTPResponse:
    runtime = services(request).runtime
    name = path_name(name, runtime.dialect)
    current = await runtime.fresh_csv()
    if name not in current.tables:
        if runtime.dialect.forgiving_deletes:  # Hoverfly: 200 and the sources as they are
            return json_response(_view(current, runtime.dialect))
        raise NotFound(f"no CSV data source named {name!r}")
    return json_response(_view(await _write(runtime, lambda csv: csv.without(name)), runtime.dialect))


async def _write(runtime: Runtime, change: Callable[[CsvSources], Mapping[str, Rows]]) -> CsvSources:
    async def attempt() -> CsvSources | None:
        current = await runtime.fresh_csv()
        return runtime.snapshot.csv if await runtime.write_csv(change(current), expected=current.version) else None

    return await until_written(attempt, "the data sources kept changing during the update; try again")
