"""The worker's metrics buffer: what makes a flush, and what rides along with one."""

from __future__ import annotations

from engine.fleet.metrics import MetricsBuffer


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
