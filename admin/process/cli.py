"""The ``simproxy`` command: parse the command line (admin/process/flags.py, admin/process/arguments.py), report a
usage error with Go's ``flag`` wording and exit status (2: a syntax error, followed by a hint rather
than the whole usage; 1: a value refused), or run the server (admin/process/server.py), a fleet
(``simproxy fleet N``, admin/process/fleet.py), or print an OpenAPI document's simulation
(``simproxy openapi FILE``, admin/process/openapi_command.py).

Each step imports what it needs when it runs: ``-h`` and a syntax error load only the flag table,
and the server's modules (Sanic, the engine) load only once the flags are valid, with the code their
dataclasses generate kept between starts (admin/process/codecache.py). The garbage
collector is paused from the first of those imports until the worker is about to serve
(admin/process/serving.py freezes what start-up built, then resumes it): start-up makes hundreds of
thousands of long-lived objects and no garbage worth a scan.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: parse ``sys.argv[1:]`` and ``os.environ``, then run the server."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "fleet":
        from simproxy.admin.process.fleet import run_fleet

        return run_fleet(args[1:], os.environ)
    if args and args[0] == "openapi":
        from simproxy.admin.process.openapi_command import print_simulation

        return print_simulation(args[1:])
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _serve(args)
    finally:
        if collecting:
            gc.enable()


def _serve(args: Sequence[str]) -> int:
    from simproxy.admin.process.flags import UsageError, parse_flags, report

    try:
        flags = parse_flags(args)  # -h and syntax errors: nothing more is imported
    except UsageError as error:
        return report(error)
    from simproxy.admin.process.codecache import GeneratedCode, cache_folder

    with GeneratedCode(cache_folder(os.environ.get("SIMPROXY_HOME", ""))):
        from simproxy.admin.process.arguments import settings_from_flags

        try:
            settings = settings_from_flags(flags, os.environ)
        except UsageError as error:
            return report(error)
        from simproxy.admin.process.server import run
    return run(settings)
