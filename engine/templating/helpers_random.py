"""Random values (the injected ``random.Random``) and ``faker`` (gofakeit method names on Faker).

Where Hoverfly's Go code panics (``randomIntegerRange`` with max <= min, a negative
``randomStringLength``, ``faker`` with a method that takes arguments) the render fails instead.
"""

from __future__ import annotations

import ipaddress
import uuid

from simproxy.engine.templating.evaluate import Call
from simproxy.engine.templating.faker_map import NEEDS_ARGUMENTS, TABLE, go_print
from simproxy.engine.templating.values import RenderFailure, go_fixed

_LETTERS = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_KEPT = 256 // len(_LETTERS) * len(_LETTERS)
"""Random bytes below this stand for a letter each (``byte % 52``), every letter as often; the
others are dropped."""
_TO_LETTER = bytes(_LETTERS[b % len(_LETTERS)] if b < _KEPT else 0 for b in range(256))
_DROPPED = bytes(range(_KEPT, 256))


def _letters(call: Call, count: int) -> str:
    """``count`` letters drawn uniformly: random bytes mapped in C, not a Python call per letter."""
    rng = call.rt.services.rng
    out = b""
    while len(out) < count:
        out += rng.randbytes(count - len(out) + 8).translate(_TO_LETTER, _DROPPED)
    return out[:count].decode("ascii")


def random_string(call: Call) -> str:
    return _letters(call, call.rt.services.rng.randrange(3, 16))


def random_string_length(call: Call, count: int) -> str:
    if count < 0:
        raise RenderFailure(f"randomStringLength {count} (Hoverfly crashes on a negative length)")
    return _letters(call, count)


def random_boolean(call: Call) -> str:
    return "true" if call.rt.services.rng.getrandbits(1) else "false"


def random_integer(call: Call) -> str:
    return str(call.rt.services.rng.getrandbits(63))


def random_integer_range(call: Call, low: int, high: int) -> str:
    if high <= low:
        raise RenderFailure(f"randomIntegerRange {low} {high}: max must exceed min (Hoverfly crashes)")
    return str(call.rt.services.rng.randrange(low, high))


def random_float(call: Call) -> str:
    return go_fixed(call.rt.services.rng.random(), 6)


def random_float_range(call: Call, low: float, high: float) -> str:
    return go_fixed(low + call.rt.services.rng.random() * (high - low), 6)


def random_email(call: Call) -> str:
    fake = call.rt.services.faker()
    return f"{fake.user_name()}@{fake.domain_name()}"


def random_ipv4(call: Call) -> str:
    return str(ipaddress.IPv4Address(call.rt.services.rng.getrandbits(32)))


def random_ipv6(call: Call) -> str:
    address = ipaddress.IPv6Address(call.rt.services.rng.getrandbits(128))
    mapped = address.ipv4_mapped
    return str(mapped) if mapped is not None else address.compressed  # Go prints a mapped address as IPv4


def random_uuid(call: Call) -> str:
    return str(uuid.UUID(int=call.rt.services.rng.getrandbits(128), version=4))


def faker(call: Call, method: str) -> list[str]:
    """gofakeit's ``[]reflect.Value``: one printed value, or none for an unknown name."""
    if method in NEEDS_ARGUMENTS:
        raise RenderFailure(f"faker {method!r} needs arguments (Hoverfly crashes)")
    producer = TABLE.get(method)
    if producer is None:
        return []
    return [go_print(producer(call.rt.services.faker()))]
