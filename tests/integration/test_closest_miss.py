"""The 502 of a miss, byte for byte in Hoverfly's layout, for a path, a method and a header miss."""

from __future__ import annotations

import socket

import pytest

from tests.integration.conftest import Simproxy, simulation

PAIR = {
    "request": {
        "path": [{"matcher": "exact", "value": "/closest-miss"}],
        "method": [{"matcher": "exact", "value": "GET"}],
        "headers": {"X-Key": [{"matcher": "exact", "value": "k"}]},
    },
    "response": {"status": 200, "body": "ok", "headers": {"Content-Type": ["text/plain"]}},
}

MATCHER = """{
    "path": [
        {
            "matcher": "exact",
            "value": "/closest-miss"
        }
    ],
    "method": [
        {
            "matcher": "exact",
            "value": "GET"
        }
    ],
    "headers": {
        "X-Key": [
            {
                "matcher": "exact",
                "value": "k"
            }
        ]
    }
}"""

RESPONSE = """{
    "status": 200,
    "body": "ok",
    "encodedBody": false,
    "headers": {
        "Content-Type": [
            "text/plain"
        ]
    },
    "templated": false
}"""


def _request_view(method: str, path: str, key: str) -> str:
    return f"""{{
    "Path": "{path}",
    "Method": "{method}",
    "Destination": "destination.com",
    "Scheme": "http",
    "Query": {{}},
    "Body": "",
    "FormData": {{}},
    "Headers": {{
        "Connection": [
            "close"
        ],
        "User-Agent": [
            "test-client/1.0"
        ],
        "X-Key": [
            "{key}"
        ]
    }}
}}"""


def _expected(method: str, path: str, key: str, missed: str) -> bytes:
    return (
        "simproxy Error!\n\nThere was an error when matching\n\nGot error: "
        "Could not find a match for request, create or record a valid matcher first!"
        "\n\nThe following request was made, but was not matched by simproxy:\n\n"
        + _request_view(method, path, key)
        + "\n\nWhilst simproxy has the following state:\n\n{}"
        + "\n\nThe matcher which came closest was:\n\n"
        + MATCHER
        + f"\n\nBut it did not match on the following fields:\n\n[{missed}]"
        + "\n\nWhich if hit would have given the following response:\n\n"
        + RESPONSE
    ).encode()


def _raw(sp: Simproxy, method: str, path: str, key: str) -> tuple[bytes, bytes]:
    request = (
        f"{method} http://destination.com{path} HTTP/1.1\r\nHost: destination.com\r\n"
        f"User-Agent: test-client/1.0\r\nX-Key: {key}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return head, body


@pytest.mark.parametrize(
    ("method", "path", "key", "missed"),
    [
        ("GET", "/other", "k", "path"),
        ("POST", "/closest-miss", "k", "method"),
        ("GET", "/closest-miss", "wrong", "headers"),
        ("DELETE", "/elsewhere", "wrong", "path, method, headers"),
    ],
)
def test_miss_body_equals_hoverflys_layout(simproxy: Simproxy, method: str, path: str, key: str, missed: str) -> None:
    simproxy.admin("DELETE", "/api/v2/state")
    simproxy.admin_json("PUT", "/api/v2/simulation", simulation(PAIR))
    expected = _expected(method, path, key, missed)
    for _ in range(2):  # a miss served again (the cache, when cacheable) is word for word the same
        head, body = _raw(simproxy, method, path, key)
        assert head.startswith(b"HTTP/1.1 502 Bad Gateway\r\n")
        assert b"\r\nContent-Type: text/plain\r\n" in head + b"\r\n"
        assert f"\r\nContent-Length: {len(expected)}\r\n".encode() in head + b"\r\n"
        assert body == expected
