"""What the Python client sends, built without a server: ``pair()``, ``journal_search()`` and
``simulation_document()`` (the calls themselves are tested against simproxy in
tests/integration/test_python_client.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from simproxy.admin.kit.client_calls import journal_search, pair, simulation_document


def exact(value: str) -> list[dict[str, str]]:
    return [{"matcher": "exact", "value": value}]


def test_a_pair_takes_a_header_value_alone_or_in_a_list() -> None:
    made = pair("/a", headers={"Content-Type": "text/plain", "Set-Cookie": ["a=1", "b=2"]})
    assert made["response"]["headers"] == {"Content-Type": ["text/plain"], "Set-Cookie": ["a=1", "b=2"]}
    matched = pair("/a", headers_matched={"X-Tenant": "acme", "Accept": ["a", "b"]})
    assert matched["request"]["headers"] == {"X-Tenant": exact("acme"), "Accept": exact("a;b")}


def test_a_pair_with_json_encodes_it_and_says_so_unless_told_otherwise() -> None:
    assert pair("/a", json={"ok": True})["response"]["headers"] == {"Content-Type": ["application/json"]}
    assert pair("/a", json=[1])["response"]["body"] == "[1]"
    own = pair("/a", json=0, headers={"content-type": "application/problem+json"})
    assert own["response"]["headers"] == {"content-type": ["application/problem+json"]}
    assert own["response"]["body"] == "0"
    with pytest.raises(TypeError, match="body or json, not both"):
        pair("/a", body="x", json={})


def test_a_pair_carries_faults_delays_and_state_only_when_given() -> None:
    plain = pair("/a")
    assert plain == {"request": {"path": exact("/a")}, "response": {"status": 200, "body": "", "templated": False}}
    delay = {"min": 1, "max": 9, "mean": 4, "median": 3}
    made = pair("/a", fault={"type": "emptyResponse", "fraction": 0.5}, log_normal_delay=delay, removes_state=["k"])
    assert made["response"]["fault"] == {"type": "emptyResponse", "fraction": 0.5}
    assert (made["response"]["logNormalDelay"], made["response"]["removesState"]) == (delay, ["k"])
    assert pair(body_file="bodies/a.json", scheme="https")["request"] == {"scheme": exact("https")}


def test_a_query_is_a_string_or_a_mapping_and_a_path_may_carry_it() -> None:
    expected = {"a": exact("1;3"), "b": exact("")}
    assert pair("/a", query="a=1&a=3&b=")["request"]["query"] == expected
    assert pair("/a?a=1&a=3&b=")["request"] == {"path": exact("/a"), "query": expected}
    assert journal_search(query={"a": ["1", "3"], "b": ""}) == {"request": {"query": expected}}
    assert journal_search(query="") == {"request": {"query": {}}}
    with pytest.raises(ValueError, match="has a query string and query= is given too"):
        journal_search(path="/a?b=1", query="c=2")


def test_a_search_adds_its_keywords_to_a_matcher_set_written_by_hand() -> None:
    glob = [{"matcher": "glob", "value": "/api/*"}]
    assert journal_search({"path": glob, "method": exact("PUT")}, method="GET") == {
        "request": {"path": glob, "method": exact("GET")}
    }


def test_a_simulation_is_a_document_a_pair_a_list_of_pairs_its_json_text_or_a_file(tmp_path: Path) -> None:
    one = pair("/one")
    wrapped = {"data": {"pairs": [one]}, "meta": {"schemaVersion": "v5.3"}}
    assert simulation_document(one) == simulation_document([one]) == wrapped
    assert simulation_document(' {"data": {}, "meta": {}}') == {"data": {}, "meta": {}}
    assert simulation_document(b'{"data": {}}') == {"data": {}}
    (tmp_path / "sim.json").write_text('{"data": {"pairs": []}}')
    assert simulation_document(tmp_path / "sim.json") == simulation_document(str(tmp_path / "sim.json"))
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"bad\.json: not a simulation document \(a JSON object\), but a JSON list"):
        simulation_document(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="not a simulation document: invalid JSON"):
        simulation_document("{nope")
