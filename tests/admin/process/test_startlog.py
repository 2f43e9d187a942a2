"""simproxy's ready line (admin/process/startlog.py): addresses a user can open, whatever the listening host."""

from __future__ import annotations

import logging

import pytest

from simproxy.admin.process.startlog import ready_message
from simproxy.admin.settings import Settings


@pytest.mark.parametrize(
    ("host", "shown"),
    [("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "127.0.0.1"), ("::", "[::1]"), ("::1", "[::1]"),
     ("10.1.2.3", "10.1.2.3"), ("sim.internal", "sim.internal")],
)  # fmt: skip
def test_the_ready_line_names_a_reachable_address_for_each_listening_host(host: str, shown: str) -> None:
    level, text, fields = ready_message(Settings(listen_on_host=host, admin_port=9000, proxy_port=9001, workers=3))
    assert (level, text) == (logging.INFO, "simproxy is ready")
    assert fields == {
        "admin": f"http://{shown}:9000", "dashboard": f"http://{shown}:9000/", "proxy": f"{shown}:9001", "workers": 3
    }  # fmt: skip
