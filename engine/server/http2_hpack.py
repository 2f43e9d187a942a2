"""HPACK with a memory: the same header block, while the dynamic table has not changed, is not
decoded (or encoded) again.

A client (a browser, a load tester) sends the same request headers on stream after stream; once
its encoder has put them in the dynamic table, each block is a few indexed fields whose decoding
depends on nothing but the block's bytes and the table. So a block whose decoding left the table
as it was decodes to the same list again for as long as the table stays as it is, and is looked up
instead. A block that changes the table (a literal with incremental indexing, a size update) is
never remembered, and any change of the table (theirs, or a new ``SETTINGS_HEADER_TABLE_SIZE``)
forgets what was remembered. The same holds for the answers' header lists on the way out: once
``:status``, ``content-type`` and the rest are in the encoder's table, the same list encodes to
the same bytes until the table changes (a new ``Date`` each second adds an entry, and forgets).

``MemoDecoder`` and ``MemoEncoder`` are hpack's ``Decoder`` and ``Encoder`` with that memory;
``FrameServer`` (engine/server/http2_frames.py) decodes and encodes with them. Errors are never
remembered: a block that fails to decode fails each time, as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import hpack

from simproxy.engine.server.http2_wire import MEMO_BYTES, MEMO_SIZE, small

_Table = tuple[int, int, int, bool, int]


def table_state(table: Any) -> tuple[_Table, object]:
    """What a block's meaning depends on: the newest dynamic entry (by identity: the caller holds
    it, so its ``id`` stays its own, and an equal entry added again counts as a change), how many
    entries there are, their size, the table's size limit and whether a size change is pending;
    and that newest entry."""
    entries = table.dynamic_entries
    newest = entries[0] if entries else None
    return (id(newest), len(entries), table.maxsize, table.resized, table._current_size), newest


class MemoDecoder(hpack.Decoder):
    """hpack's ``Decoder``; a block decoded before, with the table as it was then, is looked up."""

    def __init__(self, max_header_list_size: int) -> None:
        super().__init__(max_header_list_size=max_header_list_size)
        self._memo: dict[tuple[bytes, bool], list[Any]] = {}
        self._state: tuple[_Table, int, int] | None = None
        self._held: object = None
        """The table's newest entry when ``_state`` was taken."""
        self.kept = True
        """The last block decoded left the dynamic table as it was."""

    def _now(self) -> tuple[tuple[_Table, int, int], object]:
        table, newest = table_state(self.header_table)
        return (table, self.max_header_list_size, self.max_allowed_table_size), newest

    def decode(self, data: bytes, raw: bool = False) -> Iterable[hpack.HeaderTuple]:
        """The header list of ``data``, as ``hpack.Decoder.decode`` gives it."""
        key = (data if type(data) is bytes else bytes(data), raw)
        now, newest = self._now()
        if now == self._state:
            known = self._memo.get(key)
            if known is not None:
                self.kept = True
                return list(known)
        else:
            self._memo.clear()
            self._state, self._held = now, newest
        self.kept = False  # till the block decodes without a change of the table
        headers = list(super().decode(key[0], raw))
        after, newest = self._now()
        self.kept = after == now
        if (
            after == now and len(key[0]) <= MEMO_BYTES and small(headers)
        ):  # only indexed fields, or literals kept out of the table: its meaning is fixed
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            self._memo[key] = list(headers)
        else:
            self._memo.clear()
            self._state, self._held = after, newest
        return headers


class MemoEncoder(hpack.Encoder):
    """hpack's ``Encoder``; a header list of plain ``(bytes, bytes)`` tuples encoded before, with
    the table as it was then, gives the same bytes without encoding again."""

    def __init__(self) -> None:
        super().__init__()
        self._memo: dict[tuple[tuple[tuple[bytes, bytes], ...], bool], bytes] = {}
        self._state: _Table | None = None
        self._held: object = None

    def encode(self, headers: Any, huffman: bool = True) -> bytes:
        """The header block of ``headers``, as ``hpack.Encoder.encode`` makes it."""
        if type(headers) is not list or not all(type(h) is tuple and len(h) == 2 for h in headers):
            # another form (sensitive fields, a dict): encoded as it is, nothing remembered
            self._memo.clear()
            self._state = None
            return super().encode(headers, huffman)
        key = (tuple(headers), huffman)
        now, newest = table_state(self.header_table)
        if now == self._state:
            known = self._memo.get(key)
            if known is not None:
                return known
        else:
            self._memo.clear()
            self._state, self._held = now, newest
        block = super().encode(headers, huffman)
        after, newest = table_state(self.header_table)
        if after == now and len(block) <= MEMO_BYTES:
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            self._memo[key] = block
        else:
            self._memo.clear()
            self._state, self._held = after, newest
        return block
