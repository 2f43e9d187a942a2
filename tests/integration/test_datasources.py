"""CSV templating data sources through the admin API, the start-up flag, and across workers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simproxy.admin.command import COMMAND
from tests.integration.conftest import Simproxy

CSV = 'Id,Name,Marks\n1,Test1,45\n2,"Quoted, name",55\n*,NA,ABSENT\n'


@pytest.mark.parametrize("ns", ["service", "hoverfly"])
def test_put_get_delete(simproxy: Simproxy, ns: str) -> None:
    path = f"/api/v2/{ns}/templating-data-source/csv"
    assert simproxy.admin_json("GET", path) == (200, {"csvDataSources": []})
    status, body = simproxy.admin_json("PUT", path, {"name": "marks", "data": CSV})
    assert status == 200
    assert body == {"csvDataSources": [{"name": "marks", "data": CSV}]}
    simproxy.admin_json("PUT", path, {"name": "other", "data": "a,b\r\n1,2"})
    assert simproxy.admin_json("GET", path)[1]["csvDataSources"] == [
        {"name": "marks", "data": CSV}, {"name": "other", "data": "a,b\n1,2\n"}]  # fmt: skip
    status, body = simproxy.admin_json("DELETE", f"{path}/other")
    assert (status, body) == (200, {"csvDataSources": [{"name": "marks", "data": CSV}]})
    assert simproxy.admin_json("DELETE", f"{path}/marks") == (200, {"csvDataSources": []})


def test_bad_data_sources_are_refused_and_change_nothing(simproxy: Simproxy) -> None:
    path = "/api/v2/service/templating-data-source/csv"
    simproxy.admin_json("PUT", path, {"name": "kept", "data": "a\n1\n"})
    assert simproxy.admin_json("PUT", path, {"name": "ragged", "data": "a,b\n1\n"}) == (
        400,
        {"error": "record on line 2: wrong number of fields"},
    )
    assert simproxy.admin_json("PUT", path, {"name": "q", "data": 'a,b"c\n'})[0] == 400
    assert simproxy.admin_json("PUT", path, raw=b"{nope") == (
        400,
        {"error": "Malformed JSON: line 1, column 2: unexpected character, expected a string key"},
    )
    assert simproxy.admin_json("DELETE", f"{path}/missing") == (404, {"error": "no CSV data source named 'missing'"})
    assert simproxy.admin_json("GET", path)[1] == {"csvDataSources": [{"name": "kept", "data": "a\n1\n"}]}
    simproxy.admin_json("DELETE", f"{path}/kept")


def test_the_start_up_flag_loads_files(simproxy_factory: Any, tmp_path: Path) -> None:
    (tmp_path / "marks.csv").write_text(CSV)
    sp: Simproxy = simproxy_factory("-templating-data-source", f"marks {tmp_path / 'marks.csv'}", "-workers", "2")
    for _ in range(10):  # any worker
        assert sp.admin_json("GET", "/api/v2/hoverfly/templating-data-source/csv")[1] == {
            "csvDataSources": [{"name": "marks", "data": CSV}]}  # fmt: skip
    sp.admin_json("PUT", "/api/v2/service/templating-data-source/csv", {"name": "new", "data": "x\n1\n"})
    for _ in range(10):
        names = [
            s["name"] for s in sp.admin_json("GET", "/api/v2/service/templating-data-source/csv")[1]["csvDataSources"]
        ]
        assert names == ["marks", "new"]


@pytest.mark.parametrize(
    ("value", "content", "message"),
    [
        ("marks {dir}/missing.csv", None, "Failed to import template data source marks"),
        ("marks {dir}/ragged.csv", "a,b\n1\n", "record on line 2: wrong number of fields"),
        ("just-a-name", None, "Failed to import template data source"),
    ],
)
def test_a_bad_data_source_flag_stops_the_start(tmp_path: Path, value: str, content: str | None, message: str) -> None:
    import subprocess

    from tests.integration.conftest import ROOT

    if content is not None:
        (tmp_path / "ragged.csv").write_text(content)
    result = subprocess.run(
        [*COMMAND, "-ap", "1", "-pp", "2", "-templating-data-source", value.format(dir=tmp_path)],
        cwd=ROOT, capture_output=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1 and message in result.stderr.decode()
