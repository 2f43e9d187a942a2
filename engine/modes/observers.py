"""What happens after an answer is written, as observers the dispatcher tells in order: the journal
entry, the metrics, and the pair's post-serve action (which quotes the journal entry, so it comes
after it). None of them can delay or change the answer: it is already out."""

from __future__ import annotations

import logging
from collections.abc import Callable, Set
from typing import TYPE_CHECKING

import orjson

from simproxy.engine.journal.entries import entry_view, record_entry
from simproxy.engine.outbound.actions import ActionRunner, Served
from simproxy.engine.wire.request import Received
from simproxy.engine.wire.response import Wire

if TYPE_CHECKING:
    from simproxy.engine.fleet.metrics import MetricsBuffer
    from simproxy.engine.fleet.runtime import Runtime
    from simproxy.engine.journal.recorder import Recorder


log = logging.getLogger(__name__)


class JournalObserver:
    """Appends the journal entry (when the journal is on): ``served`` is the recorder's own, which the
    dispatcher then calls with no step between, unless each entry is also logged."""

    def __init__(self, records: Recorder) -> None:
        self.records = records
        self.debug = log.isEnabledFor(logging.DEBUG)
        """At ``-log-level debug`` each entry is logged too, as Hoverfly logs it ("journal entry")."""
        self.served: Callable[[Wire, Received, float, str], None] = self._logged if self.debug else records.served

    @property
    def last_sequence(self) -> int:
        """The number of the entry of the request being told about (0: not journaled)."""
        return self.records.last_sequence

    def _logged(self, wire: Wire, received: Received, seconds: float, mode: str) -> None:
        records = self.records
        records.served(wire, received, seconds, mode)
        sequence = records.last_sequence
        entry_id = records.entry_id(sequence) if sequence else ""
        entry = record_entry(entry_id, received.request, wire, mode, received.at, seconds * 1000)
        text = orjson.dumps(entry_view(entry)).decode() + "\n"
        log.debug("journal entry", extra={"fields": {"json": text}})


class MetricsObserver:
    """Counts the request and its latency per mode and outcome (and per pair when it has a name)."""

    def __init__(self, metrics: MetricsBuffer) -> None:
        self.metrics = metrics

    def served(self, wire: Wire, received: Received, seconds: float, mode: str) -> None:
        self.metrics.request(mode, wire.outcome, seconds, wire.pair)


class ActionObserver:
    """Runs the post-serve action a hit's pair names, in the modes where Hoverfly runs them; the
    action is sent the journal entry the journal observer, told first, has just made."""

    def __init__(self, actions: ActionRunner, runtime: Runtime, journal: JournalObserver, modes: Set[str]) -> None:
        self.actions = actions
        self.runtime = runtime
        self.journal = journal
        self.modes = modes

    def served(self, wire: Wire, received: Received, seconds: float, mode: str) -> None:
        if not (wire.post_serve_action and wire.outcome == "hit" and mode in self.modes):
            return
        action = self.runtime.snapshot.config.action(wire.post_serve_action)
        if action is not None:
            sequence = self.journal.last_sequence
            entry_id = self.runtime.records.entry_id(sequence) if sequence else ""
            served = Served(wire.post_serve_action, received.request, wire, entry_id, received.at, seconds * 1000, mode)
            self.actions.schedule(action, served)
