"""The ``format`` keywords request validation checks, with the standard library only.

jsonschema's own ``FormatChecker`` knows some formats by itself (``ipv4``, ``email``...) and needs
optional packages for others (``rfc3339-validator`` for ``date-time``, ``rfc3987`` or
``rfc3986-validator`` for ``uri``, ``fqdn`` for ``hostname``), and it registers ``uuid`` and ``date``
only for the recent drafts, not for draft 4, which Swagger 2.0 and OpenAPI 3.0 documents use. So
``format_checker`` makes one checker holding every format below, whatever the dialect:

- JSON Schema's: ``date-time``, ``date``, ``time`` (RFC 3339), ``uuid``, ``email``, ``idn-email``,
  ``hostname``, ``ipv4``, ``ipv6``, ``uri``, ``uri-reference``, ``regex``;
- OpenAPI's: ``int32`` and ``int64`` (the integer's range), ``byte`` (base64).

A value of another JSON type than a format is about passes, as does a format not listed (JSON
Schema says an unknown format is no constraint): ``binary`` and ``password`` say nothing checkable.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable
from datetime import date
from typing import Any, Final

from jsonschema import FormatChecker

_DATE: Final = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$", re.ASCII)
_TIME: Final = re.compile(r"^(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$", re.ASCII)
_UUID: Final = re.compile(r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$", re.ASCII)
_LABEL: Final = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$", re.ASCII)
# RFC 3986: a character of a URI is unreserved, reserved or percent-encoded
_URI_TEXT: Final = r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*"
_URI: Final = re.compile(rf"^[A-Za-z][A-Za-z0-9+.\-]*:{_URI_TEXT}$", re.ASCII)
_URI_REFERENCE: Final = re.compile(rf"^{_URI_TEXT}$", re.ASCII)
_INT_RANGES: Final = (("int32", 32), ("int64", 64))


def format_checker() -> FormatChecker:
    """A new checker of every format this module knows (the validators of one simulation share it)."""
    checker = FormatChecker(formats=())
    text_checks: tuple[tuple[str, Callable[[str], bool]], ...] = (
        ("date-time", _date_time),
        ("date", _date),
        ("time", _time),
        ("uuid", lambda text: _UUID.match(text) is not None),
        ("email", _email),
        ("idn-email", _email),
        ("hostname", _hostname),
        ("ipv4", _ip(ipaddress.IPv4Address)),
        ("ipv6", _ip(ipaddress.IPv6Address)),
        ("uri", lambda text: _URI.match(text) is not None),
        ("uri-reference", lambda text: _URI_REFERENCE.match(text) is not None),
        ("regex", _regex),
        ("byte", _base64),
    )
    for name, check in text_checks:
        checker.checks(name)(_on_text(check))
    for name, bits in _INT_RANGES:
        checker.checks(name)(_in_range(bits))
    return checker


def _on_text(check: Callable[[str], bool]) -> Callable[[Any], bool]:
    return lambda value: not isinstance(value, str) or check(value)


def _in_range(bits: int) -> Callable[[Any], bool]:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def check(value: Any) -> bool:
        return not isinstance(value, int) or isinstance(value, bool) or low <= value <= high

    return check


def _date(text: str) -> bool:
    found = _DATE.match(text)
    if found is None:
        return False
    try:
        date(*(int(part) for part in found.groups()))
    except ValueError:
        return False
    return True


def _time(text: str) -> bool:
    found = _TIME.match(text)
    if found is None:
        return False
    hour, minute, second, offset_hour, offset_minute = (int(part or 0) for part in found.groups())
    # 60 seconds: a leap second
    return hour < 24 and minute < 60 and second <= 60 and offset_hour < 24 and offset_minute < 60


def _date_time(text: str) -> bool:
    day, separator, time = text.partition("T") if "T" in text else text.partition("t")
    return bool(separator) and _date(day) and _time(time)


def _email(text: str) -> bool:
    local, at, domain = text.rpartition("@")
    return bool(at and local and domain) and not any(c.isspace() for c in text)


def _hostname(text: str) -> bool:
    name = text.removesuffix(".")
    return 0 < len(name) <= 253 and all(_LABEL.match(label) for label in name.split("."))


def _ip(kind: Callable[[str], object]) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            kind(text)
        except ValueError:
            return False
        return True

    return check


def _regex(text: str) -> bool:
    try:
        re.compile(text)
    except re.error:
        return False
    return True


def _base64(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True
