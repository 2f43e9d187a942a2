"""HPACK on the server side (engine/server/http2_hpack.py): whatever a client's encoder does to the
dynamic table, simproxy's ``Decoder`` reads every block as hpack's own decoder does (and fails
where it fails), and ``encode_block`` writes blocks a peer's decoder reads back as the header
lists sent, without touching its dynamic table."""

from __future__ import annotations

import random

import hpack
import pytest

from simproxy.engine.server.http2_hpack import Decoder, HpackError, ListTooLarge, encode_block

REQUEST = [(b":method", b"GET"), (b":path", b"/hello"), (b":scheme", b"http"), (b":authority", b"a:1")]


def _blocks() -> list[bytes]:
    """Blocks a client sends: repeats (indexed fields only), new entries, a table so small that an
    equal entry added again evicts the old one (the same bytes then mean something else), a size
    update, fields never indexed, and long generated lists that grow the table past its size."""
    client = hpack.Encoder()
    blocks: list[bytes] = []
    for n in range(3):
        blocks += [client.encode(REQUEST), client.encode(REQUEST)]
        blocks.append(client.encode([*REQUEST, (b"x-n", str(n).encode())]))
        blocks.append(client.encode([*REQUEST, (b"x-n", str(n).encode())], huffman=False))
    client.header_table_size = 60  # room for one entry
    for value in (b"a", b"b", b"a", b"a", b"b"):
        blocks.append(client.encode([(b"x-v", value)]))
        blocks.append(client.encode([(b"x-v", value)]))
        blocks.append(bytes([0x80 | 62]))  # "the newest entry": its meaning follows the table
    blocks.append(client.encode([(b"authorization", b"secret", True)]))
    blocks.append(client.encode([(b"authorization", b"secret", True)]))
    client.header_table_size = 4096
    rng = random.Random(7541)
    for n in range(500):
        fields = [(f"x-{rng.randrange(60)}".encode(), bytes(rng.randrange(256) for _ in range(rng.randrange(300))))]
        fields += [(b":path", f"/item/{rng.randrange(1000)}".encode()), (b"x-id", str(n).encode())]
        blocks.append(client.encode([*REQUEST[:1], *fields], huffman=rng.random() < 0.7))
    return blocks


def test_every_block_decodes_as_hpacks_own_decoder_reads_it() -> None:
    theirs, ours = hpack.Decoder(), Decoder(1 << 20)
    for n, block in enumerate(_blocks()):
        assert ours.decode(block) == theirs.decode(block, raw=True), n


def test_garbage_fails_where_hpacks_decoder_fails_and_reads_alike_elsewhere() -> None:
    rng = random.Random(9)
    failed = 0
    for n in range(5_000):
        block = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 24)))
        theirs, ours = hpack.Decoder(), Decoder(1 << 20)
        try:
            expected = theirs.decode(block, raw=True)
        except hpack.HPACKError:
            expected = None
        try:
            got = ours.decode(block)
        except HpackError:
            got = None
        assert got == expected, (n, block)
        failed += got is None
    assert 1_000 < failed < 5_000  # both outcomes were tried


def test_kept_says_whether_the_block_left_the_table_as_it_was() -> None:
    client, ours = hpack.Encoder(), Decoder(65536)
    ours.decode(client.encode(REQUEST))  # :path and :authority enter the table
    assert not ours.kept
    ours.decode(client.encode(REQUEST))  # indexed fields only
    assert ours.kept
    ours.decode(b"\x3f\xe1\x1f")  # a size update (to 4096) alone
    assert not ours.kept


def test_limits_the_header_list_and_the_table_size() -> None:
    with pytest.raises(ListTooLarge):
        Decoder(100).decode(hpack.Encoder().encode([(b"x", b"v" * 100)]))
    with pytest.raises(HpackError):
        Decoder(65536, max_allowed=100).decode(b"\x3f\xe1\x1f")  # a table of 4096 asked
    with pytest.raises(HpackError):
        Decoder(65536).decode(b"\x82\x20")  # a size update after a field


def test_encoded_blocks_read_back_as_the_lists_sent_and_leave_the_peers_table_empty() -> None:
    rng = random.Random(5)
    names = [b":status", b"content-type", b"date", b"server", b"x-own", b"www-authenticate", b"n" * 200]
    values = [b"200", b"404", b"", b"gzip, deflate", b"text/plain", b"v" * 130, bytes(range(32, 127)) * 3]
    peer = hpack.Decoder()
    for n in range(2_000):
        answer = [(rng.choice(names), rng.choice(values)) for _ in range(rng.randrange(1, 8))]
        assert peer.decode(encode_block(answer), raw=True) == answer, n
    assert not peer.header_table.dynamic_entries
    assert encode_block([(b":status", b"200")]) == b"\x88"  # a static table field: its index
