"""The state's key groups a compiled simulation carries (engine/matching/stategroups.py)."""

from __future__ import annotations

from typing import Any

from simproxy.engine.matching import stategroups
from simproxy.engine.matching.scoring import compile_simulation
from simproxy.engine.matching.stategroups import WHOLE_ID, StateLayout, group_id
from simproxy.engine.templating import TemplateEngine
from tests.engine.conftest import REGISTRY, exact, glob, pair, simulation


def layout(*pairs: dict[str, Any]) -> StateLayout:
    return compile_simulation(simulation(*pairs), REGISTRY, TemplateEngine()).state_layout


def stepping(
    path: str, requires: dict[str, str] | None = None, method: str | None = None, **response: Any
) -> dict[str, Any]:
    request: dict[str, Any] = {"path": [exact(path)]}
    if method is not None:
        request["method"] = [exact(method)]
    if requires:
        request["requiresState"] = requires
    return pair(request, **response)


def keys_by_group(found: StateLayout) -> list[set[str]]:
    return sorted((set(group.keys) for group in found.groups), key=sorted)


def test_a_simulation_without_state_has_no_group() -> None:
    found = layout(stepping("/a"), stepping("/b"))
    assert found.groups == () and not found.whole


def test_journeys_on_their_own_paths_are_groups_of_their_own() -> None:
    found = layout(
        stepping("/login", transitionsState={"user": "alice"}),
        stepping("/account", {"user": "alice"}),
        stepping("/cart", {"sequence:1": "1"}, transitionsState={"sequence:1": "2"}),
        stepping("/cart", {"sequence:1": "2"}, removesState=["basket"]),
    )
    assert keys_by_group(found) == [{"basket", "sequence:1"}, {"user"}]
    login, account, first, second = found.of_pair
    assert login is account and first is second and login is not first


def test_pairs_that_may_answer_one_request_share_a_group() -> None:
    # which of the two answers /a hangs on both keys: one decision reads both
    found = layout(stepping("/a", {"x": "1"}), stepping("/a", {"y": "1"}))
    assert keys_by_group(found) == [{"x", "y"}]


def test_a_stateless_pair_beside_stateful_ones_reads_their_group() -> None:
    found = layout(stepping("/a", {"x": "1"}, method="GET"), stepping("/a", {"y": "1"}, method="POST"), stepping("/a"))
    assert keys_by_group(found) == [{"x", "y"}]
    assert found.of_pair[2] is found.of_pair[0]


def test_exact_methods_that_differ_keep_groups_apart() -> None:
    found = layout(stepping("/a", {"x": "1"}, method="GET"), stepping("/a", {"y": "1"}, method="POST"))
    assert keys_by_group(found) == [{"x"}, {"y"}]


def test_a_glob_path_joins_the_paths_it_may_match_and_no_other() -> None:
    found = layout(
        pair({"path": [glob("/shop/*")], "requiresState": {"x": "1"}}),
        stepping("/shop/cart", {"y": "1"}),
        stepping("/bank", {"z": "1"}),
    )
    assert keys_by_group(found) == [{"x", "y"}, {"z"}]


def test_a_template_reading_a_named_key_joins_it_to_the_pair() -> None:
    found = layout(
        stepping("/login", transitionsState={"user": "alice"}),
        stepping("/hello", body="hi {{ State.user }} {{ State.greeting }}", templated=True),
    )
    assert keys_by_group(found) == [{"greeting", "user"}]
    assert found.of_pair[0] is found.of_pair[1]


def test_a_template_reading_any_key_makes_one_group_of_everything() -> None:
    found = layout(
        stepping("/login", transitionsState={"user": "alice"}),
        stepping("/all", body="{{#each State}}{{@key}}{{/each}}", templated=True),
    )
    assert found.whole and [g.id for g in found.groups] == [WHOLE_ID]
    assert found.group_of("anything") is found.groups[0]


def test_a_key_no_pair_names_is_a_group_of_its_own_with_a_stable_id() -> None:
    found = layout(stepping("/login", transitionsState={"user": "alice"}))
    free = found.group_of("set-by-put")
    assert free.keys == {"set-by-put"} and free.id == group_id(["set-by-put"])
    assert found.group_of("user").id == group_id(["user"])
    assert found.split(["user", "set-by-put", "user"]) == {
        group_id(["user"]): ["user", "user"],
        group_id(["set-by-put"]): ["set-by-put"],
    }


def test_ids_hang_on_the_keys_alone() -> None:
    first = layout(stepping("/a", {"x": "1"}, transitionsState={"y": "2"}), stepping("/b", {"z": "1"}))
    again = layout(stepping("/b", {"z": "1"}), stepping("/c", transitionsState={"y": "3", "x": "0"}))
    assert {g.id for g in first.groups} == {g.id for g in again.groups}


def test_too_many_comparisons_settle_for_one_group(monkeypatch: Any) -> None:
    monkeypatch.setattr(stategroups, "BUDGET", 3)
    found = layout(
        pair({"path": [glob("/a/*")], "requiresState": {"x": "1"}}),
        pair({"path": [glob("/b/*")], "requiresState": {"y": "1"}}),
        stepping("/c", {"z": "1"}),
    )
    assert found.whole and keys_by_group(found) == [{"x", "y", "z"}]
