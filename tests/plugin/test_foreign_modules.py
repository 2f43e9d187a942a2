"""simproxy inside a project that has its own ``admin``, ``engine`` and ``store``: installed, simproxy
is the one import package ``simproxy``, so neither the plugin nor the server it starts can meet them,
run by ``pytest`` or by ``python -m pytest`` (which puts the project's folder first on the path)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.plugin.conftest import INNER_ARGS, Service, cassette

pytestmark = pytest.mark.slow

Run = Callable[..., pytest.RunResult]

PROJECT_TEST = """
import admin
import engine
import pytest
import requests
import store


def test_the_projects_own_modules():
    assert (admin.ROLE, engine.SPEED, store.ITEMS) == ("the project's admin", 3, [])


@pytest.mark.simproxy(simulation="cassettes/pay.json")
def test_pay(simproxy):
    assert requests.get("{url}/pay?order=7").json() == {{"paid": True}}
    simproxy.verify(method="GET", path="/pay", query={{"order": 7}}, times=1)
"""


@pytest.fixture(params=["python -m pytest", "pytest"])
def run_as(request: pytest.FixtureRequest, pytester: pytest.Pytester, run: Run) -> Run:
    """Run the inner session as ``python -m pytest`` or as the ``pytest`` script of this environment."""
    if request.param == "python -m pytest":
        return run
    script = Path(sys.executable).with_name("pytest")

    def by_script(*args: str) -> pytest.RunResult:
        return pytester.run(script, *INNER_ARGS, *args, timeout=120)

    return by_script


def test_a_project_with_its_own_admin_engine_and_store_records_replays_and_verifies(
    pytester: pytest.Pytester, run_as: Run, service: Service
) -> None:
    pytester.makepyfile(admin='ROLE = "the project\'s admin"\n', engine="SPEED = 3\n")
    (pytester.path / "store").mkdir()
    (pytester.path / "store" / "__init__.py").write_text("ITEMS: list[str] = []\n")
    pytester.makepyfile(test_shop=PROJECT_TEST.format(url=service.url))

    recorded = run_as()
    recorded.assert_outcomes(passed=2)
    assert service.hits == ["/pay?order=7"]
    assert len(cassette(pytester.path / "cassettes" / "pay.json")) == 1

    service.stop()
    run_as("--simproxy-record=none").assert_outcomes(passed=2)
