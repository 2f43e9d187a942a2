"""A worker's log sinks: installed on the root logger and taken off again without a trace."""

from __future__ import annotations

import logging

from admin.logsetup import install_logging
from admin.settings import Settings
from engine.journal.recorder import Recorder


def test_the_record_extras_are_off_while_a_worker_logs_and_back_after() -> None:
    before = (logging._srcfile, logging.logThreads, logging.logProcesses, logging.logMultiprocessing)
    root = logging.getLogger()
    handlers = list(root.handlers)
    sinks = install_logging(Settings(), Recorder(journal_size=10, logs_size=10))
    try:
        assert (logging._srcfile, logging.logThreads, logging.logProcesses, logging.logMultiprocessing) == (
            None, False, False, False,
        )  # fmt: skip
        record = logging.getLogger("engine.test").makeRecord("engine.test", logging.INFO, "f", 1, "m", (), None)
        assert record.thread is None and record.process is None
    finally:
        sinks.remove()
    assert (logging._srcfile, logging.logThreads, logging.logProcesses, logging.logMultiprocessing) == before
    assert root.handlers == handlers
