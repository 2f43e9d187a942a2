"""Statements and functions, parsed the way otto parses them.

otto's recovery after an error: ``expect`` always consumes the token it looked at, and a failed
construct skips ahead to the next statement keyword (``Scanner.skip_to_statement``). Some of its
leniencies are kept because they decide whether there is an error at all: a ``switch`` may end with
the input, ``break``/``continue`` with an unknown label stop without looking for a semicolon, a
function's parameter list may end with a comma, ``do ... while (x)`` needs no semicolon.
"""

from __future__ import annotations

from types import MappingProxyType

from simproxy.engine.gocompat.ottosyntax.expressions import (
    BRACKET,
    DOT,
    IDENT,
    NOTHING,
    OTHER,
    VAR,
    Expr,
    ExpressionParser,
    Scope,
    Step,
)
from simproxy.engine.gocompat.ottosyntax.lexer import EOF, IDENTIFIER

# for-in takes these on the left of ``in``
_FOR_IN_TARGETS = frozenset((IDENT, DOT, BRACKET, VAR))


class Parser(ExpressionParser):
    def parse_program(self) -> None:
        self.next()
        self.run(self.program())

    def program(self) -> Step:
        while self.tok != EOF:
            yield self.statement()
        return NOTHING

    def statement(self) -> Step:
        """The step for the statement at the current token."""
        return _STATEMENTS.get(self.tok, Parser.expression_statement)(self)

    def expression_statement(self) -> Step:
        if self.tok == EOF:
            self.unexpected()
            return NOTHING
        expression = yield self.expression(True)
        if expression[0] == IDENT and self.tok == ":":
            self.next()
            labels = self.scope.labels
            if expression[2] in labels:
                self.error(expression[1], f"Label '{expression[2]}' already exists")
            labels.append(expression[2])
            yield self.statement()
            labels.pop()
        else:
            self.optional_semicolon()
        return NOTHING

    def empty(self) -> Step:
        yield from ()  # nothing nested
        self.next()
        return NOTHING

    def block(self) -> Step:
        self.expect("{")
        while self.tok != "}" and self.tok != EOF:
            yield self.statement()
        self.expect("}")
        return NOTHING

    def iteration_body(self) -> Step:
        scope = self.scope
        saved = scope.in_iteration
        scope.in_iteration = True
        yield self.statement()
        scope.in_iteration = saved
        return NOTHING

    def if_statement(self) -> Step:
        while True:  # ``else if`` chains are looped, not nested
            self.next()
            self.expect("(")
            yield self.expression(True)
            self.expect(")")
            yield self.statement()
            if self.tok != "else":
                return NOTHING
            self.next()
            if self.tok != "if":
                yield self.statement()
                return NOTHING

    def do_statement(self) -> Step:
        scope = self.scope
        saved = scope.in_iteration
        scope.in_iteration = True
        self.next()
        yield self.statement()
        self.expect("while")
        self.expect("(")
        yield self.expression(True)
        self.expect(")")
        if self.tok == ";":
            self.next()
        else:
            self.implicit = False
        scope.in_iteration = saved
        return NOTHING

    def while_statement(self) -> Step:
        self.next()
        self.expect("(")
        yield self.expression(True)
        self.expect(")")
        yield self.iteration_body()
        return NOTHING

    def for_statement(self) -> Step:
        for_idx = self.idx
        self.next()
        self.expect("(")
        scope = self.scope
        left = NOTHING
        for_in = False
        if self.tok != ";":
            saved = scope.allow_in
            scope.allow_in = False
            if self.tok == "var":
                self.next()
                declarations: list[Expr] = []
                yield self.declarations(declarations)
                if len(declarations) == 1 and self.tok == "in":
                    self.next()
                    for_in = True
                    left = declarations[0]
            else:
                left = yield self.expression(True)
                if self.tok == "in":
                    self.next()
                    for_in = True
            scope.allow_in = saved
        if for_in:
            if left[0] not in _FOR_IN_TARGETS:
                self.error(for_idx, "Invalid left-hand side in for-in")
                self.skip_to_statement()
                return NOTHING
            yield self.expression(True)
        else:
            self.expect(";")
            if self.tok != ";":
                yield self.expression(True)
            self.expect(";")
            if self.tok != ")":
                yield self.expression(True)
        self.expect(")")
        yield self.iteration_body()
        return NOTHING

    def jump(self) -> Step:
        """``break`` and ``continue``."""
        yield from ()  # nothing nested
        keyword, jump_idx = self.tok, self.idx
        scope = self.scope
        self.next()
        ends = self.implicit
        if self.tok == ";":
            ends = True
            self.next()
        if ends or self.tok == "}":
            self.implicit = False
            if scope.in_iteration or (keyword == "break" and scope.in_switch):
                return NOTHING
        elif self.tok == IDENTIFIER:
            name = self.lit
            self.next()
            if not scope.has_label(name):
                self.error(jump_idx, f"Undefined label '{name}'")
                return NOTHING
            if keyword == "break" or scope.in_iteration:
                self.semicolon()
                return NOTHING
        else:
            self.expect(IDENTIFIER)
        self.error(jump_idx, f"Illegal {keyword} statement")
        self.skip_to_statement()
        return NOTHING

    def debugger(self) -> Step:
        yield from ()  # nothing nested
        self.next()
        self.semicolon()
        return NOTHING

    def with_statement(self) -> Step:
        self.next()
        self.expect("(")
        yield self.expression(True)
        self.expect(")")
        yield self.statement()
        return NOTHING

    def var_statement(self) -> Step:
        self.next()
        yield self.declarations([])
        self.semicolon()
        return NOTHING

    def declarations(self, out: list[Expr]) -> Step:
        """``a, b = 1, ...`` after ``var``, each summarised into ``out``."""
        while True:
            if self.tok != IDENTIFIER:
                idx = self.expect(IDENTIFIER)
                self.skip_to_statement()
                out.append((OTHER, idx, ""))
            else:
                out.append((VAR, self.idx, self.lit))
                self.next()
                if self.tok == "=":
                    self.next()
                    yield self.expression(False)
            if self.tok != ",":
                return NOTHING
            self.next()

    def function_statement(self) -> Step:
        self.next()
        if self.tok == IDENTIFIER:
            self.next()
        else:
            self.expect(IDENTIFIER)
        yield self.function_rest()
        return NOTHING

    def function_rest(self) -> Step:
        """Parameter list and body."""
        self.expect("(")
        while self.tok != ")" and self.tok != EOF:
            if self.tok != IDENTIFIER:
                self.expect(IDENTIFIER)
            else:
                self.next()
            if self.tok != ")":
                self.expect(",")
        self.expect(")")
        outer = self.scope
        self.scope = Scope(outer, True)
        yield self.block()
        self.scope = outer
        return NOTHING

    def switch_statement(self) -> Step:
        self.next()
        self.expect("(")
        yield self.expression(True)
        self.expect(")")
        self.expect("{")
        scope = self.scope
        saved = scope.in_switch
        scope.in_switch = True
        seen_default = False
        while self.tok != EOF:
            if self.tok == "}":
                self.next()
                break
            clause_idx = self.idx
            is_default = self.tok == "default"
            if is_default:
                self.next()
            else:
                self.expect("case")
                yield self.expression(True)
            self.expect(":")
            while self.tok not in _CLAUSE_END:
                yield self.statement()
            if is_default:
                if seen_default:
                    self.error(clause_idx, "Already saw a default in switch")
                seen_default = True
        scope.in_switch = saved
        return NOTHING

    def return_statement(self) -> Step:
        return_idx = self.idx
        self.next()
        if not self.scope.in_function:
            self.error(return_idx, "Illegal return statement")
            self.skip_to_statement()
            return NOTHING
        if not self.implicit and self.tok not in (";", "}", EOF):
            yield self.expression(True)
        self.semicolon()
        return NOTHING

    def throw_statement(self) -> Step:
        throw_idx = self.idx
        self.next()
        if self.implicit:
            at_end = self.pos >= self.n
            self.error(throw_idx, "Unexpected end of input" if at_end else "Illegal newline after throw")
            self.skip_to_statement()
            return NOTHING
        yield self.expression(True)
        self.semicolon()
        return NOTHING

    def try_statement(self) -> Step:
        try_idx = self.idx
        self.next()
        yield self.block()
        handled = False
        if self.tok == "catch":
            self.next()
            self.expect("(")
            if self.tok != IDENTIFIER:
                self.expect(IDENTIFIER)
                self.skip_to_statement()
                return NOTHING
            self.next()
            self.expect(")")
            yield self.block()
            handled = True
        if self.tok == "finally":
            self.next()
            yield self.block()
            handled = True
        if not handled:
            self.error(try_idx, "Missing catch or finally after try")
        return NOTHING


_CLAUSE_END = frozenset((EOF, "}", "case", "default"))
_STATEMENTS = MappingProxyType(
    {
        ";": Parser.empty,
        "{": Parser.block,
        "if": Parser.if_statement,
        "do": Parser.do_statement,
        "while": Parser.while_statement,
        "for": Parser.for_statement,
        "break": Parser.jump,
        "continue": Parser.jump,
        "debugger": Parser.debugger,
        "with": Parser.with_statement,
        "var": Parser.var_statement,
        "function": Parser.function_statement,
        "switch": Parser.switch_statement,
        "return": Parser.return_statement,
        "throw": Parser.throw_statement,
        "try": Parser.try_statement,
    }
)
