"""The Python client (admin/client.py), blocking and async, against a running simproxy (issue 21)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from simproxy.admin.client import ApiError, AsyncClient, Client, pair
from tests.integration.conftest import Simproxy


@pytest.fixture
def client(simproxy: Simproxy) -> Client:
    sp = Client(f"http://127.0.0.1:{simproxy.admin_port}")
    sp.delete_simulation()
    sp.delete_journal()
    sp.delete_state()
    sp.set_mode("simulate")
    return sp


def test_the_blocking_client_drives_a_simulation_and_reads_the_journal(client: Client, simproxy: Simproxy) -> None:
    assert client.health()["message"].endswith("is healthy")
    client.put_simulation(
        [pair("/hello", method="GET", body='{"hi": 1}', headers={"Content-Type": ["application/json"]})]
    )
    client.append_simulation([pair("/other", status=201, body="other")])
    assert [p["request"]["path"][0]["value"] for p in client.simulation()["data"]["pairs"]] == ["/hello", "/other"]

    assert simproxy.proxy("http://api.test/hello")[::2] == (200, b'{"hi": 1}')
    assert simproxy.proxy("http://api.test/hello")[0] == 200
    assert simproxy.proxy("http://api.test/other")[0] == 201

    found = client.search_journal(method="GET", path="/hello")
    assert [entry["response"]["status"] for entry in found] == [200, 200]
    assert client.journal(limit=1)["journal"][0]["request"]["path"] in ("/hello", "/other")
    assert client.usage()["simulate"] >= 3
    client.delete_journal()
    assert client.search_journal(path="/hello") == []


def test_mode_state_destination_data_sources_cache_and_logs(client: Client) -> None:
    client.set_mode("spy", matchingStrategy="first")
    assert client.mode() == "spy"
    client.set_mode("simulate")

    client.set_state({"basket": "full"})
    client.set_state({"user": "ada"}, patch=True)
    assert client.state() == {"basket": "full", "user": "ada"}
    client.delete_state()
    assert client.state() == {}

    client.set_destination("api\\.test")
    assert client.destination() == "api\\.test"
    client.set_destination(".")

    client.put_data_source("people", "id,name\n1,Ada\n")
    assert client.data_sources() == {"people": "id,name\n1,Ada\n"}
    client.delete_data_source("people")
    assert client.data_sources() == {}

    client.delete_cache()
    assert client.cache() == []
    assert isinstance(client.logs(limit=5), list)


def test_the_blocking_client_never_goes_through_http_proxy(simproxy: Simproxy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    assert Client(f"http://127.0.0.1:{simproxy.admin_port}").mode() in ("simulate", "spy", "capture")


def test_a_simulation_file_is_sent_as_it_is(client: Client, tmp_path: Path) -> None:
    doc = {"data": {"pairs": [pair("/from-file", body="file")]}, "meta": {"schemaVersion": "v5.2"}}
    (tmp_path / "sim.json").write_text(json.dumps(doc))
    client.put_simulation(tmp_path / "sim.json")
    assert client.simulation()["data"]["pairs"][0]["response"]["body"] == "file"


def test_a_refused_call_raises_api_error_with_the_servers_text(client: Client) -> None:
    with pytest.raises(ApiError) as refused:
        client.set_mode("sleepwalk")
    assert (refused.value.status, refused.value.message) == (
        400,
        'Not a valid mode: "sleepwalk"; one of capture, diff, modify, simulate, spy, synthesize',
    )
    with pytest.raises(ApiError) as bad:
        client.put_simulation({"data": {"pairs": [{"request": 1}]}, "meta": {"schemaVersion": "v5"}})
    assert bad.value.status == 400 and "data.pairs.0.request" in bad.value.message
    assert client.simulation()["data"]["pairs"] == []  # nothing half-written


def test_errors_read_alike_from_hoverflys_plain_text_and_its_empty_401(simproxy_factory: Any) -> None:
    hf: Simproxy = simproxy_factory("-compat", "hoverfly", "-auth", "-username", "u", "-password", "p")
    anonymous = Client(f"http://127.0.0.1:{hf.admin_port}")
    with pytest.raises(ApiError) as refused:
        anonymous.mode()
    assert (refused.value.status, refused.value.message) == (401, "")
    token = json.loads(hf.admin("POST", "/api/token-auth", {"username": "u", "password": "p"})[2])["token"]
    signed = Client(f"http://127.0.0.1:{hf.admin_port}", token=token)
    assert signed.mode() == "simulate"
    with pytest.raises(ApiError) as refused:
        signed.set_mode("sleepwalk")  # Hoverfly's error body comes as text/plain
    assert (refused.value.status, refused.value.message) == (400, "Not a valid mode")


def test_the_async_client_makes_the_same_calls(simproxy: Simproxy) -> None:
    async def scenario() -> tuple[str, int, dict[str, str], int]:
        async with AsyncClient(f"http://127.0.0.1:{simproxy.admin_port}") as sp:
            await sp.delete_simulation()
            await sp.put_simulation([pair("/async", body="yes")])
            await sp.set_mode("simulate")
            await sp.set_state({"k": "v"})
            await asyncio.to_thread(simproxy.proxy, "http://api.test/async")
            try:
                await sp.set_mode("sleepwalk")
            except ApiError as refused:
                status = refused.status
            found = await sp.search_journal(path="/async")
            return await sp.mode(), len(found), await sp.state(), status

    assert asyncio.run(scenario()) == ("simulate", 1, {"k": "v"}, 400)
