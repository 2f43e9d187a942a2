"""``/api/v2/journal`` and ``/api/v2/journal/index``: every worker's journal, read through any of them.

Reads start with a barrier, so an entry is visible once its response has been sent; indexes are
names in the runtime config (every worker computes their keys as it writes entries) plus a key
map per index in the store, built over the existing entries when the index is created.
``engine.journal_search`` is imported by the first search.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import orjson
from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.configuration import write_config
from simproxy.admin.api.responses import JSON_TYPE, json_response, path_name, services
from simproxy.admin.api.services import Services
from simproxy.admin.api.views import load_object, typed
from simproxy.admin.errors import BadRequest, NotFound, ServerError
from simproxy.engine.fleet.runtime import Runtime
from simproxy.engine.gocompat.gojson import go_html_escape
from simproxy.engine.journal.entries import (
    JournalEntry,
    build_index,
    completion_order,
    decode_entry,
    entry_view,
    index_key,
    index_view,
    page_of,
    paging,
    parse_sort,
    parse_time,
    query_journal,
)
from simproxy.store import JournalRecord

T = TypeVar("T")


def _enabled(runtime: Runtime) -> None:
    if not runtime.records.journal_enabled:
        raise ServerError("Journal disabled")


async def _records(svc: Services) -> Sequence[JournalRecord]:
    """Every record, in the store's order: the order the indexes were written in (the last entry of
    a key, flush by flush, is the one the ``journal`` template helper finds)."""
    await svc.runtime.barrier()  # every worker's buffered entries are in the store
    return await svc.journal.journal_entries()


async def _listing_order(svc: Services, records: Sequence[JournalRecord]) -> list[int] | None:
    """Where each record goes in a listing (``completion_order``), off the event loop; None for
    one worker's journal, in order already."""
    return await svc.offload.run(completion_order, records) if svc.runtime.store.shared else None


def _arranged(items: Sequence[T], order: list[int] | None) -> Sequence[T]:
    """``items`` in listing order (``_listing_order``)."""
    return items if order is None else [items[i] for i in order]


def _decode_all(records: Sequence[JournalRecord]) -> list[JournalEntry]:
    return [decode_entry(raw) for raw in records]


async def _entries(svc: Services, *, listed: bool = False) -> list[JournalEntry]:
    """Every entry, decoded off the event loop (tens of thousands take a second, not to be spent
    on the loop that serves the proxy port): in the store's order, or, ``listed``, in the order
    their responses were sent."""
    records = await _records(svc)
    order = await _listing_order(svc, records) if listed else None
    return await svc.offload.run(_decode_all, _arranged(records, order))


def _indexes(
    runtime: Runtime, entries: list[JournalEntry], page: list[JournalEntry] | None
) -> list[dict[str, Any]] | None:
    """The indexes' views (``null`` when there is none in Hoverfly's dialect); with ``page``, each
    lists only the page's entries."""
    ids = None if page is None else {e.id for e in page}
    views = []
    for source in runtime.snapshot.config.journal_indexes:
        expression = runtime.records.index(source)
        views.append(index_view(expression.name, build_index(expression, entries), ids))
    return runtime.dialect.listed(views)


def _index_names(runtime: Runtime) -> list[str]:
    """The indexes' names (their expressions without quotes), in the order they were created."""
    return [index_key(source) for source in runtime.snapshot.config.journal_indexes]


async def get_journal(request: Request) -> HTTPResponse:
    svc = services(request)
    runtime = svc.runtime
    _enabled(runtime)
    limit, offset = paging(request.args.get("limit"), request.args.get("offset"), runtime.dialect.journal_limit)
    from_, to = parse_time(request.args.get("from", "")), parse_time(request.args.get("to", ""))
    sort = request.args.get("sort", "")
    try:
        key, descending = parse_sort(sort)
    except ValueError as exc:  # a bad sort key or order: Hoverfly answers 500, a client error is a 400
        raise (ServerError if runtime.dialect.is_hoverfly else BadRequest)(str(exc)) from exc
    records = await _records(svc)
    order = await _listing_order(svc, records)
    if (
        from_ is None
        and to is None
        and key == "timestarted"
        and not descending
        and not runtime.snapshot.config.journal_indexes
    ):
        # the page in arrival order: only its entries are decoded, however long the journal
        window, total = page_of(_arranged(records, order), limit, offset)
        page = [decode_entry(raw) for raw in window]
        listed_indexes = runtime.dialect.listed([]) if page else []
        return _journal_response(page, listed_indexes, offset, limit, total, runtime.dialect.is_hoverfly)

    def query() -> HTTPResponse:
        entries = _decode_all(records)
        listed = _arranged(entries, order)
        page, total = query_journal(listed, limit=limit, offset=offset, from_=from_, to=to, sort=sort)
        indexes = _indexes(runtime, entries, page) if page else []
        return _journal_response(page, indexes, offset, limit, total, runtime.dialect.is_hoverfly)

    return await svc.offload.run(query)


def _journal_response(
    page: list[JournalEntry],
    indexes: list[dict[str, Any]] | None,
    offset: int,
    limit: int,
    total: int,
    go_escaped: bool = False,
) -> HTTPResponse:
    """The journal's page; ``go_escaped``: ``<``, ``>`` and ``&`` in its texts escaped as Go's encoder
    writes them (``\u003c``...), as Hoverfly's journal answers have them (``-compat hoverfly``)."""
    view = {
        "journal": [entry_view(e) for e in page],
        "indexes": indexes,
        "offset": offset,
        "limit": limit,
        "total": total,
    }
    if go_escaped:
        return HTTPResponse(go_html_escape(orjson.dumps(view).decode()).encode(), content_type=JSON_TYPE)
    return json_response(view)


async def search_journal(request: Request) -> HTTPResponse:
    from simproxy.engine.journal.search import compile_search

    svc = services(request)
    _enabled(svc.runtime)
    try:
        search = compile_search(load_object(request.body), svc.registry)
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc
    entries = await _entries(svc, listed=True)
    found = await svc.offload.run(search.filter, entries)
    if svc.runtime.dialect.is_hoverfly:  # Hoverfly never sets the total of a search
        return await svc.offload.run(_journal_response, found, None, 0, 0, 0, True)
    return await svc.offload.run(_journal_response, found, [], 0, 0, len(found))


async def delete_journal(request: Request) -> HTTPResponse:
    svc = services(request)
    runtime = svc.runtime
    _enabled(runtime)
    await runtime.barrier()
    names = _index_names(runtime)
    await svc.journal.journal_clear(names)
    if names:  # Hoverfly's DELETE also removes every index
        await write_config(runtime, lambda config: config.with_journal_indexes(()))
    limit = runtime.dialect.journal_limit
    return json_response({"journal": [], "indexes": [], "offset": 0, "limit": limit, "total": 0})


async def get_indexes(request: Request) -> HTTPResponse:
    svc = services(request)
    runtime = svc.runtime
    _enabled(runtime)
    entries = await _entries(svc)
    return json_response(_indexes(runtime, entries, None))


async def add_index(request: Request) -> HTTPResponse:
    svc = services(request)
    runtime = svc.runtime
    _enabled(runtime)
    # Hoverfly keeps the expression as given (its quotes matter) and names the index without quotes
    source = typed(load_object(request.body), "name", str, "")
    name = index_key(source)
    if name in _index_names(runtime):
        raise BadRequest(f"index {name} has been already set")
    try:
        expression = runtime.records.index(source)
    except ValueError as exc:
        raise BadRequest(f"invalid index {name}: {exc}") from exc
    entries = await _entries(svc)
    keyed = build_index(expression, entries)
    await svc.journal.journal_set_index(name, {key: entry.id for key, entry in keyed.items()})
    await write_config(runtime, lambda config: config.with_journal_indexes((*config.journal_indexes, source)))
    return json_response(_indexes(runtime, entries, None))


async def delete_index(request: Request, name: str) -> HTTPResponse:
    svc = services(request)
    runtime = svc.runtime
    _enabled(runtime)
    name = path_name(name, runtime.dialect)
    if name not in _index_names(runtime):
        if runtime.dialect.forgiving_deletes:  # Hoverfly: 200 and the indexes as they are
            return json_response(_indexes(runtime, await _entries(svc), None))
        raise NotFound(f"no journal index named {name!r}")
    await write_config(
        runtime,
        lambda config: config.with_journal_indexes(tuple(s for s in config.journal_indexes if index_key(s) != name)),
    )
    await svc.journal.journal_drop_index(name)
    return json_response(_indexes(runtime, await _entries(svc), None))
