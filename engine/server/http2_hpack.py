"""HPACK (RFC 7541) for the server side of HTTP/2: ``Decoder`` reads the header blocks a client
sends, ``encode_block`` writes the answers'.

``Decoder`` is simproxy's own, one pass per block: a load tester's new request (a new path, a new
id in a header) is read without hpack's per-field objects and log calls; it reads every block as
hpack's ``Decoder`` does, errors included. Its ``kept`` says whether a block left the dynamic table
as it was: then the same bytes mean the same list until the table changes, and ``FrameServer``
(engine/server/http2_frames.py) hands a repeated block's list over again without decoding it.

``encode_block`` never adds to the client's dynamic table: an answer's block means the same on
every connection, so each answer's is made once per worker (``AnswerBlocks``,
engine/server/http2_wire.py) and written as it is. What it costs is a few bytes more per answer
than a table would (``content-type``, ``date`` and the rest spelled out each time), on the wire
only: no one decodes them here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

import hpack
from hpack.huffman_table import decode_huffman

_STATIC: tuple[tuple[bytes, bytes], ...] = tuple(hpack.table.HeaderTable.STATIC_TABLE)
"""HPACK's static table (RFC 7541 Appendix A), as hpack holds it: index 1 is ``_STATIC[0]``."""
_INTEGER_BYTES = 5
"""The most bytes an integer may take after its prefix (as hpack reads them): more is an error."""


class HpackError(ValueError):
    """A header block that does not decode (``COMPRESSION_ERROR``)."""


class ListTooLarge(HpackError):
    """A header list over ``SETTINGS_MAX_HEADER_LIST_SIZE`` (``ENHANCE_YOUR_CALM``)."""


def _integer(data: bytes, at: int, value: int) -> tuple[int, int]:
    """An integer whose prefix was all ones (``value``): the bytes that follow from ``at``."""
    shift = 0
    for _ in range(_INTEGER_BYTES):
        if at >= len(data):
            raise HpackError("a truncated integer")
        byte = data[at]
        at += 1
        value += (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
    raise HpackError("an integer of too many bytes")


def _string(data: bytes, at: int) -> tuple[bytes, int]:
    """A string literal at ``at`` (its length, then its bytes, Huffman-coded if said)."""
    if at >= len(data):
        raise HpackError("a truncated block")
    first = data[at]
    size, at = (first & 0x7F, at + 1) if first & 0x7F != 0x7F else _integer(data, at + 1, 0x7F)
    text = data[at : at + size]
    if len(text) != size:
        raise HpackError("a truncated block")
    if first & 0x80:
        try:
            text = decode_huffman(text)
        except hpack.HPACKDecodingError as exc:
            raise HpackError(str(exc)) from None
    return text, at + size


class Decoder:
    """HPACK's decoding (RFC 7541) of the header blocks a client sends, as hpack's ``Decoder``
    reads them (``tests/engine/server/test_http2_hpack.py`` holds it to that), in one pass with no
    object per field but its tuple. ``kept`` says whether the last block left the dynamic table as
    it was: then the same bytes mean the same list for as long as the table stays so."""

    __slots__ = ("_entries", "_max", "_size", "kept", "max_allowed", "max_list")

    def __init__(self, max_list: int, max_allowed: int = 4096) -> None:
        self.max_list = max_list
        """``SETTINGS_MAX_HEADER_LIST_SIZE``: the most a list may hold (names, values, 32 each)."""
        self.max_allowed = max_allowed
        """``SETTINGS_HEADER_TABLE_SIZE``: the most the client's encoder may make the table."""
        self._entries: list[tuple[bytes, bytes]] = []
        """The dynamic table, the newest entry last."""
        self._size = 0
        self._max = max_allowed
        self.kept = True

    def decode(self, data: bytes) -> list[tuple[bytes, bytes]]:
        """The header list of ``data``; a block that does not decode raises ``HpackError``."""
        fields: list[tuple[bytes, bytes]] = []
        entries, static = self._entries, _STATIC
        at, end, total, kept = 0, len(data), 0, True
        while at < end:
            byte = data[at]
            if byte & 0x80:  # an indexed field
                index, at = (byte & 0x7F, at + 1) if byte & 0x7F != 0x7F else _integer(data, at + 1, 0x7F)
                field = self._entry(index, static, entries)
            elif byte & 0x40:  # a literal, added to the table
                index, at = (byte & 0x3F, at + 1) if byte & 0x3F != 0x3F else _integer(data, at + 1, 0x3F)
                field, at = self._literal(data, at, index, static, entries)
                self._add(field)
                kept = False
            elif byte & 0x20:  # a size update: only before the fields
                if fields:
                    raise HpackError("a table size update after a field")
                size, at = (byte & 0x1F, at + 1) if byte & 0x1F != 0x1F else _integer(data, at + 1, 0x1F)
                if size > self.max_allowed:
                    raise HpackError(f"a table size of {size} (at most {self.max_allowed})")
                self._resize(size)
                kept = False
                continue
            else:  # a literal, not added (0000) or never to be (0001)
                index, at = (byte & 0x0F, at + 1) if byte & 0x0F != 0x0F else _integer(data, at + 1, 0x0F)
                field, at = self._literal(data, at, index, static, entries)
            fields.append(field)
            total += len(field[0]) + len(field[1]) + 32
            if total > self.max_list:
                raise ListTooLarge(f"a header list over {self.max_list} bytes")
        self.kept = kept
        return fields

    @staticmethod
    def _entry(
        index: int, static: tuple[tuple[bytes, bytes], ...], entries: list[tuple[bytes, bytes]]
    ) -> tuple[bytes, bytes]:
        if 0 < index <= 61:
            return static[index - 1]
        if 61 < index <= 61 + len(entries):
            return entries[61 - index]  # 62 is the newest: the last
        raise HpackError(f"no table entry {index}")

    def _literal(
        self,
        data: bytes,
        at: int,
        index: int,
        static: tuple[tuple[bytes, bytes], ...],
        entries: list[tuple[bytes, bytes]],
    ) -> tuple[tuple[bytes, bytes], int]:
        if index:
            name = self._entry(index, static, entries)[0]
        else:
            name, at = _string(data, at)
        value, at = _string(data, at)
        return (name, value), at

    def _add(self, field: tuple[bytes, bytes]) -> None:
        size = len(field[0]) + len(field[1]) + 32
        if size > self._max:  # an entry larger than the table empties it (RFC 7541 §4.4)
            self._entries.clear()
            self._size = 0
            return
        self._entries.append(field)
        self._size += size
        self._evict()

    def _resize(self, size: int) -> None:
        self._max = size
        self._evict()

    def _evict(self) -> None:
        entries = self._entries
        while self._size > self._max:
            name, value = entries.pop(0)
            self._size -= len(name) + len(value) + 32


_STATIC_FIELDS: Mapping[tuple[bytes, bytes], int] = MappingProxyType(
    {field: index for index, field in reversed(list(enumerate(_STATIC, 1)))}
)
"""A field's index in the static table (the first, when one is there twice)."""
_STATIC_NAMES: Mapping[bytes, int] = MappingProxyType(
    {name: index for index, (name, _) in reversed(list(enumerate(_STATIC, 1)))}
)
"""A name's first index in the static table."""


def _prefixed(out: bytearray, value: int, bits: int, flags: int) -> None:
    """``value`` as an integer of a ``bits``-bit prefix (RFC 7541 §5.1), the byte's other bits ``flags``."""
    top = (1 << bits) - 1
    if value < top:
        out.append(flags | value)
        return
    out.append(flags | top)
    value -= top
    while value >= 0x80:
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    out.append(value)


def encode_block(headers: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The header block of ``headers``, using the static table only: a field there is its index,
    any other a literal kept out of the dynamic table (its name indexed when the table has it),
    its strings as they are (no Huffman). Such a block means the same whatever the peer's table
    holds, so an answer's block is made once and sent on any connection (``AnswerBlocks``)."""
    out = bytearray()
    fields, names = _STATIC_FIELDS, _STATIC_NAMES
    for name, value in headers:
        index = fields.get((name, value))
        if index is not None:
            out.append(0x80 | index)
            continue
        index = names.get(name)
        if index is None:
            out.append(0)
            _prefixed(out, len(name), 7, 0)
            out += name
        else:
            _prefixed(out, index, 4, 0)
        _prefixed(out, len(value), 7, 0)
        out += value
    return bytes(out)
