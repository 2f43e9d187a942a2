"""Go's ``http.DetectContentType``: the WHATWG MIME sniffing a Go server applies to a response body
written without a ``Content-Type``, so Hoverfly's simulated and forwarded answers carry the type it gives.

Only the first 512 bytes are looked at. The rules run in Go's order: HTML tags and an XML
declaration after leading white space, then fixed signatures (documents, byte order marks, images,
media, fonts, archives), then text (no control bytes) or ``application/octet-stream``.
"""

from __future__ import annotations

import re
from types import MappingProxyType

SNIFF_LENGTH = 512
TEXT = "text/plain; charset=utf-8"
BINARY = "application/octet-stream"

_HTML_TAGS = (
    b"<!DOCTYPE HTML", b"<HTML", b"<HEAD", b"<SCRIPT", b"<IFRAME", b"<H1", b"<DIV", b"<FONT", b"<TABLE",
    b"<A", b"<STYLE", b"<TITLE", b"<B", b"<BODY", b"<BR", b"<P", b"<!--",
)  # fmt: skip
_WHITE = b"\t\n\x0c\r "
_PREFIXES = (
    (b"%PDF-", "application/pdf"),
    (b"%!PS-Adobe-", "application/postscript"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
    (b"\x00\x00\x02\x00", "image/x-icon"),
    (b"BM", "image/bmp"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"ID3", "audio/mpeg"),
    (b"OggS\x00", "application/ogg"),
    (b"MThd\x00\x00\x00\x06", "audio/midi"),
    (b"\x1a\x45\xdf\xa3", "video/webm"),
    (b"\x00\x01\x00\x00", "font/ttf"),
    (b"OTTO", "font/otf"),
    (b"ttcf", "font/collection"),
    (b"wOFF", "font/woff"),
    (b"wOF2", "font/woff2"),
    (b"\x1f\x8b\x08", "application/x-gzip"),
    (b"PK\x03\x04", "application/zip"),
    (b"Rar!\x1a\x07\x00", "application/x-rar-compressed"),
    (b"Rar!\x1a\x07\x01\x00", "application/x-rar-compressed"),
    (b"\x00asm", "application/wasm"),
)
_PREFIXES_BY_FIRST_BYTE = MappingProxyType(
    {first: tuple(p for p in _PREFIXES if p[0][:1] == first) for first in {p[0][:1] for p in _PREFIXES}}
)
_BYTE_ORDER_MARKS = (
    (b"\xfe\xff", "text/plain; charset=utf-16be"),
    (b"\xff\xfe", "text/plain; charset=utf-16le"),
    (b"\xef\xbb\xbf", TEXT),
)
_RIFF = ((b"WEBPVP", "image/webp"), (b"AVI ", "video/avi"), (b"WAVE", "audio/wave"))
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")


_SIGNATURE_STARTS = frozenset(b"<" + _WHITE + bytes(p[0][0] for p in _PREFIXES) + b"\xfe\xff\xefRF")
"""The first bytes some rule above the text rule looks for (markup after white space, a signature,
a byte order mark, RIFF, FORM); an MP4 box starts with its size, below 0x20 for any box that fits."""


def detect_content_type(body: bytes) -> str:
    """The type Go's server would send for ``body``; ``text/plain; charset=utf-8`` when it is empty."""
    head = body[:SNIFF_LENGTH]
    if head and head[0] >= 0x20 and head[0] not in _SIGNATURE_STARTS:  # no rule but the text one can apply
        return BINARY if _CONTROL.search(head) else TEXT
    return _detected(head)


def _detected(head: bytes) -> str:
    """Go's rules in order, on the first ``SNIFF_LENGTH`` bytes."""
    stripped = head.lstrip(_WHITE)
    markup = _markup(stripped) if stripped[:1] == b"<" else ""
    if markup:
        return markup
    for prefix, mime in _PREFIXES_BY_FIRST_BYTE.get(head[:1], ()):
        if head.startswith(prefix):
            return mime
    if len(head) >= 4:  # a byte order mark counts only with more after it (Go's masks are 4 bytes)
        for mark, mime in _BYTE_ORDER_MARKS:
            if head.startswith(mark):
                return mime
    if head.startswith(b"RIFF"):
        for kind, mime in _RIFF:
            if head[8 : 8 + len(kind)] == kind:
                return mime
    if head.startswith(b"FORM") and head[8:12] == b"AIFF":
        return "audio/aiff"
    if _is_mp4(head):
        return "video/mp4"
    return BINARY if _CONTROL.search(head) else TEXT


def _markup(data: bytes) -> str:
    if data[:5] == b"<?xml":
        return "text/xml; charset=utf-8"
    upper = data[:15].upper()
    for tag in _HTML_TAGS:
        # a tag must be followed by a space or ">" (Go: a tag-terminating byte)
        if upper.startswith(tag) and data[len(tag) : len(tag) + 1] in (b" ", b">"):
            return "text/html; charset=utf-8"
    return ""


def _is_mp4(head: bytes) -> bool:
    """ISO base media: a box whose type is ``ftyp`` and a brand (major or compatible) ``mp4``."""
    if len(head) < 12:
        return False
    size = int.from_bytes(head[:4], "big")
    if size % 4 or len(head) < size or head[4:8] != b"ftyp":
        return False
    brands = (head[i : i + 3] for i in range(8, size, 4) if i != 12)
    return any(brand == b"mp4" for brand in brands)
