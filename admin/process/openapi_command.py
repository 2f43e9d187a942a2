"""``simproxy openapi FILE``: print the simulation an OpenAPI / Swagger document becomes.

The JSON written to standard output is what ``simproxy -import FILE`` would load, so it can be
edited and committed as a plain simulation; ``--no-validation`` leaves out the request contracts
(engine/openapi/validate.py) so that no request is answered 422. A document that cannot be converted is reported on
standard error with where it went wrong, and the exit status is 1; a wrong command line is 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import orjson

USAGE = (
    "usage: simproxy openapi [--no-validation] FILE\n"
    "  FILE: an OpenAPI 3.0/3.1 or Swagger 2.0 document, YAML or JSON\n"
    "  --no-validation: requests that break the document are answered as usual, not with a 422\n"
)


def print_simulation(args: Sequence[str]) -> int:
    """Convert the one document named in ``args`` and print its simulation as indented JSON."""
    validate = "--no-validation" not in args
    args = [arg for arg in args if arg != "--no-validation"]
    if len(args) != 1 or args[0].startswith("-"):
        sys.stderr.write(USAGE)
        return 2
    from simproxy.admin.api.simfile import openapi_simulation
    from simproxy.admin.errors import BadRequest

    path = Path(args[0])
    try:
        raw = path.read_bytes()
        doc = openapi_simulation(raw, lambda relative: (path.parent / relative).read_bytes(), validate=validate)
    except OSError as exc:
        sys.stderr.write(f"simproxy openapi: {path}: {exc.strerror or exc}\n")
        return 1
    except BadRequest as exc:
        sys.stderr.write(f"simproxy openapi: {path}: {exc}\n")
        return 1
    sys.stdout.buffer.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    return 0
