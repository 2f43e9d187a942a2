"""Whitespace control (``~``) and standalone lines, as raymond's parser/whitespace.go does them.

A block tag, comment or partial alone on its line takes the line with it; ``{{~`` and ``~}}``
trim all whitespace on their side. raymond's two deviations from handlebars.js (the "next
whitespace" test and the last link of an ``else`` chain) are kept, since they decide the output.
"""

from __future__ import annotations

import re

from simproxy.engine.templating.syntax import Block, Comment, Content, Mustache, Partial, Program, Statement, Strip

_S = r"[\t\n\f\r ]"
_TRIM_LEFT = re.compile(r"^[ \t]*\r?\n?")
_TRIM_LEFT_MULTIPLE = re.compile(rf"^{_S}+")
_TRIM_RIGHT = re.compile(r"[ \t]+\Z")
_TRIM_RIGHT_MULTIPLE = re.compile(rf"{_S}+\Z")
_PREV_WS = re.compile(rf"\r?\n{_S}*?\Z")
_PREV_WS_START = re.compile(rf"(?:^|\r?\n){_S}*?\Z")
_NEXT_WS = re.compile(rf"^{_S}*?\r?\n")
_NEXT_WS_END = re.compile(rf"^{_S}*?(?:\r?\n|\Z)")
_PARTIAL_INDENT = re.compile(r"[ \t]+\Z")


def _omit_right(body: list[Statement], i: int, multiple: bool) -> None:
    if i + 1 >= len(body):
        return
    node = body[i + 1]
    if not isinstance(node, Content) or (not multiple and node.right_stripped):
        return
    original = node.value
    node.value = (_TRIM_LEFT_MULTIPLE if multiple else _TRIM_LEFT).sub("", original, count=1)
    node.right_stripped = original != node.value


def _omit_left(body: list[Statement], i: int, multiple: bool) -> bool:
    if i - 1 < 0:
        return False
    node = body[i - 1]
    if not isinstance(node, Content) or (not multiple and node.left_stripped):
        return False
    original = node.value
    node.value = (_TRIM_RIGHT_MULTIPLE if multiple else _TRIM_RIGHT).sub("", original, count=1)
    node.left_stripped = original != node.value
    return node.left_stripped


def _is_prev_ws(body: list[Statement], i: int, is_root: bool) -> bool:
    if i < 1:
        return is_root
    node = body[i - 1]
    if not isinstance(node, Content):
        return False
    if node.value == "" and node.right_stripped:
        return True
    pattern = _PREV_WS if i > 1 or not is_root else _PREV_WS_START
    return pattern.search(node.value) is not None


def _is_next_ws(body: list[Statement], i: int, is_root: bool) -> bool:
    if i + 1 >= len(body):
        return is_root
    node = body[i + 1]
    if not isinstance(node, Content):
        return False
    if node.value == "" and node.left_stripped:
        return True
    pattern = _NEXT_WS if i + 2 > len(body) or not is_root else _NEXT_WS_END
    return pattern.search(node.value) is not None


class _Visitor:
    def __init__(self) -> None:
        self.root_seen = False

    def program(self, program: Program) -> None:
        is_root = not self.root_seen
        self.root_seen = True
        body = program.body
        for i, current in enumerate(body):
            strip = self.strip(current)
            if strip is None:
                continue
            prev_ws = _is_prev_ws(body, i, is_root)
            next_ws = _is_next_ws(body, i, is_root)
            if strip.close:
                _omit_right(body, i, True)
            if strip.open and i > 0:
                _omit_left(body, i, True)
            if strip.inline_standalone and prev_ws and next_ws:
                _omit_right(body, i, False)
                if _omit_left(body, i, False) and isinstance(current, Partial):
                    previous = body[i - 1]
                    if isinstance(previous, Content):
                        found = _PARTIAL_INDENT.search(previous.original)
                        current.indent = found.group() if found else ""
            if isinstance(current, Block):
                if strip.open_standalone and prev_ws:
                    opened = current.program or current.inverse
                    assert opened is not None
                    _omit_right(opened.body, -1, False)
                    _omit_left(body, i, False)
                if strip.close_standalone and next_ws:
                    closed = current.inverse or current.program
                    assert closed is not None
                    _omit_right(body, i, False)
                    _omit_left(closed.body, len(closed.body), False)

    def strip(self, node: Statement) -> Strip | None:
        if isinstance(node, Mustache):
            return node.strip
        if isinstance(node, Block):
            return self.block(node)
        if isinstance(node, Partial | Comment):
            return Strip(open=node.strip.open, close=node.strip.close, inline_standalone=True)
        return None

    def block(self, block: Block) -> Strip:
        if block.program is not None:
            self.program(block.program)
        if block.inverse is not None:
            self.program(block.inverse)
        program, inverse = block.program, block.inverse
        if program is None:
            program, inverse = inverse, None
        assert program is not None
        first_inverse = last_inverse = inverse
        if inverse is not None and inverse.chained:
            chained = inverse.body[0]
            assert isinstance(chained, Block)
            first_inverse = chained.program
            while last_inverse is not None and last_inverse.chained:
                link = last_inverse.body[-1]
                assert isinstance(link, Block)
                last_inverse = link.program  # raymond reads the program here, not the inverse
        close_program = first_inverse if first_inverse is not None else program
        open_strip, close_strip = block.open_strip, block.close_strip
        strip = Strip(
            open=open_strip is not None and open_strip.open,
            close=close_strip is not None and close_strip.close,
            open_standalone=_is_next_ws(program.body, -1, False),
            close_standalone=_is_prev_ws(close_program.body, len(close_program.body), False),
        )
        if open_strip is not None and open_strip.close:
            _omit_right(program.body, -1, True)
        if inverse is not None:
            assert first_inverse is not None and last_inverse is not None
            if block.inverse_strip is not None:
                if block.inverse_strip.open:
                    _omit_left(program.body, len(program.body), True)
                if block.inverse_strip.close:
                    _omit_right(first_inverse.body, -1, True)
            if close_strip is not None and close_strip.open:
                _omit_left(last_inverse.body, len(last_inverse.body), True)
            if _is_prev_ws(program.body, len(program.body), False) and _is_next_ws(first_inverse.body, -1, False):
                _omit_left(program.body, len(program.body), False)
                _omit_right(first_inverse.body, -1, False)
        elif close_strip is not None and close_strip.open:
            _omit_left(program.body, len(program.body), True)
        return strip


def process_whitespace(program: Program) -> None:
    _Visitor().program(program)
