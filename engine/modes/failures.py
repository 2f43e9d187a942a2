"""The plain-text body of a proxied request that failed, in Hoverfly's layout (core/errors).

The JSON blocks are written the way Go's ``json.MarshalIndent`` writes them: four spaces,
map keys sorted, ``<``, ``>`` and ``&`` escaped. simproxy's name stands where Hoverfly writes its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

from simproxy.engine.gocompat.gojson import go_html_escape
from simproxy.engine.matching.scoring import ClosestMiss
from simproxy.engine.simulation.codec import encode_request, encode_response, go_json
from simproxy.engine.simulation.model import Pair
from simproxy.engine.wire.request import RequestDetails
from simproxy.engine.wire.response import Wire, plain_error

PRODUCT = "simproxy"
NO_MATCH = "Could not find a match for request, create or record a valid matcher first!"
MATCHING_CONTEXT = "There was an error when matching"


def error_text(context: str, error: str, *, product: str = PRODUCT) -> str:
    return f"{product} Error!\n\n{context}\n\nGot error: {error}"


def failure_wire(context: str, error: str, *, product: str, outcome: str = "error") -> Wire:
    """A 502 in Hoverfly's layout, signed with ``product`` (the dialect's name, ``-compat``)."""
    return plain_error(502, error_text(context, error, product=product), outcome=outcome)


def request_fields(req: RequestDetails) -> dict[str, Any]:
    """A request as Hoverfly's logs show it in their ``request`` field (a map with lower-case keys)."""
    return {
        "body": req.body,
        "destination": req.destination,
        "headers": dict(req.headers),
        "method": req.method,
        "path": req.path,
        "query": dict(sorted(req.query.items())),
        "scheme": req.scheme,
    }


def matching_error(wire_body: bytes) -> str:
    """The error a miss's 502 body carries (after ``Got error: ``), as Hoverfly logs it."""
    return wire_body.decode("utf-8", "replace").partition("\n\nGot error: ")[2]


def pair_texts(pair: Pair) -> tuple[str, str]:
    """A closest pair's matcher and response as a miss's 502 shows them (the same for every miss it
    is closest to: ``PairTexts`` keeps them)."""
    return go_indent(encode_request(pair.request)), go_indent(encode_response(pair.response))


class PairTexts:
    """``pair_texts`` of the pairs recently closest to a miss, kept by one worker: a run of misses
    (a client probing a path the simulation lacks) writes the same pair's texts again and again."""

    KEPT = 256

    def __init__(self) -> None:
        self._kept: dict[int, tuple[Pair, tuple[str, str]]] = {}
        """By the pair's id, with the pair itself: an id is only trusted while its pair is alive."""

    def __call__(self, pair: Pair) -> tuple[str, str]:
        kept = self._kept.get(id(pair))
        if kept is not None and kept[0] is pair:
            return kept[1]
        if len(self._kept) >= self.KEPT:
            self._kept.clear()  # an old simulation's pairs go with it
        texts = self._kept[id(pair)] = (pair, pair_texts(pair))
        return texts[1]


def miss_text(
    req: RequestDetails,
    closest: ClosestMiss | None,
    *,
    product: str = PRODUCT,
    texts: Callable[[Pair], tuple[str, str]] = pair_texts,
) -> str:
    message = NO_MATCH
    if closest is not None:
        request = go_indent(request_view(req), strings_only=True)
        state = go_indent(dict(sorted(closest.state.items())), strings_only=True)
        matcher, response = texts(closest.pair)
        message += (
            f"\n\nThe following request was made, but was not matched by {product}:\n\n{request}"
            f"\n\nWhilst {product} has the following state:\n\n{state}"
            f"\n\nThe matcher which came closest was:\n\n{matcher}"
            f"\n\nBut it did not match on the following fields:\n\n[{', '.join(closest.missed_fields)}]"
            f"\n\nWhich if hit would have given the following response:\n\n{response}"
        )
    return error_text(MATCHING_CONTEXT, message, product=product)


def request_view(req: RequestDetails) -> dict[str, Any]:
    """The request model with Go's field names, in Go's field order."""
    return {
        "Path": req.path,
        "Method": req.method,
        "Destination": req.destination,
        "Scheme": req.scheme,
        "Query": dict(sorted(req.query.items())),
        "Body": req.body,
        "FormData": dict(sorted(req.form.items())),
        "Headers": dict(sorted(req.headers.items())),
    }


_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def go_indent(value: Any, *, strings_only: bool = False) -> str:
    """``json.MarshalIndent``: 4 spaces, sorted maps, whole floats as integers, HTML escaped, and
    each byte that was not UTF-8 (a surrogate escape here) written as ``\\ufffd``.

    orjson writes it (indented by two, doubled here) unless a float, a non-UTF-8 byte or a huge
    integer is in it: the standard library's encoder (ten times slower with an indent) keeps those
    as before. ``strings_only``: the value holds only strings, lists and maps keyed by strings (a
    request's view, a state), so there is nothing to convert and no float to look for."""
    converted = value if strings_only else go_json(value, sort_keys=False)
    if strings_only or not _has_float(converted):
        try:
            text = orjson.dumps(converted, option=orjson.OPT_INDENT_2).decode()
        except (orjson.JSONEncodeError, TypeError):
            pass
        else:
            return go_html_escape(_doubled(text))
    text = json.dumps(converted, indent=4, ensure_ascii=False)
    return go_html_escape(_NOT_UTF8.sub(lambda _: "\\ufffd", text))


def _doubled(text: str) -> str:
    """Each line's indentation doubled. A JSON text's line breaks all start lines (a string holds
    none), and a line at depth k starts with 2k spaces. Step d adds two spaces to every line at
    depth d or more, which by then start with 4d - 2 spaces (lines at depth d - 1 have 4d - 4): a
    line at depth k gains 2k in k steps, each one ``str.replace`` instead of a call per line."""
    depth = 1
    while (found := "\n" + " " * (4 * depth - 2)) in text:
        text = text.replace(found, found + "  ")
        depth += 1
    return text


def _has_float(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return isinstance(value, float)
