"""An uploaded simulation's import, for ``PUT``/``POST /api/v2/simulation`` and for ``-import`` at a
start: the body files the flags allow are downloaded first, then the pure import runs in a thread."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

from simproxy.admin.errors import PayloadTooLarge
from simproxy.admin.settings import Settings
from simproxy.engine.execution.offload import Offloader
from simproxy.engine.outbound.bodyfiles import download_body_files
from simproxy.engine.simulation.importing import ImportResult, body_file_urls, import_simulation, sequence_starts
from simproxy.engine.simulation.model import Simulation
from simproxy.store import WriteEffects


async def import_with_files(
    settings: Settings,
    current: Simulation | None,
    incoming: Simulation,
    known_actions: frozenset[str],
    offload: Offloader | None = None,
) -> ImportResult:
    """``import_simulation`` with the body files the flags allow: downloads first, then the pure import,
    in a thread (``offload``'s when given). ``known_actions``: the post-serve action names a response
    may give ("" stands for a fallback)."""
    allowed = settings.response_body_files_allow_origin
    downloaded = await download_body_files(
        body_file_urls(incoming, allowed), allowed, tls_verify=settings.tls_verification
    )
    run = offload.run if offload is not None else asyncio.to_thread
    result = await run(  # duplicate checks and body files: seconds for a large simulation
        functools.partial(
            import_simulation,
            current,
            incoming,
            check_duplicates=not settings.no_import_check,
            body_files_root=Path(settings.response_body_files_path) if settings.response_body_files_path else None,
            allowed_origins=allowed,
            downloaded=downloaded,
            known_actions=known_actions,
            go_file_errors=settings.dialect.is_hoverfly,
        )
    )
    if len(result.simulation.pairs) > settings.max_pairs:
        raise PayloadTooLarge(
            f"The simulation would hold {len(result.simulation.pairs)} pairs, more than -max-pairs {settings.max_pairs}"
        )
    return result


def import_effects(sequence_keys: tuple[str, ...], *, replace: bool) -> WriteEffects:
    """What an import changes with the simulation, in the same step: Hoverfly starts every imported
    ``sequence:`` at its first step, and a replace (not an append) empties the match cache."""
    return WriteEffects(clear_cache=replace, state=sequence_starts(sequence_keys))
