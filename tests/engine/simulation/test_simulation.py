"""Importing a simulation (spec §1.8, §7.1-7.3, §9.3, §10.1; admin notes §5.2)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from simproxy.engine.errors import ImportFailure
from simproxy.engine.simulation.codec import export_simulation
from simproxy.engine.simulation.importing import ImportResult, check_log_normal, import_simulation
from simproxy.engine.simulation.model import Delay, DelayLogNormal, LogNormal, Simulation
from tests.engine.conftest import exact, glob, m, pair, simulation


def conflict(i: int) -> str:
    return f"WARNING: data.pairs[{i}] is not added due to a conflict with the existing simulation"


def both_lengths(i: int) -> str:
    return (
        "WARNING: Response contains both Content-Length and Transfer-Encoding headers on "
        f"data.pairs[{i}].response, please remove one of these headers"
    )


def wrong_length(i: int) -> str:
    return (
        f"WARNING: Response contains incorrect Content-Length header on data.pairs[{i}].response, "
        "please correct or remove header"
    )


def body_and_file(i: int) -> str:
    return (
        f"WARNING: Response contains both `body` and `bodyFile` in data.pairs[{i}].response, "
        "please remove one of them otherwise `body` is used if non empty"
    )


def put(*pairs: dict[str, Any], **data: Any) -> ImportResult:
    return import_simulation(None, simulation(*pairs, **data))


def post(current: Simulation, *pairs: dict[str, Any], **data: Any) -> ImportResult:
    return import_simulation(current, simulation(*pairs, **data))


def bodies(sim: Simulation) -> list[bytes]:
    return [p.response.body for p in sim.pairs]


def failure(current: Simulation | None, incoming: Simulation, **kwargs: Any) -> str:
    with pytest.raises(ImportFailure) as caught:
        import_simulation(current, incoming, **kwargs)
    return str(caught.value)


# ---------------------------------------------------------------------------------------------
# duplicates


def test_a_pair_already_stored_is_skipped_with_a_warning_and_the_first_kept() -> None:
    current = put(pair({"path": [exact("/a")]}, body="old")).simulation
    result = post(current, pair({"path": [exact("/b")]}, body="b"), pair({"path": [exact("/a")]}, body="new"))
    assert bodies(result.simulation) == [b"old", b"b"]
    assert result.warnings == (conflict(1),)


def test_duplicates_within_one_document_keep_the_first() -> None:
    result = put(
        pair({"path": [exact("/a")]}, body="first"),
        pair({"path": [exact("/b")]}, body="other"),
        pair({"path": [exact("/a")]}, body="second"),
        pair({"path": [exact("/a")]}, body="third"),
    )
    assert bodies(result.simulation) == [b"first", b"other"]
    assert result.warnings == (conflict(2), conflict(3))


def test_without_the_check_duplicates_are_all_kept() -> None:
    current = put(pair({"path": [exact("/a")]}, body="old")).simulation
    result = import_simulation(
        current,
        simulation(pair({"path": [exact("/a")]}, body="new"), pair({"path": [exact("/a")]}, body="newer")),
        check_duplicates=False,
    )
    assert bodies(result.simulation) == [b"old", b"new", b"newer"]
    assert result.warnings == ()


def test_the_response_and_the_labels_are_not_compared() -> None:
    result = put(
        {"labels": ["one"], "request": {"path": [exact("/a")]}, "response": {"status": 200, "body": "1"}},
        {"labels": ["two"], "request": {"path": [exact("/a")]}, "response": {"status": 500, "body": "2"}},
    )
    assert bodies(result.simulation) == [b"1"]
    assert result.warnings == (conflict(1),)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param({}, {"path": []}, id="absent-vs-empty-path"),
        pytest.param({}, {"method": []}, id="absent-vs-empty-method"),
        pytest.param({}, {"body": []}, id="absent-vs-empty-body"),
        pytest.param({}, {"scheme": []}, id="absent-vs-empty-scheme"),
        pytest.param({}, {"query": {}}, id="absent-vs-empty-query"),
        pytest.param({}, {"requiresState": {}}, id="absent-vs-empty-state"),
        pytest.param({"path": [exact("/")]}, {"path": [m("exact", "/", config={})]}, id="absent-vs-empty-config"),
        pytest.param({"path": [exact("/a")]}, {"path": [m("Exact", "/a")]}, id="matcher-name-case"),
        pytest.param({"path": [exact("/a")]}, {"path": [glob("/a")]}, id="equivalent-matchers"),
        pytest.param({"path": [exact("1")]}, {"path": [exact(1)]}, id="string-vs-number"),
        pytest.param({"path": [exact("a"), exact("b")]}, {"path": [exact("b"), exact("a")]}, id="matcher-order"),
        pytest.param({"headers": {"X-A": [exact("1")]}}, {"headers": {"x-a": [exact("1")]}}, id="header-name-case"),
        pytest.param({"query": {"a": [exact("1")]}}, {"query": {"A": [exact("1")]}}, id="query-name-case"),
        pytest.param({"scheme": [exact("http")]}, {"scheme": [exact("https")]}, id="scheme"),
        pytest.param({"requiresState": {"s": "1"}}, {"requiresState": {"s": "2"}}, id="state-value"),
        pytest.param(
            {"path": [m("glob", "*", doMatch=exact("a"))]}, {"path": [m("glob", "*", doMatch=exact("b"))]}, id="chain"
        ),
        pytest.param({"path": [m("glob", "*", doMatch=exact("a"))]}, {"path": [glob("*")]}, id="chain-vs-none"),
    ],
)
def test_requests_that_differ_structurally_are_not_duplicates(first: dict[str, Any], second: dict[str, Any]) -> None:
    result = put(pair(first), pair(second))
    assert len(result.simulation.pairs) == 2
    assert result.warnings == ()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param({}, {}, id="empty"),
        pytest.param({}, {"headers": {}}, id="absent-vs-empty-headers"),
        pytest.param({"path": [{"matcher": "exact"}]}, {"path": [m("exact", None)]}, id="absent-vs-null-value"),
        pytest.param(
            {"query": {"a": [exact("1")], "b": [exact("2")]}},
            {"query": {"b": [exact("2")], "a": [exact("1")]}},
            id="query-key-order",
        ),
        pytest.param(
            {"requiresState": {"a": "1", "b": "2"}}, {"requiresState": {"b": "2", "a": "1"}}, id="state-key-order"
        ),
        pytest.param({"path": [exact(1)]}, {"path": [exact(1.0)]}, id="numbers-compare-as-floats"),
        pytest.param({"path": [exact({"a": 1, "b": 2})]}, {"path": [exact({"b": 2, "a": 1})]}, id="object-key-order"),
    ],
)
def test_structurally_equal_requests_are_duplicates(first: dict[str, Any], second: dict[str, Any]) -> None:
    result = put(pair(first), pair(second))
    assert len(result.simulation.pairs) == 1
    assert result.warnings == (conflict(1),)


# ---------------------------------------------------------------------------------------------
# literals, variables and delays

LITERALS = [{"name": "old", "value": 1}]
VARIABLES = [{"name": "v", "function": "randomUuid"}]
DELAYS = {"delays": [{"urlPattern": "old", "httpMethod": "", "delay": 10}], "delaysLogNormal": []}
LOG_NORMAL = {
    "delays": [],
    "delaysLogNormal": [{"urlPattern": "old", "httpMethod": "", "min": 0, "max": 0, "mean": 2, "median": 1}],
}


def test_literals_and_variables_are_replaced_when_the_document_has_pairs() -> None:
    current = put(pair(), literals=LITERALS, variables=VARIABLES).simulation
    replaced = post(current, pair({"path": [exact("/x")]}), literals=[{"name": "new", "value": 2}]).simulation
    assert replaced.literals == ({"name": "new", "value": 2},)
    assert replaced.variables == ()


def test_literals_and_variables_are_kept_when_the_document_has_no_pairs() -> None:
    current = put(pair(), literals=LITERALS, variables=VARIABLES).simulation
    kept = post(current, literals=[{"name": "new", "value": 2}], variables=[]).simulation
    assert kept.literals == tuple(LITERALS)
    assert kept.variables == tuple(VARIABLES)


@pytest.mark.parametrize("actions", [DELAYS, LOG_NORMAL])
def test_global_delays_are_replaced_by_an_append_even_without_pairs(actions: dict[str, Any]) -> None:
    current = put(pair(), globalActions=actions).simulation
    assert current.delays or current.delays_log_normal
    cleared = post(current, pair({"path": [exact("/x")]})).simulation
    assert (cleared.delays, cleared.delays_log_normal) == ((), ())
    assert len(cleared.pairs) == 2
    new = {"delays": [{"urlPattern": "new", "httpMethod": "GET", "delay": 5}], "delaysLogNormal": []}
    replaced = post(current, globalActions=new).simulation
    assert replaced.delays == (Delay("new", "GET", 5),)
    assert replaced.delays_log_normal == ()
    assert replaced.pairs == current.pairs


# ---------------------------------------------------------------------------------------------
# response header warnings


def test_content_length_with_transfer_encoding_warns() -> None:
    result = put(pair(body="abc", headers={"Content-Length": ["3"], "Transfer-Encoding": ["chunked"]}))
    assert result.warnings == (both_lengths(0),)
    assert len(result.simulation.pairs) == 1


def test_both_header_warnings_for_one_pair_come_in_hoverflys_order() -> None:
    result = put(
        pair({"path": [exact("/a")]}),
        pair({"path": [exact("/b")]}, body="abc", headers={"Content-Length": ["9"], "Transfer-Encoding": ["chunked"]}),
    )
    assert result.warnings == (both_lengths(1), wrong_length(1))


def test_header_warnings_use_the_exact_header_names() -> None:
    result = put(pair(body="abc", headers={"content-length": ["9"], "transfer-encoding": ["chunked"]}))
    assert result.warnings == ()


def test_a_content_length_without_values_does_not_warn() -> None:
    result = put(pair(body="abc", headers={"Content-Length": [], "Transfer-Encoding": ["chunked"]}))
    assert result.warnings == ()


@pytest.mark.parametrize(
    ("declared", "body", "warns"),
    [
        ("3", "abc", False),
        ("4", "abc", True),
        ("0", "", False),
        ("-1", "", True),
        ("2", "\u00e9", False),  # bytes, not characters
        ("1", "\u00e9", True),
        ("03", "abc", False),
        ("abc", "abc", False),
        ("", "abc", False),
        ("3.0", "abc", False),
        ("+4", "abc", True),  # Go's Atoi accepts a sign
        (" 4", "abc", False),  # but no spaces
        ("4 ", "abc", False),
        ("\u00b2", "abc", False),  # nor non-ASCII digits
        ("\u0663", "ab", False),
    ],
)
def test_an_incorrect_content_length_warns(declared: str, body: str, warns: bool) -> None:
    result = put(pair(body=body, headers={"Content-Length": [declared]}))
    assert result.warnings == ((wrong_length(0),) if warns else ())
    assert len(result.simulation.pairs) == 1


def test_content_length_is_checked_against_the_decoded_body() -> None:
    encoded = base64.b64encode(b"\x00\x01\x02\x03").decode()
    assert put(pair(body=encoded, encodedBody=True, headers={"Content-Length": ["4"]})).warnings == ()
    assert put(pair(body=encoded, encodedBody=True, headers={"Content-Length": ["8"]})).warnings == (wrong_length(0),)


def test_only_the_first_content_length_value_is_checked() -> None:
    assert put(pair(body="abc", headers={"Content-Length": ["3", "99"]})).warnings == ()


def test_a_skipped_duplicate_still_gets_its_header_warnings() -> None:
    result = put(pair({"path": [exact("/a")]}), pair({"path": [exact("/a")]}, headers={"Content-Length": ["9"]}))
    assert result.warnings == (conflict(1), wrong_length(1))


# ---------------------------------------------------------------------------------------------
# post-serve actions


def test_an_unknown_post_serve_action_fails_the_import() -> None:
    incoming = simulation(pair(), pair(postServeAction="notify-webhook"))
    assert failure(None, incoming) == "invalid post server action name provided"


# ---------------------------------------------------------------------------------------------
# bodyFile


def test_a_body_file_is_read_relative_to_the_root(tmp_path: Path) -> None:
    (tmp_path / "responses").mkdir()
    (tmp_path / "responses" / "ok.json").write_bytes(b'{"ok": true}')
    (tmp_path / "top.bin").write_bytes(b"\x89PNG\r\n\x1a\n")
    result = import_simulation(
        None,
        simulation(pair(bodyFile="responses/ok.json"), pair({"path": [exact("/b")]}, bodyFile="./sub/../top.bin")),
        body_files_root=tmp_path,
    )
    assert bodies(result.simulation) == [b'{"ok": true}', b"\x89PNG\r\n\x1a\n"]
    assert result.warnings == ()
    exported = export_simulation(result.simulation)["pairs"][0]["response"]
    assert (exported["body"], exported["bodyFile"]) == ('{"ok": true}', "responses/ok.json")


def test_an_encoded_body_file_is_base64_decoded(tmp_path: Path) -> None:
    (tmp_path / "image.b64").write_text(base64.b64encode(b"\x00\x01binary").decode())
    result = import_simulation(None, simulation(pair(bodyFile="image.b64", encodedBody=True)), body_files_root=tmp_path)
    assert bodies(result.simulation) == [b"\x00\x01binary"]


def test_a_non_empty_body_wins_over_the_body_file_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("from file")
    result = import_simulation(None, simulation(pair(body="inline", bodyFile="file.txt")), body_files_root=tmp_path)
    assert bodies(result.simulation) == [b"inline"]
    assert result.warnings == (body_and_file(0),)


def test_body_file_warnings_follow_the_pair_warnings(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("from file")
    incoming = simulation(
        pair({"path": [exact("/a")]}, body="inline", bodyFile="file.txt", headers={"Content-Length": ["1"]}),
        pair({"path": [exact("/a")]}),
    )
    result = import_simulation(None, incoming, body_files_root=tmp_path)
    assert result.warnings == (wrong_length(0), conflict(1), body_and_file(0))


def test_an_absolute_body_file_path_is_rejected(tmp_path: Path) -> None:
    incoming = simulation(pair(), pair({"path": [exact("/b")]}, bodyFile="/etc/hostname"))
    assert failure(None, incoming, body_files_root=tmp_path) == (
        "data.pairs[1].response bodyFile contains absolute path (/etc/hostname). only relative is supported"
    )


@pytest.mark.parametrize("path", ["../secret.txt", "a/../../secret.txt", "./../secret.txt", ".."])
def test_a_body_file_path_that_backtracks_is_rejected(tmp_path: Path, path: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    message = failure(None, simulation(pair(bodyFile=path)), body_files_root=root)
    assert message == "data.pairs[0].response relative path is invalid as it attempts to backtrack"


@pytest.mark.parametrize("url", ["http://example.com/body.json", "https://example.com/a", "ftp://example.com/f.txt"])
def test_a_body_file_url_is_rejected_without_an_allowed_origin(tmp_path: Path, url: str) -> None:
    message = failure(None, simulation(pair(bodyFile=url)), body_files_root=tmp_path)
    assert message.startswith(f"data.pairs[0].response bodyFile {url} is not allowed. To allow this origin run ")
    assert message.endswith(" with -response-body-files-allow-origin")


def test_a_missing_body_file_fails_with_the_os_reason(tmp_path: Path) -> None:
    message = failure(None, simulation(pair(), pair(bodyFile="missing.json")), body_files_root=tmp_path)
    assert message.startswith("data.pairs[1].response ")
    assert "no such file or directory" in message.lower()


def test_a_failed_import_reports_the_first_failing_body_file(tmp_path: Path) -> None:
    incoming = simulation(pair(bodyFile="../a"), pair({"path": [exact("/b")]}, bodyFile="/b"))
    assert failure(None, incoming, body_files_root=tmp_path).startswith("data.pairs[0].response ")


# ---------------------------------------------------------------------------------------------
# delay validation


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ((-1, 0, 2, 1), "delay min and max can't be less than 0"),
        ((0, -1, 2, 1), "delay min and max can't be less than 0"),
        ((-1, -1, 0, 0), "delay min and max can't be less than 0"),
        ((0, 0, 0, 1), "delay mean and median params can't be less or equals 0"),
        ((0, 0, 1, 0), "delay mean and median params can't be less or equals 0"),
        ((0, 0, -5, 1), "delay mean and median params can't be less or equals 0"),
        ((10, 5, 4, 3), "min delay must be less than max one"),
        ((0, 100, 200, 50), "mean delay can't be greather than max one"),
        ((0, 100, 50, 200), "median delay can't be and greather than max one"),
        ((100, 0, 50, 40), "mean delay can't be less than min one"),
        ((100, 0, 150, 50), "median delay can't be less than min one"),
        ((0, 0, 100, 200), "mean delay can't be less than median one"),
        ((10, 1000, 100, 200), "mean delay can't be less than median one"),
    ],
    ids=lambda v: "min{}-max{}-mean{}-median{}".format(*v) if isinstance(v, tuple) else None,
)
def test_log_normal_validation_messages(params: tuple[int, int, int, int], message: str) -> None:
    lognormal = dict(zip(("min", "max", "mean", "median"), params, strict=True))
    expected = f"Config error - {message}"
    assert failure(None, simulation(pair(logNormalDelay=lognormal))) == expected
    entry = {"urlPattern": ".", "httpMethod": "", **lognormal}
    assert failure(None, simulation(globalActions={"delaysLogNormal": [entry]})) == expected


@pytest.mark.parametrize(
    "params",
    [(0, 0, 1, 1), (0, 0, 200, 100), (10, 1000, 300, 200), (100, 100, 100, 100), (5, 0, 10, 5), (0, 50, 50, 50)],
    ids=lambda params: "min{}-max{}-mean{}-median{}".format(*params),
)
def test_valid_log_normal_parameters(params: tuple[int, int, int, int]) -> None:
    check_log_normal(LogNormal(*params))
    lognormal = dict(zip(("min", "max", "mean", "median"), params, strict=True))
    result = put(pair(logNormalDelay=lognormal), globalActions={"delaysLogNormal": [{"urlPattern": ".", **lognormal}]})
    assert result.simulation.pairs[0].response.log_normal_delay == LogNormal(*params)
    assert result.simulation.delays_log_normal == (DelayLogNormal(".", "", LogNormal(*params)),)


@pytest.mark.parametrize(
    ("delay", "message"),
    [
        ({"urlPattern": "", "httpMethod": "GET", "delay": 0}, "Config error - Missing values found in: { GET 0}"),
        ({"urlPattern": "a", "httpMethod": "", "delay": 0}, "Config error - Missing values found in: {a  0}"),
        ({"urlPattern": "", "httpMethod": "", "delay": 100}, "Config error - Missing values found in: {  100}"),
        (
            {"urlPattern": "(", "httpMethod": "GET", "delay": 10},
            "Response delay entry skipped due to invalid pattern : (",
        ),
        (  # valid for Python's re, not for Go's RE2
            {"urlPattern": "a(?=b)", "httpMethod": "GET", "delay": 10},
            "Response delay entry skipped due to invalid pattern : a(?=b)",
        ),
    ],
)
def test_global_delay_validation_messages(delay: dict[str, Any], message: str) -> None:
    incoming = simulation(globalActions={"delays": [{"urlPattern": ".", "httpMethod": "", "delay": 1}, delay]})
    assert failure(None, incoming) == message


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"urlPattern": "", "mean": 2, "median": 1}, "Config error - Missing urlPattern"),
        ({"urlPattern": "[", "mean": 2, "median": 1}, "Response delay entry skipped due to invalid pattern : ["),
    ],
)
def test_global_log_normal_pattern_messages(entry: dict[str, Any], message: str) -> None:
    assert failure(None, simulation(globalActions={"delaysLogNormal": [entry]})) == message


def test_delay_patterns_are_go_regular_expressions() -> None:
    actions = {
        "delays": [{"urlPattern": "^\\pL+\\.test/[[:digit:]]+\\z", "httpMethod": "", "delay": 5}],
        "delaysLogNormal": [{"urlPattern": "(?U)a+", "httpMethod": "", "min": 0, "max": 0, "mean": 2, "median": 1}],
    }
    sim = put(globalActions=actions).simulation
    assert [d.url_pattern for d in sim.delays] == ["^\\pL+\\.test/[[:digit:]]+\\z"]
    assert [d.url_pattern for d in sim.delays_log_normal] == ["(?U)a+"]


def test_a_global_log_normal_entry_is_checked_pattern_first() -> None:
    entry = {"urlPattern": "", "min": -1, "max": 0, "mean": 0, "median": 0}
    assert failure(None, simulation(globalActions={"delaysLogNormal": [entry]})) == "Config error - Missing urlPattern"


def test_fixed_delays_are_checked_before_log_normal_delays() -> None:
    actions = {
        "delays": [{"urlPattern": "", "httpMethod": "", "delay": 0}],
        "delaysLogNormal": [{"urlPattern": ".", "min": 0, "max": 0, "mean": 0, "median": 0}],
    }
    assert failure(None, simulation(globalActions=actions)) == "Config error - Missing values found in: {  0}"


def test_a_pairs_log_normal_delay_is_checked_before_the_global_delays() -> None:
    incoming = simulation(
        pair(logNormalDelay={"min": 0, "max": 0, "mean": 0, "median": 1}),
        globalActions={"delays": [{"urlPattern": "", "httpMethod": "", "delay": 0}]},
    )
    assert failure(None, incoming) == "Config error - delay mean and median params can't be less or equals 0"
