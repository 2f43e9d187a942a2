"""The Redis store's key names, made once per handle from its prefix (the layout is in store/base.py).

One table for every role: a role's atomic step may touch another's keys (a document write clears
the match cache and sets state; a state step checks the simulation's version), so the names live
here rather than in each role.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from simproxy.store.base import DOCUMENTS


def key_prefix(prefix: str) -> str:
    """``simproxy:`` -> ``simproxy:{simproxy}:``: the prefix plus a Cluster hash tag derived from it."""
    tag = prefix.rstrip(":") or "simproxy"
    return f"{prefix}{{{tag}}}:"


@dataclass(frozen=True, slots=True)
class Keys:
    """Every key (or key prefix) of one store prefix, all in one Cluster slot."""

    batches: str
    writes: str
    gen: str
    docs: Mapping[str, str]
    workers: str
    acks: str
    meta: str
    counters: str
    state: str
    state_version: str
    cache: tuple[str, str, str]
    """The entries hash, the recency zset and its counter."""
    journal: tuple[str, str, str, str]
    """The journal's pages: the list of their heads, the list of their entries, the meta hash
    (entries kept, entries of the first page dropped) and the hash of amended entries."""
    index_prefix: str
    logs: str
    diff: str
    metrics_prefix: str
    traffic_prefix: str
    login_failures: str
    revoked_prefix: str
    channel: str

    @classmethod
    def of(cls, prefix: str) -> Keys:
        base = key_prefix(prefix)
        return cls(
            batches=f"{base}batch:",
            writes=f"{base}write:",
            gen=f"{base}gen",
            docs=MappingProxyType({name: f"{base}doc:{name}" for name in DOCUMENTS}),
            workers=f"{base}workers",
            acks=f"{base}acks",
            meta=f"{base}meta",
            counters=f"{base}counters",
            state=f"{base}state",
            state_version=f"{base}state:v",
            cache=(f"{base}cache", f"{base}cache:lru", f"{base}cache:seq"),
            journal=(f"{base}journal:heads", f"{base}journal:pages", f"{base}journal:meta", f"{base}journal:amended"),
            index_prefix=f"{base}journal:index:",
            logs=f"{base}logs",
            diff=f"{base}diff",
            metrics_prefix=f"{base}metrics:",
            traffic_prefix=f"{base}traffic:",
            login_failures=f"{base}auth:failures",
            revoked_prefix=f"{base}revoked:",
            channel=f"{base}events",
        )
