"""The syntax error otto (the JavaScript engine Hoverfly runs PAC files in) reports for a script.

Hoverfly loads a PAC file with gopac, which calls otto's ``vm.Run``; when the script does not parse,
Hoverfly's 502 body carries otto's error text, for example
``(anonymous): Line 2:5 Unexpected token & (and 1 more errors)``. simproxy runs PAC files in
another engine, so this package reproduces that text: ``syntax_error(source)`` is what otto v0.5.1
(as vendored by Hoverfly v1.12.10) returns from parsing ``source``, or None when otto parses it.

The text is otto's first error, ``(anonymous): Line L:C message``, then `` (and N more errors)`` when
there were others: otto keeps every error its recovery runs into, unsorted and not deduplicated. L:C
is otto's position: ``\\r``, ``\\n`` (``\\r\\n`` once), U+2028 and U+2029 end lines, and the column
counts UTF-8 bytes from 1. Characters U+DC80..U+DCFF stand for bytes that were not UTF-8
(``surrogateescape``); other lone surrogates are read as U+FFFD.

Limits, where the text is this package's own rather than otto's:

* Nesting is followed without Python recursion, but only so far: past ``MAX_PENDING_STEPS`` (20,000)
  unfinished parse steps -- several thousand levels of nesting, a few steps per level -- the answer
  is ``(anonymous): Line L:C Nesting too deep to check`` at the token where the limit was passed (otto,
  on Go's growable stack, goes on: for 100,000 ``(`` it reports 100,001 errors).
* A last line ``//# sourceMappingURL=data:application/json...,<base64>`` makes otto read that source
  map before parsing, and fail if it is unusable. Only a ``version`` other than 3 (or none) and
  empty data get otto's own texts; any other unusable map (not JSON, wrong types) gets
  ``sourcemap: invalid inline source map``, as Go's JSON error texts are not reproduced here.
* Go's limits on a regular expression's size and nesting are not modelled.

Depends on nothing outside this package.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from simproxy.engine.gocompat.ottosyntax.expressions import MAX_PENDING_STEPS
from simproxy.engine.gocompat.ottosyntax.lexer import TooDeep
from simproxy.engine.gocompat.ottosyntax.statements import Parser

__all__ = ("MAX_PENDING_STEPS", "syntax_error")

_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")
_LINE_ENDS = ("\n", "\r", "\u2028", "\u2029")
_SOURCE_MAP = "//# sourceMappingURL=data:application/json"
_BAD_SOURCE_MAP = "sourcemap: invalid inline source map"


def syntax_error(source: str) -> str | None:
    """otto's parse error text for ``source``, or None if otto parses it."""
    source = _LONE_SURROGATE.sub("\ufffd", source)
    source_map = _source_map_error(source)
    if source_map is not None:
        return source_map
    parser = Parser(source)
    try:
        parser.parse_program()
    except TooDeep as exc:
        return _format(source, exc.pos, "Nesting too deep to check")
    if parser.first_error is None:
        return None
    pos, message = parser.first_error
    text = _format(source, pos, message)
    if parser.error_count > 1:
        text += f" (and {parser.error_count - 1} more errors)"
    return text


def _format(source: str, pos: int, message: str) -> str:
    line, column = _position(source, pos)
    return f"(anonymous): Line {line}:{column} {message}"


def _position(source: str, pos: int) -> tuple[int, int]:
    before = source[:pos]
    line = 1 + sum(before.count(end) for end in _LINE_ENDS) - before.count("\r\n")
    line_start = max(before.rfind(end) for end in _LINE_ENDS) + 1
    return line, 1 + len(before[line_start:].encode("utf-8", "surrogateescape"))


def _source_map_error(source: str) -> str | None:
    """otto first reads an inline source map from the last line, failing the run if it is unusable."""
    last_line = source.rpartition("\n")[2]
    if not last_line.startswith(_SOURCE_MAP) or "," not in last_line:
        return None
    try:
        data = base64.b64decode(last_line.split(",", 1)[1].replace("\r", ""), validate=True)
    except (ValueError, binascii.Error):
        return None  # otto ignores a map it cannot decode
    if not data.strip():
        return "unexpected end of JSON input"
    try:
        source_map = json.loads(data)
    except ValueError:
        return _BAD_SOURCE_MAP
    if source_map is None:
        source_map = {}
    if not isinstance(source_map, dict):
        return _BAD_SOURCE_MAP
    version: object = 0
    for key, value in source_map.items():  # Go matches the field name ignoring case; the last one wins
        if key.lower() == "version" and value is not None:
            version = value
    if not isinstance(version, int) or isinstance(version, bool):
        return _BAD_SOURCE_MAP
    if version != 3:
        return f"sourcemap: got version={version}, but only 3rd version is supported"
    return None
