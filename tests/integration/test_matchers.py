"""Every matcher through real proxied requests: one hit and one miss each, and the 400s at import."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Simproxy, simulation

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def _m(name: str, value: Any, **extra: Any) -> dict[str, Any]:
    return {"matcher": name, "value": value, **extra}


def _pair(path: str, **request: Any) -> dict[str, Any]:
    return {
        "request": {"path": [_m("exact", path)], **request},
        "response": {"status": 200, "body": f"hit {path}"},
    }


PAIRS = [
    _pair("/json", body=[_m("json", '{"a": 1, "b": [1, 2]}')]),
    _pair("/jsonpartial", body=[_m("jsonPartial", '{"user": {"id": 7}}')]),
    _pair("/jsonpath", body=[_m("jsonpath", "$.items[1].name")]),
    _pair("/chain", body=[_m("jsonpath", "$.name", doMatch=_m("exact", "Test"))]),
    _pair("/xml", body=[_m("xml", "<doc><a>1</a></doc>")]),
    _pair("/xpath", body=[_m("xpath", "/doc/items/item[@id='2']")]),
    _pair("/xmltemplated", body=[_m("xmltemplated", "<o><id>{{ignore}}</id><qty>{{regex:^[0-9]+$}}</qty></o>")]),
    _pair("/form", method=[_m("exact", "POST")], body=[_m("form", {"user": [_m("exact", "bob")]})]),
    _pair("/array", query={"ids": [_m("array", ["1", "2"])]}),
    _pair("/unordered", query={"ids": [_m("array", ["1", "2"], config={"ignoreOrder": True})]}),
    _pair("/negate", headers={"X-Env": [_m("negate", "prod")]}),
    _pair("/jwt", headers={"Authorization": [_m("jwt", '{"payload": {"sub": "1234567890"}}')]}),
    _pair("/jwtjsonpath", headers={"Authorization": [_m("jwtjsonpath", "$.name", doMatch=_m("exact", "John Doe"))]}),
    _pair("/glob", headers={"Accept": [_m("glob", "application/*")]}),
    _pair("/regex", query={"page": [_m("regex", "^[0-9]+$")]}),
]

# (path, method, body, headers, query) -> hit?
CASES = [
    ("/json", "POST", '{ "b": [1, 2], "a": 1 }', {}, "", True),
    ("/json", "POST", '{"a": 1.0, "b": [1, 2]}', {}, "", False),  # numbers compare by their text
    ("/jsonpartial", "POST", '{"data": {"user": {"id": 7, "name": "x"}}}', {}, "", True),
    ("/jsonpartial", "POST", '{"user": {"id": 8}}', {}, "", False),
    ("/jsonpartial", "POST", "not json at all", {}, "", False),
    ("/jsonpath", "POST", '{"items": [{"name": "a"}, {"name": "b"}]}', {}, "", True),
    ("/jsonpath", "POST", '{"items": [{"name": "a"}]}', {}, "", False),
    ("/chain", "POST", '{"name": "Test", "id": 1}', {}, "", True),
    ("/chain", "POST", '{"name": "Other"}', {}, "", False),
    ("/xml", "POST", "<doc>\n  <a>1</a>\n</doc>", {}, "", True),
    ("/xml", "POST", "<doc><a>2</a></doc>", {}, "", False),
    ("/xpath", "POST", "<doc><items><item id='1'/><item id='2'/></items></doc>", {}, "", True),
    ("/xpath", "POST", "<doc><items><item id='1'/></items></doc>", {}, "", False),
    ("/xpath", "POST", "{not xml", {}, "", False),
    ("/xmltemplated", "POST", "<o><qty>12</qty><id>anything</id></o>", {}, "", True),
    ("/xmltemplated", "POST", "<o><id>x</id><qty>ten</qty></o>", {}, "", False),
    ("/form", "POST", "user=bob&token=t1", FORM, "", True),
    ("/form", "POST", "user=alice", FORM, "", False),
    ("/array", "GET", "", {}, "ids=1&ids=2", True),
    ("/array", "GET", "", {}, "ids=2&ids=1", False),
    ("/unordered", "GET", "", {}, "ids=2&ids=1", True),
    ("/negate", "GET", "", {"X-Env": "dev"}, "", True),
    ("/negate", "GET", "", {"X-Env": "prod"}, "", False),
    ("/jwt", "GET", "", {"Authorization": JWT}, "", True),
    ("/jwt", "GET", "", {"Authorization": "not.a.jwt"}, "", False),
    ("/jwtjsonpath", "GET", "", {"Authorization": f"Bearer {JWT}"}, "", True),
    ("/jwtjsonpath", "GET", "", {"Authorization": "Bearer x.y"}, "", False),
    ("/glob", "GET", "", {"Accept": "application/json"}, "", True),
    ("/glob", "GET", "", {"Accept": "text/html"}, "", False),
    ("/regex", "GET", "", {}, "page=12", True),
    ("/regex", "GET", "", {}, "page=1a", False),
]


@pytest.fixture(scope="module")
def loaded(simproxy: Simproxy) -> Simproxy:
    status, body = simproxy.admin_json("PUT", "/api/v2/simulation", simulation(*PAIRS))
    assert status == 200, body
    return simproxy


@pytest.mark.parametrize(("path", "method", "body", "headers", "query", "hits"), CASES)
def test_matcher_through_the_proxy(
    loaded: Simproxy, path: str, method: str, body: str, headers: dict[str, str], query: str, hits: bool
) -> None:
    # each case on its own: the cache key sorts query values, so ids=2&ids=1 would meet ids=1&ids=2's hit
    loaded.admin("DELETE", "/api/v2/cache")
    url = f"http://api.example.com{path}" + (f"?{query}" if query else "")
    status, _, answer = loaded.proxy(url, method=method, body=body.encode() or None, headers=headers)
    if hits:
        assert (status, answer) == (200, f"hit {path}".encode())
    else:
        assert status == 502 and answer.startswith(b"simproxy Error!")


@pytest.mark.parametrize(
    ("matcher", "where"),
    [
        (_m("nosuch", "x"), ".request.path[0].matcher"),
        (_m("exact", 5), ".request.path[0].value"),
        (_m("glob", ["a"]), ".request.path[0].value"),
        (_m("exact", "/x", config={"ignoreOrder": True}), ".request.path[0].config"),
        (_m("jsonpath", "$.items[?(@.x =="), ".request.path[0]"),
        (
            _m(
                "xpath",
                "/doc[",
            ),
            ".request.path[0]",
        ),
        (_m("json", "{not json"), ".request.path[0]"),
        (_m("form", {"a": [_m("exact", "1")]}), ".request.path[0]"),
    ],
)
def test_a_bad_matcher_is_a_400_naming_it_and_changes_nothing(
    loaded: Simproxy, matcher: dict[str, Any], where: str
) -> None:
    doc = simulation({"request": {"path": [matcher]}, "response": {"status": 200}})
    status, body = loaded.admin_json("PUT", "/api/v2/simulation", doc)
    assert status == 400
    assert "data.pairs[0]" + where in body["error"]
    assert loaded.proxy("http://api.example.com/negate", headers={"X-Env": "dev"})[2] == b"hit /negate"
