"""What happens after an answer is written, as observers the dispatcher tells in order: the journal
entry, the metrics, and the pair's post-serve action (which quotes the journal entry, so it comes
after it). None of them can delay or change the answer: it is already out."""

from __future__ import annotations

from collections.abc import Set
from typing import TYPE_CHECKING

from engine.modes.base import Exchange
from engine.outbound.actions import ActionRunner, Served

if TYPE_CHECKING:
    from engine.fleet.metrics import MetricsBuffer
    from engine.fleet.runtime import Runtime
    from engine.journal.recorder import Recorder


class JournalObserver:
    """Appends the journal entry (when the journal is on) and notes its id for the observers after."""

    def __init__(self, records: Recorder) -> None:
        self.records = records

    @property
    def keeps_reads(self) -> bool:
        """The journal keeps the bytes a request came in (``Received``) when it is on at start."""
        return self.records.journal_enabled

    def served(self, exchange: Exchange) -> None:
        records = self.records
        if records.journal_size:
            sequence = records.record(
                exchange.req,
                exchange.wire,
                exchange.received_at,
                exchange.seconds * 1000,
                exchange.mode,
                exchange.raw,
                exchange.arrival,
            )
            exchange.journal_id = records.entry_id(sequence) if sequence else ""


class MetricsObserver:
    """Counts the request and its latency per mode and outcome (and per pair when it has a name)."""

    def __init__(self, metrics: MetricsBuffer) -> None:
        self.metrics = metrics

    def served(self, exchange: Exchange) -> None:
        self.metrics.request(exchange.mode, exchange.wire.outcome, exchange.seconds, exchange.wire.pair)


class ActionObserver:
    """Runs the post-serve action a hit's pair names, in the modes where Hoverfly runs them."""

    def __init__(self, actions: ActionRunner, runtime: Runtime, modes: Set[str]) -> None:
        self.actions = actions
        self.runtime = runtime
        self.modes = modes

    def served(self, exchange: Exchange) -> None:
        wire = exchange.wire
        if not (wire.post_serve_action and wire.outcome == "hit" and exchange.mode in self.modes):
            return
        action = self.runtime.snapshot.config.action(wire.post_serve_action)
        if action is not None:
            served = Served(
                wire.post_serve_action,
                exchange.req,
                wire,
                exchange.journal_id,
                exchange.received_at,
                exchange.seconds * 1000,
                exchange.mode,
            )
            self.actions.schedule(action, served)
