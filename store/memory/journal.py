"""``JournalStore`` in process, and its batched write: the last ``limit`` entries and the indexes.

Entries are kept as given (bytes, or the engine's tuples), and a ``JournalRun`` of entries served
again and again as one object, each of its entries made when read.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from itertools import repeat, starmap
from operator import itemgetter
from typing import Any, cast

from simproxy.store.base import JournalItem, JournalRecord, JournalRun


class MemoryJournal:
    def __init__(self) -> None:
        self._journal: deque[JournalRecord | JournalRun] = deque()
        """Entries and runs of entries (``JournalRun``), oldest first, holding the last ``limit``
        entries appended; the ids beside them rather than paired with them (a pair would be one
        more object kept per entry), a run standing for its own ids."""
        self._ids: deque[str | JournalRun] = deque()
        self._extra = 0
        """How many more entries the journal holds than items: the length of each run, less one. A
        run is kept only with two entries or more (``_kept``), so 0 means there is no run."""
        self._indexes: dict[str, dict[str, str]] = {}

    def __len__(self) -> int:
        """The entries held."""
        return len(self._journal) + self._extra

    async def journal_append(
        self, entries: Sequence[JournalItem], index_keys: Mapping[str, Mapping[str, str]], limit: int
    ) -> None:
        ids, journal = self._ids, self._journal
        if all(map(isinstance, entries, repeat(tuple))):  # no run given: appended in C
            pairs = cast("Sequence[tuple[str, JournalRecord]]", entries)
            ids.extend(map(itemgetter(0), pairs))
            journal.extend(map(itemgetter(1), pairs))
        else:
            for item in entries:
                known, kept = item if isinstance(item, tuple) else self._kept(item)
                ids.append(known)
                journal.append(kept)
        self._trim(len(journal) + self._extra - max(limit, 0))
        for index, keys in index_keys.items():
            self._indexes.setdefault(index, {}).update(keys)

    def _trim(self, excess: int) -> None:
        """Drop the ``excess`` oldest entries, the oldest run cut when only part of it goes."""
        ids, journal = self._ids, self._journal
        if not self._extra:  # no run held: every item is one entry, dropped in C
            if excess > 0:
                _drop_oldest(ids, excess)
                _drop_oldest(journal, excess)
            return
        while excess > 0:
            oldest = journal[0]
            if isinstance(oldest, bytes | tuple):
                ids.popleft()
                journal.popleft()
                excess -= 1
                continue
            size = len(oldest)
            if size <= excess:
                ids.popleft()
                journal.popleft()
                self._extra -= size - 1
                excess -= size
            else:
                ids[0], journal[0] = self._kept(oldest.part(excess, size))
                self._extra -= size - 1
                excess = 0

    def _kept(self, run: JournalRun) -> tuple[str | JournalRun, JournalRecord | JournalRun]:
        """(id, item) to keep for ``run``: the run itself, counted in ``_extra``, or, for a run of
        one entry, that entry alone."""
        if len(run) == 1:
            return run.entry_id(0), run.record(0)
        self._extra += len(run) - 1
        return run, run

    def _find(self, entry_id: str) -> tuple[int, int] | None:
        """(item, position in its run or 0) of an entry, searched from the newest (what is amended
        or looked up is recent)."""
        ids = self._ids
        for item in range(len(ids) - 1, -1, -1):
            known = ids[item]
            if isinstance(known, str):
                if known == entry_id:
                    return item, 0
            elif (position := known.position(entry_id)) is not None:
                return item, position
        return None

    def _record(self, found: tuple[int, int]) -> JournalRecord:
        kept = self._journal[found[0]]
        return kept if isinstance(kept, bytes | tuple) else kept.record(found[1])

    async def journal_amend(self, entry_id: str, entry: bytes) -> bool:
        found = self._find(entry_id)
        if found is None:
            return False
        item, position = found
        run = self._journal[item]
        if isinstance(run, bytes | tuple):
            self._journal[item] = entry
            return True
        # the run is split around the amended entry: what comes before, the entry, what comes after
        self._extra -= len(run) - 1
        parts: list[tuple[str | JournalRun, JournalRecord | JournalRun]] = []
        if position:
            parts.append(self._kept(run.part(0, position)))
        parts.append((entry_id, entry))
        if position + 1 < len(run):
            parts.append(self._kept(run.part(position + 1, len(run))))
        del self._ids[item]
        del self._journal[item]
        for offset, (known, kept) in enumerate(parts):
            self._ids.insert(item + offset, known)
            self._journal.insert(item + offset, kept)
        return True

    async def journal_entries(self) -> list[JournalRecord]:
        if not self._extra:
            return list(self._journal)  # type: ignore[arg-type]  # no run among them
        out: list[JournalRecord] = []
        for kept in self._journal:
            if isinstance(kept, bytes | tuple):
                out.append(kept)
            else:
                out += kept.records()
        return out

    async def journal_lookup(self, index: str, keys: Sequence[str]) -> list[JournalRecord | None]:
        ids = self._indexes.get(index, {})
        found: list[JournalRecord | None] = []
        for key in keys:
            at = self._find(ids[key]) if key in ids else None
            found.append(None if at is None else self._record(at))
        return found

    async def journal_set_index(self, index: str, keys: Mapping[str, str]) -> None:
        self._indexes[index] = dict(keys)

    async def journal_drop_index(self, index: str) -> None:
        self._indexes.pop(index, None)

    async def journal_clear(self, indexes: Sequence[str]) -> None:
        self._journal.clear()
        self._ids.clear()
        self._extra = 0
        for index in indexes:
            self._indexes.pop(index, None)


def _drop_oldest(items: deque[Any], count: int) -> None:
    """Drop the ``count`` (at most ``len(items)``) oldest of ``items``, in a loop run in C."""
    if count >= len(items):
        items.clear()
    else:
        deque(starmap(items.popleft, repeat((), count)), maxlen=0)
