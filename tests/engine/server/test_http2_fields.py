"""simproxy's checks of received header lists against h2's own (``normalize_inbound_headers`` then
``validate_headers``, as h2 runs them on a server): on generated request and trailer lists, near
valid ones with one or two things wrong, both accept the same lists and hand over the same fields."""

from __future__ import annotations

import random

import h2.exceptions
import h2.utilities
import pytest

from simproxy.engine.server.http2_fields import Malformed, request_fields, trailer_fields

_FLAGS = h2.utilities.HeaderValidationFlags(
    is_client=False, is_trailer=False, is_response_header=False, is_push_promise=False
)
_TRAILERS = _FLAGS._replace(is_trailer=True)

NAMES = [
    b":method", b":path", b":scheme", b":authority", b":protocol", b":status", b":custom", b":",
    b"host", b"cookie", b"te", b"connection", b"upgrade", b"keep-alive", b"transfer-encoding",
    b"x-a", b"content-type", b"accept", b"X-Upper", b"x:colon", b"", b"x y", b"x\x7f", b"x\xc3\xa9",
]  # fmt: skip
VALUES = [
    b"GET", b"CONNECT", b"POST", b"/", b"", b"/p?q=1", b"http", b"h", b"h:1", b"trailers", b"gzip",
    b" lead", b"trail\t", b"a\r\nb", b"nul\x00", b"a=1", b"b=2 ", b"websocket", b"\xc3\xa9t\xc3\xa9",
]  # fmt: skip
VALID = [(b":method", b"GET"), (b":path", b"/"), (b":scheme", b"http"), (b":authority", b"h")]


def _h2(headers: list[tuple[bytes, bytes]], trailers: bool) -> list[tuple[bytes, bytes]] | None:
    flags = _TRAILERS if trailers else _FLAGS
    try:
        return [
            tuple(h)
            for h in h2.utilities.validate_headers(h2.utilities.normalize_inbound_headers(headers, flags), flags)
        ]  # type: ignore[misc]
    except h2.exceptions.ProtocolError:
        return None


def _ours(headers: list[tuple[bytes, bytes]], trailers: bool) -> list[tuple[bytes, bytes]] | None:
    try:
        return (trailer_fields if trailers else request_fields)(headers)
    except Malformed:
        return None


def _variant(rng: random.Random, trailers: bool) -> list[tuple[bytes, bytes]]:
    """A valid list (or trailers) with up to three changes: a field added, dropped, moved or altered."""
    fields = [] if trailers else list(VALID)
    if not trailers and rng.random() < 0.2:
        fields = [(b":method", b"CONNECT"), (b":authority", b"h:443")]
    fields += [(b"x-a", b"1"), (b"cookie", b"a=1"), (b"accept", b"*/*")][: rng.randrange(4)]
    for _ in range(rng.randrange(4)):
        change = rng.randrange(4)
        if change == 0 or not fields:
            fields.insert(rng.randrange(len(fields) + 1), (rng.choice(NAMES), rng.choice(VALUES)))
        elif change == 1:
            del fields[rng.randrange(len(fields))]
        elif change == 2:
            fields.insert(rng.randrange(len(fields) + 1), fields.pop(rng.randrange(len(fields))))
        else:
            at = rng.randrange(len(fields))
            fields[at] = (fields[at][0], rng.choice(VALUES))
    return fields


@pytest.mark.parametrize("trailers", [False, True], ids=["requests", "trailers"])
def test_the_checks_agree_with_h2s_on_generated_lists(trailers: bool) -> None:
    rng = random.Random(9113)
    accepted = rejected = 0
    for n in range(20_000):
        fields = _variant(rng, trailers)
        ours, theirs = _ours(fields, trailers), _h2(fields, trailers)
        assert ours == theirs, (n, fields)
        accepted += ours is not None
        rejected += ours is None
    assert accepted > 2_000 and rejected > 2_000  # both kinds were tried, many times


def test_cookie_pieces_are_joined_and_put_last() -> None:
    fields = [*VALID[:2], (b"cookie", b"a=1"), *VALID[2:], (b"x-a", b"1"), (b"cookie", b"b=2")]
    assert request_fields(fields) == [*VALID, (b"x-a", b"1"), (b"cookie", b"a=1; b=2")]
