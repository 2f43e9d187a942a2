"""``SharedState`` on Redis: one hash and its version counter; steps are Lua scripts that also
check the simulation's version, so that a step decided on a replaced simulation changes nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simproxy.store.errors import SimulationChanged
from simproxy.store.redis import scripts
from simproxy.store.redis.link import RedisLink, RedisRole, simulation_arg, text, translate


class RedisState(RedisRole):
    def __init__(self, link: RedisLink) -> None:
        super().__init__(link)
        keys = link.keys
        self._state = keys.state
        self._version = keys.state_version
        self._stepped = (keys.state, keys.state_version, keys.docs["simulation"])
        """The keys of a step: the state, its version, and the simulation it was decided on."""
        self._write_script = self._client.register_script(scripts.STATE_WRITE)
        self._transition_script = self._client.register_script(scripts.STATE_TRANSITION)
        self._advance_script = self._client.register_script(scripts.STATE_ADVANCE)

    def held_state(self) -> None:
        """Redis's state is a round trip away: a request steps it with an await."""
        return None

    @translate
    async def state_get(self) -> dict[str, str]:
        raw = await self._client.hgetall(self._state)
        return {text(k): text(v) for k, v in raw.items()}

    @translate
    async def state_replace(self, values: Mapping[str, str]) -> None:
        await self._write(True, values)

    @translate
    async def state_update(self, values: Mapping[str, str]) -> None:
        if values:
            await self._write(False, values)

    async def _write(self, replace: bool, values: Mapping[str, str]) -> None:
        args: list[bytes] = [b"1" if replace else b"0"]
        for key, value in values.items():
            args += [key.encode("utf-8", "surrogateescape"), value.encode("utf-8", "surrogateescape")]
        await self._write_script(keys=[self._state, self._version], args=args)

    @translate
    async def state_read(self) -> tuple[int, dict[str, str]]:
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.get(self._version)
            pipe.hgetall(self._state)
            version, raw = await pipe.execute()
        return int(version or 0), {text(k): text(v) for k, v in raw.items()}

    @translate
    async def state_advance(
        self, version: int, sets: Mapping[str, str], removes: Sequence[str], simulation: int | None = None
    ) -> tuple[int, dict[str, str] | None]:
        args: list[str] = [simulation_arg(simulation), str(version), str(len(sets))]
        for key, value in sets.items():
            args += [key, value]
        args += list(removes)
        reply = await self._advance_script(keys=self._stepped, args=args)
        if reply == -1:
            raise SimulationChanged("the simulation was replaced since this step was decided")
        if reply[0]:
            return int(reply[1]), None
        flat = reply[2]
        return int(reply[1]), {text(flat[i]): text(flat[i + 1]) for i in range(0, len(flat), 2)}

    @translate
    async def state_transition(
        self,
        requires: Mapping[str, str],
        sets: Mapping[str, str],
        removes: Sequence[str],
        simulation: int | None = None,
    ) -> bool:
        args: list[str] = [simulation_arg(simulation), str(len(requires))]
        for key, value in requires.items():
            args += [key, value]
        args.append(str(len(sets)))
        for key, value in sets.items():
            args += [key, value]
        args += list(removes)
        applied = int(await self._transition_script(keys=self._stepped, args=args))
        if applied == -1:
            raise SimulationChanged("the simulation was replaced since this step was decided")
        return bool(applied)
