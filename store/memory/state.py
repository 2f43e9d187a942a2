"""``SharedState`` in process: a dict and its version, held here, so ``HeldState`` too: a request
reads and steps it without an await, and nothing else runs in between."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from simproxy.store.errors import SimulationChanged


class MemoryState:
    def __init__(self) -> None:
        self._values: dict[str, str] = {}
        self._version = 0
        self.simulation = 0
        """The version of the stored simulation (0: none yet), set by the documents with every write
        of it: a step decided on another one is refused (``SimulationChanged``)."""

    def held_state(self) -> MemoryState:
        return self

    def state_now(self) -> Mapping[str, str]:
        return MappingProxyType(self._values)

    def step_now(self, sets: Mapping[str, str], removes: Sequence[str], simulation: int | None = None) -> None:
        self._check(simulation)
        if sets or removes:
            self._values.update(sets)
            for key in removes:
                self._values.pop(key, None)
            self._version += 1

    def set_now(self, values: Iterable[tuple[str, str]]) -> None:
        """Set the given keys (an import's ``WriteEffects``, applied with its document)."""
        self._values.update(values)
        self._version += 1

    def _check(self, simulation: int | None) -> None:
        if simulation is not None and self.simulation != simulation:
            raise SimulationChanged("the simulation was replaced since this step was decided")

    async def state_get(self) -> dict[str, str]:
        return dict(self._values)

    async def state_replace(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)
        self._version += 1

    async def state_update(self, values: Mapping[str, str]) -> None:
        self.set_now(values.items())

    async def state_read(self) -> tuple[int, dict[str, str]]:
        return self._version, dict(self._values)

    async def state_advance(
        self, version: int, sets: Mapping[str, str], removes: Sequence[str], simulation: int | None = None
    ) -> tuple[int, dict[str, str] | None]:
        self._check(simulation)
        if version != self._version:
            return self._version, dict(self._values)
        self.step_now(sets, removes)
        return self._version, None

    async def state_transition(
        self,
        requires: Mapping[str, str],
        sets: Mapping[str, str],
        removes: Sequence[str],
        simulation: int | None = None,
    ) -> bool:
        # no await in here: one step of the event loop, so atomic within the process
        self._check(simulation)
        if any(self._values.get(key) != value for key, value in requires.items()):
            return False
        self.step_now(sets, removes)
        return True
