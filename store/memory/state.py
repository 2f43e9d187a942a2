"""``SharedState`` in process: a dict and its version, held here, so ``HeldState`` too: a request
reads and steps it without an await, and nothing else runs in between.

The eras and groups of the shared store (store/redis/eras.py) are kept as numbers only: one dict
holds every key, each group of the era's layout has a version, moved by every change of one of its
keys (the keys of no group share the version ``WHOLE``), and the era moves with every write of the
simulation and of the whole state, so a worker's copy behaves as it does on Redis."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from simproxy.store.base import StateCopy
from simproxy.store.errors import EraChanged, SimulationChanged

WHOLE = ""
"""The group the keys of no group of the layout count as (``state_moved`` compares its version)."""


class MemoryState:
    def __init__(self) -> None:
        self._values: dict[str, str] = {}
        self._version = 0
        self.simulation = 0
        """The version of the stored simulation (0: none yet), set by the documents with every write
        of it: a step decided on another one is refused (``SimulationChanged``)."""
        self._era = 0
        self._era_simulation: int | None = None
        self._fit = False
        self._layout: Mapping[str, frozenset[str]] = {}
        self._group_of: dict[str, str] = {}
        self._versions: dict[str, int] = {}
        """By group id: the value of ``_version`` when a key of that group last changed."""

    def held_state(self) -> MemoryState:
        return self

    def state_now(self) -> Mapping[str, str]:
        return MappingProxyType(self._values)

    def step_now(self, sets: Mapping[str, str], removes: Sequence[str], simulation: int | None = None) -> None:
        if simulation is not None and self.simulation != simulation:
            raise SimulationChanged("the simulation was replaced since this step was decided")
        if sets or removes:
            self._values.update(sets)
            for key in removes:
                self._values.pop(key, None)
            self._moved(sets, removes)

    def _moved(self, keys: Iterable[str], more: Iterable[str] = ()) -> None:
        self._version = version = self._version + 1
        group_of, versions = self._group_of, self._versions
        if not group_of:  # no layout brought (the request path steps here without groups)
            versions[WHOLE] = version
            return
        for key in keys:
            versions[group_of.get(key, WHOLE)] = version
        for key in more:
            versions[group_of.get(key, WHOLE)] = version

    def simulation_written(self, version: int, values: Iterable[tuple[str, str]]) -> None:
        """A write of the simulation (version ``version``): a new era, in the old layout until a
        worker brings the new one, with ``values`` set (an import's ``WriteEffects``)."""
        self.simulation = version
        self._era += 1
        self._era_simulation, self._fit = version, False
        self._set(values)

    def _set(self, values: Iterable[tuple[str, str]]) -> None:
        given = dict(values)
        self._values.update(given)
        self._moved(given)

    async def state_get(self) -> dict[str, str]:
        return dict(self._values)

    async def state_replace(self, values: Mapping[str, str]) -> None:
        self._moved(self._values, values)
        self._values = dict(values)
        self._era += 1

    async def state_update(self, values: Mapping[str, str]) -> None:
        if values:
            self._set(values.items())
            self._era += 1

    async def state_copy(self) -> StateCopy:
        versions = {group: self._versions.get(group, 0) for group in (WHOLE, *self._layout)}
        return StateCopy(self._era, self._era_simulation, self._fit, self._layout, versions, dict(self._values))

    async def state_fit(self, layout: Mapping[str, frozenset[str]], simulation: int) -> None:
        current = self._era_simulation
        if (
            current is None
            or current < simulation
            or (current == simulation and not (self._fit and self._layout == dict(layout)))
        ):
            self._era += 1
            self._era_simulation, self._fit, self._layout = simulation, True, dict(layout)
            self._group_of = {key: group for group, keys in layout.items() for key in keys}
            self._versions = {}
            self._moved(self._values)

    async def state_advance(
        self, era: int, group: str, version: int, sets: Mapping[str, str], removes: Sequence[str]
    ) -> tuple[int, dict[str, str] | None]:
        # no await in here: one step of the event loop, so atomic within the process
        if era != self._era:
            raise EraChanged("the state's era ended since this step was decided")
        current = self._versions.get(group, 0)
        if version != current:
            keys = self._layout.get(group, frozenset())
            return current, {key: value for key, value in self._values.items() if key in keys}
        self.step_now(sets, removes)
        return self._versions.get(group, 0), None

    async def state_moved(self, copy: StateCopy, skip: str | None = None) -> frozenset[str] | None:
        versions = self._versions
        if copy.era != self._era or versions.get(WHOLE, 0) != copy.versions.get(WHOLE, 0):
            return None  # a new era, or a key of no group changed: read it all again
        return frozenset(g for g, v in copy.versions.items() if g != skip and versions.get(g, 0) != v)
