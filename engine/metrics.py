"""Prometheus metrics of one simproxy instance, counted cheaply on the request path.

Each worker adds to plain dicts (a few hundred nanoseconds a request); the runtime's flush adds
them to the instance's totals in the store, and ``GET /metrics`` (admin) reads those totals after
a barrier, so one scrape of any worker shows the whole instance, and the sum over instances
counts every request once.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Upper bounds in seconds of ``simproxy_request_duration_seconds``; +Inf is implied."""
STORE_BUCKETS = (0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0)
REQUESTS = "requests|"
"""Prefix of the request counters' field names: ``requests|<mode>|<outcome>``."""
MAX_PAIRS = 200
"""Distinct pair names counted per worker; the rest are counted as ``other`` (bounded cardinality)."""


class MetricsBuffer:
    """Increments not yet added to the store, keyed by flat field names (see ``field`` names below).

    Requests are tallied by (mode, outcome, latency bucket, pair) and turned into field names only
    when taken, once per distinct tally rather than four string formats per request.
    """

    def __init__(self) -> None:
        self.pending: dict[str, float] = {}
        self._requests: dict[tuple[str, str, int, str], int] = {}
        self._latency: dict[str, float] = {}
        self._pairs: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.pending or self._requests)

    def _add(self, field: str, amount: float = 1) -> None:
        self.pending[field] = self.pending.get(field, 0) + amount

    def request(self, mode: str, outcome: str, seconds: float, pair: str) -> None:
        if pair and pair not in self._pairs:
            if len(self._pairs) >= MAX_PAIRS:
                pair = "other"
            else:
                self._pairs.add(pair)
        tally = (mode, outcome, bisect_left(LATENCY_BUCKETS, seconds), pair)
        self._requests[tally] = self._requests.get(tally, 0) + 1
        self._latency[mode] = self._latency.get(mode, 0.0) + seconds

    def dropped(self, kind: str, count: int) -> None:
        """Records of ``kind`` given up while the store was away (their buffers are bounded)."""
        self._add(f"dropped|{kind}", count)

    def store_call(self, seconds: float, failed: bool) -> None:
        self._add(f"store_bucket|{bisect_left(STORE_BUCKETS, seconds)}")
        self._add("store_sum", seconds)
        if failed:
            self._add("store_errors")

    def take(self) -> dict[str, float]:
        requests, self._requests = self._requests, {}
        for (mode, outcome, bucket, pair), count in requests.items():
            self._add(f"{REQUESTS}{mode}|{outcome}", count)
            self._add(f"latency_bucket|{mode}|{bucket}", count)
            if pair:
                self._add(f"pair_hits|{pair}", count)
        latency, self._latency = self._latency, {}
        for mode, seconds in latency.items():
            self._add(f"latency_sum|{mode}", seconds)
        taken, self.pending = self.pending, {}
        return taken

    @staticmethod
    def request_counts(taken: Mapping[str, float]) -> dict[str, float]:
        """The requests among ``taken`` increments, as {"<mode>|<outcome>": count}."""
        return {field[len(REQUESTS) :]: n for field, n in taken.items() if field.startswith(REQUESTS)}

    def restore(self, taken: Mapping[str, float]) -> None:
        for field, amount in taken.items():
            self._add(field, amount)
