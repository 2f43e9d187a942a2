"""Which answers an instance gives where the spec and Hoverfly v1.12.10 differ on purpose (``-compat``).

The spec (``admin-api.md``) is the default dialect. ``-compat hoverfly`` (or ``SIMPROXY_COMPAT=hoverfly``)
chooses Hoverfly's, for a user who puts simproxy where the ``hoverfly`` binary was and whose tools
compare bytes: ``hoverflyVersion`` in exported metadata, the ``usage`` wrapper alone, ``null`` for
empty lists, ``Hoverfly`` in texts, error bodies as ``text/plain``, 200 for a delete of an unknown
name, tunnelled answers chunked with ``Connection: close``, and its CA names (its schema document
is its own file: the spec's is served in both), and an import using simproxy's own members of the
simulation format (faults) refused as Hoverfly's schema refuses an unknown member. The dialect is
chosen once at start and handed to the code that writes those answers; nothing else changes
(matching, templating, the fleet, the other checks at import).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from simproxy.engine.version import VERSION


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    product: str
    """The name written in texts: ``<product> Error!``, ``not matched by <product>``, ..."""
    version_key: str
    """The key of the release in exported metadata."""
    release: str
    """The release the admin API names (version, configuration, exported metadata): simproxy's
    own, or ``v1.12.10`` under ``-compat hoverfly``, which hoverctl and hoverfly-java read as
    Hoverfly's version."""
    usage_keys: tuple[str, ...]
    """The wrappers of ``GET .../usage`` (the spec's ``metrics``; Hoverfly's ``usage``)."""
    null_empty_lists: bool
    """An empty cache, diff or journal index list is ``null`` (Go's nil slice) instead of ``[]``."""
    error_content_type: str
    """The ``Content-Type`` of ``{"error": ...}`` bodies."""
    forgiving_deletes: bool
    """``DELETE`` of an unknown journal index or data source answers 200 instead of 404."""
    chunked_tunnel: bool
    """Inside an intercepted tunnel every answer is chunked and closes the connection."""
    journal_limit: int
    """``GET .../journal`` without ``limit`` (the spec's 500; Hoverfly's code says 25)."""
    ca_name: str
    ca_org: str
    """The subject of a CA generated for the fleet (not of ``-cert`` or ``-generate-ca-cert``)."""
    extensions: bool
    """An import may use simproxy's own members of the simulation format (``fault``, ``faults``)."""
    go_layout: bool = False
    """The proxy port's answers are laid out as Go's server writes Hoverfly's (engine/wire/golayout.py)."""
    http2: bool = True
    """The proxy port speaks HTTP/2 too (engine/server/http2.py); Hoverfly speaks HTTP/1.1 only."""

    @property
    def is_hoverfly(self) -> bool:
        return self.name == "hoverfly"

    def listed(self, items: list[Any]) -> list[Any] | None:
        """A list as the dialect writes it: Hoverfly's nil slices are ``null`` when empty."""
        return None if self.null_empty_lists and not items else items


SPEC = Dialect(
    name="spec",
    product="simproxy",
    version_key="serviceVersion",
    release=VERSION,
    usage_keys=("metrics", "usage"),
    null_empty_lists=False,
    error_content_type="application/json",
    forgiving_deletes=False,
    chunked_tunnel=False,
    journal_limit=500,
    ca_name="simproxy CA",
    ca_org="simproxy",
    extensions=True,
)

HOVERFLY = Dialect(
    name="hoverfly",
    product="Hoverfly",
    version_key="hoverflyVersion",
    release="v1.12.10",
    usage_keys=("usage",),
    null_empty_lists=True,
    error_content_type="text/plain; charset=utf-8",
    forgiving_deletes=True,
    chunked_tunnel=True,
    journal_limit=25,
    ca_name="hoverfly.proxy",
    ca_org="Hoverfly Authority",
    extensions=False,
    go_layout=True,
    http2=False,
)

DIALECTS = MappingProxyType({dialect.name: dialect for dialect in (SPEC, HOVERFLY)})


def dialect_named(name: str) -> Dialect:
    """The dialect ``-compat`` names; ``ValueError`` naming the choices otherwise."""
    try:
        return DIALECTS[name.strip().lower()]
    except KeyError:
        raise ValueError(f"expected {' or '.join(DIALECTS)}") from None
