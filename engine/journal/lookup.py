"""What the ``journal`` and ``hasJournalKey`` template helpers read: a journal index's entry for a key.

Hoverfly looks the index up in memory while it renders. Here the journal is the fleet's, in the
store, and a render never waits: a render that asks for keys it has not been given is done again
once ``FetchedJournal.fetch`` has brought them (one store call per index), until it asks for
nothing new.
"""

from __future__ import annotations

from dataclasses import dataclass

from simproxy.engine.journal.entries import JournalEntry, decode_entry
from simproxy.store import JournalStore


@dataclass(frozen=True, slots=True)
class BodyView:
    """An entry as the ``journal`` template helper reads it (``JournalEntryView``)."""

    request_body: str
    response_body: str

    @classmethod
    def of(cls, entry: JournalEntry) -> BodyView:
        return cls(entry.request.body, entry.response_body.decode("utf-8", "surrogateescape"))


class FetchedJournal:
    """The helpers' view for one request: the entries fetched so far, and the (index, key) pairs a
    render asked for that were not fetched yet (it was told "none" for those)."""

    __slots__ = ("asked", "known")

    def __init__(self) -> None:
        self.known: dict[tuple[str, str], BodyView | None] = {}
        self.asked: dict[tuple[str, str], None] = {}
        """Keys asked for and not known, in the order asked (a dict: ordered, no repeats)."""

    def lookup(self, index: str, key: str) -> BodyView | None:
        wanted = (index, key)
        if wanted in self.known:
            return self.known[wanted]
        self.asked[wanted] = None
        return None

    async def fetch(self, store: JournalStore) -> None:
        """Bring the entries of the keys asked for: one store call per index."""
        by_index: dict[str, list[str]] = {}
        for index, key in self.asked:
            by_index.setdefault(index, []).append(key)
        self.asked = {}
        for index, keys in by_index.items():
            records = await store.journal_lookup(index, keys)
            for key, record in zip(keys, records, strict=True):
                self.known[(index, key)] = None if record is None else BodyView.of(decode_entry(record))
