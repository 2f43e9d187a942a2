"""The Python client (admin/kit/client.py), blocking and async, against a running simproxy (issue 21)."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from simproxy.admin.kit.client import ApiError, AsyncClient, Client, ClientError, ServerUnreachable, pair
from simproxy.admin.process.redisserver import free_port
from simproxy.store.errors import SimproxyError
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
    assert [e["request"]["path"] for e in client.journal(limit=1)] == ["/hello"]
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


def test_login_gives_the_client_a_token_it_sends_from_then_on(simproxy_factory: Any) -> None:
    guarded: Simproxy = simproxy_factory("-auth", "-username", "ops", "-password", "secret")
    url = f"http://127.0.0.1:{guarded.admin_port}"
    sp = Client(url)
    with pytest.raises(ApiError) as wrong:
        sp.login("ops", "guess")
    assert wrong.value.status == 401
    token = sp.login("ops", "secret")
    assert sp.mode() == "simulate"
    assert Client(url, token=token).state() == {}

    async def scenario() -> str:
        async with AsyncClient(url) as asp:
            await asp.login("ops", "secret")
            return await asp.mode()

    assert asyncio.run(scenario()) == "simulate"


def test_the_async_client_makes_the_same_calls(simproxy: Simproxy) -> None:
    async def scenario() -> tuple[str, int, dict[str, str], int]:
        async with AsyncClient(f"http://127.0.0.1:{simproxy.admin_port}") as sp:
            await sp.delete_simulation()
            await sp.delete_journal()
            await sp.put_simulation([pair("/async", body="yes")])
            await sp.set_mode("spy", {"captureOnMiss": True})
            assert (await sp.journal_page())["total"] == 0
            await sp.set_mode("simulate")
            await sp.set_state({"k": "v"})
            await asyncio.to_thread(simproxy.proxy, "http://api.test/async")
            try:
                await sp.set_mode("sleepwalk")
            except ApiError as refused:
                status = refused.status
            found = await sp.search_journal(path="/async", query="")
            assert [entry["request"]["path"] for entry in await sp.journal()] == ["/async"]
            return await sp.mode(), len(found), await sp.state(), status

    assert asyncio.run(scenario()) == ("simulate", 1, {"k": "v"}, 400)


def test_search_journal_takes_the_query_as_a_string_or_a_mapping(client: Client, simproxy: Simproxy) -> None:
    client.put_simulation([pair("/q", body="q")])
    for target in ("/q?a=1&b=2", "/q?b=2&a=1", "/q?a=1", "/q?a=1&a=3", "/q", "/q?a=2"):
        assert simproxy.proxy(f"http://api.test{target}")[0] == 200
    assert simproxy.proxy("http://api.test/q?team", headers={"X-Team": "blue"})[0] == 200

    def queries(*request: Any, **search: Any) -> list[str]:
        return [entry["request"]["query"] for entry in client.search_journal(*request, **search)]

    assert queries(query="a=1&b=2") == queries(query={"b": "2", "a": "1"}) == ["a=1&b=2", "a=1&b=2"]
    assert queries(query="?a=1") == ["a=1&b=2", "a=1&b=2", "a=1"]  # the parameters given; others may be there
    assert queries(query={"a": ["1", "3"]}) == queries(query="a=1&a=3") == ["a=1&a=3"]
    assert queries(query="") == queries(query={}) == [""]  # requests without a query
    assert queries(path="/q?a=2") == ["a=2"]
    assert queries(headers={"X-Team": "blue"}, scheme="http") == ["team="]
    assert queries({"query": {"a": [{"matcher": "glob", "value": "*"}]}}, query={"a": "2"}) == ["a=2"]
    assert queries({"path": [{"matcher": "glob", "value": "/q*"}]}, method="GET", destination="api.test") == [
        "a=1&b=2",
        "a=1&b=2",
        "a=1",
        "a=1&a=3",
        "",
        "a=2",
        "team=",
    ]


def test_set_mode_takes_its_arguments_as_a_mapping_keywords_or_both(client: Client, simproxy: Simproxy) -> None:
    client.set_mode("spy", {"captureOnMiss": True})
    assert simproxy.admin_json("GET", "/api/v2/hoverfly/mode")[1]["arguments"]["captureOnMiss"] is True
    client.set_mode("capture", {"stateful": True}, overwriteDuplicate=True)
    assert simproxy.admin_json("GET", "/api/v2/hoverfly/mode")[1] == {
        "mode": "capture",
        "arguments": {"stateful": True, "overwriteDuplicate": True},
    }


def test_pairs_serve_faults_log_normal_delays_json_and_plain_header_values(client: Client, simproxy: Simproxy) -> None:
    delay = {"min": 300, "max": 400, "mean": 350, "median": 340}
    client.put_simulation(
        [
            pair("/reset", fault={"type": "connectionReset"}),
            pair("/json", json={"hi": [1, 2]}, headers={"X-One": "1", "X-Two": ["a", "b"]}),
            pair("/slow", body="slow", log_normal_delay=delay),
            pair("/forget", removes_state=["basket"]),
            pair("/search?q=shoes", body="found"),
        ]
    )
    with pytest.raises(ConnectionResetError):
        simproxy.proxy("http://api.test/reset")
    status, headers, body = simproxy.proxy("http://api.test/json")
    assert (status, json.loads(body)) == (200, {"hi": [1, 2]})
    assert (headers["content-type"], headers["x-one"], headers["x-two"]) == ("application/json", "1", "a, b")
    started = time.monotonic()
    assert simproxy.proxy("http://api.test/slow")[2] == b"slow"
    assert time.monotonic() - started >= 0.3
    assert client.simulation()["data"]["pairs"][2]["response"]["logNormalDelay"] == delay
    client.set_state({"basket": "full", "user": "ada"})
    simproxy.proxy("http://api.test/forget")
    assert client.state() == {"user": "ada"}
    assert simproxy.proxy("http://api.test/search?q=shoes")[2] == b"found"
    assert simproxy.proxy("http://api.test/search?q=socks")[0] == 502


def test_one_pair_or_the_documents_json_text_is_a_simulation(client: Client) -> None:
    client.put_simulation(pair("/one", body="one"))
    assert [p["request"]["path"][0]["value"] for p in client.simulation()["data"]["pairs"]] == ["/one"]
    doc = {"data": {"pairs": [pair("/text", body="text")]}, "meta": {"schemaVersion": "v5.2"}}
    client.put_simulation(json.dumps(doc, indent=2))
    client.append_simulation(json.dumps({**doc, "data": {"pairs": [pair("/bytes")]}}).encode())
    assert [p["request"]["path"][0]["value"] for p in client.simulation()["data"]["pairs"]] == ["/text", "/bytes"]


def test_journal_returns_every_entry_and_journal_page_one_page_with_its_total(simproxy_factory: Any) -> None:
    hf: Simproxy = simproxy_factory("-compat", "hoverfly")  # pages of 25 entries unless limit= says otherwise
    sp = Client(f"http://127.0.0.1:{hf.admin_port}")
    sp.put_simulation([pair("/n")])
    for n in range(30):
        assert hf.proxy(f"http://api.test/n?i={n:02}")[0] == 200

    def queries(entries: list[Any]) -> list[str]:
        return [entry["request"]["query"] for entry in entries]

    assert queries(sp.journal()) == [f"i={n:02}" for n in range(30)]
    assert queries(sp.journal(offset=10)) == [f"i={n:02}" for n in range(10, 30)]
    assert queries(sp.journal(limit=2, offset=27)) == ["i=27", "i=28"]
    assert sp.journal(limit=0) == []  # not the server's default page
    assert queries(sp.journal(limit=1, sort="timeStarted:desc")) == ["i=29"]
    page = sp.journal_page()
    assert (len(page["journal"]), page["offset"], page["limit"], page["total"]) == (25, 0, 25, 30)


def test_a_server_that_is_down_is_server_unreachable_naming_its_url_and_the_cause() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    expected = f"GET /api/v2/hoverfly/mode: cannot reach simproxy's admin API at {url}: connection refused"
    with pytest.raises(ServerUnreachable) as down:
        Client(url).mode()
    assert str(down.value).startswith(expected)
    # a ConnectionError: what the `except OSError` handlers that restart a dead server already catch
    assert {ClientError, SimproxyError, ConnectionError, OSError} <= set(type(down.value).__mro__)

    async def scenario() -> str:
        async with AsyncClient(url) as sp:
            try:
                await sp.mode()
            except ServerUnreachable as unreachable:
                return str(unreachable)
        return "answered"

    assert asyncio.run(scenario()).startswith(expected)


def test_a_server_that_does_not_answer_is_server_unreachable_once_the_timeout_passes() -> None:
    with socket.socket() as silent:  # connections complete (the backlog) but nothing is ever read
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        expected = f"GET /api/v2/state: cannot reach simproxy's admin API at {url}: no answer within 0.3 s"
        with pytest.raises(ServerUnreachable) as silent_sync:
            Client(url, timeout=0.3).state()
        assert str(silent_sync.value) == expected

        async def scenario() -> None:
            async with AsyncClient(url, timeout=0.3) as sp:
                await sp.state()

        with pytest.raises(ServerUnreachable) as silent_async:
            asyncio.run(scenario())
        assert str(silent_async.value) == expected


def test_a_refused_call_is_a_client_error_and_a_base_url_without_scheme_is_refused_at_once(client: Client) -> None:
    with pytest.raises(ClientError) as refused:
        client.set_mode("sleepwalk")
    assert isinstance(refused.value, ApiError) and isinstance(refused.value, SimproxyError)
    assert refused.value.call == "PUT /api/v2/hoverfly/mode"
    with pytest.raises(ValueError, match="'localhost:8888': the admin API's URL is wanted"):
        Client("localhost:8888")
