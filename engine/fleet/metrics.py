"""Prometheus metrics of one simproxy instance, counted cheaply on the request path.

Each worker adds to plain dicts (a few hundred nanoseconds a request); the runtime's flush adds
them to the instance's totals in the store, and ``GET /metrics`` (admin) reads those totals after
a barrier, so one scrape of any worker shows the whole instance, and the sum over instances
counts every request once.

Counters never go down. Each batch of increments is added once (store/batches.py). Each worker
also keeps the sum of everything it took, its whole totals: when the store lost the instance's
totals (a Redis that restarted empty), every worker adds its whole totals again, so the instance's
are what they were plus what came since. And a worker never shows less than it showed before
(``shown``), for what no worker can give back (a worker that died before the store lost the totals).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Upper bounds in seconds of ``simproxy_request_duration_seconds``; +Inf is implied."""
STORE_BUCKETS = (0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0)
REQUESTS = "requests|"
"""Prefix of the request counters' field names: ``requests|<mode>|<outcome>``."""
MAX_PAIRS = 200
"""Distinct pair names counted per worker; the rest are counted as ``other`` (bounded cardinality)."""
COUNTED_NAMES = 8 * MAX_PAIRS
"""Pair names whose counter ``MetricsBuffer`` remembers; past that it starts again."""


@dataclass(frozen=True, slots=True)
class MetricsBatch:
    """One flush of metrics: increments to the instance's totals, and the traffic of one second."""

    increments: Mapping[str, float]
    traffic: tuple[int, Mapping[str, float]] | None


class MetricsBuffer:
    """Increments not yet added to the store, keyed by flat field names (see ``field`` names below).

    Requests are tallied by (mode, outcome), a count per latency bucket and the latencies' sum,
    and counted by pair; both are turned into field names only when taken, once per distinct tally
    rather than four string formats per request. Consecutive requests mostly share their tally and
    pair (one endpoint under load): the last ones are found again by the identity of the three
    strings, without a lookup.
    """

    def __init__(self) -> None:
        self.pending: dict[str, float] = {}
        self.totals: dict[str, float] = {}
        """Everything taken so far: this worker's share of the instance's totals."""
        self._tallies: dict[tuple[str, str], list[float]] = {}
        """(mode, outcome) -> a count per bucket of LATENCY_BUCKETS (+Inf last), then the
        latencies' sum in seconds."""
        self._hits: dict[str, list[Any]] = {}
        """Pair name (at most MAX_PAIRS, then ``other``) -> [requests it answered since the last
        take, its field's name]; kept across takes, so that a pair seen before is counted without
        a new list, and taken without a new name."""
        self._counter_of: dict[str, list[Any]] = {}
        """Pair name -> its counter in ``_hits``, or ``other``'s (at most COUNTED_NAMES names): one
        lookup finds a pair's counter however many pairs there are."""
        self._unnamed: list[Any] = [0, ""]
        """Where the requests no pair answered are counted, never taken."""
        self._last: tuple[str, str, str] | None = None
        """The (mode, outcome, pair) objects ``_last_tally`` and ``_last_hits`` were last found for;
        None after a take."""
        self._last_tally: list[float] = []
        self._last_hits: list[Any] = self._unnamed
        self._shown: dict[str, float] = {}
        self._timings: dict[str, float] = {}
        """How long the flushes took: sent with the next batch, never a reason for one."""

    def __bool__(self) -> bool:
        return bool(self.pending or self._tallies)

    @property
    def requests(self) -> bool:
        """Requests were tallied since the last take."""
        return bool(self._tallies)

    def _add(self, field: str, amount: float = 1) -> None:
        self.pending[field] = self.pending.get(field, 0) + amount

    def request(self, mode: str, outcome: str, seconds: float, pair: str) -> None:
        last = self._last
        if last is not None and last[0] is mode and last[1] is outcome:
            tally = self._last_tally
            # another pair (a simulation of many, each asked in turn): its counter alone is looked up
            hits = (
                self._last_hits
                if last[2] is pair
                else self._counter_of.get(pair) or self._pair_hits(mode, outcome, pair)
            )
        else:
            tally, hits = self._tally(mode, outcome, pair)
        tally[bisect_left(LATENCY_BUCKETS, seconds)] += 1
        tally[-1] += seconds
        hits[0] += 1

    def _tally(self, mode: str, outcome: str, pair: str) -> tuple[list[float], list[Any]]:
        key = (mode, outcome)
        tally = self._tallies.get(key)
        if tally is None:
            tally = self._tallies[key] = [0.0] * (len(LATENCY_BUCKETS) + 2)
        self._last_tally = tally
        return tally, self._pair_hits(mode, outcome, pair)

    def _pair_hits(self, mode: str, outcome: str, pair: str) -> list[Any]:
        """The counter of ``pair`` (MAX_PAIRS names at most, then ``other``), now the last found."""
        if pair:
            hits = self._hits.get(pair)
            if hits is None:
                named = pair if len(self._hits) < MAX_PAIRS else "other"
                hits = self._hits.get(named) or self._hits.setdefault(named, [0, f"pair_hits|{named}"])
            if len(self._counter_of) >= COUNTED_NAMES:
                self._counter_of.clear()
            self._counter_of[pair] = hits
        else:
            hits = self._unnamed
        self._last, self._last_hits = (mode, outcome, pair), hits
        return hits

    def dropped(self, kind: str, count: int) -> None:
        """Records of ``kind`` given up while the store was away (their buffers are bounded)."""
        self._add(f"dropped|{kind}", count)

    def actions(self, result: str, count: int = 1) -> None:
        """Post-serve actions that ended as ``result`` (``dropped``: queue full; ``failed``)."""
        self._add(f"actions|{result}", count)

    def store_call(self, seconds: float) -> None:
        """A flush of the metrics to the store took ``seconds``. Kept for the next batch that has
        something else to send: were a flush's own timing pending, it would make the next flush,
        whose timing the one after, and an idle worker would write to the store every few ms."""
        timings = self._timings
        for field, amount in ((f"store_bucket|{bisect_left(STORE_BUCKETS, seconds)}", 1.0), ("store_sum", seconds)):
            timings[field] = timings.get(field, 0) + amount

    def store_errors(self, count: int) -> None:
        """Calls of the store that failed (any of them: flush, sync, admin)."""
        self._add("store_errors", count)

    def take(self) -> dict[str, float]:
        return self._take()[0]

    def _take(self) -> tuple[dict[str, float], dict[str, float]]:
        """(the pending increments, taken, and the requests among them as {"<mode>|<outcome>": n})."""
        tallies, self._tallies, self._last = self._tallies, {}, None
        requests: dict[str, float] = {}
        latency: dict[str, float] = {}
        for (mode, outcome), tally in tallies.items():
            *buckets, seconds = tally
            tallied = f"{mode}|{outcome}"
            requests[tallied] = count = int(sum(buckets))
            self._add(REQUESTS + tallied, count)
            for bucket, n in enumerate(buckets):
                if n:
                    self._add(f"latency_bucket|{mode}|{bucket}", int(n))
            latency[mode] = latency.get(mode, 0.0) + seconds
        for hits in self._hits.values():
            if hits[0]:
                self._add(hits[1], hits[0])
                hits[0] = 0
        self._unnamed[0] = 0
        for mode, seconds in latency.items():
            self._add(f"latency_sum|{mode}", seconds)
        timings, self._timings = self._timings, {}
        for field, amount in timings.items():
            self._add(field, amount)
        taken, self.pending = self.pending, {}
        totals = self.totals
        for field, amount in taken.items():
            totals[field] = totals.get(field, 0) + amount
        return taken, requests

    def batch(self, second: int) -> MetricsBatch | None:
        """What to flush, taken (None when nothing is pending), with its requests as the traffic of
        ``second`` (the dashboard's requests per second by mode and outcome)."""
        if not self:
            return None
        taken, requests = self._take()
        return MetricsBatch(taken, (second, requests) if requests else None)

    def whole(self, batch: MetricsBatch) -> MetricsBatch:
        """``batch`` with this worker's whole totals (the batch's own among them) for increments."""
        return MetricsBatch(dict(self.totals), batch.traffic)

    def shown(self, totals: Mapping[str, float]) -> dict[str, float]:
        """The instance's ``totals`` as this worker shows them: no field ever less than it showed before."""
        shown = self._shown
        for field, value in totals.items():
            if value > shown.get(field, 0.0):
                shown[field] = value
        return dict(shown)
