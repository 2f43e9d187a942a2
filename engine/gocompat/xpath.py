"""XPath 1.0 as Hoverfly's ``xpath`` matcher and template helper run it (antchfx/xpath): lxml on a
leniently parsed body, results turned into text as Go's ``Result.String()`` does. lxml is loaded by
the first expression compiled.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from simproxy.engine.errors import SimulationError
from simproxy.engine.gocompat.gojson import format_f_float

if TYPE_CHECKING:
    from lxml import etree

_PREFIX = re.compile(r"([A-Za-z_][\w.-]*):(?!:)")


def _parser() -> etree.XMLParser:
    from lxml import etree

    # lenient like Go's reader (unclosed tags tolerated); never fetch or expand anything external
    return etree.XMLParser(recover=True, resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def check_xpath(expr: str, where: str) -> etree.XPath:
    from lxml import etree

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


ParsedXml = tuple["etree._ElementTree", dict[str, str]]
"""A body read as XML: its tree, and the prefixes its root element binds."""


def parse_xml(actual: str) -> ParsedXml | None:
    """``actual`` read leniently as XML, once for any number of expressions; None when nothing
    recoverable is in it (an empty body, say)."""
    from lxml import etree

    try:
        root = etree.fromstring(actual.encode("utf-8", "surrogateescape"), _parser())
    except etree.XMLSyntaxError:
        return None
    if root is None:
        return None
    namespaces = {prefix: uri for prefix, uri in root.nsmap.items() if prefix}  # the root's only
    return root.getroottree(), namespaces


def xpath_on(parsed: ParsedXml | None, expr: str, compiled: etree.XPath) -> object:
    """The XPath result on a parsed body, or None when it cannot run (not XML, unknown prefix)."""
    from lxml import etree

    if parsed is None:
        return None
    tree, namespaces = parsed
    try:
        return etree.XPath(expr, namespaces=namespaces)(tree) if namespaces else compiled(tree)
    except etree.XPathError:
        return None


def run_xpath(expr: str, compiled: etree.XPath, actual: str) -> object:
    """The XPath result on the body, or None when it cannot run (not XML, unknown prefix)."""
    return xpath_on(parse_xml(actual), expr, compiled)


def string_value(result: object) -> str:
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
