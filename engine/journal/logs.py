"""Log records as Hoverfly keeps them: ``level``, ``msg``, ``time`` and fields, fleet-wide.

``RecordHandler`` turns Python log records into Hoverfly's JSON shape and hands them to the
worker's ``Recorder`` (flushed to the store with the journal); fields are passed with
``log.info("...", extra={"fields": {...}})``. ``text_line`` renders an entry the way logrus
prints it, for clients that ask for ``text/plain``.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime
from types import MappingProxyType
from typing import Any

import orjson

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
_PLAIN = re.compile(r"^[A-Za-z0-9\-._/@^+]+$")


def level_name(levelno: int) -> str:
    for threshold in (logging.CRITICAL, logging.ERROR, logging.WARNING, logging.INFO):
        if levelno >= threshold:
            return LEVELS[threshold]
    return "debug"


def rfc3339(moment: datetime) -> str:
    text = moment.astimezone().isoformat(timespec="seconds")
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def entry_of(record: logging.LogRecord) -> dict[str, Any]:
    """A log record in Hoverfly's JSON form (a flat map; keys sorted when written)."""
    fields = getattr(record, "fields", None)
    entry: dict[str, Any] = {str(k): v for k, v in fields.items()} if isinstance(fields, dict) else {}
    entry["level"] = level_name(record.levelno)
    entry["msg"] = record.getMessage()
    entry["time"] = rfc3339(datetime.fromtimestamp(record.created))
    return entry


class RecordHandler(logging.Handler):
    """Buffers every record at or above its level in the worker's ``Recorder``."""

    def __init__(self, recorder: Recorder, level: int = logging.INFO) -> None:
        super().__init__(level)
        self.recorder = recorder
        self.addFilter(_own_records)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.recorder.log(orjson.dumps(entry_of(record), option=orjson.OPT_SORT_KEYS, default=str))
        except Exception:  # a log record must never break the request that logged it
            self.handleError(record)


def _own_records(record: logging.LogRecord) -> bool:
    """simproxy's own records (the framework's start-up chatter stays on stderr only)."""
    return record.name.split(".", 1)[0] in ("engine", "admin", "store")


def text_line(entry: dict[str, Any]) -> str:
    """logrus's coloured "full timestamp" line: ``ESC[36mINFOESC[0m[time] msg   key=value``."""
    level = str(entry.get("level", "info"))
    colour = _COLOURS.get(level, 37)
    label = level.upper()[:4]
    line = f"\x1b[{colour}m{label}\x1b[0m[{entry.get('time', '')}] {entry.get('msg', '')!s:<44} "
    for key in sorted(k for k in entry if k not in ("level", "msg", "time")):
        value = entry[key]
        text = value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
        if not _PLAIN.match(text):
            text = orjson.dumps(text).decode()
        line += f" \x1b[{colour}m{key}\x1b[0m={text}"
    return line + "\n"
