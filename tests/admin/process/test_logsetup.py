"""A worker's log sinks: installed on the root logger and taken off again without a trace."""

from __future__ import annotations

import logging

from simproxy.admin.process.logsetup import install_logging
from simproxy.admin.settings import Settings
from simproxy.engine.journal.recorder import Recorder


def _switches() -> tuple[object, ...]:
    return (logging._srcfile, logging.logThreads, logging.logProcesses, logging.logMultiprocessing)


def test_the_record_extras_are_off_while_a_worker_logs_and_back_after() -> None:
    before, root = _switches(), logging.getLogger()
    handlers = list(root.handlers)
    sinks = install_logging(Settings(), Recorder(journal_size=10, logs_size=10))
    try:
        assert _switches() == (None, False, False, False)
        record = logging.getLogger("simproxy.engine.test").makeRecord(
            "simproxy.engine.test", logging.INFO, "f", 1, "m", (), None
        )
        assert record.thread is None and record.process is None
    finally:
        sinks.remove()
    assert _switches() == before
    assert root.handlers == handlers


def test_workers_of_one_process_leaving_in_any_order_put_the_switches_back() -> None:
    before = _switches()
    first = install_logging(Settings(), Recorder(journal_size=10, logs_size=10))
    second = install_logging(Settings(), Recorder(journal_size=10, logs_size=10))
    first.remove()
    assert _switches() == (None, False, False, False)  # the second still logs
    second.remove()
    assert _switches() == before
