"""``-compat hoverfly``: where the spec and Hoverfly v1.12.10 differ on purpose, Hoverfly's answer,
through a real simproxy process; the spec's answers stay the default (issue 19)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, simulation

PAIR = {
    "request": {"path": [{"matcher": "exact", "value": "/known"}]},
    "response": {"status": 200, "body": "known"},
}


@pytest.fixture(scope="module")
def hoverfly_like() -> Iterator[Simproxy]:
    proc = Simproxy("-compat", "hoverfly").start()
    yield proc
    proc.stop()


@pytest.fixture
def hf(hoverfly_like: Simproxy) -> Simproxy:
    """The module's Hoverfly-dialect simproxy, emptied, in simulate mode."""
    for path in ("/api/v2/simulation", "/api/v2/journal", "/api/v2/cache", "/api/v2/diff", "/api/v2/state"):
        assert hoverfly_like.admin("DELETE", path)[0] == 200
    assert hoverfly_like.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200
    return hoverfly_like


def test_exports_name_the_release_hoverflyversion(hf: Simproxy) -> None:
    assert hf.admin("PUT", "/api/v2/simulation", simulation(PAIR))[0] == 200
    meta = hf.admin_json("GET", "/api/v2/simulation")[1]["meta"]
    assert set(meta) == {"schemaVersion", "hoverflyVersion", "timeExported"}
    assert hf.admin_json("DELETE", "/api/v2/simulation")[1]["meta"]["hoverflyVersion"].startswith("v")


def test_usage_has_the_usage_wrapper_alone(hf: Simproxy) -> None:
    hf.proxy("http://api.test/nothing")
    status, body = hf.admin_json("GET", "/api/v2/hoverfly/usage")
    assert status == 200 and set(body) == {"usage"}
    assert body["usage"]["counters"]["simulate"] >= 1


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("GET", "/api/v2/cache", {"cache": None}),
        ("DELETE", "/api/v2/cache", {"cache": None}),
        ("GET", "/api/v2/diff", {"diff": None}),
        ("POST", "/api/v2/diff", {"diff": None}),
        ("GET", "/api/v2/journal/index", None),
        ("GET", "/api/v2/logs?from=4102444800", {"logs": None}),  # 2100-01-01: nothing yet
        ("GET", "/api/v2/hoverfly/templating-data-source/csv", {}),
    ],
)
def test_empty_lists_are_null_as_go_writes_nil_slices(hf: Simproxy, method: str, path: str, expected: Any) -> None:
    status, _, body = hf.admin(method, path, {} if method == "POST" else None)
    assert (status, json.loads(body)) == (200, expected)


def test_a_miss_is_signed_hoverfly_also_from_the_cache_and_in_the_journal(hf: Simproxy) -> None:
    assert hf.admin("PUT", "/api/v2/simulation", simulation(PAIR))[0] == 200
    first = hf.proxy("http://api.test/unknown")
    again = hf.proxy("http://api.test/unknown")  # answered from the match cache
    for status, headers, body in (first, again):
        assert status == 502 and headers["content-type"] == "text/plain"
        assert body.startswith(b"Hoverfly Error!\n\nThere was an error when matching")
        assert b"was made, but was not matched by Hoverfly:" in body
        assert b"Whilst Hoverfly has the following state:" in body
    journal = hf.admin_json("GET", "/api/v2/journal")[1]
    assert journal["journal"][0]["response"]["body"].startswith("Hoverfly Error!")
    assert journal["indexes"] is None  # entries but no index: Go's nil slice


def test_health_and_texts_name_hoverfly(hf: Simproxy) -> None:
    assert hf.admin_json("GET", "/api/health")[1] == {"message": "Hoverfly is healthy"}
    future = {"data": {"pairs": []}, "meta": {"schemaVersion": "v99"}}
    status, headers, body = hf.admin("PUT", "/api/v2/simulation", future)
    assert status == 400 and headers["content-type"] == "text/plain; charset=utf-8"
    assert json.loads(body)["error"].endswith("by this version of Hoverfly, you may need to update Hoverfly")


def test_errors_are_go_json_sent_as_plain_text(hf: Simproxy) -> None:
    wrong = {"data": {"pairs": [{"request": 1}]}, "meta": {"schemaVersion": "v5"}}
    status, headers, body = hf.admin("PUT", "/api/v2/simulation", wrong)
    assert status == 400 and headers["content-type"] == "text/plain; charset=utf-8"
    assert b"\\u003cdata.pairs.0.request\\u003e" in body and b"<" not in body  # Go escapes < > &
    assert json.loads(body)["error"].startswith("Invalid")


def test_an_unknown_path_is_gos_plain_404(hf: Simproxy) -> None:
    for method, path in (("GET", "/api/v2/nothing-here"), ("POST", "/api/v2/hoverfly/mode")):
        status, headers, body = hf.admin(method, path)
        assert (status, body) == (404, b"404 page not found\n")
        assert headers["content-type"] == "text/plain; charset=utf-8"
        assert headers["x-content-type-options"] == "nosniff"


def test_deleting_unknown_names_answers_200_with_what_is_there(hf: Simproxy) -> None:
    status, _, body = hf.admin("DELETE", "/api/v2/journal/index/Request.QueryParam.id")
    assert (status, body) == (200, b"null")
    csv = {"name": "people", "data": "id\n1\n"}
    assert hf.admin("PUT", "/api/v2/hoverfly/templating-data-source/csv", csv)[0] == 200
    status, kept = hf.admin_json("DELETE", "/api/v2/hoverfly/templating-data-source/csv/nobody")
    assert (status, [source["name"] for source in kept["csvDataSources"]]) == (200, ["people"])
    assert hf.admin("DELETE", "/api/v2/hoverfly/templating-data-source/csv/people")[0] == 200


def test_journal_paging_and_search_answer_as_hoverflys_code_does(hf: Simproxy) -> None:
    for n in range(30):
        hf.proxy(f"http://api.test/page{n}")
    page = hf.admin_json("GET", "/api/v2/journal")[1]
    assert (page["limit"], len(page["journal"]), page["total"]) == (25, 25, 30)  # Hoverfly's default limit
    found = hf.admin_json("POST", "/api/v2/journal", {"request": {"path": [{"matcher": "glob", "value": "/page*"}]}})[1]
    assert len(found["journal"]) == 30
    assert (found["indexes"], found["offset"], found["limit"], found["total"]) == (None, 0, 0, 0)
    status, _, body = hf.admin("GET", "/api/v2/journal?sort=colour:asc")
    assert status == 500 and json.loads(body)["error"].startswith("'colour' is not a valid sort key")


def test_the_webserver_refuses_capture_in_hoverflys_words(simproxy_factory: Any) -> None:
    web: Simproxy = simproxy_factory("-webserver", env={"SIMPROXY_COMPAT": "hoverfly"})
    status, _, body = web.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})
    assert (status, json.loads(body)) == (
        400,
        {"error": "Cannot change the mode of Hoverfly to capture when running as a webserver"},
    )
    assert web.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "spy"})[0] == 200
    status, _, body = web.proxy("/missing", headers={"Host": f"localhost:{web.proxy_port}"})
    assert status == 502
    assert b"is this Hoverfly itself; refusing to forward the request to it" in body  # Hoverfly would loop


def test_authentication_failures_have_no_body(simproxy_factory: Any) -> None:
    secured: Simproxy = simproxy_factory("-compat", "hoverfly", "-auth", "-username", "u", "-password", "p")
    status, headers, body = secured.admin("GET", "/api/v2/hoverfly/mode")
    assert (status, body) == (401, b"")
    assert "content-type" not in headers
    status, _, body = secured.admin("POST", "/api/token-auth", {"username": "u", "password": "wrong"})
    assert (status, body) == (401, b"")


def test_tunnelled_answers_are_chunked_and_close_the_connection(hf: Simproxy, tmp_path: Path) -> None:
    import requests

    empty = {"request": {"path": [{"matcher": "exact", "value": "/empty"}]}, "response": {"status": 204}}
    stored = {
        "request": {"path": [{"matcher": "exact", "value": "/stored"}]},
        "response": {"status": 200, "body": "<p>x</p>", "headers": {"Content-Type": ["text/x"], "Date": ["then"]}},
    }
    assert hf.admin("PUT", "/api/v2/simulation", simulation(PAIR, empty, stored))[0] == 200
    pem = hf.admin("GET", "/api/v2/hoverfly/ca-cert")[2]
    (tmp_path / "ca.pem").write_bytes(pem)
    proxy = f"http://127.0.0.1:{hf.proxy_port}"
    response = requests.get("https://api.secure.test/known", proxies={"https": proxy}, verify=str(tmp_path / "ca.pem"))
    assert (response.status_code, response.text) == (200, "known")
    assert response.headers["Transfer-Encoding"] == "chunked" and "Content-Length" not in response.headers
    assert response.headers["Connection"] == "close"
    # goproxy writes the answer itself, not Go's server: no Date and no sniffed type are added
    assert "Date" not in response.headers and "Content-Type" not in response.headers
    response = requests.get("https://api.secure.test/stored", proxies={"https": proxy}, verify=str(tmp_path / "ca.pem"))
    assert (response.headers["Content-Type"], response.headers["Date"], response.text) == ("text/x", "then", "<p>x</p>")
    plain = requests.get("http://api.plain.test/known", proxies={"http": proxy})  # Go's server: both added
    assert plain.headers["Content-Type"] == "text/plain; charset=utf-8" and "Date" in plain.headers
    response = requests.get("https://api.secure.test/empty", proxies={"https": proxy}, verify=str(tmp_path / "ca.pem"))
    assert response.status_code == 204 and "Transfer-Encoding" not in response.headers  # no body: not chunked

    from cryptography import x509

    subject = x509.load_pem_x509_certificate(pem).subject
    names = {attribute.rfc4514_attribute_name: str(attribute.value) for attribute in subject}
    assert (names["CN"], names["O"]) == ("hoverfly.proxy", "Hoverfly Authority")


def test_the_spec_stays_the_default(simproxy: Simproxy) -> None:
    assert "serviceVersion" in simproxy.admin_json("GET", "/api/v2/simulation")[1]["meta"]
    assert set(simproxy.admin_json("GET", "/api/v2/hoverfly/usage")[1]) == {"metrics", "usage"}
    assert simproxy.admin_json("GET", "/api/v2/cache")[1] == {"cache": []}
    status, headers, body = simproxy.admin("DELETE", "/api/v2/journal/index/nothing")
    assert (status, headers["content-type"]) == (404, "application/json")
    assert json.loads(body) == {"error": "no journal index named 'nothing'"}
    assert simproxy.proxy("http://api.test/x")[2].startswith(b"simproxy Error!")


@pytest.mark.parametrize(
    ("path", "allow"),
    [
        ("/api/v2/hoverfly/mode", "OPTIONS, GET, PUT"),
        ("/api/v2/service/mode", "OPTIONS, GET, PUT"),
        ("/api/v2/hoverfly/middleware", "OPTIONS, GET"),
        ("/api/v2/simulation", "OPTIONS, GET, PUT, DELETE"),
        ("/api/v2/journal", "OPTIONS, GET, DELETE, POST"),
        ("/api/v2/state", "OPTIONS, GET, DELETE, PUT, PATCH"),
        ("/api/v2/shutdown", "OPTIONS, GET"),
    ],
)
def test_options_answer_hoverflys_allow_list_in_both_dialects(
    simproxy: Simproxy, hoverfly_like: Simproxy, path: str, allow: str
) -> None:
    for sp in (simproxy, hoverfly_like):
        status, headers, body = sp.admin("OPTIONS", path)
        assert (status, headers["allow"], body) == (200, allow, b"")


def test_admin_answers_carry_no_empty_alt_svc_header(simproxy: Simproxy, hoverfly_like: Simproxy) -> None:
    for sp in (simproxy, hoverfly_like):
        for method, path in (
            ("GET", "/api/v2/hoverfly/mode"),
            ("GET", "/api/v2/nothing"),
            ("OPTIONS", "/api/v2/state"),
        ):
            assert "alt-svc" not in sp.admin(method, path)[1]


# Values Hoverfly v1.12.10 stores though they cannot work, and what its matchers then do (seen beside it)
UNWORKABLE = [
    {"request": {"body": [{"matcher": "json", "value": "{bad json"}]}, "response": {"status": 200, "body": "same"}},
    {"request": {"path": [{"matcher": "exact", "value": "/n"}], "body": [{"matcher": "negate", "value": 1}]},
     "response": {"status": 200, "body": "negated"}},
    {"request": {"path": [{"matcher": "exact", "value": 1}]}, "response": {"status": 200, "body": "never"}},
    {"request": {"path": [{"matcher": "regex", "value": "\\d{5}++"}]}, "response": {"status": 200, "body": "never"}},
]  # fmt: skip


def assert_served_as_hoverfly_serves_them(sp: Simproxy) -> None:
    assert sp.proxy("http://api.test/x", "POST", b"{bad json")[2] == b"same"  # the texts are compared first
    assert sp.proxy("http://api.test/n", "POST", b"anything")[2] == b"negated"  # negate of a number: always
    assert sp.proxy("http://api.test/1")[0] == 502  # exact of a number: never
    assert sp.proxy("http://api.test/12345")[0] == 502  # a regex Go cannot compile: never


def test_values_hoverfly_stores_though_they_cannot_work_are_loaded_as_it_runs_them(hf: Simproxy) -> None:
    doc = simulation(*UNWORKABLE)
    assert hf.admin("PUT", "/api/v2/simulation", doc)[0] == 200
    exported = hf.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"]
    assert [p["request"] for p in exported] == [p["request"] for p in UNWORKABLE]  # exported as given
    assert_served_as_hoverfly_serves_them(hf)


def test_the_spec_refuses_them_saying_what_compat_hoverfly_does(simproxy: Simproxy) -> None:
    assert simproxy.admin("PUT", "/api/v2/simulation", simulation(PAIR))[0] == 200
    status, body = simproxy.admin_json("PUT", "/api/v2/simulation", simulation(*UNWORKABLE))
    assert status == 400
    assert body["error"] == (
        "Invalid simulation: data.pairs[0].request.body[0].value: the json value is not JSON: "
        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1) "
        "(-compat hoverfly loads it as Hoverfly does: a matcher that matches only this same text)"
    )
    assert simproxy.proxy("http://api.test/known")[2] == b"known"  # nothing stored changed


def test_a_spec_instance_serves_what_a_hoverfly_dialect_one_stored_on_their_shared_store(
    simproxy_factory: Any, redis_server: Any
) -> None:
    shared = ("-redis-url", redis_server.url, "-redis-prefix", "unworkable:")
    compat: Simproxy = simproxy_factory(*shared, "-compat", "hoverfly")
    spec: Simproxy = simproxy_factory(*shared)
    assert compat.admin("PUT", "/api/v2/simulation", simulation(*UNWORKABLE))[0] == 200
    assert_served_as_hoverfly_serves_them(spec)


# Templates Hoverfly v1.12.10 stores though they cannot run as written, and what it serves (seen beside it)
UNWORKABLE_TEMPLATES = [
    ("/unclosed", "{{#if Request.Method}}yes", b"{{#if Request.Method}}yes"),  # served as written
    ("/unknown", "[{{ nosuchhelper 'x' }}|{{ Request.Method }}]", b"[|GET]"),  # the unknown helper gives nothing
    ("/arguments", "{{ replace 'a' 'b' }}x", b"{{ replace 'a' 'b' }}x"),  # a call that fails every render
    ("/concat", "{{ concat 'ORD-' Request.Path.[0] }}", b"{{ concat 'ORD-' Request.Path.[0] }}"),  # raymond fails it
]


def templated(path: str, body: str) -> dict[str, Any]:
    return {
        "request": {"path": [{"matcher": "exact", "value": path}]},
        "response": {"status": 200, "body": body, "templated": True},
    }


def test_templates_hoverfly_stores_though_they_cannot_run_are_served_as_it_serves_them(hf: Simproxy) -> None:
    doc = simulation(*(templated(path, body) for path, body, _ in UNWORKABLE_TEMPLATES))
    assert hf.admin("PUT", "/api/v2/simulation", doc)[0] == 200
    for path, _, served in UNWORKABLE_TEMPLATES:
        status, _, body = hf.proxy(f"http://api.test{path}")
        assert (path, status, body) == (path, 200, served)


def test_the_spec_refuses_such_a_template_saying_what_compat_hoverfly_does(simproxy: Simproxy) -> None:
    assert simproxy.admin("PUT", "/api/v2/simulation", simulation(PAIR))[0] == 200
    status, body = simproxy.admin_json("PUT", "/api/v2/simulation", simulation(templated("/a", "{{ faker }}")))
    assert status == 400
    assert body["error"] == (
        "Invalid simulation: data.pairs[0].response.body: template error: helper faker takes 1 argument(s), got 0 "
        "(-compat hoverfly loads it as Hoverfly does: the render fails and the template is served as it is written)"
    )
    assert simproxy.proxy("http://api.test/known")[2] == b"known"  # nothing stored changed
    # concat works in the spec's dialect
    assert simproxy.admin("PUT", "/api/v2/simulation", simulation(templated("/c", "{{ concat 'a' 'b' }}")))[0] == 200
    assert simproxy.proxy("http://api.test/c")[2] == b"ab"
