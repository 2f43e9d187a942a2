"""The XML family: xml, xmltemplated and xpath (spec §2.2.7-2.2.9).

``xml`` compares minified text (``engine.gocompat.xmlmin``); ``xmltemplated`` compares element trees read by
expat without namespace processing, as Go's ``RawToken`` reads them; ``xpath`` runs XPath 1.0 with
lxml on a leniently parsed body. Values are minified, parsed or compiled once, at import. The
minifier and lxml are loaded by the first ``xml`` or ``xpath`` matcher compiled, so a worker whose
simulation has neither never loads them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from xml.parsers import expat

from simproxy.engine.errors import InvalidValue, SimulationError
from simproxy.engine.gocompat.goregex import GoRegex, InvalidPattern, compile_go
from simproxy.engine.gocompat.xpath import check_xpath, run_xpath, string_value
from simproxy.engine.matching.base import Built, guarded, require_str
from simproxy.engine.simulation.model import JSON

if TYPE_CHECKING:
    pass


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")  # bodies keep non-UTF-8 bytes as surrogates


def xml_equal(value: JSON, path: str) -> Built:
    """``xml``: both sides minified the way Hoverfly minifies them, then compared as text."""
    from simproxy.engine.gocompat.xmlmin import minify

    try:
        expected = minify(_utf8(require_str(value, path, "xml")))
    except UnicodeEncodeError:
        expected = None
    if expected is None:
        raise InvalidValue(f"{path}.value", "the xml value holds a NUL character, which Hoverfly never matches")
    return Built(guarded(lambda actual: minify(_utf8(actual)) == expected, False, "xml"))


# ---------------------------------------------------------------------------------------------
# xmltemplated


@dataclass(slots=True)
class _Element:
    tag: str
    """The local name: the prefix before the first colon is dropped, as beevik/etree's ``Tag``."""
    text: list[str] = field(default_factory=list)
    """The character data before the first child element or processing instruction (etree ``Text()``)."""
    children: list[_Element] = field(default_factory=list)
    text_open: bool = True


def _local(name: str) -> str:
    prefix, colon, local = name.partition(":")
    if colon and ":" in local:
        raise ValueError(f"{name!r} is not a valid XML name for Go")
    return local if prefix and local else name


def _parse_tree(text: str) -> _Element | None:
    """The first root element, as beevik/etree reads it (strict, no entity declarations); None if it fails."""
    root: list[_Element] = []
    stack: list[_Element] = []

    def start(name: str, _attrs: object) -> None:
        element = _Element(_local(name))
        if stack:
            stack[-1].children.append(element)
            stack[-1].text_open = False
        elif not root:
            root.append(element)
        stack.append(element)

    def chars(data: str) -> None:
        if stack and stack[-1].text_open:
            stack[-1].text.append(data)

    def close_text(*_args: object) -> None:
        if stack:
            stack[-1].text_open = False  # etree's Text() stops at a processing instruction

    def refuse_entities(*_args: object) -> None:
        raise ValueError("Go's reader knows no entity declarations")

    def parse(data: str) -> int | None:
        """Parse ``data``; where the text after a complete root starts, if there is any."""
        parser = expat.ParserCreate()  # no namespace processing: prefixes stay in the names
        parser.StartElementHandler = start
        parser.EndElementHandler = lambda _name: stack.pop()
        parser.CharacterDataHandler = chars
        parser.ProcessingInstructionHandler = close_text
        parser.EntityDeclHandler = refuse_entities
        try:
            parser.Parse(data, True)
        except expat.ExpatError as exc:
            if exc.code == _JUNK_AFTER_ROOT and root and not stack:
                return int(parser.ErrorByteIndex)
            raise
        return None

    try:
        junk = parse(text)
        if junk is not None:
            # Go reads on past the first root element: what follows must be well-formed content
            parse("<_>" + _utf8(text)[junk:].decode("utf-8") + "</_>")
    except (expat.ExpatError, ValueError):  # UnicodeError is a ValueError
        return None
    return root[0] if root else None


_JUNK_AFTER_ROOT = expat.errors.codes[expat.errors.XML_ERROR_JUNK_AFTER_DOC_ELEMENT]
_IGNORE = compile_go(r"^\s*{{\s*ignore\s*}}\s*$")
_REGEX = re.compile(r"[\t\n\f\r ]*{{[\t\n\f\r ]*regex:(.*)}}[\t\n\f\r ]*\Z")  # RE2's \s and $


@dataclass(frozen=True, slots=True)
class _Template:
    tag: str
    children: tuple[_Template, ...]
    text: str
    ignore: bool = False
    regex: GoRegex | None = None

    def matches(self, actual: _Element) -> bool:
        if self.tag != actual.tag:
            return False
        if not self.children:
            got = "".join(actual.text)
            if self.ignore:
                return True
            return self.regex.search(got) is not None if self.regex else self.text == got
        remaining = list(actual.children)
        for child in self.children:
            for i, candidate in enumerate(remaining):
                if child.matches(candidate):
                    del remaining[i]
                    break
            else:
                return False
        return not remaining


def _template(element: _Element, path: str) -> _Template:
    text = "".join(element.text)
    if element.children:
        return _Template(element.tag, tuple(_template(child, path) for child in element.children), text)
    if _IGNORE.search(text):
        return _Template(element.tag, (), text, ignore=True)
    found = _REGEX.match(text)
    if found is None:
        return _Template(element.tag, (), text)
    try:  # everything up to the last }} is the pattern, trailing spaces included, as in Hoverfly
        return _Template(element.tag, (), text, regex=compile_go(found.group(1)))
    except InvalidPattern as exc:
        raise InvalidValue(f"{path}.value", f"invalid regex in <{element.tag}>: {exc}") from exc


def xml_templated(value: JSON, path: str) -> Built:
    """``xmltemplated``: element trees compared, with ``{{ ignore }}`` and ``{{ regex:... }}`` leaves."""
    expected = _parse_tree(require_str(value, path, "xmltemplated"))
    if expected is None:
        raise InvalidValue(f"{path}.value", "the xmltemplated value is not XML with a root element")
    template = _template(expected, path)

    def predicate(actual: str) -> bool:
        tree = _parse_tree(actual)
        return tree is not None and template.matches(tree)

    return Built(guarded(predicate, False, "xmltemplated"))


# ---------------------------------------------------------------------------------------------
# xpath


def xpath(value: JSON, path: str) -> Built:
    """``xpath``: true for a non-empty node-set, true boolean, non-zero (or NaN) number, non-empty string."""
    expr = require_str(value, path, "xpath")
    try:
        compiled = check_xpath(expr, f"{path}.value")
    except SimulationError as exc:  # Hoverfly's xpath fails on every request: no match
        raise InvalidValue(exc.path, exc.message) from exc

    def predicate(actual: str) -> bool:
        result = run_xpath(expr, compiled, actual)
        return result is not None and bool(result)

    def extract(actual: str) -> str | None:
        result = run_xpath(expr, compiled, actual)
        return string_value(result) if result is not None and bool(result) else None

    return Built(guarded(predicate, False, "xpath"), guarded(extract, None, "xpath"))
