"""raymond's built-in helpers: ``if``, ``unless``, ``with``, ``each``, ``first``, ``log``, ``lookup``, ``equal``.

Block helpers render the innermost block open around them (so an inline ``{{if x}}`` inside a
block renders that block again, as raymond does). Maps iterate in insertion order, one of the
orders Go's random map iteration can produce.
"""

from __future__ import annotations

import logging
from typing import Any

from simproxy.engine.templating.evaluate import Call, DataFrame, Part, eval_field, eval_program
from simproxy.engine.templating.values import MISSING, GoInt, GoStruct, go_atoi, go_title, to_str, truthy

log = logging.getLogger(__name__)


def if_(call: Call, conditional: Any) -> str:
    return call.fn() if call.include_zero() or truthy(conditional) else call.inverse()


def unless(call: Call, conditional: Any) -> str:
    return call.inverse() if call.include_zero() or truthy(conditional) else call.fn()


def with_(call: Call, context: Any) -> str:
    return call.eval_block(context, None, None) if truthy(context) else call.inverse()


def _items(context: Any) -> list[tuple[Any, Any, Any]] | None:
    """(block key, ``@key``, value) per item of an array, map or struct; None for anything else."""
    if isinstance(context, list):
        return [(GoInt(i), None, item) for i, item in enumerate(context)]
    if isinstance(context, dict):
        return [(key, key, value) for key, value in context.items()]
    if isinstance(context, GoStruct):
        return [(name, name, context.field(name)) for name in context.FIELDS]
    return None


def each(call: Call, context: Any) -> str:
    if not truthy(context):
        return call.inverse()
    scope = call.scope
    if isinstance(context, list) and scope.blocks and scope.blocks[-1].program is not None:
        program, parent, count = scope.blocks[-1].program, scope.data, len(context)
        return "".join(
            [
                eval_program(scope, program, item, DataFrame(parent, i, count, None), GoInt(i))
                for i, item in enumerate(context)
            ]
        )
    items = _items(context)
    if items is None:
        return ""
    count = len(items)
    return "".join(
        call.eval_block(value, call.iter_frame(count, i, data_key), key)
        for i, (key, data_key, value) in enumerate(items)
    )


def first(call: Call, context: Any) -> str:
    if not truthy(context):
        return call.inverse()
    items = _items(context)
    if not items:
        return ""
    key, data_key, value = items[0]
    count = 1 if isinstance(context, GoStruct) else len(items)
    return call.eval_block(value, call.iter_frame(count, 0, data_key), key)


def log_helper(call: Call, message: str) -> str:
    log.info("%s", message)
    return ""


def lookup(call: Call, obj: Any, field: str) -> str:
    if obj is None or field == "":
        return ""
    value = eval_field(call.scope, obj, Part(field, go_title(field), go_atoi(field)), None)
    return "" if value is MISSING else to_str(value)


def equal(call: Call, left: Any, right: Any) -> str:
    return call.fn() if to_str(left) == to_str(right) else call.inverse()
