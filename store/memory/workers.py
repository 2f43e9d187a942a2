"""``Workers`` in process: the one worker's heartbeat and ack (the registry has a single entry)."""

from __future__ import annotations


class MemoryWorkers:
    def __init__(self) -> None:
        self._workers: dict[str, tuple[int, int]] = {}  # id -> (last heartbeat, acked)
        self._registry_since: int | None = None

    async def heartbeat(self, worker_id: str, acked: int, now_ms: int, instance: str = "") -> None:
        self._workers[worker_id] = (now_ms, acked)
        if self._registry_since is None:
            self._registry_since = now_ms

    async def registry_since(self) -> int | None:
        return self._registry_since

    async def worker_acks(self, alive_since_ms: int) -> dict[str, int]:
        return {wid: acked for wid, (seen, acked) in self._workers.items() if seen >= alive_since_ms}

    async def worker_heartbeats(self, alive_since_ms: int) -> dict[str, int]:
        return {wid: seen for wid, (seen, _) in self._workers.items() if seen >= alive_since_ms}

    async def unregister(self, worker_id: str) -> None:
        self._workers.pop(worker_id, None)
