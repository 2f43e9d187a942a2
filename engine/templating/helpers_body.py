"""Body queries: ``requestBody`` (and ``Request.Body``), ``jsonFromJWT``, ``journal``, ``hasJournalKey``.

JSONPath is the engine's Kubernetes evaluator, printed as k8s prints (``%v`` floats, JSON for
objects); a whole-output scientific number is rewritten in plain decimals and a JSON array comes
back as an array. XML is read as SpectoLabs/goxml2json reads it for ``jsonpathfromxml``.
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from decimal import Decimal
from typing import Any
from xml.parsers import expat

from simproxy.engine.gocompat.gojson import InvalidJSON, decode_float, format_v_float, marshal
from simproxy.engine.gocompat.jsonpath_k8s import NO_VALUE, JsonPath, run
from simproxy.engine.gocompat.jwt import token_parts
from simproxy.engine.gocompat.xpath import parse_xml, run_xpath, string_value, xpath_on
from simproxy.engine.templating.context import NOT_JSON, UNREAD
from simproxy.engine.templating.evaluate import Call
from simproxy.engine.templating.helpers_csv import evaluation_text
from simproxy.engine.templating.values import GO_SPACE, RenderFailure, go_trim_space

_SCIENTIFIC = re.compile(r"[+-]?[0-9]*\.?[0-9]+[eE][+-]?[0-9]+\Z")


def _text(value: Any) -> str:
    """One JSONPath result as k8s prints it."""
    if isinstance(value, dict | list):
        return marshal(value) or ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_v_float(value)
    if isinstance(value, int):
        return str(int(value))
    return "null" if value is None else "<no value>"


def json_query(services: Any, query: str, data: Any) -> Any:
    """Hoverfly's ``jsonPath`` on decoded data: a string, or a list when the output is a JSON array."""
    if query == "":
        raise RenderFailure("an empty JSONPath query (Hoverfly crashes)")
    compiled: JsonPath | None = services.jsonpath(query)
    if compiled is None:
        return ""
    walk = compiled.simple
    if walk is not None:  # one value or none: what the k8s run below finds, without running it
        for step in walk:
            if step.__class__ is str:
                if data.__class__ is not dict or step not in data:
                    return ""
                data = data[step]
            elif data.__class__ is not list or step >= len(data):  # type: ignore[operator]
                return ""  # not an array (or null: nothing found), or past its end
            else:
                data = data[step]  # type: ignore[index]
        return data if data.__class__ is list else _printed(_text(data))
    root = [NO_VALUE if data is None else data]
    found = []
    try:
        for part in compiled.parts:
            found.append(part if isinstance(part, str) else run(root, part))
    except Exception:  # a k8s evaluation error (missing key, index out of range, ...)
        return ""
    if len(found) == 1 and not isinstance(found[0], str) and len(found[0]) == 1 and isinstance(found[0][0], list):
        return found[0][0]  # printed as JSON and read back, a lone array is itself
    return _printed(
        "".join(part if isinstance(part, str) else " ".join(_text(value) for value in part) for part in found)
    )


def _printed(result: str) -> Any:
    """The k8s output as Hoverfly reads it back: plain decimals for a scientific number, an array
    for text that holds a JSON array."""
    if _SCIENTIFIC.match(result):
        result = format(Decimal(result).normalize(), "f")
    if result.lstrip(" \t\r\n").startswith("["):
        try:
            parsed = decode_float(result)
        except InvalidJSON:
            return result
        if isinstance(parsed, list):
            return parsed
    return result


def fetch_from_body(services: Any, query_type: str, query: str, body: str) -> Any:
    """Hoverfly's ``FetchFromRequestBody``: jsonpath, xpath or jsonpathfromxml; anything else gives ""."""
    if query_type == "jsonpath":
        if query == "":
            raise RenderFailure("an empty JSONPath query (Hoverfly crashes)")
        try:
            data = decode_float(body)
        except InvalidJSON:
            return ""
        return json_query(services, query, data)
    if query_type == "xpath":
        compiled = services.xpath(query)
        result = run_xpath(query, compiled, body)
        return "" if result is None else string_value(result)
    if query_type == "jsonpathfromxml":
        return json_query(services, query, xml_to_json(body))
    return ""


def request_body(call: Call, query_type: str, query: str) -> Any:
    scope = call.scope
    rt = scope.rt
    if scope.ctx[-1] is not rt.root:
        raise RenderFailure("requestBody inside a block whose context is not the root (Hoverfly crashes)")
    return fetch_from_request(rt, query_type.lower(), query)


def fetch_from_request(rt: Any, query_type: str, query: str) -> Any:
    """``fetch_from_body`` on the render's request: its body read as JSON, as XML or as
    goxml2json's JSON at most once each, however many queries read it."""
    if query_type == "jsonpath":
        if query == "":
            raise RenderFailure("an empty JSONPath query (Hoverfly crashes)")
        return query_body_json(rt, query)
    if query_type == "xpath":
        parsed = rt.body_xml
        if parsed is UNREAD:
            parsed = rt.body_xml = parse_xml(rt.request.body)
        result = xpath_on(parsed, query, rt.services.xpath(query))
        return "" if result is None else string_value(result)
    if query_type == "jsonpathfromxml":
        data = rt.body_xml_json
        if data is UNREAD:
            data = rt.body_xml_json = xml_to_json(rt.request.body)
        return json_query(rt.services, query, data)
    return ""


def query_body_json(rt: Any, query: str) -> Any:
    """A JSONPath query on the request body, decoded at the first query of the render only."""
    data = rt.body_json
    if data is UNREAD:
        try:
            data = decode_float(rt.request.body)
        except InvalidJSON:
            data = NOT_JSON
        rt.body_json = data
    return "" if data is NOT_JSON else json_query(rt.services, query, data)


def json_from_jwt(call: Call, path: str, token: str) -> Any:
    token = go_trim_space(token)
    if token == "":
        return ""
    if token[:7].lower() == "bearer ":
        token = go_trim_space(token[7:])
    composite = token_parts(token)
    if composite is None:
        return ""
    result = json_query(call.rt.services, path, composite)
    return result if isinstance(result, list | str) else ""


def journal(call: Call, index: str, key: str, source: str, query_type: str, query: str) -> Any:
    entry = call.rt.journal.lookup(index, key)
    if entry is not None:
        which = source.casefold()
        body = entry.request_body if which == "request" else entry.response_body if which == "response" else ""
        if body != "":
            return fetch_from_body(call.rt.services, query_type, query, body)
    return evaluation_text("journal", call.params)


def has_journal_key(call: Call, index: str, key: str) -> bool:
    return call.rt.journal.lookup(index, key) is not None


# ---------------------------------------------------------------------------------------------
# XML to JSON (SpectoLabs/goxml2json)


class _XmlNode:
    __slots__ = ("children", "data")

    def __init__(self, data: str = "") -> None:
        self.children: dict[str, list[_XmlNode]] = {}
        self.data = data

    def value(self) -> Any:
        """Every child list is an array (the fork's encoder); text beside children is ``#content``."""
        if not self.children:
            return self.data
        out: dict[str, Any] = {"#content": self.data} if self.data else {}
        for label, nodes in self.children.items():
            out[label] = [node.value() for node in nodes]
        return out


def _graphic(char: str) -> bool:
    category = unicodedata.category(char)
    return (category[0] in "LMNPS" or category == "Zs") and char not in GO_SPACE


def _trim_non_graphic(text: str) -> str:
    start, end = 0, len(text)
    while start < end and not _graphic(text[start]):
        start += 1
    while end > start and not _graphic(text[end - 1]):
        end -= 1
    return text[start:end]


def _local(name: str) -> str:
    prefix, colon, local = name.partition(":")
    return local if colon and prefix and local else name


def xml_to_json(text: str) -> Any:
    """The body as goxml2json decodes it: a malformed document keeps what was read before the error."""
    root = _XmlNode()
    stack: list[tuple[_XmlNode, str]] = [(root, "")]
    pending: list[str] = []

    def flush(*_args: object) -> None:
        if pending:
            stack[-1][0].data = _trim_non_graphic("".join(pending))
            pending.clear()

    def start(name: str, attributes: list[str]) -> None:
        flush()
        node = _XmlNode()
        for i in range(0, len(attributes), 2):
            node.children.setdefault("-" + _local(attributes[i]), []).append(_XmlNode(attributes[i + 1]))
        stack.append((node, _local(name)))

    def end(_name: str) -> None:
        flush()
        node, label = stack.pop()
        stack[-1][0].children.setdefault(label, []).append(node)

    parser = expat.ParserCreate()
    parser.ordered_attributes = True
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = pending.append
    parser.CommentHandler = flush
    parser.ProcessingInstructionHandler = flush
    parser.StartCdataSectionHandler = flush
    parser.EndCdataSectionHandler = flush
    with contextlib.suppress(expat.ExpatError):  # keep what was read before the error, as Go does
        parser.Parse(text, True)
    flush()
    return root.value()
