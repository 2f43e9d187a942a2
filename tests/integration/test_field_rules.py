"""Hoverfly's field rules, through real proxied requests (hoverfly-engine.md §3)."""

from __future__ import annotations

import gzip
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, simulation


def _pair(answer: str, **request: Any) -> dict[str, Any]:
    return {"request": request, "response": {"status": 200, "body": answer}}


def _exact(value: str) -> list[dict[str, str]]:
    return [{"matcher": "exact", "value": value}]


@pytest.fixture(scope="module")
def rules(simproxy: Simproxy) -> Iterator[Simproxy]:
    status, body = simproxy.admin_json("PUT", "/api/v2/simulation", simulation(
        _pair("decoded path", path=_exact("/a b")),
        _pair("raw path kept", path=_exact("/a%2Fb")),
        _pair("no query only", path=_exact("/q"), query={}),
        _pair("any query", path=_exact("/any")),
        _pair("joined values", path=_exact("/multi"), query={"t": _exact("x;y")}),
        _pair("with port", path=_exact("/port"), destination=_exact("svc.example.com:8080")),
        _pair("without port", path=_exact("/port"), destination=_exact("svc.example.com")),
        _pair("scheme ignored", path=_exact("/scheme"), scheme=_exact("https")),
        _pair("gunzipped", path=_exact("/gz"), method=_exact("POST"), body=_exact('{"zipped": true}')),
        _pair("header joined", path=_exact("/h"), headers={"x-multi": _exact("1;2")}),
    ))  # fmt: skip
    assert status == 200, body
    rules = simproxy
    yield rules
    rules.admin("DELETE", "/api/v2/cache")


def _get(sp: Simproxy, url: str, **kwargs: Any) -> tuple[int, bytes]:
    sp.admin("DELETE", "/api/v2/cache")
    status, _, body = sp.proxy(url, **kwargs)
    return status, body


def test_paths_are_matched_decoded_unless_go_keeps_the_raw_form(rules: Simproxy) -> None:
    assert _get(rules, "http://h/a%20b") == (200, b"decoded path")
    assert _get(rules, "http://h/a%2Fb") == (200, b"raw path kept")


def test_query_empty_object_matches_only_requests_without_parameters(rules: Simproxy) -> None:
    assert _get(rules, "http://h/q") == (200, b"no query only")
    assert _get(rules, "http://h/q?x=1")[0] == 502
    assert _get(rules, "http://h/any?x=1&y=2") == (200, b"any query")


def test_repeated_query_values_are_joined_with_semicolons(rules: Simproxy) -> None:
    assert _get(rules, "http://h/multi?t=x&t=y") == (200, b"joined values")
    assert _get(rules, "http://h/multi?t=x%3By") == (200, b"joined values")  # a literal ; looks the same


def test_destination_carries_the_port_the_client_sent(rules: Simproxy) -> None:
    assert _get(rules, "http://SVC.example.com:8080/port") == (200, b"with port")
    assert _get(rules, "http://svc.example.com/port") == (200, b"without port")


def test_scheme_is_stored_but_never_matched(rules: Simproxy) -> None:
    assert _get(rules, "http://h/scheme") == (200, b"scheme ignored")


def test_gzip_request_bodies_are_matched_decompressed(rules: Simproxy) -> None:
    body = gzip.compress(b'{"zipped": true}')
    status, answer = _get(rules, "http://h/gz", method="POST", body=body, headers={"Content-Encoding": "gzip"})
    assert (status, answer) == (200, b"gunzipped")


def test_repeated_header_lines_are_joined_and_names_are_case_insensitive(rules: Simproxy) -> None:
    rules.admin("DELETE", "/api/v2/cache")
    with socket.create_connection(("127.0.0.1", rules.proxy_port), timeout=10) as sock:
        sock.sendall(b"GET http://h/h HTTP/1.1\r\nHost: h\r\nX-MULTI: 1\r\nx-multi: 2\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 200 OK") and data.endswith(b"header joined")
