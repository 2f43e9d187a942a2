"""Every helper a template can call, with the Go parameter types raymond converts arguments to.

Kinds: ``str``, ``int``, ``float``, ``bool``, ``strlist`` (Go ``[]string``) and ``any``; ``options``
marks helpers that take raymond's options (and so cannot be used as variables).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from simproxy.engine.templating import blocks, helpers_body, helpers_csv, helpers_random, helpers_text, helpers_time
from simproxy.engine.templating.evaluate import Call, HelperSpec

S, N, F, B, L, A = "str", "int", "float", "bool", "strlist", "any"


def _compare(test: Callable[[str, str], bool]) -> Callable[[Call, str, str], bool]:
    def helper(call: Call, left: str, right: str) -> bool:
        return test(left, right)

    return helper


_SPECS = (
    HelperSpec("if", (A,), True, blocks.if_),
    HelperSpec("unless", (A,), True, blocks.unless),
    HelperSpec("with", (A,), True, blocks.with_),
    HelperSpec("each", (A,), True, blocks.each),
    HelperSpec("first", (A,), True, blocks.first),
    HelperSpec("log", (S,), False, blocks.log_helper),
    HelperSpec("lookup", (A, S), True, blocks.lookup),
    HelperSpec("equal", (A, A), True, blocks.equal),
    HelperSpec("now", (S, S), False, helpers_time.now_helper),
    HelperSpec("randomString", (), False, helpers_random.random_string),
    HelperSpec("randomStringLength", (N,), False, helpers_random.random_string_length),
    HelperSpec("randomBoolean", (), False, helpers_random.random_boolean),
    HelperSpec("randomInteger", (), False, helpers_random.random_integer),
    HelperSpec("randomIntegerRange", (N, N), False, helpers_random.random_integer_range),
    HelperSpec("randomFloat", (), False, helpers_random.random_float),
    HelperSpec("randomFloatRange", (F, F), False, helpers_random.random_float_range),
    HelperSpec("randomEmail", (), False, helpers_random.random_email),
    HelperSpec("randomIPv4", (), False, helpers_random.random_ipv4),
    HelperSpec("randomIPv6", (), False, helpers_random.random_ipv6),
    HelperSpec("randomUuid", (), False, helpers_random.random_uuid),
    HelperSpec("faker", (S,), False, helpers_random.faker),
    HelperSpec("replace", (S, S, S), False, helpers_text.replace),
    HelperSpec("split", (S, S), False, helpers_text.split),
    HelperSpec("concat", (), False, helpers_text.concat, variadic=True),
    HelperSpec("length", (S,), False, helpers_text.length),
    HelperSpec("substring", (S, S, S), False, helpers_text.substring),
    HelperSpec("rightmostCharacters", (S, S), False, helpers_text.rightmost_characters),
    HelperSpec("isNumeric", (S,), False, helpers_text.is_numeric),
    HelperSpec("isAlphanumeric", (S,), False, helpers_text.is_alphanumeric),
    HelperSpec("isBool", (S,), False, helpers_text.is_bool),
    HelperSpec("isGreaterThan", (S, S), False, _compare(helpers_text.is_greater_than)),
    HelperSpec("isGreaterThanOrEqual", (S, S), False, _compare(helpers_text.is_greater_than_or_equal)),
    HelperSpec("isLessThan", (S, S), False, _compare(helpers_text.is_less_than)),
    HelperSpec("isLessThanOrEqual", (S, S), False, _compare(helpers_text.is_less_than_or_equal)),
    HelperSpec("isBetween", (S, S, S), False, helpers_text.is_between),
    HelperSpec("matchesRegex", (S, S), False, helpers_text.matches_regex),
    HelperSpec("add", (S, S, S), False, helpers_text.add),
    HelperSpec("subtract", (S, S, S), False, helpers_text.subtract),
    HelperSpec("multiply", (S, S, S), False, helpers_text.multiply),
    HelperSpec("divide", (S, S, S), False, helpers_text.divide),
    HelperSpec("sum", (L, S), False, helpers_text.sum_),
    HelperSpec("putValue", (S, S, B), True, helpers_text.put_value),
    HelperSpec("getValue", (S,), True, helpers_text.get_value),
    HelperSpec("addToArray", (S, S, B), True, helpers_text.add_to_array),
    HelperSpec("getArray", (S,), True, helpers_text.get_array),
    HelperSpec("initArray", (S,), True, helpers_text.init_array),
    HelperSpec("setStatusCode", (S,), True, helpers_text.set_status_code),
    HelperSpec("setHeader", (S, S), True, helpers_text.set_header),
    HelperSpec("requestBody", (S, S), True, helpers_body.request_body),
    HelperSpec("jsonFromJWT", (S, S), False, helpers_body.json_from_jwt),
    HelperSpec("journal", (S, S, S, S, S), True, helpers_body.journal),
    HelperSpec("hasJournalKey", (S, S), False, helpers_body.has_journal_key),
    HelperSpec("csv", (S, S, S, S), True, helpers_csv.csv_lookup),
    HelperSpec("csvMatchingRows", (S, S, S), False, helpers_csv.csv_matching_rows),
    HelperSpec("csvAsArray", (S,), False, helpers_csv.csv_as_array),
    HelperSpec("csvAsMap", (S,), False, helpers_csv.csv_as_map),
    HelperSpec("csvAddRow", (S, L), False, helpers_csv.csv_add_row),
    HelperSpec("csvDeleteRows", (S, S, S, B), False, helpers_csv.csv_delete_rows),
    HelperSpec("csvCountRows", (S,), False, helpers_csv.csv_count_rows),
    HelperSpec("csvSqlCommand", (S,), False, helpers_csv.csv_sql_command),
)

HELPERS: Mapping[str, HelperSpec] = MappingProxyType({spec.name: spec for spec in _SPECS})
"""All helpers by name (names are case-sensitive)."""

RAYMOND_BUILTINS = frozenset({"if", "unless", "with", "each", "first", "log", "lookup", "equal"})
"""raymond's own helpers; the others are Hoverfly's, the only names a variable may call."""

CSV_HELPERS = frozenset(name for name in HELPERS if name.startswith("csv"))
CSV_WRITERS = frozenset({"csvAddRow", "csvDeleteRows", "csvSqlCommand"})
JOURNAL_HELPERS = frozenset({"journal", "hasJournalKey"})
