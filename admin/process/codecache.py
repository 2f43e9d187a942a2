"""The code that dataclasses generate at import, kept between starts.

Each ``@dataclass`` writes the source of its methods (``__init__``, ``__eq__``, ``__repr__``, the
frozen ``__setattr__``, ...) and compiles it: about a millisecond a class, a tenth of a start for the
hundred and more classes the server imports. Python keeps the bytecode of modules (``__pycache__``)
but not of those generated methods. While ``GeneratedCode`` is entered, the ``exec`` that the
``dataclasses`` module calls on such source takes the compiled code from a file of simproxy's home
folder when an earlier start compiled the very same source text, and compiles it (with the same
flags as ``exec`` would) otherwise; the file is written again when something was missing. The
functions made are the same either way. Outside the ``with`` block nothing is changed.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType, TracebackType
from typing import Any


def cache_folder(home: str) -> Path:
    """Where start-up keeps what it computed for the next start: ``cache`` in simproxy's home
    folder (``home``, ``$SIMPROXY_HOME``; empty: ``~/.simproxy``, as ``Settings.ca_home``)."""
    return (Path(home) if home else Path.home() / ".simproxy") / "cache"


class GeneratedCode:
    """A ``with`` block in which the dataclasses created reuse the code kept in ``folder``."""

    def __init__(self, folder: Path) -> None:
        name = f"dataclasses-{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}.marshal"
        self._path = folder / name
        self._kept: dict[str, CodeType] = {}
        self._used: dict[str, CodeType] = {}
        self._missed = False

    def __enter__(self) -> GeneratedCode:
        self._kept = _load(self._path)
        if not hasattr(dataclasses, "exec"):  # the module calls the built-in: it is found here first
            dataclasses.exec = self._exec  # type: ignore[attr-defined]
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if getattr(dataclasses, "exec", None) == self._exec:
            del dataclasses.exec  # type: ignore[attr-defined]
        if self._missed:
            # what this start used: the code of classes that changed since is dropped
            keep_file(self._path, marshal.dumps(self._used))

    def _exec(self, source: object, globals: dict[str, Any] | None = None, locals: Any = None) -> None:
        """``exec``, with the source text's compiled code found, or compiled and noted."""
        if isinstance(source, str):
            code = self._kept.get(source)
            if code is None:
                # the flags exec gives code from dataclasses.py, which has no __future__ import
                code = compile(source, "<string>", "exec", dont_inherit=True)
                self._missed = True
            self._used[source] = code
            source = code
        builtins.exec(source, globals, locals)  # type: ignore[arg-type]


def _load(path: Path) -> dict[str, CodeType]:
    """The kept code by source text; empty when there is no file (or not what is expected)."""
    try:
        kept = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(kept, dict):
        return {}
    return {text: code for text, code in kept.items() if isinstance(text, str) and isinstance(code, CodeType)}


def keep_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (a file named apart, then renamed); a folder
    that cannot be written is skipped: the next start computes again what it would have read."""
    import tempfile  # only when something is written

    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except OSError:
            os.unlink(temporary)
            raise
