"""The XML family: xml, xmltemplated and xpath (spec §2.2.7-2.2.9).

``xml`` compares minified text (``engine.xmlmin``); ``xmltemplated`` compares element trees read by
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

from engine.errors import SimulationError
from engine.gojson import format_f_float
from engine.goregex import GoRegex, InvalidPattern, compile_go
from engine.matcher_base import Built, guarded, require_str
from engine.model import JSON

if TYPE_CHECKING:
    from lxml import etree


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")  # bodies keep non-UTF-8 bytes as surrogates


def xml_equal(value: JSON, path: str) -> Built:
    """``xml``: both sides minified the way Hoverfly minifies them, then compared as text."""
    from engine.xmlmin import minify

    try:
        expected = minify(_utf8(require_str(value, path, "xml")))
    except UnicodeEncodeError:
        expected = None
    if expected is None:
        raise SimulationError(f"{path}.value", "the xml value holds a NUL character, which Hoverfly never matches")
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
        raise SimulationError(f"{path}.value", f"invalid regex in <{element.tag}>: {exc}") from exc


def xml_templated(value: JSON, path: str) -> Built:
    """``xmltemplated``: element trees compared, with ``{{ ignore }}`` and ``{{ regex:... }}`` leaves."""
    expected = _parse_tree(require_str(value, path, "xmltemplated"))
    if expected is None:
        raise SimulationError(f"{path}.value", "the xmltemplated value is not XML with a root element")
    template = _template(expected, path)

    def predicate(actual: str) -> bool:
        tree = _parse_tree(actual)
        return tree is not None and template.matches(tree)

    return Built(guarded(predicate, False, "xmltemplated"))


# ---------------------------------------------------------------------------------------------
# xpath

_PREFIX = re.compile(r"([A-Za-z_][\w.-]*):(?!:)")


def _parser() -> etree.XMLParser:
    from lxml import etree

    # lenient like Go's reader (unclosed tags tolerated); never fetch or expand anything external
    return etree.XMLParser(recover=True, resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def _check_xpath(expr: str, path: str) -> etree.XPath:
    from lxml import etree

    where = f"{path}.value"
    try:
        compiled = etree.XPath(expr)
        # libxml2 reports some errors (arity, unknown functions) only when run: try it on an empty
        # document, with the prefixes it names bound, since those come from each request's body
        trial = {prefix: "urn:simproxy:trial" for prefix in _PREFIX.findall(expr)}
        etree.XPath(expr, namespaces=trial)(etree.ElementTree(etree.Element("_")))
    except etree.XPathError as exc:
        raise SimulationError(where, f"invalid XPath {expr!r}: {exc}") from exc
    except ValueError as exc:
        raise SimulationError(where, f"invalid XPath {expr!r}: {exc}") from exc
    return compiled


def _run_xpath(expr: str, compiled: etree.XPath, actual: str) -> object:
    """The XPath result on the body, or None when it cannot run (not XML, unknown prefix)."""
    from lxml import etree

    try:
        root = etree.fromstring(_utf8(actual), _parser())
    except etree.XMLSyntaxError:
        return None  # nothing recoverable (an empty body, say)
    if root is None:
        return None
    namespaces = {prefix: uri for prefix, uri in root.nsmap.items() if prefix}  # the root's only
    tree = root.getroottree()
    try:
        return etree.XPath(expr, namespaces=namespaces)(tree) if namespaces else compiled(tree)
    except etree.XPathError:
        return None


def _string_value(result: object) -> str:
    """Go's ``Result.String()``: first node's text for a node-set, ``true``/``false``, plain numbers."""
    if isinstance(result, bool):
        return "true" if result else "false"
    if isinstance(result, float):
        return format_f_float(result)
    if isinstance(result, list):
        if not result:
            return ""
        first = result[0]
        if isinstance(first, tuple):  # a namespace node: (prefix, uri)
            return str(first[1])
        if isinstance(first, str):
            return str(first)
        return str(first.xpath("string()"))
    return str(result)


def xpath(value: JSON, path: str) -> Built:
    """``xpath``: true for a non-empty node-set, true boolean, non-zero (or NaN) number, non-empty string."""
    expr = require_str(value, path, "xpath")
    compiled = _check_xpath(expr, path)

    def predicate(actual: str) -> bool:
        result = _run_xpath(expr, compiled, actual)
        return result is not None and bool(result)

    def extract(actual: str) -> str | None:
        result = _run_xpath(expr, compiled, actual)
        return _string_value(result) if result is not None and bool(result) else None

    return Built(guarded(predicate, False, "xpath"), guarded(extract, None, "xpath"))
