"""Where one worker's log records go: the fleet's ``/api/v2/logs`` (through the worker's recorder),
standard output and a file, in logrus's text or JSON form (Hoverfly's ``-logs*`` flags).

Only simproxy's own records are written as Hoverfly's; anything else (a library's warning) goes
to standard error as Python writes it, so that nothing is lost and stdout stays machine-readable.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from types import MappingProxyType

from simproxy.admin.settings import Settings
from simproxy.engine.journal.logs import ForeignRecords, LineOutput, WorkerLog
from simproxy.engine.journal.recorder import Recorder

_PYTHON_LEVELS = MappingProxyType(
    {
        "panic": logging.CRITICAL,
        "fatal": logging.CRITICAL,
        "error": logging.ERROR,
        "warning": logging.WARNING,
        "info": logging.INFO,
        "debug": logging.DEBUG,
        "trace": logging.DEBUG,
    }
)


def python_level(level: str) -> int:
    return _PYTHON_LEVELS.get(level, logging.INFO)


_RECORD_EXTRAS = ("_srcfile", "logThreads", "logProcesses", "logMultiprocessing")
"""What the standard library gathers for every record and simproxy's lines never show: the
caller's frame, thread, process and multiprocessing names (the logging HOWTO's "Optimization"
switches). A miss logs two records, and gathering these was a tenth of their cost."""


class _WorkerRecords(WorkerLog):
    """A worker's ``WorkerLog``, which also holds the record switches as they were before the
    first worker in this process turned them off: the last one to leave puts them back, whatever
    the order the workers of one process (tests run several) come and go in."""

    def __init__(
        self,
        recorder: Recorder,
        level: int,
        outputs: tuple[LineOutput, ...],
        switches: tuple[tuple[str, object], ...],
    ) -> None:
        super().__init__(recorder, level, outputs)
        self.switches = switches


@dataclass(frozen=True, slots=True)
class LogSinks:
    """The handlers one worker installed on the root logger, to take off when it stops."""

    handlers: tuple[logging.Handler, ...]

    def remove(self) -> None:
        root = logging.getLogger()
        for handler in self.handlers:
            root.removeHandler(handler)
            handler.close()
        if not any(isinstance(handler, _WorkerRecords) for handler in root.handlers):
            for handler in self.handlers:
                if isinstance(handler, _WorkerRecords):
                    for name, value in handler.switches:
                        setattr(logging, name, value)


def install_logging(settings: Settings, recorder: Recorder) -> LogSinks:
    """Send the worker's records to the recorder, and to the console and the file as asked."""
    level = python_level(settings.log_level)
    options = settings.logs
    json = options.format == "json"
    root = logging.getLogger()
    installed = [handler for handler in root.handlers if isinstance(handler, _WorkerRecords)]
    switches = installed[0].switches if installed else tuple((name, getattr(logging, name)) for name in _RECORD_EXTRAS)
    outputs: list[LineOutput] = []
    if "console" in options.outputs:
        outputs.append(LineOutput(sys.stdout, json=json, colour=options.colour, quotes=options.quotes))
    if "file" in options.outputs:
        file = open(options.file, "a", encoding="utf-8")  # noqa: SIM115  # closed with the handler
        outputs.append(LineOutput(file, json=json, colour=False, quotes=options.quotes, owned=True))
    handlers = (_WorkerRecords(recorder, level, tuple(outputs), switches), ForeignRecords())
    root.setLevel(level)
    for handler in handlers:
        root.addHandler(handler)
    for name in _RECORD_EXTRAS:
        setattr(logging, name, None if name == "_srcfile" else False)
    return LogSinks(handlers)
