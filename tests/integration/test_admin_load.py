"""The proxy keeps answering while the admin API takes a large simulation (issue 17, item 3).

How long proxied requests wait meanwhile is measured by ``python -m benchmarks.admin_load``; here,
that they are answered at all while the upload is being parsed, validated and compiled: on one
event loop that did the work itself, none was for seconds at a time.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from benchmarks.admin_load import simulation as pairs_document
from tests.integration.conftest import Simproxy, call

pytestmark = pytest.mark.slow

PAIRS = 50_000


def test_proxied_requests_are_answered_all_through_a_50000_pair_put(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-max-admin-body-size", "1GB")
    assert sp.admin("PUT", "/api/v2/simulation", raw=pairs_document(1))[0] == 200
    document = pairs_document(PAIRS)
    answers: list[tuple[float, int, bytes]] = []
    stop = threading.Event()

    def client() -> None:
        while not stop.is_set():
            status, _, body = call(sp.proxy_port, "GET", "http://bench.test/p0")
            answers.append((time.monotonic(), status, body))
            time.sleep(0.005)

    thread = threading.Thread(target=client)
    thread.start()
    try:
        time.sleep(0.3)
        began = time.monotonic()
        # the upload's own speed is benchmarks.admin_load's: here it may take long on a busy machine
        status, _, body = sp.admin("PUT", "/api/v2/simulation", raw=document, timeout=180)
        ended = time.monotonic()
    finally:
        stop.set()
        thread.join()
    assert status == 200, body[:300]
    during = [(status, body) for at, status, body in answers if began <= at <= ended]
    assert set(during) == {(200, b"body 0")}  # the pair is in both simulations
    # one every few milliseconds while the PUT takes seconds: far more than a loop held for seconds allows
    assert len(during) >= 100, f"{len(during)} answers in {ended - began:.1f} s"
    assert sp.proxy(f"http://bench.test/p{PAIRS - 1}")[::2] == (200, f"body {PAIRS - 1}".encode())
