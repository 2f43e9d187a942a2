"""The worker's metrics buffer: what makes a flush, and what rides along with one."""

from __future__ import annotations

from simproxy.engine.fleet.metrics import COUNTED_NAMES, MAX_PAIRS, MetricsBuffer


def test_a_flushs_own_timing_never_makes_another_flush() -> None:
    buffer = MetricsBuffer()
    buffer.request("simulate", "hit", 0.001, "")
    assert buffer.batch(1) is not None
    buffer.store_call(0.002)  # the flush above took 2 ms
    assert not buffer and buffer.batch(2) is None  # an idle worker writes nothing more

    buffer.request("simulate", "miss", 0.001, "")
    taken = buffer.batch(3)
    assert taken is not None
    assert taken.increments["store_sum"] == 0.002  # the timing went with the next real batch
    assert sum(n for field, n in taken.increments.items() if field.startswith("store_bucket|")) == 1


def test_requests_are_tallied_by_mode_outcome_bucket_and_pair_and_each_batch_has_its_own() -> None:
    buffer = MetricsBuffer()
    buffer.request("spy", "miss", 20.0, "")
    buffer.request("simulate", "hit", 0.0001, "".join(["p", "1"]))  # the same name as below, another object
    for seconds in (0.0001, 0.0001, 0.003, 0.0001):
        buffer.request("simulate", "hit", seconds, "p1")
    taken = buffer.batch(1)
    assert taken is not None
    counted = {field: n for field, n in taken.increments.items() if not field.startswith("latency_sum")}
    assert counted == {
        "requests|simulate|hit": 5,
        "latency_bucket|simulate|0": 4,
        "latency_bucket|simulate|3": 1,  # 3 ms: within 5 ms
        "pair_hits|p1": 5,
        "requests|spy|miss": 1,
        "latency_bucket|spy|14": 1,  # beyond the last bound: +Inf
    }
    assert abs(taken.increments["latency_sum|simulate"] - 0.0034) < 1e-12
    assert taken.increments["latency_sum|spy"] == 20.0

    buffer.request("simulate", "hit", 0.0001, "p1")  # the tally taken above is not counted into again
    again = buffer.batch(2)
    assert again is not None and again.increments["requests|simulate|hit"] == 1
    assert again.increments["pair_hits|p1"] == 1 and "requests|spy|miss" not in again.increments
    assert buffer.totals["requests|simulate|hit"] == 6 and buffer.totals["pair_hits|p1"] == 6
    assert buffer.batch(3) is None  # nothing came since: nothing to flush


def test_pair_names_beyond_the_cap_are_counted_as_other() -> None:
    buffer = MetricsBuffer()
    for n in range(MAX_PAIRS + 3):
        buffer.request("simulate", "hit", 0.001, f"pair-{n}")
    buffer.request("simulate", "hit", 0.001, "pair-0")  # named before the cap: still its own
    taken = buffer.batch(1)
    assert taken is not None
    hits = {field: n for field, n in taken.increments.items() if field.startswith("pair_hits|")}
    assert len(hits) == MAX_PAIRS + 1
    assert hits["pair_hits|other"] == 3 and hits["pair_hits|pair-0"] == 2

    # more names than the buffer remembers the counters of: each still goes to its own or to other
    for n in range(COUNTED_NAMES + 5):
        buffer.request("simulate", "hit", 0.001, f"more-{n}")
        buffer.request("simulate", "hit", 0.001, "pair-1")
    buffer.request("simulate", "hit", 0.001, "more-0")
    again = buffer.batch(2)
    assert again is not None
    hits = {field: n for field, n in again.increments.items() if field.startswith("pair_hits|")}
    assert hits == {"pair_hits|other": COUNTED_NAMES + 6, "pair_hits|pair-1": COUNTED_NAMES + 5}


def test_pairs_asked_in_turn_are_each_counted() -> None:
    buffer = MetricsBuffer()
    for pair in ("p1", "p2", "p1", "", "p2", "p3"):
        buffer.request("simulate", "hit" if pair else "miss", 0.001, pair)
    buffer.request("simulate", "hit", 0.001, "p3")
    taken = buffer.batch(1)
    assert taken is not None
    counted = {field: n for field, n in taken.increments.items() if field.split("|")[0] in ("pair_hits", "requests")}
    assert counted == {
        "pair_hits|p1": 2,
        "pair_hits|p2": 2,
        "pair_hits|p3": 2,
        "requests|simulate|hit": 6,
        "requests|simulate|miss": 1,
    }


def test_a_buffer_says_whether_it_holds_requests_apart_from_other_counts() -> None:
    """The traffic's second is timed from when requests began to be counted: counts of records
    given up while the store is away are no requests."""
    buffer = MetricsBuffer()
    buffer.dropped("journal", 3)
    buffer.store_errors(1)
    assert buffer and not buffer.requests
    buffer.request("simulate", "hit", 0.001, "")
    assert buffer.requests
    buffer.batch(1)
    assert not buffer and not buffer.requests
