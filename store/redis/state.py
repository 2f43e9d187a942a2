"""``SharedState`` on Redis: the state in groups, each in a Cluster slot of its own, within eras
(store/redis/eras.py, whose docstring gives the rule).

A request's step is one script call on one group: it holds only when the group is seeded in the
era the step was decided in and still at the version the worker's copy is of, so the hot path is
one EVALSHA whatever the number of groups. A write of the whole state (``state_replace``,
``state_update``) is a new era: one write in the fleet's slot, then drained into the groups. An
import starts an era with the document (store/redis/documents.py); the first worker to step on the
new simulation starts one in that simulation's layout (``state_fit``), carrying every value. The
steps no longer read the simulation document: a step decided on a replaced simulation is refused
once its group is sealed for the new era, before the import is answered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simproxy.store.base import StateCopy
from simproxy.store.redis.eras import RedisEras


class RedisState(RedisEras):
    def held_state(self) -> None:
        """Redis's state is a round trip away: a request steps it with an await."""
        return None

    async def state_get(self) -> dict[str, str]:
        return await self.view()

    async def state_replace(self, values: Mapping[str, str]) -> None:
        await self.begin(None, values, False)

    async def state_update(self, values: Mapping[str, str]) -> None:
        if values:
            await self.begin(None, values, True)

    async def state_copy(self) -> StateCopy:
        return await self.copy()

    async def state_fit(self, layout: Mapping[str, frozenset[str]], simulation: int) -> None:
        await self.begin(layout, {}, True, simulation, fitting=True)

    async def state_advance(
        self, era: int, group: str, version: int, sets: Mapping[str, str], removes: Sequence[str]
    ) -> tuple[int, dict[str, str] | None]:
        return await self.advance(era, group, version, sets, removes)

    async def state_moved(self, copy: StateCopy, skip: str | None = None) -> frozenset[str] | None:
        return await self.moved(copy, skip)
