"""``GET /metrics``: this simproxy instance (all its workers) in the Prometheus text format.

Every worker buffers its counts and flushes them into the instance's totals in the store; a
scrape makes every worker flush first (a barrier) and then renders those totals, so any worker
answers for the whole instance and summing the instances counts each request once. The counters
never go down (engine/fleet/metrics.py): not after a Redis that restarted empty, not from one scrape to
the next of the same worker. ``prometheus_client`` is imported by the first scrape.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from sanic import Request
from sanic.response import HTTPResponse

from simproxy.admin.api.responses import services
from simproxy.engine.fleet.metrics import LATENCY_BUCKETS, STORE_BUCKETS

if TYPE_CHECKING:
    from prometheus_client.core import Metric


class _Totals:
    """A one-shot collector over the totals read from the store."""

    def __init__(self, totals: Mapping[str, float], journal: int, cache: int) -> None:
        self.totals = totals
        self.journal = journal
        self.cache = cache

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        requests = CounterMetricFamily(
            "simproxy_requests", "Proxied requests by mode and outcome (hit, miss, error)", labels=["mode", "outcome"]
        )
        pairs = CounterMetricFamily(
            "simproxy_pair_hits", "Requests answered by each pair (label or index)", labels=["pair"]
        )
        latency: dict[str, dict[int, float]] = {}
        sums: dict[str, float] = {}
        store_buckets: dict[int, float] = {}
        dropped = CounterMetricFamily(
            "simproxy_records_dropped",
            "Journal entries, logs and cache entries given up while the store was unreachable",
            labels=["kind"],
        )
        actions = CounterMetricFamily(
            "simproxy_post_serve_actions",
            "Post-serve actions not done: dropped (too many pending) or failed (error, timeout, exit)",
            labels=["result"],
        )
        for field, value in sorted(self.totals.items()):
            kind, *parts = field.split("|")
            if kind == "requests" and len(parts) == 2:
                requests.add_metric(parts, value)
            elif kind == "pair_hits" and parts:
                pairs.add_metric(parts, value)
            elif kind == "latency_bucket" and len(parts) == 2:
                latency.setdefault(parts[0], {})[int(parts[1])] = value
            elif kind == "latency_sum" and parts:
                sums[parts[0]] = value
            elif kind == "store_bucket" and parts:
                store_buckets[int(parts[0])] = value
            elif kind == "dropped" and parts:
                dropped.add_metric(parts, value)
            elif kind == "actions" and parts:
                actions.add_metric(parts, value)
        yield requests
        yield pairs
        duration = HistogramMetricFamily(
            "simproxy_request_duration_seconds", "Time from request to response, delays included", labels=["mode"]
        )
        for mode, counts in sorted(latency.items()):
            duration.add_metric([mode], _cumulative(counts, LATENCY_BUCKETS), sums.get(mode, 0.0))
        yield duration
        store = HistogramMetricFamily(
            "simproxy_store_flush_seconds", "Duration of the workers' buffered writes to the store"
        )
        store.add_metric([], _cumulative(store_buckets, STORE_BUCKETS), self.totals.get("store_sum", 0.0))
        yield store
        errors = CounterMetricFamily(
            "simproxy_store_errors", "Store calls that failed: flushes, syncs and heartbeats, admin calls"
        )
        errors.add_metric([], self.totals.get("store_errors", 0.0))
        yield errors
        yield dropped
        yield actions
        yield GaugeMetricFamily("simproxy_journal_entries", "Journal entries kept (fleet-wide)", value=self.journal)
        yield GaugeMetricFamily("simproxy_cache_entries", "Match cache entries (fleet-wide)", value=self.cache)


def _cumulative(counts: Mapping[int, float], bounds: tuple[float, ...]) -> list[tuple[str, float]]:
    out, running = [], 0.0
    for i, bound in enumerate(bounds):
        running += counts.get(i, 0.0)
        out.append((repr(bound), running))
    running += counts.get(len(bounds), 0.0)
    out.append(("+Inf", running))
    return out


async def get_metrics(request: Request) -> HTTPResponse:
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    svc = services(request)
    runtime = svc.runtime
    await runtime.barrier()
    totals = runtime.metrics.shown(await svc.telemetry.metrics_read(runtime.instance))
    journal, cache = await runtime.sizes()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Totals(totals, journal, cache))
    return HTTPResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
