"""The ``format`` of a parameter or a body's value is checked, in every dialect."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from simproxy.engine.openapi.convert import to_simulation
from simproxy.engine.openapi.document import load_document
from simproxy.engine.openapi.validate import Contracts

FORMATS = ("date-time", "date", "time", "uuid", "email", "idn-email", "hostname", "ipv4", "ipv6", "uri")
FORMATS += ("uri-reference", "regex", "byte")
DOC = """
openapi: {version}
paths:
  /things:
    post:
      parameters:
        - {{name: when, in: query, schema: {{type: string, format: date}}}}
        - {{name: count, in: query, schema: {{type: integer, format: int32}}}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
{properties}
                small: {{type: integer, format: int32}}
                big: {{type: integer, format: int64}}
                secret: {{type: string, format: password}}
      responses:
        '204': {{description: kept}}
"""


def _contracts(version: str) -> Contracts:
    properties = "\n".join(f"                {name}: {{type: string, format: {name}}}" for name in FORMATS)
    raw = DOC.format(version=version, properties=properties).encode()
    pairs: list[dict[str, Any]] = to_simulation(load_document(raw))["data"]["pairs"]
    return Contracts.build(tuple(p.get("labels", ())) for p in pairs)


def _body_messages(contracts: Contracts, body: dict[str, Any]) -> list[str]:
    found = contracts.check("POST", "/things", {}, {"content-type": ["application/json"]}, orjson.dumps(body).decode())
    return [f"{v.path}: {v.message}" for v in found or []]


GOOD_AND_BAD = [
    ("date-time", ["2024-01-02T03:04:05Z", "2024-02-29t23:59:60.5+05:30"], ["2024-01-02", "2024-13-02T03:04:05Z"]),
    ("date", ["2024-02-29"], ["2023-02-29", "20240102", "2024-01-02T00:00:00Z"]),
    ("time", ["03:04:05Z", "23:59:59.123-08:00"], ["24:00:00Z", "03:04:05"]),
    ("uuid", ["7d3b2c1a-5e4f-4a6b-9c8d-0e1f2a3b4c5d"], ["7d3b2c1a5e4f4a6b9c8d0e1f2a3b4c5d", "not-a-uuid"]),
    ("email", ["someone@example.com"], ["someone", "some one@example.com", "@example.com"]),
    ("idn-email", ["ünï@exämple.com"], ["nobody"]),
    ("hostname", ["api.example.com", "localhost"], ["-bad.example.com", "a_b.example.com", ""]),
    ("ipv4", ["192.168.0.1"], ["256.1.1.1", "1.2.3", "::1"]),
    ("ipv6", ["::1", "2001:db8::8a2e:370:7334"], ["2001:db8::g", "192.168.0.1"]),
    ("uri", ["https://example.com/a?b=c#d", "urn:isbn:0451450523"], ["/relative/path", "https://exa mple.com"]),
    ("uri-reference", ["/relative/path?x=1", "https://example.com"], ["has space", "100%"]),
    ("regex", ["^[a-z]+$"], ["(unclosed"]),
    ("byte", ["aGVsbG8="], ["not base64!", "aGVsbG8"]),
]


@pytest.mark.parametrize("version", ["3.0.3", "3.1.0"])
@pytest.mark.parametrize(("name", "good", "bad"), GOOD_AND_BAD, ids=[case[0] for case in GOOD_AND_BAD])
def test_each_string_format_is_checked(version: str, name: str, good: list[str], bad: list[str]) -> None:
    contracts = _contracts(version)
    for value in good:
        assert _body_messages(contracts, {name: value}) == [], value
    for value in bad:
        assert _body_messages(contracts, {name: value}) == [f"$.{name}: {value!r} is not a {name!r}"], value
    assert _body_messages(contracts, {name: None}) == [f"$.{name}: None is not of type 'string'"]


def test_integer_formats_bound_the_range() -> None:
    contracts = _contracts("3.0.3")
    assert _body_messages(contracts, {"small": 2**31 - 1, "big": -(2**63)}) == []
    assert _body_messages(contracts, {"small": 2**31, "big": 2**63}) == [
        f"$.small: {2**31} is not a 'int32'",
        f"$.big: {2**63} is not a 'int64'",
    ]


def test_formats_of_parameters_and_unknown_formats() -> None:
    contracts = _contracts("3.0.3")
    found = contracts.check("POST", "/things", {"when": ["yesterday"], "count": ["9999999999"]}, {}, "")
    assert [f"{v.where} {v.path}: {v.message}" for v in found or []] == [
        "query $.when: 'yesterday' is not a 'date'",
        "query $.count: 9999999999 is not a 'int32'",
    ]
    assert contracts.check("POST", "/things", {"when": ["2024-01-02"], "count": ["7"]}, {}, "") == []
    # password (like binary) says nothing checkable: any text
    assert _body_messages(contracts, {"secret": "x"}) == []
