"""Go's ``http.DetectContentType`` (engine/gocompat/sniff.py): each expected type below is what Go 1.22's
net/http gives for the body (checked against a Go build, with 2,000 random variations around each rule)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simproxy.engine.gocompat.sniff import SNIFF_LENGTH, _detected, detect_content_type
from simproxy.engine.simulation.codec import sniff_content_type

TEXT = "text/plain; charset=utf-8"
HTML = "text/html; charset=utf-8"

GO_ANSWERS = [
    (b"", TEXT),
    (b"hello", TEXT),
    (b'{"id": 1}', TEXT),
    (b"caf\xe9", TEXT),  # Go does not check UTF-8
    (b"a\x00b", "application/octet-stream"),
    (b"a\x1bb", TEXT),  # ESC is not a binary byte for Go
    (b"a\x0cb", TEXT),
    (b"  <html>", HTML),
    (b"\t<!DOCTYPE HTML>", HTML),
    (b"<!-- c -->", HTML),
    (b"<a href=x>", HTML),
    (b"<p>", HTML),
    (b"<p", TEXT),  # a tag must end with a space or ">"
    (b"<bx>", TEXT),
    (b"<svg>", TEXT),
    (b"\n\t<?xml v", "text/xml; charset=utf-8"),
    (b"%PDF-1.4", "application/pdf"),
    (b"%!PS-Adobe-3", "application/postscript"),
    (b"\xfe\xff\x00a", "text/plain; charset=utf-16be"),
    (b"\xff\xfeab", "text/plain; charset=utf-16le"),
    (b"\xff\xfe", TEXT),  # a byte order mark needs four bytes
    (b"\xef\xbb\xbfhi", TEXT),
    (b"\x00\x00\x01\x00", "image/x-icon"),
    (b"BMxx", "image/bmp"),
    (b"GIF89a", "image/gif"),
    (b"\x89PNG\r\n\x1a\nxx", "image/png"),
    (b"\xff\xd8\xff\xe0", "image/jpeg"),
    (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
    (b"RIFF\x00\x00\x00\x00WAVEfmt", "audio/wave"),
    (b"RIFF\x00\x00\x00\x00AVI LIST", "video/avi"),
    (b"FORM\x00\x00\x00\x00AIFF", "audio/aiff"),
    (b"ID3x", "audio/mpeg"),
    (b"OggS\x00", "application/ogg"),
    (b"MThd\x00\x00\x00\x06", "audio/midi"),
    (b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp41isom", "video/mp4"),
    (b"\x1a\x45\xdf\xa3", "video/webm"),
    (b"\x00\x01\x00\x00", "font/ttf"),
    (b"wOFF", "font/woff"),
    (b"\x1f\x8b\x08\x00", "application/x-gzip"),
    (b"PK\x03\x04", "application/zip"),
    (b"Rar!\x1a\x07\x00", "application/x-rar-compressed"),
    (b"\x00asm", "application/wasm"),
]


@pytest.mark.parametrize(("body", "expected"), GO_ANSWERS)
def test_detect_content_type_answers_as_go_does(body: bytes, expected: str) -> None:
    assert detect_content_type(body) == expected


def test_only_the_first_512_bytes_are_looked_at() -> None:
    assert detect_content_type(b"x" * 512 + b"\x00") == TEXT
    assert detect_content_type(b"x" * 511 + b"\x00") == "application/octet-stream"


def test_the_export_rule_counts_text_that_is_not_utf8_as_binary() -> None:
    assert sniff_content_type(b"caf\xe9 au lait") == "application/octet-stream"
    assert sniff_content_type("café".encode()) == TEXT
    assert sniff_content_type(b"x" * 510 + "é".encode()[:1]) == TEXT  # a character cut at byte 512
    assert sniff_content_type(b"<html>") == HTML


_STARTS = st.sampled_from([b"<", b" <", b"RIFF", b"FORM", b"%PDF-", b"\xef\xbb\xbf", b"{", b"x"])


@settings(max_examples=2000, deadline=None)
@example(b"RIFF\x00\x00\x00\x00WEBPVP8 ")
@example(b"FORM\x00\x00\x00\x00AIFF")
@example(b" <html>")
@example(b"%PDF-1.4")
@example(b"\xef\xbb\xbfabcd")
@example(b"\xfe\xffab")
@example(b"ID3\x03")
@example(b"OggS\x00")
@example(b"wOFF")
@example(b"ttcf")
@example(b"MThd\x00\x00\x00\x06")
@given(
    st.one_of(
        st.binary(max_size=600),
        st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.tuples(_STARTS, st.binary(max_size=20)).map(lambda parts: parts[0] + parts[1]),
    )
)
def test_the_text_shortcut_gives_what_every_rule_in_order_gives(body: bytes) -> None:
    assert detect_content_type(body) == _detected(body[:SNIFF_LENGTH])
