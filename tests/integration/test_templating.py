"""Every templating helper through real proxied requests (hoverfly-engine.md §8)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, simulation

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
MARKS = "Id,Name,Marks\n1,Test1,45\n2,Test2,55\n*,NA,ABSENT\n"
JSON_BODY = '{"items": [{"name": "apple", "price": 1.5}, {"name": "pear", "price": 2}], "total": 1234567}'
XML_BODY = "<doc><item id='1'>one</item><item id='2'>two</item></doc>"

# (name, template, query string, request body, expected: exact text or a compiled regex)
CASES: list[tuple[str, str, str, str, str | re.Pattern[str]]] = [
    ("path", "{{ Request.Path.[1] }}|{{ Request.Path }}", "", "", "0|t0"),  # ["t", "0"], printed joined
    ("query", "{{ Request.QueryParam.a }}|{{ Request.QueryParam.a.[1] }}", "a=1&a=2", "", "12|2"),
    ("header", "{{ Request.Header.X-Test-Header }}|{{ Request.Header.x-test-header }}", "", "", "hdr|"),
    (
        "method-lowercase-members",
        "{{ request.method }}|{{ Request.Method }}|{{ Request.Scheme }}",
        "",
        "",
        "POST|POST|http",
    ),
    ("host", "{{ Request.Host }}", "", "", "templates.test"),
    ("formdata", "{{ Request.FormData.user }}|{{ Request.FormData.tag.[1] }}", "", "user=bob&tag=a&tag=b", "bob|b"),
    (
        "escaping",
        "{{ Request.QueryParam.v }}|{{{ Request.QueryParam.v }}}",
        "v=O'R%3C%3E%26%22",
        "",
        "O&apos;R&lt;&gt;&amp;&quot;|O'R<>&\"",
    ),
    (
        "body-jsonpath",
        "{{ Request.Body 'jsonpath' '$.items[1].name' }}|{{ requestBody 'jsonpath' '$.total' }}",
        "",
        JSON_BODY,
        "pear|1234567",
    ),
    ("body-xpath", "{{ Request.Body 'xpath' '/doc/item[2]' }}", "", XML_BODY, "two"),
    (
        # Hoverfly's goxml2json fork writes every child element as an array
        "body-jsonpathfromxml",
        "{{ Request.Body 'jsonpathfromxml' \"$.doc[0].item[1]['#content']\" }}",
        "",
        XML_BODY,
        "two",
    ),
    (
        # a JSONPath whose output is a JSON array gives the array itself ...
        "each-over-body",
        "{{#each (Request.Body 'jsonpath' '$.items') }}[{{ this.name }}]{{/each}}",
        "",
        JSON_BODY,
        "[apple][pear]",
    ),
    (
        # ... while several results print space-separated, as text
        "several-results-are-text",
        "{{#each (Request.Body 'jsonpath' '$.items[*].name') }}x{{/each}}|{{ Request.Body 'jsonpath' '$.items[*].name' }}",
        "",
        JSON_BODY,
        "|apple pear",
    ),
    ("jsonFromJWT", "{{ jsonFromJWT '$.payload.name' (Request.Header.Authorization) }}", "", "", "John Doe"),
    ("now-format", "{{ now '' '2006-01-02' }}", "", "", re.compile(r"^\d{4}-\d\d-\d\d$")),
    ("now-rfc3339", "{{ now '1d' '' }}", "", "", re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")),
    ("now-unix-epoch", "{{ now '' 'unix' }}|{{ now '' 'epoch' }}", "", "", re.compile(r"^\d{10}\|\d{13}$")),
    ("current-date-time-quirk", "{{ CurrentDateTime 'a' 'b' 'c' }}", "", "", "a b c"),
    (
        "randomString",
        "{{ randomString }}|{{ randomStringLength 5 }}",
        "",
        "",
        re.compile(r"^[a-zA-Z]{3,15}\|[a-zA-Z]{5}$"),
    ),
    ("randomBoolean", "{{ randomBoolean }}", "", "", re.compile(r"^(true|false)$")),
    ("randomInteger", "{{ randomInteger }}|{{ randomIntegerRange 5 6 }}", "", "", re.compile(r"^\d+\|5$")),
    (
        "randomFloat",
        "{{ randomFloat }}|{{ randomFloatRange 1.0 1.5 }}",
        "",
        "",
        re.compile(r"^0\.\d{6}\|1\.[0-4]\d{5}$"),
    ),
    (
        "random-fakes",
        "{{ randomEmail }}|{{ randomIPv4 }}|{{ randomUuid }}",
        "",
        "",
        re.compile(
            r"^[^@|]+@[^@|]+\|\d+\.\d+\.\d+\.\d+\|[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
        ),
    ),
    ("randomIPv6", "{{ randomIPv6 }}", "", "", re.compile(r"^[0-9a-f:]+$")),
    ("faker", "{{ faker 'Name' }}|{{ faker 'NoSuchThing' }}", "", "", re.compile(r"^\S.*\S\|$")),
    (
        "replace-split-concat",
        "{{ replace 'a-b-c' '-' '+' }}|{{ split 'x,y' ',' }}|{{ concat 'a' 'b' 'c' }}",
        "",
        "",
        "a+b+c|xy|abc",
    ),
    (
        "length-substring",
        "{{ length 'héllo' }}|{{ substring 'abcdef' 1 3 }}|{{ rightmostCharacters 'abcdef' 2 }}",
        "",
        "",
        "6|bc|ef",
    ),
    (
        "validation",
        "{{ isNumeric '1e5' }}{{ isNumeric '1_000' }}{{ isAlphanumeric 'ab1' }}{{ isBool 'T' }}",
        "",
        "",
        "truefalsetruetrue",
    ),
    (
        "comparisons",
        "{{ isGreaterThan '10' '9' }}{{ isLessThan 'x' '1' }}{{ isBetween '5' '1' '10' }}{{ isGreaterThanOrEqual '2' '2' }}{{ isLessThanOrEqual '3' '2' }}",
        "",
        "",
        "truefalsetruetruefalse",
    ),
    ("matchesRegex", "{{ matchesRegex 'abc123' '^[a-z]+\\d+$' }}", "", "", "true"),
    (
        "arithmetic",
        "{{ add 10 3.333 '0.00' }}|{{ divide 10 3 '' }}|{{ multiply 2 3.5 '' }}|{{ subtract 1 'x' '' }}|{{ divide 1 0 '' }}",
        "",
        "",
        "13.33|3.333333|7|NaN|+Inf",
    ),
    (
        "kv-and-arrays",
        "{{ putValue 'k' 'v' false }}{{ getValue 'k' }}|{{ addToArray 'a' '1' false }}{{ addToArray 'a' '2' true }}|{{ sum (getArray 'a') '' }}",
        "",
        "",
        "v|2|3",
    ),
    (
        "if-unless-false-string",
        "{{#if 'false' }}T{{else}}F{{/if}}{{#unless 0 }}Z{{/unless}}{{#if Request.QueryParam.none }}x{{else}}E{{/if}}",
        "",
        "",
        "TZE",
    ),
    (
        "with-first-lookup",
        "{{#with Request }}{{ Method }}{{/with}}|{{#first (split 'a,b' ',') }}{{ this }}{{/first}}|{{ lookup Request.QueryParam 'q' }}",
        "q=z",
        "",
        "POST|a|z",
    ),
    ("equal", "{{#equal (Request.Path.[0]) 't' }}yes{{else}}no{{/equal}}", "", "", "yes"),
    (
        "each-index",
        "{{#each (split 'a,b,c' ',') }}{{ @index }}{{ this }}{{#if @last }}.{{/if}}{{/each}}",
        "",
        "",
        "0a1b2c.",
    ),
    (
        "initArray-and-log",
        "{{ addToArray 'a' 'x' false }}{{ initArray 'a' }}[{{ getArray 'a' }}]{{ log 'logged' }}",
        "",
        "",
        "[]",
    ),
    (
        "journal-miss-text",
        "{{ journal 'Request.QueryParam.id' '1' 'response' 'jsonpath' '$.x' }}",
        "",
        "",
        "{{ journal Request.QueryParam.id 1 response jsonpath $.x }}",
    ),
    ("missing-values-are-empty", "[{{ Request.QueryParam.nope }}][{{ State.nope }}]", "", "", "[][]"),
    (
        "csv",
        "{{ csv 'marks' 'Id' '2' 'Name' }}|{{ csv 'marks' 'id' '9' 'Marks' }}|{{ csvCountRows 'marks' }}",
        "",
        "",
        "Test2|ABSENT|3",
    ),
    ("csv-miss-text", "{{ csv 'nosuch' 'Id' '1' 'Name' }}", "", "", "{{ csv nosuch Id 1 Name }}"),
    ("csvMatchingRows", "{{#each (csvMatchingRows 'marks' 'Marks' '55') }}{{ this.Name }}{{/each}}", "", "", "Test2"),
    (
        # in an array context raymond applies a path to every element: use lookup to index a row
        "csvAsArray-csvAsMap",
        "{{#each (csvAsArray 'marks') }}{{ lookup this 0 }}{{/each}}|{{#each (csvAsMap 'marks') }}{{ this.Id }}{{/each}}",
        "",
        "",
        "Id12*|12*",
    ),
    (
        "csvSqlCommand",
        "{{#each (csvSqlCommand \"SELECT Name FROM marks WHERE Marks >= '50'\") }}{{ this.Name }},{{/each}}",
        "",
        "",
        "Test2,NA,",
    ),
    (
        "literals-and-vars",
        "{{ Literals.answer }}|{{ Literals.nested.deep }}|{{ Vars.city }}",
        "",
        '{"city": "London"}',
        "42|yes|London",
    ),
    ("status-and-header", "{{ setStatusCode 201 }}{{ setHeader 'X-Made' 'here' }}made", "", "", "made"),
    ("journal-not-found", "{{ hasJournalKey 'Request.QueryParam.id' '1' }}", "", "", "false"),
]


def _pair(i: int, template: str) -> dict[str, Any]:
    return {
        "request": {"path": [{"matcher": "exact", "value": f"/t/{i}"}]},
        "response": {"status": 200, "body": template, "templated": True},
    }


@pytest.fixture(scope="module")
def loaded(simproxy: Simproxy) -> Simproxy:
    doc = simulation(*(_pair(i, case[1]) for i, case in enumerate(CASES)))
    doc["data"]["literals"] = [{"name": "answer", "value": 42}, {"name": "nested", "value": {"deep": "yes"}}]
    doc["data"]["variables"] = [{"name": "city", "function": "requestBody", "arguments": ["jsonpath", "$.city"]}]
    status, body = simproxy.admin_json("PUT", "/api/v2/simulation", doc)
    assert status == 200, body
    assert (
        simproxy.admin_json("PUT", "/api/v2/service/templating-data-source/csv", {"name": "marks", "data": MARKS})[0]
        == 200
    )
    return simproxy


@pytest.mark.parametrize(("i", "case"), list(enumerate(CASES)), ids=[c[0] for c in CASES])
def test_helper_through_the_proxy(loaded: Simproxy, i: int, case: tuple[str, str, str, str, Any]) -> None:
    name, _, query, body, expected = case
    path = f"/t/{i}" if name != "path" else "/t/0"
    url = f"http://templates.test{path}" + (f"?{query}" if query else "")
    headers = {"X-Test-Header": "hdr", "Authorization": f"Bearer {JWT}"}
    if name == "formdata":
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    status, answer_headers, answer = loaded.proxy(url, method="POST", body=body.encode() or None, headers=headers)
    text = answer.decode()
    if name == "status-and-header":
        assert status == 201 and answer_headers["x-made"] == "here"
    else:
        assert status == 200
    if isinstance(expected, re.Pattern):
        assert expected.search(text), text
    else:
        assert text == expected


def test_a_row_added_by_a_template_is_read_by_the_next_request(loaded: Simproxy) -> None:
    doc = simulation(
        _pair(0, "{{ csvAddRow 'guests' (split (Request.QueryParam.row) ',') }}{{ csvCountRows 'guests' }}"),
        _pair(1, "{{ csvDeleteRows 'guests' 'name' 'bob' true }}|{{ csvCountRows 'guests' }}"),
    )
    loaded.admin_json("PUT", "/api/v2/simulation", doc)
    loaded.admin_json(
        "PUT", "/api/v2/service/templating-data-source/csv", {"name": "guests", "data": "name,age\nann,30\n"}
    )
    assert loaded.proxy("http://h/t/0?row=bob,40", method="POST")[2] == b"2"
    assert loaded.proxy("http://h/t/0?row=cy,50", method="POST")[2] == b"3"
    assert loaded.proxy("http://h/t/1", method="POST")[2] == b"1|2"
    sources = loaded.admin_json("GET", "/api/v2/service/templating-data-source/csv")[1]["csvDataSources"]
    assert {"name": "guests", "data": "name,age\nann,30\ncy,50\n"} in sources


def test_a_template_error_serves_the_template_unrendered(loaded: Simproxy) -> None:
    doc = simulation(_pair(0, "{{ randomIntegerRange 5 5 }}"))  # max <= min crashes Hoverfly
    loaded.admin_json("PUT", "/api/v2/simulation", doc)
    assert loaded.proxy("http://h/t/0", method="POST")[:3:2] == (200, b"{{ randomIntegerRange 5 5 }}")


@pytest.mark.parametrize(
    ("template", "where"),
    [("{{#if x}}unclosed", "data.pairs[0].response.body"), ("{{ randomStringLength 'x' }}", "data.pairs[0].response.body"),
     ("{{ now 'only-one' }}", "data.pairs[0].response.body"), ("{{ noSuchHelper 'x' }}", "data.pairs[0].response.body")],
)  # fmt: skip
def test_a_template_that_cannot_work_is_a_400_at_import(loaded: Simproxy, template: str, where: str) -> None:
    status, body = loaded.admin_json("PUT", "/api/v2/simulation", simulation(_pair(0, template)))
    assert status == 400 and where in body["error"]
