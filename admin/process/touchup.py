"""Sanic's start-up "touch-up", kept between starts.

At start-up Sanic rewrites a few of its own methods (``Sanic.handle_request``, ``Http.read``, ...) to
fit the app: it drops the signal dispatches no handler listens to, and the ``Alt-Svc`` header when
only HTTP/1 is served. To do so it reads each method's source, parses it, transforms it and compiles
it again: about 40 ms of a 0.4 s start, the same result every time for the same Sanic and app.

Here the compiled result is kept in a file of simproxy's home folder, named after everything the
rewrite depends on (Python, Sanic's version and files, the methods, the rewriting schemes, the app's
signals and protocols); a later start loads it instead of rebuilding it. What runs is the same code
either way. When this Sanic lacks the parts used here, or the app is not the only one, Sanic does
its own touch-up as usual.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import marshal
import os
import sys
import textwrap
from pathlib import Path
from types import CodeType
from typing import Any

from sanic import Sanic, __version__
from sanic.touchup.schemes import BaseScheme
from sanic.touchup.service import TouchUp

from simproxy.admin.process.codecache import keep_file

Target = tuple[Any, str]
"""A class Sanic rewrites a method of, and the method's name."""


def take_over(app: Sanic[Any, Any]) -> bool:
    """Keep Sanic from touching up ``app`` itself at start-up, when ``touch_up`` can do it instead."""
    usable = (
        isinstance(getattr(TouchUp, "_registry", None), set)
        and isinstance(getattr(BaseScheme, "_registry", None), set)
        and not app.test_mode
        and list(Sanic._app_registry.values()) == [app]
        and app.state.primary
    )
    if usable:
        app.state.primary = False  # Sanic touches up only its primary app
    return usable


def touch_up(app: Sanic[Any, Any], folder: Path) -> None:
    """What Sanic's touch-up does for ``app``, from the copy kept in ``folder`` when there is one
    (made and kept there otherwise). Call it once Sanic's start-up (``_startup``) has finalised the
    app's signals, before the server serves."""
    if not app.config.TOUCHUP:
        return
    for (cls, name), code in rewritten(app, folder):
        namespace: dict[str, Any] = {}
        exec(code, dict(inspect.getmembers(inspect.getmodule(cls))), namespace)  # as Sanic: the module's names, copied
        setattr(cls, name, namespace[name])
        setattr(cls, "__touched__", True)  # noqa: B010 (Sanic's marker, not a declared attribute)


def rewritten(app: Sanic[Any, Any], folder: Path) -> list[tuple[Target, CodeType]]:
    """Each method Sanic rewrites, with the code (of a module defining it) it becomes for ``app``:
    read from ``folder``, or made and written there."""
    targets = sorted(TouchUp._registry, key=lambda t: (t[0].__module__, t[0].__qualname__, t[1]))
    schemes = sorted(BaseScheme._registry, key=lambda s: (s.__module__, s.__qualname__))
    try:
        path: Path | None = folder / f"sanic-touchup-{_key(app, targets, schemes)}.marshal"
    except (OSError, TypeError):  # a source file not found (TypeError: a built-in): rewritten, not kept
        path = None
    codes = _load(path, len(targets)) if path is not None else None
    if codes is None:
        codes = [_rewrite(app, target, schemes) for target in targets]
        if path is not None:
            keep_file(path, marshal.dumps(tuple(codes)))
    return list(zip(targets, codes, strict=True))


def _rewrite(app: Sanic[Any, Any], target: Target, schemes: list[Any]) -> CodeType:
    """The method's source, transformed by every scheme, compiled (the module that defines it)."""
    method = getattr(*target)
    node = ast.parse(textwrap.dedent(inspect.getsource(method)))
    for scheme in schemes:
        for visitor in scheme(app)():
            node = visitor.visit(node)
    # dont_inherit: not with this module's __future__ flags (Sanic's module that compiles it has none)
    return compile(node, method.__name__, "exec", dont_inherit=True)


def _key(app: Sanic[Any, Any], targets: list[Target], schemes: list[Any]) -> str:
    """A digest of what the rewritten code depends on."""
    parts: list[object] = [sys.version, sys.implementation.cache_tag, __version__]
    parts += [(cls.__module__, cls.__qualname__, name, *_stamp(cls)) for cls, name in targets]
    parts += [(scheme.__module__, scheme.__qualname__, *_stamp(scheme)) for scheme in schemes]
    parts.append(sorted(route.name for route in app.signal_router.routes))
    parts.append(
        sorted((str(info.settings.get("version")), str(info.settings.get("port"))) for info in app.state.server_info)
    )
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def _stamp(defined: type) -> tuple[str, int, int]:
    """The source file a class is defined in, its modification time and size (OSError: none)."""
    source = inspect.getsourcefile(defined)
    if source is None:
        raise FileNotFoundError(f"no source file for {defined.__qualname__}")
    stat = os.stat(source)
    return source, stat.st_mtime_ns, stat.st_size


def _load(path: Path, count: int) -> list[CodeType] | None:
    """The kept code objects, or None when there are none (or not what is expected)."""
    try:
        codes = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(codes, tuple) or len(codes) != count or not all(isinstance(c, CodeType) for c in codes):
        return None
    return list(codes)
