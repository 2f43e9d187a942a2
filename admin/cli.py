"""The ``simproxy`` command: parse the command line (admin/arguments.py), report a usage error
with Go's ``flag`` wording and exit status (2: a syntax error, followed by a hint rather than the
whole usage; 1: a value refused), or run the server (admin/server.py) or a fleet (``simproxy fleet
N``, admin/fleet.py). Both are imported only when run: ``-h`` loads neither.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from simproxy.admin.arguments import parse_args
from simproxy.admin.flags import (
    PROGRAM,
    HelpRequested,
    UsageError,
    VersionRequested,
    syntax_error_text,
    usage_text,
)


def report(error: UsageError) -> int:
    """Write what the command says for ``error`` (help, version, a syntax or a fatal error) and
    return its exit status."""
    if isinstance(error, HelpRequested):
        sys.stderr.write(usage_text())
    elif isinstance(error, VersionRequested):
        sys.stdout.write(error.message + "\n")
    elif error.exit_code == 2:
        sys.stderr.write(syntax_error_text(error))
    else:
        sys.stderr.write("".join(f"{PROGRAM}: {line}\n" for line in error.message.splitlines()))
    return error.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: parse ``sys.argv[1:]`` and ``os.environ``, then run the server."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "fleet":
        from simproxy.admin.fleet import run_fleet

        return run_fleet(args[1:], os.environ)
    try:
        settings = parse_args(args, os.environ)
    except UsageError as error:
        return report(error)
    from simproxy.admin.server import run

    return run(settings)
