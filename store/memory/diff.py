"""``DiffStore`` in process: the reports by request key, groups in first-seen order (a dict's)."""

from __future__ import annotations


class MemoryDiffs:
    def __init__(self) -> None:
        self._groups: dict[str, list[bytes]] = {}

    async def diff_add(self, request_key: str, report: bytes) -> None:
        self._groups.setdefault(request_key, []).append(bytes(report))

    async def diff_reports(self) -> list[tuple[str, list[bytes]]]:
        return [(key, list(reports)) for key, reports in self._groups.items()]

    async def diff_clear(self) -> None:
        self._groups.clear()
