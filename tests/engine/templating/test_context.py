"""The template context (spec §8.2): request fields, state, lookup rules, text and truthiness."""

from __future__ import annotations

import pytest

from simproxy.engine.errors import SimulationError
from simproxy.engine.templating import TemplateEngine
from tests.engine.templating.conftest import fails, request, text

REQ = request(
    "/one/two",
    method="POST",
    destination="Example.com:8080",
    query="a=1&a=2&b=x",
    headers={"X-Header-Id": ["h1", "h2"], "Content-Type": ["application/x-www-form-urlencoded"]},
    body="f=v1&f=v2",
    scheme="https",
)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{Request.Method}}", "POST"),
        ("{{Request.Scheme}}", "https"),
        ("{{Request.Host}}", "example.com:8080"),
        ("{{Request.Path}}", "onetwo"),
        ("{{Request.Path.[1]}}", "two"),
        ("{{Request.QueryParam.a}}", "12"),
        ("{{Request.QueryParam.a.[1]}}", "2"),
        ("{{Request.Header.X-Header-Id.[0]}}", "h1"),
        ("{{Request.FormData.f}}", "v1v2"),
        ("{{request.method}}", "POST"),
        ("{{request.queryParam.b}}", "x"),
    ],
)
def test_request_fields(template: str, expected: str) -> None:
    assert text(template, req=REQ) == expected


def test_header_names_must_be_canonical_and_query_names_exact() -> None:
    assert text("[{{Request.Header.x-header-id}}][{{Request.QueryParam.A}}]", req=REQ) == "[][]"


@pytest.mark.parametrize(
    ("path", "expected"), [("/", "[]"), ("/a/", "[a][]"), ("/one/two/three/x", "[one][two][three][x]")]
)
def test_path_is_split_on_slashes_without_the_leading_empty_part(path: str, expected: str) -> None:
    assert text("{{#each Request.Path}}[{{this}}]{{/each}}", req=request(path)) == expected


def test_a_missing_value_renders_empty() -> None:
    assert text("[{{Request.QueryParam.nope}}][{{Request.Nope}}][{{State.none}}][{{Literals.x.y.z}}]") == "[][][][]"


def test_state_is_read_live_and_keys_are_case_sensitive() -> None:
    assert text("{{State.one}}/{{State.One}}", state={"one": "A"}) == "A/"


def test_literals_keep_their_json_shape() -> None:
    literals = {"obj": {"list": [1, 2.5, True, None, "s"]}, "big": 1e21, "tiny": 1.5e-7, "n": None}
    assert text(
        "{{Literals.obj.list}}|{{Literals.obj.list.[1]}}|{{Literals.big}}|{{Literals.tiny}}", literals=literals
    ) == ("12.5trues|2.5|1000000000000000000000|0.00000015")


def test_member_names_are_capitalised_but_map_keys_are_not() -> None:
    assert text("{{literals.Key}}|{{Literals.key}}", literals={"Key": "K"}) == "K|"


def test_lookup_falls_back_to_enclosing_contexts() -> None:
    assert text("{{#each Request.Path}}{{Request.Method}}{{/each}}", req=request("/a/b")) == "GETGET"


def test_a_resolved_first_part_stops_the_fallback() -> None:
    # inside the map, "Request" is a key with no "Method": the root is not consulted
    literals = {"items": [{"Request": {"Other": 1}}]}
    assert text("{{#each Literals.items}}[{{Request.Method}}]{{/each}}", literals=literals) == "[]"


def test_parent_and_root_paths() -> None:
    literals = {"outer": {"name": "o", "inner": [{"name": "i"}]}}
    template = "{{#with Literals.outer}}{{#each inner}}{{name}}/{{../name}}/{{@root.Request.Method}}{{/each}}{{/with}}"
    assert text(template, literals=literals) == "i/o/GET"


def test_this_and_dot() -> None:
    assert text("{{#each Request.Path}}{{this}}{{.}}{{/each}}", req=request("/a/b")) == "aabb"


def test_array_context_maps_a_path_over_its_items() -> None:
    literals = {"people": [{"name": "ann"}, {"name": "bob"}, {"age": 3}]}
    assert text("{{#with Literals.people}}{{name}}{{/with}}", literals=literals) == "annbob"


def test_negative_index_fails_the_render_where_hoverfly_crashes() -> None:
    assert fails("{{Request.Path.[-1]}}", req=request("/a"))


def test_out_of_range_index_is_empty() -> None:
    assert text("[{{Request.Path.[5]}}]", req=request("/a")) == "[]"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, "true"),
        (False, "false"),
        (None, ""),
        (12, "12"),
        (12.0, "12"),
        (0.1, "0.1"),
        (-0.0, "-0"),
        (1e21, "1000000000000000000000"),
        (123456789012345678901234567890, "123456789012345680000000000000"),
        (["a", 1, ["b", None], False], "a1bfalse"),
    ],
)
def test_value_to_text(value: object, expected: str) -> None:
    assert text("{{Literals.v}}", literals={"v": value}) == expected


def test_a_map_prints_as_go_debug_text() -> None:
    assert text("{{Literals.m}}", literals={"m": {"b": "x", "a": ["1", "2"]}}) == "map[a:[1 2] b:x]"


@pytest.mark.parametrize(
    ("value", "truthy"),
    [
        ("false", True),
        ("0", True),
        (" ", True),
        ("", False),
        (0, False),
        (0.0, False),
        (0.5, True),
        ([], False),
        ([0], True),
        ({}, False),
        ({"a": 1}, True),
        (None, False),
        (False, False),
    ],
)
def test_truthiness(value: object, truthy: bool) -> None:
    assert text("{{#if Literals.v}}T{{else}}F{{/if}}", literals={"v": value}) == ("T" if truthy else "F")


def test_current_date_time_joins_exactly_three_arguments() -> None:
    assert text("{{CurrentDateTime 'a' 'b' 'c'}}") == "a b c"
    assert text("{{currentDateTime 1 true 2.50}}") == "1 true 2.5"


@pytest.mark.parametrize(
    "template", ["{{CurrentDateTime}}", "{{CurrentDateTime 'a' 'b'}}", "{{currentDateTime 'a' 'b' 'c' 'd'}}"]
)
def test_current_date_time_with_another_argument_count_fails(template: str) -> None:
    assert fails(template)


def test_removed_date_helpers_without_arguments_render_empty() -> None:
    assert text("[{{iso8601DateTime}}][{{currentDateTimeAdd}}]") == "[][]"


@pytest.mark.parametrize(
    "template", ["[{{foo 'x' 1 bar=2}}]", "{{currentDateTimeAdd '1d' 'x'}}", "{{ length (parseJson 'x') }}"]
)
def test_unknown_helper_with_arguments_is_refused_at_import(template: str) -> None:
    # Hoverfly renders "" for them; the issue asks for a clear 400 at import instead
    with pytest.raises(SimulationError, match="unknown helper"):
        TemplateEngine().compile(template, "data.pairs[0].response.body")


def test_a_context_value_called_with_arguments_ignores_them() -> None:
    assert text("{{Request.Method 'ignored' 2}}") == "GET"


def test_request_body_alone_is_a_wrong_argument_count() -> None:
    assert fails("{{Request.Body}}")


def test_printing_a_function_fails_the_render() -> None:
    assert fails("{{#each Request}}{{this}}{{/each}}")


def test_printing_the_request_struct_gives_go_debug_text() -> None:
    printed = text("{{{Request}}}", req=request("/Request"))
    assert "[Request] http %!s(func(string, string, *raymond.Options) interface {}" in printed


def test_kvs_and_internal_vars_are_context_fields() -> None:
    assert text("{{putValue 'k' 'v' false}}{{Kvs.k}}{{setStatusCode 418}}{{InternalVars.statusCode}}") == "v418"


def test_repeated_paths_print_the_same_values_wherever_they_are() -> None:
    literals = {"name": "root", "items": [{"x": 1}, {"name": "item"}, ["list"]]}
    template = "{{name}}|{{#each Literals.items}}[{{name}}]{{/each}}|{{name}}"
    assert text(template, literals={"outer": 1, **literals}) == "|[][item][]|"
    assert text("{{Literals.name}}{{#each Literals.items}}[{{Literals.name}}]{{/each}}", literals=literals) == (
        "root[root][root][]"
    )


def test_the_store_is_read_afresh_each_time() -> None:
    assert text("{{putValue 'k' 'a' false}}{{Kvs.k}}{{putValue 'k' 'b' false}}{{Kvs.k}}") == "ab"
