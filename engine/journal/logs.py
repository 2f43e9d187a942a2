"""Log records as Hoverfly keeps them: ``level``, ``msg``, ``time`` and fields, fleet-wide.

``WorkerLog`` turns simproxy's log records into Hoverfly's JSON shape, hands them to the worker's
``Recorder`` (flushed to the store with the journal) and writes them as logrus lines to stdout or a
file; fields are passed with ``log.info("...", extra={"fields": {...}})``, or ``log_fields`` on the
hot path. ``text_line`` renders an entry the way logrus prints it, also for clients that ask
``/api/v2/logs`` for ``text/plain``.
"""

from __future__ import annotations

import logging
import math
import sys
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TextIO

import orjson

from simproxy.engine.gocompat.gojson import go_html_escape, go_text
from simproxy.engine.journal.recorder import Recorder

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


@dataclass(frozen=True, slots=True)
class LineOutput:
    """A stream that gets each record as one line: logrus text (coloured or not, quoted or not) or
    one JSON object (``-logs json``). ``owned``: opened for this output (a file), closed with it."""

    stream: TextIO
    json: bool = False
    colour: bool = True
    quotes: bool = True
    owned: bool = False

    def line(self, entry: dict[str, Any]) -> str:
        return json_line(entry) if self.json else text_line(entry, colour=self.colour, quotes=self.quotes)


class WorkerLog(logging.Handler):
    """Every output of one worker's own records, written by one handler: the ``Recorder`` (flushed to
    the store with the journal: ``/api/v2/logs``) and the line outputs (stdout, a file).

    Records come through the standard library (``emit``) or, from the hot path, straight from
    ``log_fields`` (``write``): a miss logs two records, and the library's record, handler chain and
    filters were a third of a miss's cost. Either way the entry is made once for every output.
    """

    def __init__(self, recorder: Recorder, level: int, outputs: tuple[LineOutput, ...] = ()) -> None:
        super().__init__(level)
        self.recorder = recorder
        self.outputs = outputs
        self.addFilter(own_records)
        self._second = -1
        self._stamp = ""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fields = getattr(record, "fields", None)
            self.write(record.levelno, record.getMessage(), fields if isinstance(fields, dict) else {}, record.created)
        except Exception:  # a log record must never break the request that logged it
            self.handleError(record)

    def write(self, levelno: int, msg: str, fields: dict[str, Any], created: float) -> None:
        """One record in Hoverfly's JSON form (a flat map; keys sorted when written) to every output.
        An output that fails is reported as the library reports a failing handler, and the others
        are still written (a closed stdout leaves the file written)."""
        entry = {str(k): v for k, v in fields.items()}
        entry["level"] = level_name(levelno)
        entry["msg"] = msg
        entry["time"] = self._time_of(created)
        try:
            kept = orjson.dumps({**entry, MOMENT: created}, option=orjson.OPT_SORT_KEYS, default=str)
        except orjson.JSONEncodeError:  # a byte that was not UTF-8 (a surrogate escape) in a field
            entry = _replaced(entry)
            kept = orjson.dumps({**entry, MOMENT: created}, option=orjson.OPT_SORT_KEYS, default=str)
        self.recorder.log(kept)
        for output in self.outputs:
            try:
                output.stream.write(output.line(entry))
                output.stream.flush()
            except Exception:
                self.failed("simproxy", levelno, msg)

    def failed(self, name: str, levelno: int, msg: str) -> None:
        """``handleError`` for a record written without a ``LogRecord`` (``log_fields``, an output)."""
        self.handleError(logging.LogRecord(name, levelno, "", 0, msg, None, None))

    def _time_of(self, created: float) -> str:
        """``rfc3339_of``, made once a second (a miss logs two records in the same second)."""
        second = math.floor(created)
        if second != self._second:
            self._stamp, self._second = rfc3339_of(second), second
        return self._stamp

    def close(self) -> None:
        with self.lock:  # type: ignore[union-attr]  # made by Handler.__init__
            outputs, self.outputs = self.outputs, ()  # a record still on its way goes to the recorder only
            for output in outputs:
                if output.owned:
                    output.stream.close()
        super().close()


def _replaced(value: Any) -> Any:
    """``value`` with its strings as Go holds them (``go_text``): each surrogate is U+FFFD."""
    if isinstance(value, str):
        return go_text(value)
    if isinstance(value, dict):
        return {_replaced(k): _replaced(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replaced(v) for v in value]
    return value


class ForeignRecords(logging.StreamHandler):  # type: ignore[type-arg]
    """Other libraries' warnings, to standard error as Python writes them: nothing is lost, and
    stdout stays machine-readable."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.setLevel(logging.WARNING)
        self.addFilter(_foreign)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))


def log_fields(logger: logging.Logger, levelno: int, msg: str, fields: dict[str, Any]) -> None:
    """``logger.log(levelno, msg, extra={"fields": fields})`` for simproxy's own records on the hot
    path: written straight to the worker's ``WorkerLog`` when that (and ``ForeignRecords``, which
    takes none of simproxy's records) is all that would see the record; anything else listening
    (a test's capture, a handler or filter of one's own), or nothing at all (the library's last
    resort, stderr), gets it through the library as usual."""
    if not logger.isEnabledFor(levelno):
        return
    sinks = _only_worker_logs(logger)
    if not sinks:
        logger.log(levelno, msg, extra={"fields": fields})
        return
    created = time.time()
    for sink in sinks:
        if levelno >= sink.level:
            with sink.lock:  # type: ignore[union-attr]  # made by Handler.__init__
                try:
                    sink.write(levelno, msg, fields, created)
                except Exception:  # as in ``emit``: a log line must never break the request
                    sink.failed(logger.name, levelno, msg)


def _only_worker_logs(logger: logging.Logger) -> list[WorkerLog]:
    """The ``WorkerLog`` handlers that would get ``logger``'s records, or none if anything else would
    see them first (a filter on the logger, a handler of another kind)."""
    if logger.filters:
        return []
    sinks: list[WorkerLog] = []
    node: logging.Logger | None = logger
    while node is not None:
        for handler in node.handlers:
            if isinstance(handler, WorkerLog):
                sinks.append(handler)
            elif not isinstance(handler, ForeignRecords):
                return []
        node = node.parent if node.propagate else None
    return sinks


def own_records(record: logging.LogRecord) -> bool:
    """simproxy's own records (other libraries' go to standard error only)."""
    return record.name == "simproxy" or record.name.startswith("simproxy.")


def _foreign(record: logging.LogRecord) -> bool:
    return not own_records(record)


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
