"""``go_indent`` (the JSON blocks of a miss's 502 body) writes what the standard library's indenting
encoder wrote, through orjson where it can: checked on random JSON values."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from simproxy.engine.gocompat.gojson import go_html_escape
from simproxy.engine.modes.failures import go_indent
from simproxy.engine.simulation.codec import go_json

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # no lone surrogates
_LEAVES = st.none() | st.booleans() | st.integers(-(2**63), 2**64) | _TEXT | st.floats(allow_nan=False)
_VALUES = st.recursive(
    _LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4), max_leaves=25
)


def _reference(value: Any) -> str:
    text = json.dumps(go_json(value, sort_keys=False), indent=4, ensure_ascii=False)
    return go_html_escape(text)


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_go_indent_writes_what_the_indenting_encoder_wrote(value: Any) -> None:
    assert go_indent(value) == _reference(value)


def test_bytes_that_were_not_utf8_are_written_as_the_replacement_character() -> None:
    assert go_indent({"Body": "caf\udce9 <b>"}) == '{\n    "Body": "caf\\ufffd \\u003cb\\u003e"\n}'


_STRINGS = st.text(st.characters(blacklist_categories=("Cs",)) | st.sampled_from("\udce9\udc80<>&\n\\"), max_size=12)
_STRING_VALUES = st.recursive(
    _STRINGS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_STRINGS, inner, max_size=4), max_leaves=30
)


@settings(max_examples=400, deadline=None)
@given(_STRING_VALUES)
def test_a_value_of_strings_only_is_written_alike_without_the_conversion_walk(value: Any) -> None:
    """A request's view and a state are told to skip the float search: nothing changes in the text,
    however deep, and bytes that were not UTF-8 still become the replacement character."""
    assert go_indent(value, strings_only=True) == go_indent(value)
