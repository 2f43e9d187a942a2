"""HPACK with a memory (engine/server/http2_hpack.py): whatever a client's encoder does to the
dynamic table, the remembering decoder reads every block as hpack's own decoder does, and the
remembering encoder writes blocks a peer's plain decoder reads back as the header lists sent."""

from __future__ import annotations

import hpack

from simproxy.engine.server.http2_hpack import MemoDecoder, MemoEncoder

REQUEST = [(b":method", b"GET"), (b":path", b"/hello"), (b":scheme", b"http"), (b":authority", b"a:1")]


def _blocks() -> list[bytes]:
    """Blocks a client sends: repeats (indexed fields only), new entries, a table so small that an
    equal entry added again evicts the old one (the same bytes then mean something else), a size
    update, and fields never indexed."""
    client = hpack.Encoder()
    blocks: list[bytes] = []
    for n in range(3):
        blocks += [client.encode(REQUEST), client.encode(REQUEST)]
        blocks.append(client.encode([*REQUEST, (b"x-n", str(n).encode())]))
        blocks.append(client.encode([*REQUEST, (b"x-n", str(n).encode())]))
    client.header_table_size = 60  # room for one entry
    for value in (b"a", b"b", b"a", b"a", b"b"):
        blocks.append(client.encode([(b"x-v", value)]))
        blocks.append(client.encode([(b"x-v", value)]))
        blocks.append(bytes([0x80 | 62]))  # "the newest entry": its meaning follows the table
    blocks.append(client.encode([(b"authorization", b"secret", True)]))
    blocks.append(client.encode([(b"authorization", b"secret", True)]))
    return blocks


def test_every_block_decodes_as_hpacks_own_decoder_reads_it() -> None:
    plain, memo = hpack.Decoder(), MemoDecoder(65536)
    for block in _blocks():
        expected = plain.decode(block, raw=True)
        got = memo.decode(block, raw=True)
        assert got == expected
        assert [type(h) for h in got] == [type(h) for h in expected]  # never-indexed stays never-indexed


def test_a_repeated_block_is_looked_up_and_a_table_change_forgets_it() -> None:
    client, memo = hpack.Encoder(), MemoDecoder(65536)
    memo.decode(client.encode(REQUEST), raw=True)  # adds :authority to the table
    again = client.encode(REQUEST)
    first = memo.decode(again, raw=True)
    assert memo._memo  # the all-indexed block is remembered
    assert memo.decode(again, raw=True) == first
    memo.decode(client.encode([(b"x-new", b"1")]), raw=True)
    assert not memo._memo


def test_encoded_blocks_read_back_as_the_lists_sent_while_the_date_changes() -> None:
    memo, peer = MemoEncoder(), hpack.Decoder()
    for second in range(4):
        answer = [(b":status", b"200"), (b"content-type", b"application/json"), (b"date", f"{second}".encode())]
        for _ in range(3):
            assert peer.decode(memo.encode(answer), raw=True) == answer
    memo.header_table_size = 0  # the peer's SETTINGS_HEADER_TABLE_SIZE: a size update goes first
    answer = [(b":status", b"200"), (b"date", b"4")]
    for _ in range(2):
        assert peer.decode(memo.encode(answer), raw=True) == answer
    assert peer.header_table.maxsize == 0
