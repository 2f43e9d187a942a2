"""``admin/process/touchup.py``: the rewrite of Sanic's methods that a start keeps for the next one is the very
code Sanic's own touch-up makes for the admin app, whether just made or read back from the file."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from types import CodeType
from typing import Any

from sanic import Sanic
from sanic.application.state import ApplicationServerInfo
from sanic.http.constants import HTTP
from sanic.touchup.schemes import BaseScheme

from simproxy.admin.api.app import create_app
from simproxy.admin.process.touchup import rewritten
from simproxy.admin.settings import Settings


def _defined(cls: type, name: str, code: CodeType) -> Any:
    """The function ``code`` (a module's) defines, with the names of the module ``cls`` comes from."""
    namespace: dict[str, Any] = {}
    exec(code, dict(inspect.getmembers(inspect.getmodule(cls))), namespace)
    return namespace[name]


async def _compare(folder: Path) -> tuple[list[str], list[str]]:
    """The methods made, then read back, that differ from Sanic's own rewrite."""
    app = create_app(Settings())
    try:
        app.state.server_info.append(ApplicationServerInfo(settings={"version": HTTP.VERSION_1}))
        app.signalize(True)  # what Sanic's start-up does before its touch-up
        app.finalize()
        made = rewritten(app, folder)
        read = rewritten(app, folder)
        differ: tuple[list[str], list[str]] = ([], [])
        for found, out in zip((made, read), differ, strict=True):
            for (cls, name), code in found:
                members = dict(inspect.getmembers(inspect.getmodule(cls)))
                sanic_own = BaseScheme.build(getattr(cls, name), members, app)
                ours = _defined(cls, name, code)
                if (ours.__code__, ours.__defaults__) != (sanic_own.__code__, sanic_own.__defaults__):
                    out.append(f"{cls.__qualname__}.{name}")
        return differ
    finally:
        Sanic.unregister_app(app)


def test_the_kept_touch_up_is_the_code_sanic_makes(tmp_path: Path) -> None:
    made_differ, read_differ = asyncio.run(_compare(tmp_path / "cache"))
    assert [path.name.startswith("sanic-touchup-") for path in (tmp_path / "cache").iterdir()] == [True]
    assert made_differ == []
    assert read_differ == []
