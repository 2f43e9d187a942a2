"""The request model the engine matches against (spec §3.1): path, query, destination and header names."""

from __future__ import annotations

import pytest

from simproxy.engine.wire.request import canonical_header, parse_query, request_path
from tests.engine.conftest import request

# ---------------------------------------------------------------------------------------------
# path


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        # the spec's verified table
        ("/a%20b", "/a b"),
        ("/caf%C3%A9", "/café"),
        ("/a+b", "/a+b"),
        ("/a%2Fb", "/a%2Fb"),
        ("/a%2fb", "/a%2fb"),
        ("/a%41", "/a%41"),
        ("/%7Euser", "/%7Euser"),
        ("", "/"),
        # decoded when Go's path escaping gives the raw text back
        ("/a%3Fb", "/a?b"),
        ("/a%25b", "/a%b"),
        ("/x/%E2%82%AC", "/x/€"),
        # kept raw when it does not: lower-case hex, escaped characters Go leaves alone
        ("/caf%c3%a9", "/caf%c3%a9"),
        ("/a%2Bb", "/a%2Bb"),
        ("/a%3Bb", "/a%3Bb"),
        ("/a%20(b)", "/a%20(b)"),
        # nothing escaped: as sent
        ("/plain/path", "/plain/path"),
        ("/a(b)*", "/a(b)*"),
        ("/", "/"),
    ],
)
def test_request_path(raw: str, path: str) -> None:
    assert request_path(raw) == path


# ---------------------------------------------------------------------------------------------
# query


@pytest.mark.parametrize(
    ("raw", "query"),
    [
        ("", {}),
        ("a=1", {"a": ["1"]}),
        ("a=1&b=2", {"a": ["1"], "b": ["2"]}),
        # repeated names keep arrival order
        ("a=1&b=2&a=3", {"a": ["1", "3"], "b": ["2"]}),
        # only & separates; ; stays inside the value
        ("a=x;y", {"a": ["x;y"]}),
        ("a=1;b=2", {"a": ["1;b=2"]}),
        ("qq=country=BEL;postalCode=1234", {"qq": ["country=BEL;postalCode=1234"]}),
        # empty segments are skipped
        ("&&a=1&&", {"a": ["1"]}),
        ("&", {}),
        # no = gives an empty value; an empty value stays empty
        ("flag", {"flag": [""]}),
        ("a=", {"a": [""]}),
        ("a=&a=2", {"a": ["", "2"]}),
        ("=v", {"": ["v"]}),
        # split at the first = only
        ("a=b=c", {"a": ["b=c"]}),
        # + and %XX are decoded, in names too
        ("q=a+b", {"q": ["a b"]}),
        ("q=a%20b", {"q": ["a b"]}),
        ("my%20key=1", {"my key": ["1"]}),
        ("my+key=1", {"my key": ["1"]}),
        ("q=%2B", {"q": ["+"]}),
        ("q=%26%3D", {"q": ["&="]}),
        ("q=caf%C3%A9", {"q": ["café"]}),
        # a bad escape drops the whole pair silently
        ("a=%zz", {}),
        ("a=%zz&b=1", {"b": ["1"]}),
        ("%zz=1&b=1", {"b": ["1"]}),
        ("a=%2&b=1", {"b": ["1"]}),
        ("a=%&b=1", {"b": ["1"]}),
        ("a=1&a=%g0", {"a": ["1"]}),
        # the legacy ./ prefix is removed from names
        ("./a=1", {"a": ["1"]}),
        ("./a=1&./a=2", {"a": ["1", "2"]}),
        ("b/./a=1", {"b/./a": ["1"]}),
        ("%2E%2Fa=1", {"a": ["1"]}),  # escaped, as it is once decoded
        (".%2Fa=1&b=2", {"a": ["1"], "b": ["2"]}),
    ],
)
def test_parse_query(raw: str, query: dict[str, list[str]]) -> None:
    assert parse_query(raw) == query


def test_a_dot_slash_name_replaces_the_plain_name() -> None:
    """Hoverfly renames ``./a`` to ``a`` after parsing by assignment, so its values replace those of ``a``."""
    assert parse_query("a=1&./a=2") == {"a": ["2"]}
    assert parse_query("./a=1&a=2") == {"a": ["1"]}


def test_request_details_parses_the_raw_query() -> None:
    req = request(query="a=1&A=2&b=x;y")
    assert req.query == {"a": ["1"], "A": ["2"], "b": ["x;y"]}


# ---------------------------------------------------------------------------------------------
# destination


@pytest.mark.parametrize(
    ("host", "destination"),
    [("Example.COM", "example.com"), ("LOCALHOST:8500", "localhost:8500"), ("api.test", "api.test")],
)
def test_destination_is_lower_cased_with_its_port(host: str, destination: str) -> None:
    assert request(destination=host).destination == destination


def test_method_keeps_its_case() -> None:
    assert request(method="get").method == "get"


# ---------------------------------------------------------------------------------------------
# header names


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("x-api-key", "X-Api-Key"),
        ("X-API-KEY", "X-Api-Key"),
        ("content-type", "Content-Type"),
        ("accept", "Accept"),
        ("ACCEPT-ENCODING", "Accept-Encoding"),
        ("user-agent", "User-Agent"),
        ("x--double", "X--Double"),
        ("-leading", "-Leading"),
        ("trailing-", "Trailing-"),
        ("x-1st-thing", "X-1st-Thing"),
        ("x_under_score", "X_under_score"),
        ("www-authenticate", "Www-Authenticate"),
        ("x-b3-traceid", "X-B3-Traceid"),
        # names Go leaves untouched: a space or a non-ASCII byte
        ("bad header", "bad header"),
        ("x-caf\u00e9", "x-caf\u00e9"),
    ],
)
def test_canonical_header_names(name: str, canonical: str) -> None:
    assert canonical_header(name) == canonical


def test_a_workers_memo_of_header_names_gives_the_same_names_and_stays_bounded() -> None:
    from simproxy.engine.wire.parse import NAMES_KEPT, Arrival, build_request

    raw = [(b"host", b"api.test"), (b"x-api-key", b"k"), (b"CONTENT-type", b"text/plain"), (b"x_odd_Name", b"v")]
    names: dict[str, str] = {}
    first = build_request("GET", b"/a", raw, b"", Arrival(), names)
    again = build_request("GET", b"/a", raw, b"", Arrival(), names)
    fresh = build_request("GET", b"/a", raw, b"", Arrival())
    assert (
        list(first.headers) == list(again.headers) == list(fresh.headers) == ["X-Api-Key", "Content-Type", "X_odd_name"]
    )
    assert names == {"x-api-key": "X-Api-Key", "CONTENT-type": "Content-Type", "x_odd_Name": "X_odd_name"}
    long_name = b"x-" + b"a" * 100
    long_raw = [(b"host", b"api.test"), (long_name, b"v")]
    assert list(build_request("GET", b"/a", long_raw, b"", Arrival(), names).headers) == ["X-A" + "a" * 99]
    assert "x-" + "a" * 100 not in names  # long names are not remembered

    full = {f"n{i}": f"N{i}" for i in range(NAMES_KEPT)}
    assert next(iter(build_request("GET", b"/a", raw, b"", Arrival(), full).headers)) == "X-Api-Key"
    assert len(full) == NAMES_KEPT  # a full memo is not grown
