"""Log records as Hoverfly keeps them: ``level``, ``msg``, ``time`` and fields, fleet-wide.

``RecordHandler`` turns Python log records into Hoverfly's JSON shape and hands them to the
worker's ``Recorder`` (flushed to the store with the journal); fields are passed with
``log.info("...", extra={"fields": {...}})``. ``text_line`` renders an entry the way logrus
prints it, for clients that ask for ``text/plain``.
"""

from __future__ import annotations

import logging
import math
import time
from types import MappingProxyType
from typing import Any

import orjson

from engine.gocompat.gojson import go_html_escape
from engine.journal.recorder import Recorder

# Python level -> Hoverfly's (logrus) level names
LEVELS = MappingProxyType(
    {
        logging.CRITICAL: "fatal",
        logging.ERROR: "error",
        logging.WARNING: "warning",
        logging.INFO: "info",
        logging.DEBUG: "debug",
    }
)
_COLOURS = MappingProxyType(
    {"panic": 31, "fatal": 31, "error": 31, "warning": 33, "info": 36, "debug": 37, "trace": 37}
)
_PLAIN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._/@^+"
"""The characters logrus leaves unquoted."""
MOMENT = "@t"
"""A stored record's creation time in epoch seconds, to the microsecond (``time`` shows whole seconds,
as Hoverfly's does; ``GET /api/v2/logs?from=`` compares the full time, as Hoverfly does)."""


def level_name(levelno: int) -> str:
    for threshold in (logging.CRITICAL, logging.ERROR, logging.WARNING, logging.INFO):
        if levelno >= threshold:
            return LEVELS[threshold]
    return "debug"


def rfc3339_of(epoch: float) -> str:
    """An epoch time as logrus writes it: RFC 3339 in local time, whole seconds, ``Z`` for UTC. Made
    from ``time.localtime`` (half the cost of a timezone-aware datetime: a miss logs two records)."""
    moment = time.localtime(math.floor(epoch))
    text = time.strftime("%Y-%m-%dT%H:%M:%S", moment)
    offset = moment.tm_gmtoff or 0
    if not offset:
        return text + "Z"
    sign = "+" if offset > 0 else "-"
    hours, minutes = divmod(abs(offset) // 60, 60)
    return f"{text}{sign}{hours:02d}:{minutes:02d}"


_ENTRY = "_simproxy_entry"
"""Where a record keeps its ``entry_of``, made once for every handler that writes it."""


def entry_of(record: logging.LogRecord) -> dict[str, Any]:
    """A log record in Hoverfly's JSON form (a flat map; keys sorted when written). Made once per
    record: the caller gets its own copy to add to."""
    made = record.__dict__.get(_ENTRY)
    if made is None:
        fields = getattr(record, "fields", None)
        made = {str(k): v for k, v in fields.items()} if isinstance(fields, dict) else {}
        made["level"] = level_name(record.levelno)
        made["msg"] = record.getMessage()
        made["time"] = rfc3339_of(record.created)
        record.__dict__[_ENTRY] = made
    return dict(made)


class RecordHandler(logging.Handler):
    """Buffers every record at or above its level in the worker's ``Recorder``."""

    def __init__(self, recorder: Recorder, level: int = logging.INFO) -> None:
        super().__init__(level)
        self.recorder = recorder
        self.addFilter(own_records)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            entry = entry_of(record)
            entry[MOMENT] = record.created
            self.recorder.log(orjson.dumps(entry, option=orjson.OPT_SORT_KEYS, default=str))
        except Exception:  # a log record must never break the request that logged it
            self.handleError(record)


def own_records(record: logging.LogRecord) -> bool:
    """simproxy's own records (other libraries' go to standard error only)."""
    return record.name.split(".", 1)[0] in ("engine", "admin", "store")


def _value_text(value: Any) -> str:
    """A field's value as logrus prints it (``fmt.Sprint``: strings as they are, the rest as JSON here)."""
    return value if isinstance(value, str) else orjson.dumps(value, default=str).decode()


def _quoted(text: str, quotes: bool) -> str:
    """logrus quotes (as Go's ``%q``) a value with a character outside ``[A-Za-z0-9-._/@^+]``."""
    return orjson.dumps(text).decode() if quotes and text and text.strip(_PLAIN) else text


def text_line(entry: dict[str, Any], *, colour: bool = True, quotes: bool = True) -> str:
    """logrus's "full timestamp" text line: coloured, ``ESC[36mINFOESC[0m[time] msg   key=value``, or
    plain, ``time="..." level=info msg="..." key=value`` (fields sorted as Go sorts strings)."""
    level = str(entry.get("level", "info"))
    fields = sorted(k for k in entry if k not in ("level", "msg", "time"))
    if not colour:
        parts = [f"time={_quoted(str(entry.get('time', '')), quotes)}", f"level={level}"]
        parts.append(f"msg={_quoted(str(entry.get('msg', '')), quotes)}")
        parts.extend(f"{key}={_quoted(_value_text(entry[key]), quotes)}" for key in fields)
        return " ".join(parts) + "\n"
    code = _COLOURS.get(level, 37)
    label = level.upper()[:4]
    message = str(entry.get("msg", "")).removesuffix("\n")
    line = f"\x1b[{code}m{label}\x1b[0m[{entry.get('time', '')}] {message:<44} "
    for key in fields:
        line += f" \x1b[{code}m{key}\x1b[0m={_quoted(_value_text(entry[key]), quotes)}"
    return line + "\n"


def json_line(entry: dict[str, Any]) -> str:
    """logrus's JSON line: one object, keys sorted, HTML characters escaped as Go escapes them."""
    return go_html_escape(orjson.dumps(entry, option=orjson.OPT_SORT_KEYS, default=str).decode()) + "\n"


class LogrusFormatter(logging.Formatter):
    """Formats simproxy's records as Hoverfly writes its logs: logrus text (coloured or not, quoted
    or not) or one JSON object per line (``-logs json``)."""

    def __init__(self, *, json: bool = False, colour: bool = True, quotes: bool = True) -> None:
        super().__init__()
        self.json = json
        self.colour = colour
        self.quotes = quotes

    def format(self, record: logging.LogRecord) -> str:
        entry = entry_of(record)
        line = json_line(entry) if self.json else text_line(entry, colour=self.colour, quotes=self.quotes)
        return line.removesuffix("\n")
