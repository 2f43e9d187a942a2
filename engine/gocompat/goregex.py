"""Go's regular expressions (RE2 syntax and semantics) through Google's RE2 binding.

Hoverfly compiles every regex with Go's ``regexp``: no backreferences or lookaround, ``$`` only at
the end of the text, ASCII ``\\d\\w\\s``, POSIX classes, ``(?U)``. RE2 gives exactly that, in linear
time, so a simulation cannot make the proxy backtrack for seconds on a crafted request.
"""

from __future__ import annotations

from typing import Protocol

import re2


class GoRegex(Protocol):
    def search(self, text: str) -> object | None: ...


class InvalidPattern(ValueError):
    """The pattern is not valid RE2 (Go) syntax; the message says why."""


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # the error is raised to the caller; RE2 need not print it too
    return options


class _Regex:
    __slots__ = ("_compiled",)

    def __init__(self, compiled: re2._Regexp) -> None:
        self._compiled = compiled

    def search(self, text: str) -> object | None:
        try:
            found: object | None = self._compiled.search(text)
        except UnicodeEncodeError:
            # bytes that were not UTF-8 reach us as surrogates; Go sees U+FFFD in their place
            found = self._compiled.search(text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
        return found


def compile_go(pattern: str) -> GoRegex:
    """Compile ``pattern`` with Go's rules, raising ``InvalidPattern`` when Go would reject it."""
    try:
        return _Regex(re2.compile(pattern, options=_options()))
    except re2.error as exc:
        detail = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise InvalidPattern(detail) from exc
    except (TypeError, UnicodeEncodeError) as exc:
        raise InvalidPattern(str(exc)) from exc
