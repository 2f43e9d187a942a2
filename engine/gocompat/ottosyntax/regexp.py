"""Regular expression literals: otto's rewrite of the pattern for Go, then Go's own syntax check.

otto rejects a literal at parse time when its rewrite finds an unbalanced group or class, a lookahead
or a backreference (RE2 has neither), or when Go's ``regexp`` package rejects the rewritten pattern.
Either way the message follows ``Invalid regular expression:``. The literal's flags are not checked.

The Go side below reproduces ``regexp/syntax``'s errors (code and offending text) for what otto's
rewrite can produce; it does not model Go's size and nesting-depth limits.
"""

from __future__ import annotations

from simproxy.engine.gocompat.ottosyntax.lexer import id_part_code
from simproxy.engine.gocompat.ottosyntax.literals import is_bad_byte

_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"
_LPAREN = -1  # markers on the Go parser's stack; other entries are the subtree's repeat "need"
_VBAR = -2
_POSIX_CLASSES = frozenset(
    f"[:{sign}{name}:]"
    for sign in ("", "^")
    for name in (
        *("alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph"),
        *("lower", "print", "punct", "space", "upper", "word", "xdigit"),
    )
)


def regexp_error(pattern: str) -> str | None:
    """What otto says after ``Invalid regular expression: `` for this pattern, or None if it takes it."""
    if not pattern:
        return None
    rewrite = _Rewrite(pattern)
    if rewrite.first_error is not None:
        return rewrite.first_error
    return _go_syntax_error("".join(rewrite.out))


def go_regexp_error(pattern: str) -> str | None:
    """Go's ``regexp.Compile`` error text for ``pattern``, less its ``error parsing regexp: `` prefix;
    None when Go takes it, or when it holds ``\\p`` or ``\\P`` (Unicode classes are not modelled)."""
    if "\\p" in pattern or "\\P" in pattern:
        return None
    return _go_syntax_error(pattern)


class _Rewrite:
    """otto's TransformRegExp: JavaScript escapes become Go ones; groups and classes must balance."""

    def __init__(self, pattern: str) -> None:
        self.src = pattern
        self.i = -1
        self.c = ""
        self.out: list[str] = []
        self.first_error: str | None = None
        self.read()
        self.run()

    def error(self, message: str) -> None:
        if self.first_error is None:
            self.first_error = message

    def read(self) -> None:
        self.i = min(self.i + 1, len(self.src))
        self.c = self.src[self.i] if self.i < len(self.src) else ""
        if is_bad_byte(self.c):
            self.error("Invalid UTF-8 character")

    def copy(self) -> None:
        if self.c:
            self.out.append("\ufffd" if is_bad_byte(self.c) else self.c)
        self.read()

    def run(self) -> None:
        depth = 0
        while self.c:
            c = self.c
            if c == "\\":
                self.read()
                self.escape(False)
            elif c == "(":
                self.copy()
                ahead = self.src[self.i : self.i + 2]
                if ahead in ("?=", "?!"):
                    self.error(f"re2: Invalid ({ahead}) <lookahead>")
                depth += 1
            elif c == "[":
                self.copy()
                self.char_class()
            elif c == ")":
                if depth:
                    depth -= 1
                else:
                    self.error("Unmatched ')'")
                self.copy()
            else:
                self.copy()
        if depth:
            self.error("Unterminated group")

    def char_class(self) -> None:
        while self.c and self.c != "]":
            if self.c == "\\":
                self.read()
                self.escape(True)
            else:
                self.copy()
        if not self.c:
            self.error("Unterminated character class")
        self.copy()

    def escape(self, in_class: bool) -> None:
        c, start = self.c, self.i
        if c and c in _OCTAL:
            value = size = 0
            while self.c and self.c in _OCTAL:
                value = value * 8 + int(self.c)
                size += 1
                self.read()
            if size == 1:
                self.out.append(f"\\{value}")
                if value:
                    self.error(f"re2: Invalid \\{value} <backreference>")
            else:
                self.out.append(f"\\x{value:02x}")
        elif c in ("8", "9"):
            while self.c and self.c in "0123456789":
                self.read()
            digits = self.src[start : self.i]
            self.out.append("\\" + digits)
            self.error(f"re2: Invalid \\{digits} <backreference>")
        elif c in ("x", "u"):
            self.read()
            first_digit = self.i
            for _ in range(2 if c == "x" else 4):
                if not self.c or self.c not in _HEX:
                    self.out.append(self.src[start : self.i])
                    return
                self.read()
            hex_digits = self.src[first_digit : self.i]
            self.out.append(f"\\x{{{hex_digits}}}" if c == "u" else f"\\x{hex_digits}")
        elif c == "b" and in_class:
            self.out.append("\\x08")
            self.read()
        elif c and c in "bBdDsSwW\\fnrtv":
            self.out.append("\\")
            self.copy()
        elif c == "c":
            self.read()
            letter = self.c
            if letter and ("a" <= letter <= "z" or "A" <= letter <= "Z"):
                value = ord(letter) & 0x1F
                self.out.append(f"\\x{value:02x}")
                self.read()
            else:
                self.out.append("c")
        else:
            if not c or c == "$" or is_bad_byte(c) or not id_part_code(ord(c)):
                self.out.append("\\")
            self.copy()


class _GoSyntaxError(Exception):
    def __init__(self, code: str, expr: str) -> None:
        super().__init__(f"{code}: `{expr}`")


def _go_syntax_error(s: str) -> str | None:
    """Go's ``regexp.Compile`` error text for ``s``, less its ``error parsing regexp: `` prefix."""
    try:
        _check(s)
    except _GoSyntaxError as exc:
        return str(exc)
    return None


def _check(s: str) -> None:
    """Go's parse loop, keeping only what decides its errors: the stack's markers and repeat budgets."""
    stack: list[int] = []
    n = len(s)
    i = 0
    last_repeat = -1
    while i < n:
        repeat = -1
        c = s[i]
        if c == "(":
            if i + 1 < n and s[i + 1] == "?":
                i = _perl_group(s, i, stack)
            else:
                stack.append(_LPAREN)
                i += 1
        elif c == "|":
            _collapse(stack)
            if not _swap_bar(stack):
                stack.append(_VBAR)
            i += 1
        elif c == ")":
            _close(stack)
            if len(stack) < 2 or stack[-2] != _LPAREN:
                raise _GoSyntaxError("unexpected )", s)
            stack[-2:] = stack[-1:]
            i += 1
        elif c == "[":
            i = _char_class(s, i)
            stack.append(0)
        elif c in "*+?":
            repeat = i
            i = _repeat(s, stack, i, i + 1, last_repeat, None)
        elif c == "{" and (counts := _braces(s, i)) is not None:
            low, high, after = counts
            if low > 1000 or high > 1000 or 0 <= high < low:
                raise _GoSyntaxError("invalid repeat count", s[i:after])
            repeat = i
            i = _repeat(s, stack, i, after, last_repeat, (low, high))
        elif c == "\\":
            i = _backslash(s, i, stack)
        else:
            stack.append(0)
            i += 1
        last_repeat = repeat
    _close(stack)
    if len(stack) != 1:
        raise _GoSyntaxError("missing closing )", s)


def _collapse(stack: list[int]) -> None:
    """Go's concat (and alternate): the entries above the topmost marker become one subtree."""
    top = len(stack)
    while top > 0 and stack[top - 1] >= 0:
        top -= 1
    need = max(stack[top:], default=0)
    del stack[top:]
    stack.append(need)


def _swap_bar(stack: list[int]) -> bool:
    if len(stack) >= 2 and stack[-2] == _VBAR:
        stack[-2], stack[-1] = stack[-1], _VBAR
        return True
    return False


def _close(stack: list[int]) -> None:
    """What Go does at ``)`` and at the end before checking the stack."""
    _collapse(stack)
    if _swap_bar(stack):
        stack.pop()
    _collapse(stack)


def _repeat(s: str, stack: list[int], start: int, after: int, last_repeat: int, counts: tuple[int, int] | None) -> int:
    """Apply ``*``, ``+``, ``?`` or ``{m,n}`` (text from ``start`` to ``after``) to the stack top.

    A stack entry is the smallest budget Go's repeatIsValid needs for that subtree: the product of
    the repeat counts along its deepest path; a ``{m,n}`` whose product passes 1000 is an error.
    """
    if after < len(s) and s[after] == "?":
        after += 1
    if last_repeat >= 0:
        raise _GoSyntaxError("invalid nested repetition operator", s[last_repeat:after])
    if not stack or stack[-1] < 0:
        raise _GoSyntaxError("missing argument to repetition operator", s[start:after])
    if counts is not None:
        low, high = counts
        count = low if high < 0 else high
        need = 0 if high == 0 else count * max(1, stack[-1]) if count else stack[-1]
        stack[-1] = need
        if (low >= 2 or high >= 2) and need > 1000:
            raise _GoSyntaxError("invalid repeat count", s[start:after])
    return after


def _braces(s: str, i: int) -> tuple[int, int, int] | None:
    """``{m}``, ``{m,}`` (-1 for no maximum) or ``{m,n}`` at ``i`` and the index after it; else None."""
    low, j = _integer(s, i + 1)
    if low < 0 or j >= len(s):
        return None
    high = low
    if s[j] == ",":
        j += 1
        if j >= len(s):
            return None
        if s[j] == "}":
            high = -1
        else:
            high, j = _integer(s, j)
            if high < 0:
                return None
    if j >= len(s) or s[j] != "}":
        return None
    return low, high, j + 1


def _integer(s: str, i: int) -> tuple[int, int]:
    """A decimal without a leading zero at ``i`` (-1 if none) and the index after it."""
    j = i
    while j < len(s) and "0" <= s[j] <= "9":
        j += 1
    if j == i or (s[i] == "0" and j - i > 1):
        return -1, i
    return int(s[i:j]), j


def _perl_group(s: str, i: int, stack: list[int]) -> int:
    """``(?P<name>``, ``(?<name>``, flags ``(?i)`` or a group with flags ``(?i:``; the index after it."""
    rest = len(s) - i
    if (rest > 4 and s[i + 2 : i + 4] == "P<") or (rest > 3 and s[i + 2] == "<"):
        end = s.find(">", i)
        if end < 0:
            raise _GoSyntaxError("invalid named capture", s[i:])
        name = s[i + (4 if s[i + 2] == "P" else 3) : end]
        if not name or not all(c == "_" or (c.isascii() and c.isalnum()) for c in name):
            raise _GoSyntaxError("invalid named capture", s[i : end + 1])
        stack.append(_LPAREN)
        return end + 1
    j = i + 2
    negated = saw_flag = False
    while j < len(s):
        c = s[j]
        j += 1
        if c in "imsU":
            saw_flag = True
        elif c == "-" and not negated:
            negated, saw_flag = True, False
        elif c in ":)" and (saw_flag or not negated):
            if c == ":":
                stack.append(_LPAREN)
            return j
        else:
            break
    raise _GoSyntaxError("invalid or unsupported Perl syntax", s[i:j])


def _backslash(s: str, i: int, stack: list[int]) -> int:
    """An escape outside a class (``\\p{...}`` cannot occur: otto's rewrite turns ``\\p`` into ``p``)."""
    kind = s[i + 1] if i + 1 < len(s) else ""
    if kind == "C":
        raise _GoSyntaxError("invalid escape sequence", s[i : i + 2])
    if kind == "Q":
        end = s.find("\\E", i + 2)
        literal = s[i + 2 :] if end < 0 else s[i + 2 : end]
        stack.extend([0] * len(literal))
        return len(s) if end < 0 else end + 2
    if kind and kind in "AbBzdDsSwW":
        stack.append(0)
        return i + 2
    after = _escape(s, i)[1]
    stack.append(0)
    return after


def _escape(s: str, i: int) -> tuple[int, int]:
    """Go's parseEscape at the backslash ``i``: the character and the index after the escape."""
    if i + 1 >= len(s):
        raise _GoSyntaxError("trailing backslash at end of expression", "")
    c = s[i + 1]
    j = i + 2
    if c.isascii() and not c.isalnum():
        return ord(c), j
    if c in _OCTAL and (c == "0" or (j < len(s) and s[j] in _OCTAL)):
        value = int(c)
        for _ in range(2):
            if j < len(s) and s[j] in _OCTAL:
                value = value * 8 + int(s[j])
                j += 1
        return value, j
    if c == "x" and j < len(s):
        first = s[j]
        j += 1
        if first == "{":
            value = digits = 0
            while j < len(s):
                d = s[j]
                j += 1
                if d == "}":
                    if digits:
                        return value, j
                    break
                if d not in _HEX:
                    break
                value = value * 16 + int(d, 16)
                digits += 1
                if value > 0x10FFFF:
                    break
        else:
            second = s[j] if j < len(s) else ""
            j = min(j + 1, len(s))
            if first in _HEX and second and second in _HEX:
                return int(first + second, 16), j
    elif c and c in "afnrtv":
        return ord("\a\f\n\r\t\v"["afnrtv".index(c)]), j
    raise _GoSyntaxError("invalid escape sequence", s[i:j])


def _char_class(s: str, start: int) -> int:
    """A bracketed class at ``start``; the index after its ``]``."""
    n = len(s)
    t = start + 1
    if t < n and s[t] == "^":
        t += 1
    first = True
    while t >= n or s[t] != "]" or first:
        first = False
        if n - t > 2 and s[t] == "[" and s[t + 1] == ":":
            end = s.find(":]", t + 2)
            if end >= 0:
                if s[t : end + 2] not in _POSIX_CLASSES:
                    raise _GoSyntaxError("invalid character class range", s[t : end + 2])
                t = end + 2
                continue
        if t + 1 < n and s[t] == "\\" and s[t + 1] in "dDsSwW":
            t += 2
            continue
        low_at = t
        low, t = _class_char(s, t, start)
        if n - t >= 2 and s[t] == "-" and s[t + 1] != "]":
            high, t = _class_char(s, t + 1, start)
            if high < low:
                raise _GoSyntaxError("invalid character class range", s[low_at:t])
    return t + 1


def _class_char(s: str, t: int, start: int) -> tuple[int, int]:
    if t >= len(s):
        raise _GoSyntaxError("missing closing ]", s[start:])
    if s[t] == "\\":
        return _escape(s, t)
    return ord(s[t]), t + 1
