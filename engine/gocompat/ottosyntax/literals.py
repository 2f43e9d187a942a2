"""What otto's literal decoder (parseStringLiteral) says about string and identifier escapes.

It works on UTF-8 bytes, so its complaints quote bytes the way Go's ``%q`` does.
"""

from __future__ import annotations

_HEX = frozenset("0123456789abcdefABCDEF")


def is_bad_byte(char: str) -> bool:
    """A byte that was not UTF-8, carried as a ``surrogateescape`` character."""
    return "\udc80" <= char <= "\udcff"


def decode_identifier(literal: str) -> str | None:
    """The identifier with its ``\\uXXXX`` escapes decoded; None where otto's decoder rejects a digit."""
    parts = literal.split("\\u")
    out = [parts[0]]
    for part in parts[1:]:
        digits = part[:4]
        if len(digits) < 4 or any(d not in _HEX for d in digits):
            return None
        out.append(chr(int(digits, 16)))
        out.append(part[4:])
    return "".join(out)


def go_quote(data: bytes) -> str:
    """Go's ``%q`` of a byte string (strconv.Quote)."""
    out = ['"']
    text = data.decode("utf-8", "surrogateescape")
    for char in text:
        code = ord(char)
        if is_bad_byte(char):
            out.append(f"\\x{code & 0xFF:02x}")
        elif char in '"\\':
            out.append("\\" + char)
        elif char.isprintable() or char == " ":
            out.append(char)
        elif char in "\a\b\f\n\r\t\v":
            out.append("\\" + "abfnrtv"["\a\b\f\n\r\t\v".index(char)])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def string_literal_error(body: str) -> str | None:
    """otto's complaint about a string literal's ``\\x``/``\\u`` escapes (its body, without quotes)."""
    if "\\" not in body:
        return None
    data = body.encode("utf-8", "surrogateescape")
    at = data.find(b"\\")
    while 0 <= at < len(data) - 1:
        kind = data[at + 1]
        if kind in b"xu":
            size = 2 if kind == ord("x") else 4
            rest = data[at + 2 :]
            if len(rest) < size:
                return f"invalid escape: \\{chr(kind)}: len({go_quote(rest)}) != {size}"
            if any(chr(b) not in _HEX for b in rest[:size]):
                return f"invalid escape: \\{chr(kind)}: {go_quote(rest[:size])}"
        at = data.find(b"\\", at + 2)
    return None
