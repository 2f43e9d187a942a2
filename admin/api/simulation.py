"""``/api/v2/simulation``: read, replace, append, clear, and the JSON Schema.

Every write validates, upgrades, compiles and checks the whole document before the one store
write that swaps it in, so a rejected upload leaves the served simulation untouched everywhere.
That work runs off the event loop (engine/execution/offload.py): a large upload costs seconds of CPU, and the
loop it would otherwise hold also serves the proxy port. A document over ``-max-pairs`` is refused
(413) as soon as it is parsed, before it is validated. An OpenAPI / Swagger document (a YAML or
OpenAPI Content-Type, or JSON declaring ``openapi``/``swagger``) is converted to its simulation
first (admin/api/simfile.py ``parse_upload``), except under ``-compat hoverfly``.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import orjson
from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.importing import import_effects, import_with_files
from simproxy.admin.api.responses import JSON_TYPE, json_response, services
from simproxy.admin.api.services import Services
from simproxy.admin.api.simfile import parse_upload, schema_document
from simproxy.admin.api.views import simulation_view, warnings_view
from simproxy.admin.errors import BadRequest, ServerError
from simproxy.engine.fleet.cas import until_written
from simproxy.engine.gocompat.dialect import Dialect
from simproxy.engine.gocompat.goregex import GoRegex, InvalidPattern, compile_go
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.matching.scoring import CompiledSimulation, compile_simulation
from simproxy.engine.simulation.codec import decode_simulation
from simproxy.engine.simulation.importing import ImportResult
from simproxy.engine.simulation.model import EMPTY_SIMULATION, Matchers, Pair, Simulation
from simproxy.store import WriteEffects

log = logging.getLogger(__name__)


async def get_simulation(request: Request) -> HTTPResponse:
    runtime = services(request).runtime
    await runtime.sync()
    sim = runtime.snapshot.simulation.simulation
    pattern = request.args.get("urlPattern")
    if pattern:
        compiled = _url_pattern(pattern, runtime.dialect)
        sim = replace(sim, pairs=tuple(p for p in sim.pairs if _url_matches(compiled, p)))
    return await _simulation_response(services(request), sim)


def _url_pattern(pattern: str, dialect: Dialect) -> GoRegex:
    """The ``urlPattern`` filter compiled. A pattern Go would refuse is the client's error: a 400;
    under ``-compat hoverfly`` Hoverfly's 500, worded as Go's ``regexp`` words it
    (``missing closing ): `((```)."""
    try:
        return compile_go(pattern)
    except InvalidPattern as exc:
        if not dialect.is_hoverfly:
            raise BadRequest(f"urlPattern is not a valid regular expression: {exc}") from exc
        from simproxy.engine.gocompat.ottosyntax.regexp import go_regexp_error  # loaded only for this wording

        raise ServerError(f"error parsing regexp: {go_regexp_error(pattern) or exc}") from exc


def _url_matches(compiled: GoRegex, pair: Pair) -> bool:
    """Hoverfly's ``urlPattern`` filter: first exact destination value + first exact path value."""
    return compiled.search(_first_exact(pair.request.destination) + _first_exact(pair.request.path)) is not None


def _first_exact(matchers: Matchers | None) -> str:
    if matchers and matchers[0].name == "exact" and isinstance(matchers[0].value, str):
        return matchers[0].value
    return ""


def _decode(
    body: bytes,
    registry: MatcherRegistry,
    max_pairs: int,
    dialect: Dialect,
    content_type: str = "",
    validate: bool = True,
) -> tuple[Simulation, CompiledSimulation]:
    doc = parse_upload(
        body,
        max_pairs,
        product=dialect.product,
        extensions=dialect.extensions,
        content_type=content_type,
        validate=validate,
    )
    incoming = decode_simulation(doc["data"])
    return incoming, compile_simulation(incoming, registry, go=dialect.go_layout)  # bad matchers fail here, with paths


async def _incoming(request: Request) -> tuple[Simulation, CompiledSimulation]:
    svc = services(request)
    content_type = request.headers.get("content-type", "")
    validate = request.args.get("validate", "true") != "false"  # an OpenAPI document's request validation
    return await svc.offload.run(
        _decode, request.body, svc.registry, svc.settings.max_pairs, svc.runtime.dialect, content_type, validate
    )


def _unchanged(imported: Simulation, incoming: Simulation) -> bool:
    """The import kept every pair and setting of the document as they were (no body file read, no
    duplicate left out): the document's compiled form, made while validating it, serves as is."""
    same = (
        len(imported.pairs) == len(incoming.pairs)
        and imported.delays is incoming.delays
        and imported.delays_log_normal is incoming.delays_log_normal
        and imported.faults is incoming.faults
        and imported.literals is incoming.literals
        and imported.variables is incoming.variables
    )
    return same and all(a is b for a, b in zip(imported.pairs, incoming.pairs, strict=True))


async def put_simulation(request: Request) -> HTTPResponse:
    svc = services(request)
    incoming, validated = await _incoming(request)
    await svc.runtime.sync()
    result = await import_with_files(
        svc.settings, None, incoming, svc.runtime.snapshot.config.action_names, svc.offload
    )
    if _unchanged(result.simulation, incoming):  # the common case: compiled once, not twice
        compiled = replace(validated, simulation=result.simulation)
    else:
        compiled = await svc.offload.run(
            compile_simulation, result.simulation, svc.registry, None, svc.runtime.dialect.go_layout
        )
    effects = import_effects(result.sequence_keys, replace=True)
    await svc.runtime.write_simulation(result.simulation, compiled, expected=None, effects=effects)  # a new lineage
    _log_import(incoming, result)
    return await _import_response(svc, result)


async def post_simulation(request: Request) -> HTTPResponse:
    svc = services(request)
    incoming, _ = await _incoming(request)
    await svc.runtime.barrier()  # every worker's cache entries are in the store: they survive the append

    async def attempt() -> ImportResult | None:
        await svc.runtime.sync()
        snap = svc.runtime.snapshot
        result = await import_with_files(
            svc.settings, snap.simulation.simulation, incoming, snap.config.action_names, svc.offload
        )
        compiled = await svc.offload.run(
            compile_simulation, result.simulation, svc.registry, None, svc.runtime.dialect.go_layout
        )
        written = await svc.runtime.write_simulation(
            result.simulation,
            compiled,
            expected=snap.simulation_version,
            lineage=snap.lineage,
            effects=import_effects(result.sequence_keys, replace=False),
        )
        return result if written else None

    result = await until_written(
        attempt, "An error occurred: the simulation kept changing during the append; try again"
    )
    _log_import(incoming, result)
    return await _import_response(svc, result)


async def _import_response(svc: Services, result: ImportResult) -> HTTPResponse:
    """Hoverfly answers an import with its warnings when there are any, else with the simulation."""
    if result.warnings:
        return json_response(warnings_view(result.warnings), newline=True)
    return await _simulation_response(svc, result.simulation)


async def _simulation_response(svc: Services, sim: Simulation) -> HTTPResponse:
    """The simulation as Hoverfly shows it, built and encoded off the loop (tens of MB at 50,000 pairs)."""
    body = await svc.offload.run(lambda: orjson.dumps(simulation_view(sim, svc.runtime.dialect)) + b"\n")
    return HTTPResponse(body, content_type=JSON_TYPE)


def _log_import(incoming: Simulation, result: ImportResult) -> None:
    added = len(incoming.pairs) - sum("is not added" in w for w in result.warnings)
    log.info(
        "payloads imported",
        extra={"fields": {"total": len(incoming.pairs), "successful": added, "failed": len(incoming.pairs) - added}},
    )


async def delete_simulation(request: Request) -> HTTPResponse:
    svc = services(request)
    await svc.runtime.write_simulation(
        EMPTY_SIMULATION,
        compile_simulation(EMPTY_SIMULATION, svc.registry),
        expected=None,
        effects=WriteEffects(clear_cache=True),
    )
    return json_response(simulation_view(EMPTY_SIMULATION, svc.runtime.dialect), newline=True)


async def get_schema(request: Request) -> HTTPResponse:
    return HTTPResponse(schema_document(), content_type="application/json; charset=utf-8")
