"""simproxy: an HTTP simulation proxy, wire-compatible with Hoverfly's admin API v2.

This folder (``admin/simproxy``) is installed as the top-level ``simproxy`` package; ``engine/``,
``admin/`` and ``store/`` are installed beneath it as ``simproxy.engine``, ``simproxy.admin`` and
``simproxy.store`` (the mapping is in ``pyproject.toml``). Nothing else goes to the top of
site-packages, so no user module named ``admin``, ``engine`` or ``store`` can shadow simproxy's.

The testing kit is the public surface::

    from simproxy import Client, AsyncClient, pair, ApiError, ServerUnreachable

(the reference is docs/client.md).

Names are imported on first use, so ``import simproxy.engine...`` (what every worker does) does
not load the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from simproxy.admin.kit.client import ApiError, AsyncClient, Client, ClientError, ServerUnreachable, pair

__all__ = ("ApiError", "AsyncClient", "Client", "ClientError", "ServerUnreachable", "pair")


def __getattr__(name: str) -> object:
    """The public names, from the client module, imported on first use."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from simproxy.admin.kit import client

    return getattr(client, name)


def __dir__() -> list[str]:
    return sorted((*globals(), *__all__))
