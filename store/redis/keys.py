"""The Redis store's key names, made once per handle from its prefix (the layout is in store/base.py).

One table for every role: a role's atomic step may touch another's keys (a document write clears
the match cache and starts an era of the state), so the names live here rather than in each role.

Redis Cluster places a key by its hash tag (the part in braces). The keys a script or a transaction
touches together must share one: the documents, the generation, the state's eras, the match cache,
the counters, the registry and the metrics do (an import starts an era of the state and clears the
cache with the document), so they share the fleet's tag. The state itself is kept in groups
(engine/matching/stategroups.py: the keys one request may read or step together), each group under
a tag of its own, ``{T:s:<group id>}`` (``group_keys``): a step touches one group only, so the
groups of a simulation spread over the slots, and the primaries, of a Cluster; what ties them
together is the era, in the fleet's slot (store/redis/eras.py). The journal, the logs and the diff
reports are written and read on their own, each with the batch numbers of its writers: each has a
tag of its own, and so a slot, and a primary, of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from simproxy.store.base import DOCUMENTS


def key_prefix(prefix: str, part: str = "") -> str:
    """``simproxy:`` -> ``simproxy:{simproxy}:``: the prefix plus a Cluster hash tag derived from it;
    with ``part`` (``journal``) a tag of that part's own: ``simproxy:{simproxy:journal}:``."""
    tag = prefix.rstrip(":") or "simproxy"
    return f"{prefix}{{{tag}:{part}}}:" if part else f"{prefix}{{{tag}}}:"


@dataclass(frozen=True, slots=True)
class Keys:
    """Every key (or key prefix) of one store prefix: the fleet's in one Cluster slot, the journal's,
    the logs', the diff reports' and each state group's in slots of their own."""

    batches: str
    """The batch-number hashes of writers (``batches + writer``), in the fleet's slot."""
    batch_slots: Mapping[str, str]
    """Batch-number hash prefixes of the kinds of write kept in a slot of their own (by kind)."""
    writes: str
    gen: str
    docs: Mapping[str, str]
    workers: str
    acks: str
    meta: str
    counters: str
    eras: str
    """The hash of the state's eras (store/redis/eras.py): the current one and each one's record."""
    group_prefix: str
    """The prefix of a state group's keys: ``group_prefix + id`` completes the group's own hash tag
    (``group_keys``)."""
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
        journal, logs, diff = key_prefix(prefix, "journal"), key_prefix(prefix, "logs"), key_prefix(prefix, "diff")
        return cls(
            batches=f"{base}batch:",
            batch_slots=MappingProxyType({"journal": f"{journal}batch:", "logs": f"{logs}batch:"}),
            writes=f"{base}write:",
            gen=f"{base}gen",
            docs=MappingProxyType({name: f"{base}doc:{name}" for name in DOCUMENTS}),
            workers=f"{base}workers",
            acks=f"{base}acks",
            meta=f"{base}meta",
            counters=f"{base}counters",
            eras=f"{base}state:eras",
            group_prefix=key_prefix(prefix, "s:")[: -len("}:")],
            cache=(f"{base}cache", f"{base}cache:lru", f"{base}cache:seq"),
            journal=(f"{journal}heads", f"{journal}pages", f"{journal}meta", f"{journal}amended"),
            index_prefix=f"{journal}index:",
            logs=f"{logs}logs",
            diff=f"{diff}diff",
            metrics_prefix=f"{base}metrics:",
            traffic_prefix=f"{base}traffic:",
            login_failures=f"{base}auth:failures",
            revoked_prefix=f"{base}revoked:",
            channel=f"{base}events",
        )

    def group_keys(self, group: str) -> tuple[str, str]:
        """The state hash and the meta hash (era, seeded, version) of state group ``group``, in a
        slot of their own: ``simproxy:{simproxy:s:<id>}:state``."""
        tagged = f"{self.group_prefix}{group}}}:"
        return f"{tagged}state", f"{tagged}meta"
