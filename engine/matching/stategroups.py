"""The state's key groups: which state keys one request's decision can read or step together.

A request that hits a pair reads the ``requiresState`` keys of every pair that could also hit it
(the strongest one wins, and a pair whose state does not hold is out), the keys its templates print,
and it steps the pair's ``transitionsState`` and ``removesState`` keys (a sequence is such keys:
``sequence:<n>`` required and moved on by each of its pairs). So the keys are grouped as the
connected components of a graph whose nodes are the pairs and their keys: a pair is joined to each
key it names, and to every pair it may share a request with when one of the two names a key. Then
every hit reads and steps the keys of one group, and a group can live on its own (in its own
Redis Cluster slot) with its own version. A miss still reads the whole state: its answer prints it.

Two pairs may share a request unless their exact methods differ, or their paths cannot be the same
one: two exact paths that differ, or an exact path or literal prefix (engine/matching/candidates.py)
that does not start with the other's literal prefix. Anything else is taken as shared. A template
that reads the state other than by a key's name (``{{#each State}}``, ``lookup``) may read any key:
the layout is then ``whole``, one group of every key. So it is when working the graph out would take
longer than ``BUDGET`` comparisons (a simulation of many glob paths): the layout is safe, not spread.

A group's id is made from its keys' names alone, so every worker works out the same layout from the
same simulation, across restarts; a key no pair names is a group of its own, with the id the same
rule gives a group of that key alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from simproxy.engine.matching.candidates import exact_value, literal_prefix
from simproxy.engine.simulation.model import Pair
from simproxy.engine.templating.direct import StateKey
from simproxy.engine.templating.pairs import PairTemplates

BUDGET = 2_000_000
"""The most path comparisons the grouping makes before it settles for one group (``whole``)."""
WHOLE_ID = "all"
"""The id of the one group of a ``whole`` layout."""


def group_id(keys: Iterable[str]) -> str:
    """The stable id of the group of ``keys``: 16 hex digits of a digest of their sorted names."""
    digest = hashlib.sha256("\0".join(sorted(keys)).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class StateGroup:
    """Keys a request may read or step together, and the id they are kept under."""

    id: str
    keys: frozenset[str]


@dataclass(frozen=True, slots=True)
class StateLayout:
    """The groups of one simulation's state keys (``state_layout``)."""

    groups: tuple[StateGroup, ...] = ()
    """The groups of the keys the pairs name, by id."""
    of_pair: tuple[StateGroup | None, ...] = ()
    """By pair index: the group a hit on that pair reads and steps; None when it reads no state."""
    whole: bool = False
    """Every key is in one group (``WHOLE_ID``), the keys no pair names too."""
    _by_key: Mapping[str, StateGroup] = field(default_factory=dict, repr=False)

    def group_of(self, key: str) -> StateGroup:
        """The group ``key`` is kept in: its pairs' group, or a group of its own when no pair names it."""
        found = self._by_key.get(key)
        if found is not None:
            return found
        if self.whole:
            return self.groups[0]
        return StateGroup(group_id((key,)), frozenset((key,)))

    def group_at(self, index: int) -> str | None:
        """The id of the group a hit on the pair at ``index`` reads and steps (None: no state)."""
        of_pair = self.of_pair
        group = of_pair[index] if index < len(of_pair) else None
        return None if group is None else group.id

    def mapping(self) -> dict[str, frozenset[str]]:
        """The groups as a store keeps them: id -> keys."""
        return {group.id: group.keys for group in self.groups}

    def split(self, keys: Iterable[str]) -> dict[str, list[str]]:
        """``keys`` by the id of the group each is kept in, in the order given."""
        out: dict[str, list[str]] = {}
        for key in keys:
            out.setdefault(self.group_of(key).id, []).append(key)
        return out


class _Seen:
    """What the grouping reads of a pair: the keys it names, its exact path or literal prefix, its
    exact method."""

    __slots__ = ("exact_path", "keys", "method", "prefix", "unknown")

    def __init__(self, pair: Pair, templates: PairTemplates | None) -> None:
        read, self.unknown = _template_keys(templates)
        request, response = pair.request, pair.response
        requires = [key for key, _ in request.requires_state or ()]
        steps = [key for key, _ in response.transitions_state or ()] + list(response.removes_state or ())
        self.keys = tuple(dict.fromkeys((*requires, *steps, *read)))
        self.exact_path = exact_value(request.path)
        self.prefix = literal_prefix(request.path) if self.exact_path is None else self.exact_path
        self.method = exact_value(request.method)


def _template_keys(templates: PairTemplates | None) -> tuple[list[str], bool]:
    """(the state keys the templates print, True when they may read others too)."""
    keys: list[str] = []
    if templates is None or not templates.uses_state:
        return keys, False
    for template in templates.all:
        if not template.uses_state:
            continue
        if template.stated is None:
            return keys, True
        keys += (part.name for part in template.stated.parts if isinstance(part, StateKey))
    return keys, False


class _Joins:
    """Union-find over pair indices."""

    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)

    def join_all(self, items: Sequence[int]) -> None:
        for other in items[1:]:
            self.join(items[0], other)


def state_layout(pairs: Iterable[tuple[Pair, PairTemplates | None]]) -> StateLayout:
    """The layout of the state keys of a simulation's pairs, given in order with their templates."""
    seen = [_Seen(pair, templates) for pair, templates in pairs]
    if any(p.unknown for p in seen):
        return _whole(seen)
    joins = _Joins(len(seen))
    first: dict[str, int] = {}
    for i, p in enumerate(seen):
        for key in p.keys:
            joins.join(first.setdefault(key, i), i)
    if not _join_shared(seen, joins):
        return _whole(seen)
    members: dict[int, list[str]] = {}
    for i, p in enumerate(seen):
        members.setdefault(joins.find(i), []).extend(p.keys)
    groups: dict[int, StateGroup] = {}
    for root, keys in members.items():
        if keys:
            unique = frozenset(keys)
            groups[root] = StateGroup(group_id(unique), unique)
    by_key = {key: group for group in groups.values() for key in group.keys}
    return StateLayout(
        tuple(sorted(groups.values(), key=lambda g: g.id)),
        tuple(groups.get(joins.find(i)) for i in range(len(seen))),
        False,
        MappingProxyType(by_key),
    )


def _whole(seen: Sequence[_Seen]) -> StateLayout:
    keys = frozenset(key for p in seen for key in p.keys)
    group = StateGroup(WHOLE_ID, keys)
    return StateLayout((group,), (group,) * len(seen), True, MappingProxyType(dict.fromkeys(keys, group)))


def _join_shared(seen: Sequence[_Seen], joins: _Joins) -> bool:
    """Join the pairs that may share a request when one of them names a key; False when that would
    take more than ``BUDGET`` comparisons."""
    exact: dict[str, list[int]] = {}
    loose: list[int] = []
    for i, p in enumerate(seen):
        (exact.setdefault(p.exact_path, []) if p.exact_path is not None else loose).append(i)
    for bucket in exact.values():
        _join_bucket(seen, bucket, joins)
    if len(loose) * (len(exact) + len(loose)) > BUDGET:
        return False
    for at, i in enumerate(loose):
        q = seen[i]
        for path, bucket in exact.items():
            if path.startswith(q.prefix):
                _join_across(seen, i, bucket, joins)
        for j in loose[at + 1 :]:
            other = seen[j].prefix
            if other.startswith(q.prefix) or q.prefix.startswith(other):
                _join_across(seen, i, (j,), joins)
    return True


def _join_bucket(seen: Sequence[_Seen], bucket: list[int], joins: _Joins) -> None:
    """Join the pairs of one exact path that may share a request (their methods allow it)."""
    stated: dict[str | None, list[int]] = {}
    plain: dict[str | None, list[int]] = {}
    for i in bucket:
        (stated if seen[i].keys else plain).setdefault(seen[i].method, []).append(i)
    if not stated:
        return
    if None in stated:  # a stateful pair for every method: it may share a request with any
        joins.join_all(bucket)
        return
    for method, ids in stated.items():
        joins.join_all(ids + plain.get(method, []))
    if None in plain:  # a pair for every method, beside stateful pairs of some methods
        joins.join_all(plain[None] + [ids[0] for ids in stated.values()])


def _join_across(seen: Sequence[_Seen], i: int, others: Iterable[int], joins: _Joins) -> None:
    """Join pair ``i`` with those of ``others`` it may share a request with, one of the two naming a key."""
    p = seen[i]
    for j in others:
        q = seen[j]
        if not (p.keys or q.keys):
            continue
        if p.method is not None and q.method is not None and p.method != q.method:
            continue
        joins.join(i, j)
