"""requestBody / Request.Body, jsonFromJWT and the journal helpers."""

from __future__ import annotations

import base64
import json

import pytest

from tests.engine.templating.conftest import Entry, Journal, fails, request, text

JSON = request(
    method="POST",
    body=json.dumps(
        {
            "name": "Ben",
            "id": 5553686208582,
            "big": 1234567,
            "huge": 1.5e300,
            "ratio": 0.5,
            "flag": True,
            "none": None,
            "obj": {"y": 1, "x": "<&>"},
            "currencies": ["GBP", "USD", "EUR"],
            "items": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 5}],
        }
    ),
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("$.name", "Ben"),
        ("name", ""),  # {name} is not a k8s path
        (".name", "Ben"),
        ("{.name}", "Ben"),
        ("$.id", "5553686208582"),
        ("$.big", "1234567"),  # k8s prints 1.234567e+06; the whole-output exponent is undone
        ("$.huge", "15" + "0" * 299),
        ("$.ratio", "0.5"),
        ("$.flag", "true"),
        ("$.none", "null"),
        ("$.obj", '{"x":"\\u003c\\u0026\\u003e","y":1}'),
        ("$.currencies", "GBPUSDEUR"),  # a JSON array comes back as an array: printed concatenated
        ("$.currencies[1]", "USD"),
        ("$.items[*].sku", "a b"),
        ("$.items[?(@.qty > 3.0)].sku", "b"),
        ("$.items[?(@.qty > 3)].sku", ""),  # k8s: a float64 and an int literal cannot be compared
        ("$.missing", ""),
        ("$.currencies[9]", ""),
        ("$.items[*].qty", "2 5"),
        ("id: {.id}, big: {.big}", "id: 5.553686208582e+12, big: 1.234567e+06"),  # only a whole output is undone
    ],
)
def test_request_body_jsonpath(query: str, expected: str) -> None:
    assert text(f"{{{{{{Request.Body 'jsonpath' '{query}'}}}}}}", req=JSON) == expected


def test_request_body_helper_and_field_are_the_same_and_the_type_is_lower_cased() -> None:
    template = (
        "{{requestBody 'jsonpath' '$.name'}}|{{Request.Body 'JSONPATH' '$.name'}}|{{requestBody 'JsonPath' '$.name'}}"
    )
    assert text(template, req=JSON) == "Ben|Ben|Ben"


def test_an_array_result_can_be_iterated() -> None:
    template = "{{#each (Request.Body 'jsonpath' '$.currencies')}} {{@index}} : {{this}} \n {{/each}}"
    assert text(template, req=JSON) == " 0 : GBP \n 1 : USD \n 2 : EUR \n"


def test_array_elements_keep_their_json_types() -> None:
    template = "{{#each (Request.Body 'jsonpath' '$.items')}}{{sku}}x{{qty}};{{/each}}"
    assert text(template, req=JSON) == "ax2;bx5;"


@pytest.mark.parametrize("body", ["not json", "", '{"name": "Ben"} trailing'])
def test_a_body_that_is_not_json_gives_empty(body: str) -> None:
    assert text("[{{Request.Body 'jsonpath' '$.name'}}]", req=request(body=body)) == "[]"


def test_unknown_query_type_gives_empty() -> None:
    assert text("[{{Request.Body 'yaml' '$.name'}}]", req=JSON) == "[]"


def test_empty_jsonpath_query_fails_where_hoverfly_crashes() -> None:
    assert fails("{{Request.Body 'jsonpath' ''}}", req=JSON)


def test_request_body_inside_a_non_root_block_fails_where_hoverfly_crashes() -> None:
    assert fails(
        "{{#each (Request.Body 'jsonpath' '$.currencies')}}{{Request.Body 'jsonpath' '$.name'}}{{/each}}", req=JSON
    )
    assert fails("{{#with Request}}{{requestBody 'jsonpath' '$.name'}}{{/with}}", req=JSON)


def test_request_body_inside_if_at_the_root_works() -> None:
    assert text("{{#if true}}{{Request.Body 'jsonpath' '$.name'}}{{/if}}", req=JSON) == "Ben"


XML = request(
    method="POST",
    body='<?xml version="1.0" encoding="UTF-8"?><root id="7"><text>value</text><item>a</item><item>b</item></root>',
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("/root/text", "value"),
        ("/root/item", "a"),
        ("count(/root/item)", "2"),
        ("/root/@id", "7"),
        ("/root/missing", ""),
        ("/root/item = 'b'", "true"),
    ],
)
def test_request_body_xpath(query: str, expected: str) -> None:
    assert text(f"{{{{Request.Body 'xpath' \"{query}\"}}}}", req=XML) == expected


def test_xpath_on_a_body_that_is_not_xml_gives_empty() -> None:
    assert text("[{{Request.Body 'xpath' '/root/text'}}]", req=request(body='{"a": 1}')) == "[]"


def test_an_invalid_xpath_fails_where_hoverfly_crashes() -> None:
    assert fails("{{Request.Body 'xpath' '/root/['}}", req=XML)


@pytest.mark.parametrize(
    ("body", "query", "expected"),
    [
        ('<?xml version="1.0" encoding="UTF-8"?><name>Johnny</name>', "$.name", "Johnny"),
        (XML.body, "$.root[0].text[0]", "value"),
        (XML.body, "$.root[0].item", "ab"),
        (XML.body, "$.root[0]['-id'][0]", "7"),
        ("<a>text<b>1</b></a>", "$.a[0]['#content']", "text"),
        ("<a>text<b>1</b>\n</a>", "$.a[0]['#content']", ""),  # the last text token wins
        ("<a><x:b xmlns:x='u'>1</x:b></a>", "$.a[0].b[0]['#content']", "1"),
        ("<a> \t padded \n</a>", "$.a[0]", "padded"),
        ("<a><b>1</b><c>2</oops></a>", "$.a", ""),
    ],
)
def test_jsonpath_from_xml(body: str, query: str, expected: str) -> None:
    assert text(f"{{{{{{Request.Body 'jsonpathfromxml' \"{query}\"}}}}}}", req=request(body=body)) == expected


def test_a_render_reads_an_xml_body_once_however_many_queries_read_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from simproxy.engine.templating import helpers_body

    reads = {"xml": 0, "json": 0}
    parse_xml, xml_to_json = helpers_body.parse_xml, helpers_body.xml_to_json

    def counted_xml(body: str) -> object:
        reads["xml"] += 1
        return parse_xml(body)

    def counted_json(body: str) -> object:
        reads["json"] += 1
        return xml_to_json(body)

    monkeypatch.setattr(helpers_body, "parse_xml", counted_xml)
    monkeypatch.setattr(helpers_body, "xml_to_json", counted_json)
    template = (
        "{{Request.Body 'xpath' '/root/text'}} {{requestBody 'xpath' 'count(/root/item)'}} "
        "{{#each (split 'a,b' ',')}}{{/each}}{{Request.Body 'XPATH' '/root/@id'}} "
        "{{Request.Body 'jsonpathfromxml' '$.root[0].text[0]'}} {{{Request.Body 'jsonpathfromxml' '$.root[0].item'}}}"
    )
    assert text(template, req=XML) == "value 2 7 value ab"
    assert reads == {"xml": 1, "json": 1}
    assert text(template, req=XML) == "value 2 7 value ab"  # the next render reads its own request
    assert reads == {"xml": 2, "json": 2}


def _segment(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


TOKEN = ".".join(
    [
        _segment({"alg": "none", "typ": "JWT"}),
        _segment({"sub": "integrationUser", "roles": ["dev", "ops"], "exp": 1732060800}),
        base64.urlsafe_b64encode(b"sig").rstrip(b"=").decode(),
    ]
)


@pytest.mark.parametrize(
    ("path", "header", "expected"),
    [
        ("$.payload.sub", f"Bearer {TOKEN}", "integrationUser"),
        ("$.payload.sub", f"  bEaReR   {TOKEN}  ", "integrationUser"),
        ("$.payload.sub", TOKEN, "integrationUser"),
        ("$.header.alg", TOKEN, "none"),
        ("$.payload.exp", TOKEN, "1732060800"),
        ("$.sub", TOKEN, ""),  # no automatic payload prefix
        ("$.payload.roles", TOKEN, "devops"),
        ("$.payload.missing", TOKEN, ""),
        ("$.payload.sub", "Bearer not-a-real.jwt", ""),
        ("$.payload.sub", "", ""),
    ],
)
def test_json_from_jwt(path: str, header: str, expected: str) -> None:
    req = request(headers={"Authorization": [header]})
    assert text(f"{{{{jsonFromJWT '{path}' Request.Header.Authorization}}}}", req=req) == expected


def test_json_from_jwt_array_can_be_iterated() -> None:
    req = request(headers={"Authorization": [f"Bearer {TOKEN}"]})
    template = "Roles: {{#each (jsonFromJWT '$.payload.roles' (Request.Header.Authorization))}}{{this}} {{/each}}"
    assert text(template, req=req) == "Roles: dev ops "


def test_json_from_jwt_with_an_empty_path_fails_where_hoverfly_crashes() -> None:
    assert fails("{{jsonFromJWT '' Request.Header.Authorization}}", req=request(headers={"Authorization": [TOKEN]}))


JOURNAL = Journal(
    {
        ("ids", "42"): Entry(request_body='{"name": "req"}', response_body="<r><v>resp</v></r>"),
        ("ids", "7"): Entry(request_body="", response_body="{}"),
    }
)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{journal 'ids' '42' 'request' 'jsonpath' '$.name'}}", "req"),
        ("{{journal 'ids' '42' 'RESPONSE' 'xpath' '/r/v'}}", "resp"),
        ("{{journal 'ids' '42' 'response' 'jsonpathfromxml' '$.r[0].v[0]'}}", "resp"),
        ("[{{journal 'ids' '42' 'request' 'JSONPATH' '$.name'}}]", "[]"),  # the type is not lower-cased
        ("{{journal 'ids' '99' 'request' 'jsonpath' '$.name'}}", "{{ journal ids 99 request jsonpath $.name }}"),
        ("{{journal 'nope' 42 'request' 'jsonpath' '$.name'}}", "{{ journal nope 42 request jsonpath $.name }}"),
        ("{{journal 'ids' '42' 'body' 'jsonpath' '$.name'}}", "{{ journal ids 42 body jsonpath $.name }}"),
        ("{{journal 'ids' '7' 'request' 'jsonpath' '$'}}", "{{ journal ids 7 request jsonpath $ }}"),  # empty body
        ("{{hasJournalKey 'ids' '42'}}|{{hasJournalKey 'ids' '43'}}|{{hasJournalKey 'x' '42'}}", "true|false|false"),
    ],
)
def test_journal(template: str, expected: str) -> None:
    assert text(template, journal=JOURNAL) == expected


def test_journal_miss_text_is_escaped_by_double_stash_only_where_needed() -> None:
    assert text("{{journal 'ids' \"a'b\" 'request' 'jsonpath' '$'}}", journal=JOURNAL) == (
        "{{ journal ids a&apos;b request jsonpath $ }}"
    )


def test_no_journal_finds_nothing() -> None:
    assert text("{{hasJournalKey 'ids' '42'}}") == "false"


def test_a_lone_surrogate_escape_or_a_byte_that_is_not_utf8_reads_as_the_replacement_character() -> None:
    """As Go's JSON decoder reads them: Hoverfly v1.12.10 answers ``[x\ufffdy][\ufffd(z]`` here. A
    valid surrogate pair is the character it stands for."""
    body = '{"a": "x\\ud800y", "b": "\udcc3(z", "c": "\\ud83d\\ude00", "\\udc00": 1}'
    req = request(method="POST", body=body)
    fields = "".join(f"[{{{{ Request.Body 'jsonpath' '$.{name}' }}}}]" for name in "abc")
    assert text(fields, req=req) == "[x\ufffdy][\ufffd(z][\U0001f600]"
    whole = '{"a":"x\ufffdy","b":"\ufffd(z","c":"\U0001f600","\ufffd":1}'
    assert text("{{{ Request.Body 'jsonpath' '$' }}}", req=req) == whole
