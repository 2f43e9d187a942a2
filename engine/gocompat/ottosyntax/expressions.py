"""Expressions, parsed the way otto parses them (the same tokens consumed, the same errors, in order).

No tree is built: an expression is summarised as ``(kind, start, name)`` -- whether it may be
assigned to (identifier, ``.member``, ``[member]``; otto's for-in also takes ``var x``), where otto
says it begins (a parenthesised expression begins where its content does; a failed one where otto's
BadExpression does) and, for an identifier, its name (labels).

The parser never recurses on Python's stack: every step that can nest is a generator which yields the
step it needs done and receives that step's result (``run`` drives them with a list as the stack), so
a script nested thousands deep -- otto's error recovery nests blocks as it skips closing braces --
is checked like any other. otto's operator levels are folded into loops: each binary level consumes
every following operator of its kind, so only ``in`` needs care. Where ``in`` is not allowed (a for
statement's head) otto still accepts it in the right operand of a relational operator, up to the next
operator binding less tightly than the relational ones.
"""

from __future__ import annotations

from collections.abc import Generator

from simproxy.engine.gocompat.ottosyntax import _unicode
from simproxy.engine.gocompat.ottosyntax.lexer import BOOLEAN, EOF, IDENTIFIER, NULL, NUMBER, STRING, Scanner, TooDeep
from simproxy.engine.gocompat.ottosyntax.literals import string_literal_error
from simproxy.engine.gocompat.ottosyntax.regexp import regexp_error

Expr = tuple[int, int, str]
Step = Generator["Step", Expr, Expr]
OTHER, IDENT, DOT, BRACKET, VAR = range(5)
ASSIGNABLE = frozenset((IDENT, DOT, BRACKET))
NOTHING: Expr = (OTHER, -1, "")

# Steps waiting on nested steps before the check gives up (a few per level of nesting, ~250 bytes each).
MAX_PENDING_STEPS = 20_000

_ASSIGN_OPS = frozenset(("=", "+=", "-=", "*=", "/=", "%=", "&=", "&^=", "|=", "^=", "<<=", ">>=", ">>>="))
_PREFIX_OPS = frozenset(("+", "-", "!", "~", "delete", "void", "typeof", "++", "--"))
_UPDATE_OPS = frozenset(("++", "--"))
_RELATIONAL = frozenset(("<", ">", "<=", ">=", "instanceof"))
_LOOSER = frozenset(("==", "!=", "===", "!==", "&", "^", "|", "&&", "||"))
_BINARY = frozenset(("*", "/", "%", "+", "-", "<<", ">>", ">>>", "in")) | _RELATIONAL | _LOOSER
_SIMPLE = frozenset((NUMBER, BOOLEAN, NULL, "this"))
_ID_PUNCT = frozenset("$_")


def plain_name(literal: str) -> bool:
    """otto's check of the name after ``.``: ``^[$_\\p{L}][$_\\p{L}\\d}]*$`` (the ``}`` is otto's)."""
    if not literal:
        return False
    for index, char in enumerate(literal):
        if char in _ID_PUNCT or ("a" <= char <= "z") or ("A" <= char <= "Z"):
            continue
        if index and (char == "}" or "0" <= char <= "9"):
            continue
        if char >= "\x80" and _unicode.letter(ord(char)):
            continue
        return False
    return True


def _between_slashes(literal: str) -> str:
    """otto drops the literal's first and last byte: a class left open at the end of the input loses
    the last byte of its last character, which then reads as bytes that are not UTF-8."""
    last = literal[-1].encode("utf-8", "surrogateescape")[:-1]
    return literal[1:-1] + last.decode("utf-8", "surrogateescape")


class Scope:
    """Per function (and the program): where ``in``, ``break``, ``continue``, ``return`` and labels may be."""

    __slots__ = ("allow_in", "in_function", "in_iteration", "in_switch", "labels", "outer")

    def __init__(self, outer: Scope | None, in_function: bool) -> None:
        self.outer = outer
        self.allow_in = True
        self.in_iteration = False
        self.in_switch = False
        self.in_function = in_function
        self.labels: list[str] = []

    def has_label(self, name: str) -> bool:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.labels:
                return True
            if scope.in_function:
                return False
            scope = scope.outer
        return False


class ExpressionParser(Scanner):
    def __init__(self, src: str) -> None:
        super().__init__(src)
        self.scope = Scope(None, False)

    def run(self, step: Step) -> Expr:
        """Drive ``step`` and the steps it asks for to the end."""
        pending: list[Step] = []
        result: Expr | None = None
        while True:
            try:
                wanted = step.send(result) if result is not None else next(step)
            except StopIteration as done:
                if not pending:
                    return done.value  # type: ignore[no-any-return]  # StopIteration.value is Any
                step, result = pending.pop(), done.value
                continue
            pending.append(step)
            if len(pending) > MAX_PENDING_STEPS:
                raise TooDeep(self.idx)
            step, result = wanted, None

    def function_rest(self) -> Step:
        """Parameter list and body (statements.py)."""
        raise NotImplementedError

    def expression(self, sequence: bool) -> Step:
        """An Expression (comma-separated if ``sequence``) or an AssignmentExpression."""
        first: Expr | None = None
        while True:
            chain: Expr | None = None  # ``a = b = c`` is looped
            while True:
                left = yield self.operand()
                if self.tok in _BINARY:
                    relational_open = False
                    while (tok := self.tok) in _BINARY:
                        if tok in _RELATIONAL:
                            relational_open = True
                        elif tok in _LOOSER:
                            relational_open = False
                        elif tok == "in":
                            if not (relational_open or self.scope.allow_in):
                                break
                            relational_open = True
                        self.next()
                        yield self.operand()
                        left = (OTHER, left[1], "")
                if self.tok == "?":
                    self.next()
                    yield self.expression(False)
                    self.expect(":")
                    yield self.expression(False)
                    left = (OTHER, left[1], "")
                if self.tok not in _ASSIGN_OPS:
                    break
                operator_idx = self.idx
                self.next()
                if left[0] not in ASSIGNABLE:
                    self.error(left[1], "invalid left-hand side in assignment")
                    self.skip_to_statement()
                    left = (OTHER, operator_idx, "")
                    break
                if chain is None:
                    chain = (OTHER, left[1], "")
            value = left if chain is None else chain
            if not sequence or self.tok != ",":
                return value if first is None else (OTHER, first[1], "")
            if first is None:
                first = value
            self.next()

    def operand(self) -> Step:
        """A UnaryExpression: prefix operators, ``new``, a primary expression with members, calls, postfix."""
        prefixes: list[tuple[str, int]] = []
        while self.tok in _PREFIX_OPS:
            prefixes.append((self.tok, self.idx))
            self.next()
        scope = self.scope
        allow_in = scope.allow_in
        scope.allow_in = True
        news: list[int] = []
        while self.tok == "new":
            news.append(self.idx)
            self.next()
        left = self.simple_primary()
        if left is None:
            if self.tok == "(":
                self.next()
                left = yield self.expression(True)
                self.expect(")")
            else:
                left = yield self.primary()
        levels = len(news)
        while True:  # members; a ``new`` takes the arguments after its members, then calls may follow
            tok = self.tok
            if tok == ".":
                left = self.dot_member(left)
            elif tok == "[":
                self.next()
                yield self.expression(True)
                self.expect("]")
                left = (BRACKET, left[1], "")
            elif levels:
                levels -= 1
                if tok == "(":
                    yield self.arguments()
                left = (OTHER, news[levels], "")
            elif tok == "(":
                yield self.arguments()
                left = (OTHER, left[1], "")
            else:
                break
        scope.allow_in = allow_in
        if self.tok in _UPDATE_OPS and not self.implicit:
            operator_idx = self.idx
            self.next()
            if left[0] in ASSIGNABLE:
                left = (OTHER, left[1], "")
            else:
                self.error(operator_idx, "invalid left-hand side in assignment")
                self.skip_to_statement()
                left = (OTHER, operator_idx, "")
        for tok, idx in reversed(prefixes):
            if tok in _UPDATE_OPS and left[0] not in ASSIGNABLE:
                self.error(idx, "invalid left-hand side in assignment")
                self.skip_to_statement()
            left = (OTHER, idx, "")
        return left

    def dot_member(self, left: Expr) -> Expr:
        period_idx = self.idx
        self.next()
        if not plain_name(self.lit):
            self.expect(IDENTIFIER)
            self.skip_to_statement()
            return (OTHER, period_idx, "")
        self.next()
        return (DOT, left[1], "")

    def arguments(self) -> Step:
        self.next()
        while self.tok != ")":
            yield self.expression(False)
            if self.tok != ",":
                break
            self.next()
        self.expect(")")
        return NOTHING

    def simple_primary(self) -> Expr | None:
        """A primary expression with nothing nested in it; None for those that need a step."""
        tok, idx = self.tok, self.idx
        if tok == IDENTIFIER:
            name = self.lit
            self.next()
            return (IDENT, idx, name)
        if tok in _SIMPLE:
            self.next()
        elif tok == STRING:
            body = self.lit[1:-1]
            self.next()
            self.check_string(idx, body)
        elif tok == "/" or tok == "/=":
            self.regexp_literal()
        elif tok in ("(", "[", "{", "function"):
            return None
        else:
            self.unexpected()
            self.skip_to_statement()
        return (OTHER, idx, "")

    def regexp_literal(self) -> None:
        start = self.idx
        literal = self.scan_regexp_body(start)
        self.next()
        if self.tok == IDENTIFIER:  # flags, unchecked
            self.next()
        problem = regexp_error(_between_slashes(literal) if literal is not None else "")
        if problem is not None:
            self.error(start, "Invalid regular expression: " + problem)

    def primary(self) -> Step:
        """Array and object literals, function expressions."""
        tok, idx = self.tok, self.idx
        self.next()
        if tok == "function":
            if self.tok == IDENTIFIER:
                self.next()
            yield self.function_rest()
        elif tok == "[":
            while self.tok != "]" and self.tok != EOF:
                if self.tok == ",":
                    self.next()
                    continue
                yield self.expression(False)
                if self.tok != "]":
                    self.expect(",")
            self.expect("]")
        else:
            while self.tok != "}" and self.tok != EOF:
                literal = self.lit
                self.property_key()
                if (literal == "get" or literal == "set") and self.tok != ":":
                    self.property_key()
                    yield self.function_rest()
                else:
                    self.expect(":")
                    yield self.expression(False)
                if self.tok == ",":
                    self.next()
            self.expect("}")
        return (OTHER, idx, "")

    def property_key(self) -> None:
        """Any token is taken as a key; a string key's escapes are checked."""
        tok, idx, literal = self.tok, self.idx, self.lit
        self.next()
        if tok == STRING:
            self.check_string(idx, literal[1:-1])

    def check_string(self, idx: int, body: str) -> None:
        """A string literal's escapes, checked once the literal is read (its error at ``idx``)."""
        problem = string_literal_error(body)
        if problem is not None:
            self.error(idx, problem)
