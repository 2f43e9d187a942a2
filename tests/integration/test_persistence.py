"""``-db boltdb -db-path FILE``: what was stored survives a restart, a crash included (issue 19).

Hoverfly keeps only its users and tokens in BoltDB; simproxy's private store keeps everything a
fleet shares (simulation, state, configuration, data sources, journal indexes, the CA and the
token secret) in Redis's append-only file at that path.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, simulation

PAIR = {
    "request": {"path": [{"matcher": "exact", "value": "/kept"}]},
    "response": {"status": 201, "body": "still here"},
}


def _store_things(sp: Simproxy) -> None:
    assert sp.admin("PUT", "/api/v2/simulation", simulation(PAIR))[0] == 200
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "spy"})[0] == 200
    assert sp.admin("PUT", "/api/v2/state", {"state": {"basket": "full"}})[0] == 200
    csv = {"name": "people", "data": "id,name\n1,Ada\n"}
    assert sp.admin("PUT", "/api/v2/hoverfly/templating-data-source/csv", csv)[0] == 200


def _assert_things_kept(sp: Simproxy) -> None:
    assert sp.proxy("http://api.test/kept")[::2] == (201, b"still here")
    assert sp.admin_json("GET", "/api/v2/hoverfly/mode")[1]["mode"] == "spy"
    assert sp.admin_json("GET", "/api/v2/state")[1] == {"state": {"basket": "full"}}
    sources = sp.admin_json("GET", "/api/v2/hoverfly/templating-data-source/csv")[1]
    assert [source["name"] for source in sources["csvDataSources"]] == ["people"]


def test_the_simulation_state_and_configuration_survive_a_restart(simproxy_factory: Any, tmp_path: Path) -> None:
    db = tmp_path / "data" / "sim.db"
    first = simproxy_factory("-db", "boltdb", "-db-path", str(db), cwd=tmp_path)
    _store_things(first)
    first.stop()
    assert db.read_bytes()[:1] in (b"*", b"R")  # an append-only file (or its snapshot preamble)

    second = simproxy_factory("-db", "boltdb", "-db-path", str(db), cwd=tmp_path)
    _assert_things_kept(second)
    assert "Using boltdb backend" in second.output()


def test_a_killed_instance_keeps_what_it_had_stored(simproxy_factory: Any, tmp_path: Path) -> None:
    db = tmp_path / "killed.db"
    first = simproxy_factory("-db", "boltdb", "-db-path", str(db), "-workers", "2", cwd=tmp_path)
    _store_things(first)
    assert first.process is not None
    first.process.send_signal(signal.SIGKILL)  # no shutdown: its Redis is told by the kernel
    first.process.wait(timeout=10)
    first.stop()

    second = simproxy_factory("-db", "boltdb", "-db-path", str(db), cwd=tmp_path)
    _assert_things_kept(second)


def test_the_default_file_is_requests_db_in_the_working_directory(simproxy_factory: Any, tmp_path: Path) -> None:
    first = simproxy_factory("-db", "boltdb", cwd=tmp_path)
    assert first.admin("PUT", "/api/v2/simulation", simulation(PAIR))[0] == 200
    first.stop()
    assert (tmp_path / "requests.db").read_bytes()[:1] in (b"*", b"R")


def test_an_import_at_start_replaces_the_kept_simulation(simproxy_factory: Any, tmp_path: Path) -> None:
    db = tmp_path / "sim.db"
    first = simproxy_factory("-db", "boltdb", "-db-path", str(db), cwd=tmp_path)
    _store_things(first)
    first.stop()
    other = {"request": {"path": [{"matcher": "exact", "value": "/new"}]}, "response": {"status": 200, "body": "new"}}
    (tmp_path / "new.json").write_text(json.dumps(simulation(other)))

    second = simproxy_factory("-db", "boltdb", "-db-path", str(db), "-import", "new.json", cwd=tmp_path)
    assert second.proxy("http://api.test/new")[::2] == (200, b"new")
    assert second.admin_json("GET", "/api/v2/state")[1] == {"state": {"basket": "full"}}


def test_memory_keeps_nothing(simproxy_factory: Any, tmp_path: Path) -> None:
    first = simproxy_factory("-db", "memory", cwd=tmp_path)
    assert first.admin("PUT", "/api/v2/simulation", simulation(PAIR))[0] == 200
    first.stop()
    assert list(tmp_path.iterdir()) == []
    second = simproxy_factory(cwd=tmp_path)
    assert second.proxy("http://api.test/kept")[0] == 502


def test_a_file_that_is_not_a_simproxy_database_stops_the_start(simproxy_factory: Any, tmp_path: Path) -> None:
    db = tmp_path / "hoverfly.db"
    boltdb_page = b"\x00" * 16 + b"\xed\xda\x0c\xed" + b"\x00" * 44  # a BoltDB meta page starts so
    db.write_bytes(boltdb_page)
    with pytest.raises(RuntimeError, match=r"is not a simproxy database \(a Redis snapshot\); a Hoverfly BoltDB"):
        simproxy_factory("-db", "boltdb", "-db-path", str(db), cwd=tmp_path)
    assert db.read_bytes() == boltdb_page


def test_a_removed_folder_does_not_keep_redis_running_after_simproxy(simproxy_factory: Any, tmp_path: Path) -> None:
    """Hoverfly's own suites delete the folder a spec ran in: the private Redis must still stop."""
    import shutil
    import subprocess
    import time

    folder = tmp_path / "sandbox"
    folder.mkdir()
    sp = simproxy_factory("-db", "boltdb", cwd=folder)
    assert sp.admin("PUT", "/api/v2/simulation", simulation(PAIR))[0] == 200
    assert sp.process is not None
    children = subprocess.run(["pgrep", "-P", str(sp.process.pid), "redis-server"], capture_output=True, text=True)
    [redis_pid] = [int(pid) for pid in children.stdout.split()]
    shutil.rmtree(folder)
    sp.process.send_signal(signal.SIGKILL)  # as Hoverfly's suites stop it: its Redis is told by the kernel
    sp.process.wait(timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{redis_pid}").exists():
        time.sleep(0.05)
    assert not Path(f"/proc/{redis_pid}").exists() or "zombie" in Path(f"/proc/{redis_pid}/status").read_text()


def test_two_instances_cannot_share_one_database(simproxy_factory: Any, tmp_path: Path) -> None:
    """BoltDB locks its file; so does simproxy: the second instance stops with an error naming it."""
    db = tmp_path / "shared.db"
    first = simproxy_factory("-db", "boltdb", "-db-path", str(db), cwd=tmp_path)
    assert first.admin("PUT", "/api/v2/simulation", simulation(PAIR))[0] == 200
    with pytest.raises(RuntimeError, match=rf"-db-path {db} is in use by another simproxy"):
        simproxy_factory("-db", "boltdb", "-db-path", str(db), cwd=tmp_path)
    assert first.proxy("http://api.test/kept")[::2] == (201, b"still here")  # the first one is untouched
    first.stop()
    again = simproxy_factory("-db", "boltdb", "-db-path", str(db), cwd=tmp_path)  # free once it stopped
    assert again.proxy("http://api.test/kept")[::2] == (201, b"still here")


def test_a_link_to_the_database_takes_the_same_lock(simproxy_factory: Any, tmp_path: Path) -> None:
    db = tmp_path / "real.db"
    link = tmp_path / "link.db"
    link.symlink_to(db)
    first = simproxy_factory("-db", "boltdb", "-db-path", str(db), cwd=tmp_path)
    assert first.admin("PUT", "/api/v2/simulation", simulation(PAIR))[0] == 200
    with pytest.raises(RuntimeError, match=rf"-db-path {link} is in use by another simproxy"):
        simproxy_factory("-db", "boltdb", "-db-path", str(link), cwd=tmp_path)
