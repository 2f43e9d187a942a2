"""``RequestMemo``: the request built from bytes that come again is found by those bytes; bytes that
never repeat leave no built request behind."""

from __future__ import annotations

from simproxy.engine.wire.parse import MEMO_BYTES, MEMO_SIZE, Arrival, RequestMemo, RequestMemos, read_request
from simproxy.engine.wire.request import RequestDetails

ARRIVAL = Arrival()


def _raw(path: str, body: bytes = b"") -> bytes:
    head = f"POST http://api.test{path} HTTP/1.1\r\nHost: api.test\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def _served(memo: RequestMemo, raw: bytes) -> tuple[bool, RequestDetails]:
    """What the proxy does with a request's bytes: the known request, or one built (and offered)."""
    known = memo.get(raw)
    if known is not None:
        assert known[0] == raw
        return True, known[1]
    req = read_request(raw, ARRIVAL)
    memo.keep(raw, req)
    return False, req


def test_bytes_are_known_from_their_third_coming_and_give_the_request_they_make() -> None:
    memo = RequestMemos().of(ARRIVAL.encode())
    raw = _raw("/orders?region=eu", b'{"id": 42}')
    found = [_served(memo, bytes(raw)) for _ in range(4)]  # a new bytes object each time, as a read is
    assert [known for known, _ in found] == [False, False, True, True]
    assert all(req == read_request(raw, ARRIVAL) for _, req in found)
    assert _served(memo, _raw("/orders?region=us", b'{"id": 42}'))[0] is False


def test_bytes_that_never_repeat_keep_no_request() -> None:
    memo = RequestMemos().of(ARRIVAL.encode())
    for n in range(3 * MEMO_SIZE):
        assert _served(memo, _raw(f"/item/{n}"))[0] is False
    assert memo._built == {}


def test_the_memo_is_bounded_and_long_requests_are_always_built() -> None:
    memo = RequestMemos().of(ARRIVAL.encode())
    for n in range(MEMO_SIZE + 10):
        for _ in range(2):
            _served(memo, _raw(f"/item/{n}"))
        assert len(memo._built) <= MEMO_SIZE
    assert _served(memo, _raw(f"/item/{MEMO_SIZE + 9}"))[0] is True
    long = _raw("/upload", b"x" * MEMO_BYTES)
    assert [_served(memo, long)[0] for _ in range(3)] == [False, False, False]


def test_each_way_of_arriving_has_its_own_memo() -> None:
    memos = RequestMemos()
    tunnel = Arrival(tunnel_authority="one.test:443", tunnel_scheme="https").encode()
    assert memos.of(ARRIVAL.encode()) is memos.of(ARRIVAL.encode())
    assert memos.of(tunnel) is not memos.of(ARRIVAL.encode())
