"""What a fresh start writes into the shared store: the configuration from the flags and the
``-import`` files. Runs once, in the main process for Redis and in the worker for the in-process store.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
from pathlib import Path

import orjson

from simproxy.admin.api.importing import import_effects, import_with_files
from simproxy.admin.api.simfile import parse_upload
from simproxy.admin.settings import Settings
from simproxy.engine.errors import UpstreamError
from simproxy.engine.fleet.config import Mode, ModeArguments, RuntimeConfig
from simproxy.engine.fleet.runtime import Runtime, new_lineage
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.matching.scoring import compile_simulation
from simproxy.engine.openapi.document import looks_like_openapi
from simproxy.engine.outbound.bodyfiles import download
from simproxy.engine.simulation.codec import decode_simulation, export_simulation
from simproxy.engine.simulation.importing import (
    ImportResult,
)
from simproxy.engine.templating.csv_store import parse_csv
from simproxy.store.errors import SimproxyError


class StartupError(SimproxyError):
    """A start-up step failed; the process exits with status 1 and this message."""


def initial_config(settings: Settings) -> RuntimeConfig:
    """The configuration the flags ask for (simulate with ``strongest`` unless told otherwise)."""
    config = RuntimeConfig(destination=settings.destination, middleware=settings.middleware, pac=settings.pac)
    for action in settings.post_serve_actions:
        config = config.with_action(action)
    if settings.mode != Mode.SIMULATE:
        config = config.with_mode(settings.mode, ModeArguments(capture_on_miss=settings.capture_on_miss))
    return config


async def load_imports(settings: Settings, registry: MatcherRegistry) -> ImportResult | None:
    """Read, validate, upgrade and merge every ``-import`` file (in order); None when there are none.

    A ``.yaml``/``.yml`` file is taken when it is an OpenAPI / Swagger document (converted to its
    simulation, its ``$ref``s read beside it), except under ``-compat hoverfly``; any other is
    refused with Hoverfly's words, as Hoverfly refuses every file not named ``.json``. A document's
    request contracts are left out under ``-openapi-validation=false``.
    """
    if not settings.imports:
        return None
    result: ImportResult | None = None
    for name in settings.imports:
        url = name.startswith(("http://", "https://"))
        yaml_file = name.endswith((".yaml", ".yml")) and settings.dialect.extensions
        refused = f"Failed to import payloads, only JSON files are acceppted. Given file: {name}"
        if not url and not name.endswith(".json") and not yaml_file:
            raise StartupError(refused)
        if url:
            try:
                raw = await download(name, tls_verify=settings.tls_verification)
            except UpstreamError as exc:
                raise StartupError(f"Failed to import given resource: Failed to fetch given URL, error {exc}") from exc
        try:
            if not url:
                raw = await asyncio.to_thread(Path(name).read_bytes)
            if yaml_file and not looks_like_openapi(raw):
                raise StartupError(refused)
            dialect = settings.dialect
            folder = None if url else Path(name).parent
            doc = parse_upload(
                raw,
                product=dialect.product,
                extensions=dialect.extensions,
                content_type="application/yaml" if yaml_file else "",
                read=None if folder is None else functools.partial(_beside, folder),
                validate=settings.openapi_validation,
            )
            incoming = decode_simulation(doc["data"])
            compile_simulation(incoming, registry)
            before = result.simulation if result else None
            actions = frozenset(a.name for a in settings.post_serve_actions)
            step = await import_with_files(settings, before, incoming, actions)
            keys = (result.sequence_keys if result else ()) + step.sequence_keys
            result = ImportResult(step.simulation, step.warnings, tuple(dict.fromkeys(keys)))
        except OSError as exc:
            raise StartupError(f"Failed to import given resource: {name}: {exc.strerror or exc}") from exc
        except StartupError:
            raise
        except SimproxyError as exc:
            raise StartupError(f"Failed to import given resource: {name}: {exc}") from exc
    return result


def _beside(folder: Path, relative: str) -> bytes:
    """A file an OpenAPI document's ``$ref`` names, relative to the document's folder."""
    return (folder / relative).read_bytes()


async def load_data_sources(settings: Settings) -> dict[str, list[list[str]]]:
    """Read and parse every ``-templating-data-source`` file (fatal on any error)."""
    tables: dict[str, list[list[str]]] = {}
    for source in settings.templating_data_sources:
        name, path = source.split()
        try:
            tables[name] = parse_csv(
                (await asyncio.to_thread(Path(path).read_bytes)).decode("utf-8", "surrogateescape")
            )
        except OSError as exc:
            raise StartupError(f"Failed to import template data source {name}: {exc.strerror or exc}: {path}") from exc
        except ValueError as exc:
            raise StartupError(f"Failed to import template data source {name}: {exc}") from exc
    return tables


async def bootstrap(runtime: Runtime, settings: Settings, *, wait: bool = True) -> None:
    """Write the flags' configuration (when none exists yet, or the flags ask for more than the
    defaults) and the imported simulation into the shared store.

    With ``-join-fleet`` on a shared store, nothing is written when the store's last start-up came
    from the same imports, data sources and flags: the fleet already had them, and may have changed
    since (a new simulation, another mode, state mid-sequence), which a pod that restarts or scales
    out must not undo. A different start-up (a new ConfigMap, other flags: a rollout) is applied.
    """
    imported = await load_imports(settings, MatcherRegistry(lenient=settings.dialect.is_hoverfly))
    sources = await load_data_sources(settings)
    wanted = initial_config(settings)
    if settings.journal_indexing_keys:
        wanted = wanted.with_journal_indexes(tuple(dict.fromkeys(settings.journal_indexing_keys)))  # as given
    digest = _startup_digest(imported, sources, wanted)
    if settings.join_fleet and runtime.store.shared:
        last = await runtime.store.read_document("startup")
        if last is not None and last[1] == digest:
            return
    if sources:
        current = await runtime.fresh_csv()
        await runtime.write_csv({**current.tables, **sources}, expected=None, wait=wait)
    if imported is not None:
        lineage = new_lineage()
        compiled = compile_simulation(imported.simulation, runtime.registry, go=runtime.dialect.go_layout)
        effects = import_effects(imported.sequence_keys, replace=True)
        await runtime.write_simulation(
            imported.simulation, compiled, expected=None, lineage=lineage, wait=wait, effects=effects
        )
        wanted = wanted.preloading(lineage)  # Hoverfly preloads the cache after a start-up import
    existing = await runtime.store.read_document("config")
    if existing is None or wanted != RuntimeConfig():
        await runtime.write_config(wanted, expected=None, wait=wait)
    await runtime.store.write_document("startup", digest)


def _startup_digest(imported: ImportResult | None, sources: dict[str, list[list[str]]], config: RuntimeConfig) -> bytes:
    """What a start-up writes, as a digest: two start-ups with the same digest write the same things."""
    what = {
        "simulation": export_simulation(imported.simulation) if imported is not None else None,
        "sequences": imported.sequence_keys if imported is not None else (),
        "csv": sources,
        "config": config.to_json(),
    }
    return hashlib.sha256(orjson.dumps(what, option=orjson.OPT_SORT_KEYS)).hexdigest().encode()
