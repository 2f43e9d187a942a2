"""A worker's own log records: one handler writes each to ``/api/v2/logs`` and to every line output,
whether it came through the standard library or straight from the hot path (``log_fields``)."""

from __future__ import annotations

import contextlib
import io
import logging
import re
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from simproxy.engine.journal.logs import ForeignRecords, LineOutput, WorkerLog, log_fields
from simproxy.engine.journal.recorder import Recorder

FIELDS = {"path": "/a b", "query": {"b": ["1"]}, "error": "No match found"}


class Kept(Recorder):
    """A recorder that keeps the records it is given, decoded."""

    def __init__(self) -> None:
        super().__init__(journal_size=10, logs_size=10)
        self.kept: list[dict[str, Any]] = []

    def log(self, record: bytes) -> None:
        self.kept.append(orjson.loads(record))


class Heard(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.heard: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.heard.append(record)


class Broken(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError("disk full")


@contextlib.contextmanager
def _only(*handlers: logging.Handler) -> Iterator[None]:
    """The root logger with just these handlers (pytest's own capture taken off meanwhile)."""
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    for other in saved:
        root.removeHandler(other)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield
    finally:
        for added in list(root.handlers):
            root.removeHandler(added)
        for other in saved:
            root.addHandler(other)
        root.setLevel(level)


@pytest.fixture
def sink() -> tuple[WorkerLog, io.StringIO, io.StringIO, Kept]:
    text, json = io.StringIO(), io.StringIO()
    recorder = Kept()
    outputs = (LineOutput(text, colour=False), LineOutput(json, json=True))
    return WorkerLog(recorder, logging.INFO, outputs), text, json, recorder


def _no_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on the library cannot make a record: what is written came the straight way."""

    def refused(*args: Any, **kwargs: Any) -> logging.LogRecord:
        raise AssertionError("a record was made")

    monkeypatch.setattr(logging.Logger, "makeRecord", refused)


def _timeless(line: str) -> str:
    return re.sub(r'time="[^"]*"|"time":"[^"]*"', "time=T", line)


def test_a_record_written_straight_reads_as_one_through_the_library(sink: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    handler, text, json, recorder = sink
    log = logging.getLogger("simproxy.engine.modes.simulator")
    with _only(handler, ForeignRecords()):
        log.warning("Failed to find matching request from simulation", extra={"fields": FIELDS})
        _no_records(monkeypatch)
        log_fields(log, logging.WARNING, "Failed to find matching request from simulation", FIELDS)
    through, straight = text.getvalue().splitlines()
    assert _timeless(through) == _timeless(straight)
    assert _timeless(straight) == (
        'time=T level=warning msg="Failed to find matching request from simulation" '
        'error="No match found" path="/a b" query="{\\"b\\":[\\"1\\"]}"'
    )
    first, second = (orjson.loads(line) for line in json.getvalue().splitlines())
    assert first.keys() == second.keys() == {"level", "msg", "time", "path", "query", "error"}
    assert second["query"] == {"b": ["1"]} and second["level"] == "warning"
    assert [entry.keys() - {"@t"} for entry in recorder.kept] == [first.keys(), first.keys()]
    assert recorder.kept[1]["@t"] >= recorder.kept[0]["@t"]  # the precise time, for ?from=


def test_below_a_level_nothing_is_written(sink: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    handler, text, _, recorder = sink
    log = logging.getLogger("simproxy.engine.modes.simulator")
    with _only(handler):  # the root at INFO
        _no_records(monkeypatch)
        log_fields(log, logging.DEBUG, "journal entry", {})  # below the root's level
        handler.setLevel(logging.ERROR)  # another worker of the process logs from INFO: the root lets it by
        log_fields(log, logging.WARNING, "Failed to find matching request from simulation", {})
        log_fields(log, logging.ERROR, "There was an error when matching", {})
    assert [entry["msg"] for entry in recorder.kept] == ["There was an error when matching"]
    assert text.getvalue().count("msg=") == 1


def test_another_listener_gets_the_record_through_the_library(sink: Any) -> None:
    handler, text, _, recorder = sink
    listener = Heard()
    with _only(handler, listener):
        log_fields(
            logging.getLogger("simproxy.engine.modes.simulate"), logging.ERROR, "There was an error when matching", {}
        )
    assert [(r.levelname, r.getMessage(), getattr(r, "fields", None)) for r in listener.heard] == [
        ("ERROR", "There was an error when matching", {})
    ]
    assert "There was an error when matching" in text.getvalue() and len(recorder.kept) == 1


def test_a_broken_output_does_not_break_the_request_or_the_other_outputs(
    sink: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    handler, text, _, recorder = sink
    handler.outputs = (LineOutput(Broken()), LineOutput(text, colour=False))  # stdout gone, the file still there
    log = logging.getLogger("simproxy.engine.modes.simulator")
    with _only(handler):
        log.warning("Failed to find", extra={"fields": FIELDS})
        log_fields(log, logging.WARNING, "Failed to find", FIELDS)
    assert capsys.readouterr().err.count("OSError: disk full") == 2  # reported as the library reports it
    assert [entry["msg"] for entry in recorder.kept] == ["Failed to find"] * 2  # /api/v2/logs has both
    assert text.getvalue().count('msg="Failed to find"') == 2


def test_a_byte_that_was_not_utf8_is_logged_as_the_replacement_character(
    sink: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    handler, text, json, recorder = sink
    fields = {"path": "/caf\udce9", "query": {"q": ["\ud800"]}}  # %E9 in a path; a lone \ud800 from JSON
    with _only(handler):
        _no_records(monkeypatch)
        log_fields(logging.getLogger("simproxy.engine.modes.simulator"), logging.WARNING, "Failed to find", fields)
    assert (recorder.kept[0]["path"], recorder.kept[0]["query"]) == ("/caf\ufffd", {"q": ["\ufffd"]})
    assert orjson.loads(json.getvalue())["path"] == "/caf\ufffd"
    assert 'path="/caf\ufffd"' in text.getvalue()


def test_a_closed_handler_keeps_taking_records_for_the_recorder_only(tmp_path: Any) -> None:
    recorder = Kept()
    file = (tmp_path / "simproxy.log").open("a", encoding="utf-8")
    handler = WorkerLog(recorder, logging.INFO, (LineOutput(file, colour=False, owned=True),))
    handler.close()  # the worker stops while a request is still being answered
    assert file.closed
    handler.write(logging.WARNING, "Failed to find", {}, 0.0)
    assert [entry["msg"] for entry in recorder.kept] == ["Failed to find"]


def test_with_no_worker_logging_the_record_reaches_the_last_resort(capsys: pytest.CaptureFixture[str]) -> None:
    with _only():
        log_fields(
            logging.getLogger("simproxy.engine.modes.simulator"), logging.WARNING, "Failed to find matching request", {}
        )
    assert "Failed to find matching request" in capsys.readouterr().err
