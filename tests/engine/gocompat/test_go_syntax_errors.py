"""Go's words for text that is not JSON, as the Go that built Hoverfly v1.12.10 (go1.27.3, whose
``encoding/json`` runs on ``jsontext``) writes them. Every text below was printed by that Go: the
error of ``json.Unmarshal`` and of ``json.NewDecoder(...).Decode`` into ``interface{}``."""

from __future__ import annotations

import pytest

from simproxy.engine.gocompat.gojson import InvalidJSON, decoder_value_end, unmarshal_error

# (input, json.Unmarshal's error, json.Decoder.Decode's error); "" where Go reports none
CASES: list[tuple[bytes, str, str]] = [
    (b"", "unexpected end of JSON input", "EOF"),
    (b" \n", "unexpected end of JSON input", "EOF"),
    (
        b"this is not JSON\n",
        "invalid character 'h' in literal true (expecting 'r')",
        "invalid character 'h' in literal true (expecting 'r')",
    ),
    (
        b"x",
        "invalid character 'x' looking for beginning of value",
        "invalid character 'x' looking for beginning of value",
    ),
    (
        b"th",
        "invalid character 'h' in literal true (expecting 'r')",
        "invalid character 'h' in literal true (expecting 'r')",
    ),
    (b"tru", "unexpected end of JSON input", "unexpected EOF"),
    (
        b"fx",
        "invalid character 'x' in literal false (expecting 'a')",
        "invalid character 'x' in literal false (expecting 'a')",
    ),
    (b"nul", "unexpected end of JSON input", "unexpected EOF"),
    (
        b"nulx",
        "invalid character 'x' in literal null (expecting 'l')",
        "invalid character 'x' in literal null (expecting 'l')",
    ),
    (
        b"tr\xc3\xa9",
        "invalid character 'é' in literal true (expecting 'u')",
        "invalid character 'é' in literal true (expecting 'u')",
    ),
    (b"-x", "invalid character 'x' in numeric literal", "invalid character 'x' in numeric literal"),
    (b"-", "unexpected end of JSON input", "unexpected EOF"),
    (b"1.x", "invalid character 'x' in numeric literal", "invalid character 'x' in numeric literal"),
    (b"1.", "unexpected end of JSON input", "unexpected EOF"),
    (b"1ex", "invalid character 'x' in numeric literal", "invalid character 'x' in numeric literal"),
    (b"1e+x", "invalid character 'x' in numeric literal", "invalid character 'x' in numeric literal"),
    (b"1e", "unexpected end of JSON input", "unexpected EOF"),
    (b"01", "invalid character '1' after top-level value", ""),
    (b"1x", "invalid character 'x' after top-level value", ""),
    (b"truex", "invalid character 'x' after top-level value", ""),
    (
        b"NaN",
        "invalid character 'N' looking for beginning of value",
        "invalid character 'N' looking for beginning of value",
    ),
    (b'"abc', "unexpected end of JSON input", "unexpected EOF"),
    (b'"a\nb"', "invalid character '\\n' in string", "invalid character '\\n' in string"),
    (b'"\t"', "invalid character '\\t' in string", "invalid character '\\t' in string"),
    (b'"\x00"', "invalid character '\\x00' in string", "invalid character '\\x00' in string"),
    (b'"\\x"', "invalid escape sequence `\\x` in string", "invalid escape sequence `\\x` in string"),
    (b'"\\ "', 'invalid escape sequence "\\\\ " in string', 'invalid escape sequence "\\\\ " in string'),
    (b'"\\`"', 'invalid escape sequence "\\\\`" in string', 'invalid escape sequence "\\\\`" in string'),
    (b'"\\\xc3\xa9"', 'invalid escape sequence "\\\\\\xc3" in string', 'invalid escape sequence "\\\\\\xc3" in string'),
    (b'"\\\xff"', 'invalid escape sequence "\\\\\\xff" in string', 'invalid escape sequence "\\\\\\xff" in string'),
    (b'"\\u12g4"', "invalid escape sequence `\\u12g4` in string", "invalid escape sequence `\\u12g4` in string"),
    (b'"\\u12"}', 'invalid escape sequence `\\u12"}` in string', 'invalid escape sequence `\\u12"}` in string'),
    (b'"\\u12"', 'invalid escape sequence `\\u12"` in string', 'invalid escape sequence `\\u12"` in string'),
    (b'"\\u12', "unexpected end of JSON input", "unexpected EOF"),
    (b'"\\u 1"', 'invalid escape sequence "\\\\u 1\\"" in string', 'invalid escape sequence "\\\\u 1\\"" in string'),
    (b'"\\ud800"', "", ""),
    (b'"\xff"', "", ""),
    (b'"\xc3', "unexpected end of JSON input", "unexpected EOF"),
    (b"{", "unexpected end of JSON input", "unexpected EOF"),
    (
        b"{x",
        "invalid character 'x' looking for beginning of object key string",
        "invalid character 'x' looking for beginning of object key string",
    ),
    (
        b"{'a': 1}",
        "invalid character '\\'' looking for beginning of object key string",
        "invalid character '\\'' looking for beginning of object key string",
    ),
    (b'{"a"', "unexpected end of JSON input", "unexpected EOF"),
    (b'{"a" x', "invalid character 'x' after object key", "invalid character 'x' after object key"),
    (b'{"a":', "unexpected end of JSON input", "unexpected EOF"),
    (b'{"a":1', "unexpected end of JSON input", "unexpected EOF"),
    (
        b'{"a":1 x',
        "invalid character 'x' after object key:value pair",
        "invalid character 'x' after object key:value pair",
    ),
    (
        b'{"a":1,}',
        "invalid character '}' looking for beginning of object key string",
        "invalid character '}' looking for beginning of object key string",
    ),
    (b'{"a"}', "invalid character '}' after object key", "invalid character '}' after object key"),
    (b"[", "unexpected end of JSON input", "unexpected EOF"),
    (b"[1 x", "invalid character 'x' after array element", "invalid character 'x' after array element"),
    (
        b"[1,]",
        "invalid character ']' looking for beginning of value",
        "invalid character ']' looking for beginning of value",
    ),
    (b"[1}", "invalid character '}' after array element", "invalid character '}' after array element"),
    (
        b'{"a":]',
        "invalid character ']' looking for beginning of value",
        "invalid character ']' looking for beginning of value",
    ),
    (
        b"]",
        "invalid character ']' looking for beginning of value",
        "invalid character ']' looking for beginning of value",
    ),
    (
        b",",
        "invalid character ',' looking for beginning of value",
        "invalid character ',' looking for beginning of value",
    ),
    (b"{}x", "invalid character 'x' after top-level value", ""),
    (b"{} x", "invalid character 'x' after top-level value", ""),
    (b"[] \t\r\n", "", ""),
    (
        b"\xc3\xa9",
        "invalid character 'é' looking for beginning of value",
        "invalid character 'é' looking for beginning of value",
    ),
    (b"{}\xc3\xa9", "invalid character 'é' after top-level value", ""),
    (
        b"\xe2\x80\xa8",
        "invalid character '\\u2028' looking for beginning of value",
        "invalid character '\\u2028' looking for beginning of value",
    ),
    (
        b"\xf3\xa0\x80\x81",
        "invalid character '\\U000e0001' looking for beginning of value",
        "invalid character '\\U000e0001' looking for beginning of value",
    ),
    (
        b"\xff",
        "invalid character '\\xff' looking for beginning of value",
        "invalid character '\\xff' looking for beginning of value",
    ),
    (
        b"'",
        "invalid character '\\'' looking for beginning of value",
        "invalid character '\\'' looking for beginning of value",
    ),
    (b'"', "unexpected end of JSON input", "unexpected EOF"),
    (
        b"\\",
        "invalid character '\\\\' looking for beginning of value",
        "invalid character '\\\\' looking for beginning of value",
    ),
    (
        b"\x00",
        "invalid character '\\x00' looking for beginning of value",
        "invalid character '\\x00' looking for beginning of value",
    ),
    (
        b"\x7f",
        "invalid character '\\x7f' looking for beginning of value",
        "invalid character '\\x7f' looking for beginning of value",
    ),
    (
        b"\xc2\x85",
        "invalid character '\\u0085' looking for beginning of value",
        "invalid character '\\u0085' looking for beginning of value",
    ),
    (
        b"\xc2\xa0",
        "invalid character '\\u00a0' looking for beginning of value",
        "invalid character '\\u00a0' looking for beginning of value",
    ),
    (
        b"\xf0\x9f\x98\x80",
        "invalid character '😀' looking for beginning of value",
        "invalid character '😀' looking for beginning of value",
    ),
    (b"[" * 10001, "exceeded max depth", "exceeded max depth"),
    (b"[" * 10000 + b"]" * 10000, "", ""),
    (
        b'{"a":[1,{"b":tru}]}',
        "invalid character '}' in literal true (expecting 'e')",
        "invalid character '}' in literal true (expecting 'e')",
    ),
]


@pytest.mark.parametrize(("raw", "unmarshal", "decode"), CASES, ids=[repr(c[0])[:40] for c in CASES])
def test_go_words_for_text_that_is_not_json(raw: bytes, unmarshal: str, decode: str) -> None:
    assert unmarshal_error(raw) == (unmarshal or None)
    if decode:
        with pytest.raises(InvalidJSON) as caught:
            decoder_value_end(raw)
        assert str(caught.value) == decode
    else:
        assert decoder_value_end(raw) > 0


@pytest.mark.parametrize(
    ("raw", "end"),
    [(b"01", 1), (b"1x", 1), (b"truex", 4), (b'{"a":1} {', 7), (b' "a"b', 4), (b"[]", 2), (b"-1.5e3 ", 6)],
)
def test_the_decoder_reads_only_the_first_value(raw: bytes, end: int) -> None:
    assert decoder_value_end(raw) == end


def test_text_is_read_as_its_utf8_bytes() -> None:
    assert unmarshal_error("\u00e9") == "invalid character '\u00e9' looking for beginning of value"
    assert unmarshal_error('{"a": "\u00e9"}') is None
