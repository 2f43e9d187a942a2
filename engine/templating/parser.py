"""The Handlebars parser of raymond (aymerick/raymond/parser): tokens to a parse tree.

Grammar and error cases follow raymond's recursive descent, including its quirks: a path part
``..``, ``.`` or ``this`` after the first is an error, ``{{elsewhere}}`` opens an inverse chain,
and a block must be closed by exactly the text that opened it.
"""

from __future__ import annotations

from simproxy.engine.templating.lexer import T, Token, tokenize
from simproxy.engine.templating.syntax import (
    Block,
    BoolLit,
    Comment,
    Content,
    Expression,
    Mustache,
    NumberLit,
    Param,
    Partial,
    PathExpr,
    Program,
    Statement,
    StringLit,
    SubExpr,
    name_str,
    strip_for,
)
from simproxy.engine.templating.values import go_atoi, go_parse_float
from simproxy.engine.templating.whitespace import process_whitespace


class TemplateSyntaxError(ValueError):
    """The template does not parse; the message is raymond's."""


class NestedTooDeeply(TemplateSyntaxError):
    """The template is nested deeper than Python's stack allows (raymond parses it)."""


_STATEMENT_KINDS = frozenset(
    {T.OPEN, T.OPEN_UNESCAPED, T.OPEN_BLOCK, T.OPEN_INVERSE, T.OPEN_RAW_BLOCK, T.OPEN_PARTIAL, T.CONTENT, T.COMMENT}
)
_HELPER_NAME_KINDS = frozenset({T.BOOLEAN, T.NUMBER, T.STRING, T.DATA, T.ID})


def _fail(line: int, message: str) -> TemplateSyntaxError:
    return TemplateSyntaxError(f"Parse error on line {line}:\n{message}")


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = tokenize(text)
        self.index = 0

    # -- token access ------------------------------------------------------------------------

    def next(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def shift(self) -> Token:
        token = self.next()
        self.index += 1
        if token.kind is T.ERROR:
            raise _fail(token.line, f"Lexer error\nToken: {token}")
        return token

    def expect(self, kind: T) -> Token:
        token = self.shift()
        if token.kind is not kind:
            raise _fail(token.line, f"Expecting {kind.value}, got: '{token}'")
        return token

    def is_(self, kind: T) -> bool:
        return self.next().kind is kind

    # -- statements --------------------------------------------------------------------------

    def program(self) -> Program:
        result = Program()
        while self.next().kind in _STATEMENT_KINDS:
            result.body.append(self.statement())
        return result

    def statement(self) -> Statement:
        kind = self.next().kind
        if kind in (T.OPEN, T.OPEN_UNESCAPED):
            return self.mustache()
        if kind is T.OPEN_BLOCK:
            return self.block()
        if kind is T.OPEN_INVERSE:
            return self.inverse_block()
        if kind is T.OPEN_RAW_BLOCK:
            return self.raw_block()
        if kind is T.OPEN_PARTIAL:
            return self.partial()
        if kind is T.CONTENT:
            return Content(self.shift().val)
        token = self.shift()  # COMMENT
        return Comment(strip_for(token.val, token.val))

    def mustache(self) -> Mustache:
        token = self.shift()
        close = T.CLOSE_UNESCAPED if token.kind is T.OPEN_UNESCAPED else T.CLOSE
        unescaped = token.kind is T.OPEN_UNESCAPED or "&" in token.val
        expr = self.expression()
        closing = self.expect(close)
        return Mustache(expr, unescaped, strip_for(token.val, closing.val))

    def raw_block(self) -> Block:
        self.shift()
        result = Block(self.expression())
        self.expect(T.CLOSE_RAW_BLOCK)
        content = self.next()
        if content.kind is not T.CONTENT:
            raise _fail(content.line, f"Expecting Content, got: '{content}'")
        result.program = Program([Content(self.shift().val)])
        self.expect(T.OPEN_END_RAW_BLOCK)
        self.close_name(result)
        self.expect(T.CLOSE_RAW_BLOCK)
        return result

    def close_name(self, block: Block) -> None:
        token = self.next()
        end = self.helper_name()
        close = name_str(end)
        if close is None:
            raise _fail(token.line, "Erroneous closing expression")
        if block.expr.canonical() != close:
            raise _fail(token.line, f"{block.expr.canonical()} doesn't match {close}")

    def open_block(self) -> tuple[Block, list[str] | None]:
        token = self.shift()
        result = Block(self.expression())
        params = self.block_params() if self.is_(T.OPEN_BLOCK_PARAMS) else None
        closing = self.expect(T.CLOSE)
        result.open_strip = strip_for(token.val, closing.val)
        return result, params

    def close_block(self, block: Block) -> None:
        token = self.expect(T.OPEN_END_BLOCK)
        self.close_name(block)
        closing = self.expect(T.CLOSE)
        block.close_strip = strip_for(token.val, closing.val)

    def block(self) -> Block:
        result, params = self.open_block()
        result.program = self.program()
        result.program.block_params = params
        if self.is_(T.OPEN_INVERSE_CHAIN) or self.is_(T.INVERSE):
            result.inverse = self.inverse_chain()
        self.close_block(result)
        _inverse_strip(result)
        return result

    def inverse_block(self) -> Block:
        result, params = self.open_block()
        result.inverse = self.program()
        result.inverse.block_params = params
        if self.is_(T.INVERSE):
            result.program = self.inverse_and_program()
        self.close_block(result)
        _inverse_strip(result)
        return result

    def inverse_chain(self) -> Program:
        if self.is_(T.INVERSE):
            return self.inverse_and_program()
        block, params = self.open_block()
        block.program = self.program()
        block.program.block_params = params
        if self.is_(T.OPEN_INVERSE_CHAIN) or self.is_(T.INVERSE):
            block.inverse = self.inverse_chain()
        _inverse_strip(block)
        return Program([block], chained=True)

    def inverse_and_program(self) -> Program:
        token = self.shift()
        result = self.program()
        result.strip = strip_for(token.val, token.val)
        return result

    def partial(self) -> Partial:
        token = self.shift()
        name = self.sexpr() if self.is_(T.OPEN_SEXPR) else self.helper_name()
        params, hash_ = self.params_and_hash()
        closing = self.expect(T.CLOSE)
        return Partial(name, params, hash_, strip_for(token.val, closing.val))

    # -- expressions -------------------------------------------------------------------------

    def expression(self) -> Expression:
        head = self.helper_name()
        params, hash_ = self.params_and_hash()
        return Expression(head, params, hash_)

    def params_and_hash(self) -> tuple[list[Param], list[tuple[str, Param]] | None]:
        params: list[Param] = []
        while (self.is_(T.OPEN_SEXPR) or self.next().kind in _HELPER_NAME_KINDS) and not self.is_hash_segment():
            params.append(self.sexpr() if self.is_(T.OPEN_SEXPR) else self.helper_name())
        hash_: list[tuple[str, Param]] | None = None
        if self.is_hash_segment():
            hash_ = []
            while self.is_hash_segment():
                key = self.shift().val
                self.shift()
                hash_.append((key, self.sexpr() if self.is_(T.OPEN_SEXPR) else self.helper_name()))
        return params, hash_

    def is_hash_segment(self) -> bool:
        return self.next().kind is T.ID and self.next(1).kind is T.EQUALS

    def sexpr(self) -> SubExpr:
        self.shift()
        result = SubExpr(self.expression())
        self.expect(T.CLOSE_SEXPR)
        return result

    def block_params(self) -> list[str]:
        self.shift()
        names = []
        while self.is_(T.ID):
            names.append(self.shift().val)
        if not names:
            token = self.next()
            raise _fail(token.line, f"Expecting ID, got: '{token}'")
        self.expect(T.CLOSE_BLOCK_PARAMS)
        return names

    def helper_name(self) -> Param:
        token = self.next()
        if token.kind is T.BOOLEAN:
            self.shift()
            return BoolLit(token.val == "true")
        if token.kind is T.NUMBER:
            self.shift()
            integer = go_atoi(token.val)
            if integer is not None:
                return NumberLit(float(integer), True, token.val)
            number = go_parse_float(token.val)
            if number is None:
                raise _fail(token.line, f"Failed to parse number: {token.val}\nToken: {token}")
            return NumberLit(number, False, token.val)
        if token.kind is T.STRING:
            self.shift()
            return StringLit(token.val)
        if token.kind is T.DATA:
            self.shift()
            return self.path(data=True)
        return self.path(data=False)

    def path(self, data: bool) -> PathExpr:
        result = PathExpr(data=data)
        result.part(self.expect(T.ID).val)
        while self.is_(T.SEP):
            result.original += self.shift().val
            token = self.expect(T.ID)
            result.part(token.val)
            if result.parts and token.val in ("..", ".", "this"):
                raise _fail(token.line, f"Invalid path: {result.original}\nToken: {token}")
        return result


def _inverse_strip(block: Block) -> None:
    """``setBlockInverseStrip``."""
    if block.inverse is None:
        return
    if block.inverse.chained:
        chained = block.inverse.body[0]
        assert isinstance(chained, Block)
        chained.close_strip = block.close_strip
    block.inverse_strip = block.inverse.strip


def parse(text: str) -> Program:
    """Parse a template, raising ``TemplateSyntaxError`` with raymond's message."""
    parser = _Parser(text)
    try:
        result = parser.program()
        token = parser.shift()
        if token.kind is not T.EOF:
            raise _fail(token.line, f"Syntax error\nToken: {token}")
        process_whitespace(result)
    except RecursionError:
        raise NestedTooDeeply("the template is nested too deeply") from None
    return result
