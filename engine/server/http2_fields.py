"""The checks RFC 9113 asks of a received header list (§8.2, §8.3), as h2 runs them, in one pass:
``request_fields`` for a request's, ``trailer_fields`` for its trailers'. Each gives the list as
it is handed over (``Cookie`` pieces joined with ``; `` and put last, RFC 9113 §8.2.3), or raises
``Malformed`` naming what is wrong; ``FrameServer`` (engine/server/http2_frames.py) ends the
connection then (``PROTOCOL_ERROR``).

- a name: lower-case, no controls, spaces or bytes beyond ASCII, no colon but a pseudo-header's
  first; not empty. A value: no NUL, CR or LF, no space or tab at either end;
- no connection-specific field (``Connection``, ``Keep-Alive``, ``Proxy-Connection``,
  ``Transfer-Encoding``, ``Upgrade``), ``TE`` only as ``trailers``;
- pseudo-headers first, each once, only the request's (``:method``, ``:scheme``, ``:authority``,
  ``:path``, ``:protocol`` with a CONNECT); ``:method`` always, ``:scheme`` and ``:path`` but for a
  plain CONNECT (which must not have them); ``:path`` not empty; ``:authority`` or ``Host``, the
  same if both, ``Host`` once; none in trailers.

``tests/engine/server/test_http2_fields.py`` holds these to h2's own checks on generated lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from simproxy.engine.server.http2_wire import CONNECTION_SPECIFIC, Headers

_NAME = re.compile(rb":?[\x21-\x39\x3b-\x40\x5b-\x7e]+")
"""A field name RFC 9113 §8.2.1 allows: visible ASCII but upper-case letters, a colon only first."""
_BAD_VALUE = re.compile(rb"[\x00\n\r]")
_PSEUDO = frozenset({b":method", b":scheme", b":authority", b":path", b":protocol"})
_ENDS = (0x20, 0x09)


class Malformed(ValueError):
    """A header list RFC 9113 calls malformed."""


def _value(name: bytes, value: bytes) -> None:
    if value and (_BAD_VALUE.search(value) is not None or value[0] in _ENDS or value[-1] in _ENDS):
        raise Malformed(f"an illegal character or surrounding whitespace in the value of {name!r}")


def _regular(name: bytes, value: bytes) -> None:
    """The checks of a field that is no pseudo-header nor a cookie piece."""
    _value(name, value)
    if name in CONNECTION_SPECIFIC:
        raise Malformed(f"connection-specific field {name!r}")
    if name == b"te" and value.lower() != b"trailers":
        raise Malformed(f"TE of {value!r}")


def _name(name: bytes) -> None:
    if _NAME.fullmatch(name) is None:
        raise Malformed(f"an illegal field name {name!r}")


def _cookies(fields: Headers, cookies: list[bytes]) -> None:
    joined = b"; ".join(cookies)
    _value(b"cookie", joined)
    fields.append((b"cookie", joined))


def request_fields(headers: Iterable[tuple[bytes, bytes]]) -> Headers:
    """A request's header list, checked; the list handed over."""
    fields: Headers = []
    cookies: list[bytes] = []
    pseudo: dict[bytes, bytes] = {}
    regular = False
    host: bytes | None = None
    for name, value in headers:
        _name(name)
        if name[0] == 0x3A:
            if regular:
                raise Malformed(f"pseudo-header {name!r} after a regular field")
            if name in pseudo:
                raise Malformed(f"pseudo-header {name!r} twice")
            if name not in _PSEUDO:
                raise Malformed(f"pseudo-header {name!r} in a request")
            _value(name, value)
            pseudo[name] = value
        elif name == b"cookie":
            cookies.append(value)
            continue
        else:
            regular = True
            _regular(name, value)
            if name == b"host":
                if host is not None:
                    raise Malformed("Host twice")
                host = value
        fields.append((name, value))
    method = pseudo.get(b":method")
    if method is None:
        raise Malformed("no :method")
    if method == b"CONNECT" and b":protocol" not in pseudo:
        if b":scheme" in pseudo or b":path" in pseudo:
            raise Malformed("a CONNECT with :scheme or :path")
    else:
        if b":scheme" not in pseudo or b":path" not in pseudo:
            raise Malformed("no :scheme or no :path")
        if b":protocol" in pseudo and method != b"CONNECT":
            raise Malformed(":protocol on other than a CONNECT")
    if pseudo.get(b":path", b"/") == b"":
        raise Malformed("an empty :path")
    authority = pseudo.get(b":authority")
    if authority is None and host is None:
        raise Malformed("neither :authority nor Host")
    if authority is not None and host is not None and authority != host:
        raise Malformed(":authority and Host differ")
    if cookies:
        _cookies(fields, cookies)
    return fields


def trailer_fields(headers: Iterable[tuple[bytes, bytes]]) -> Headers:
    """A request's trailer list, checked; the list handed over."""
    fields: Headers = []
    cookies: list[bytes] = []
    for name, value in headers:
        _name(name)
        if name[0] == 0x3A:
            raise Malformed(f"pseudo-header {name!r} in trailers")
        if name == b"cookie":
            cookies.append(value)
            continue
        _regular(name, value)
        fields.append((name, value))
    if cookies:
        _cookies(fields, cookies)
    return fields
