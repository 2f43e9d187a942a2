"""Request contracts: read from the labels the conversion writes, checked in the document's dialect."""

from __future__ import annotations

from typing import Any

import pytest

from simproxy.engine.errors import SimulationError
from simproxy.engine.matching.registry import MatcherRegistry
from simproxy.engine.matching.scoring import CompiledSimulation, compile_simulation
from simproxy.engine.openapi.convert import to_simulation
from simproxy.engine.openapi.document import load_document
from simproxy.engine.openapi.validate import Contracts
from simproxy.engine.simulation.codec import decode_simulation


def _contracts(raw: bytes, *, validate: bool = True) -> Contracts:
    pairs: list[dict[str, Any]] = to_simulation(load_document(raw), validate=validate)["data"]["pairs"]
    return Contracts.build(tuple(p.get("labels", ())) for p in pairs)


DOC = b"""
openapi: %s
paths:
  /notes/{id}:
    put:
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
        - {name: tags, in: query, schema: {type: array, items: {type: string, enum: [a, b]}}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                text: %s
      responses:
        '204': {description: saved}
"""


def _messages(contracts: Contracts, query: dict[str, list[str]], body: str) -> list[str] | None:
    found = contracts.check("PUT", "/notes/1", query, {"content-type": ["application/json"]}, body)
    return None if found is None else [f"{v.where} {v.path}: {v.message}" for v in found]


def test_openapi_3_0_nullable_and_3_1_type_lists_are_both_understood() -> None:
    old = _contracts(DOC % (b"3.0.3", b"{type: string, nullable: true}"))
    new = _contracts(DOC % (b"3.1.0", b"{type: [string, 'null']}"))
    for contracts in (old, new):
        assert _messages(contracts, {}, '{"text": null}') == []
        assert _messages(contracts, {}, '{"text": 3}') == ["body $.text: 3 is not of type 'string', 'null'"]


def test_array_query_parameters_and_unknown_operations() -> None:
    contracts = _contracts(DOC % (b"3.1.0", b"{type: string}"))
    assert _messages(contracts, {"tags": ["a,c"]}, "{}") == ["query $.tags: 'c' is not one of ['a', 'b']"]
    assert contracts.check("GET", "/notes/1", {}, {}, "") is None
    assert contracts.check("PUT", "/elsewhere", {}, {}, "") is None


def test_no_contract_without_validation() -> None:
    assert not _contracts(DOC % (b"3.1.0", b"{type: string}"), validate=False)


def _compiled(pairs: list[dict[str, Any]], *, lenient: bool = False) -> CompiledSimulation:
    return compile_simulation(decode_simulation({"pairs": pairs}), MatcherRegistry(lenient=lenient))


def test_the_compiled_simulation_carries_its_contracts() -> None:
    pairs = to_simulation(load_document(DOC % (b"3.1.0", b"{type: string}")))["data"]["pairs"]
    contracts = _compiled(pairs).contracts
    assert contracts is not None
    found = contracts.check("PUT", "/notes/x", {}, {"content-type": ["application/json"]}, '{"text": 1}')
    assert [f"{v.where} {v.path}: {v.message}" for v in found or []] == [
        "path $.id: 'x' is not of type 'integer'",
        "body $.text: 1 is not of type 'string'",
    ]
    without = to_simulation(load_document(DOC % (b"3.1.0", b"{type: string}")), validate=False)["data"]["pairs"]
    assert _compiled(without).contracts is None


def test_a_label_that_is_no_contract_is_refused_where_it_is() -> None:
    pairs = [{"request": {}, "response": {"status": 200}, "labels": ["mine", "openapi-contract:{not json"]}]
    with pytest.raises(SimulationError) as info:
        _compiled(pairs)
    assert info.value.path == "data.pairs[0].labels[1]"
    assert "not an OpenAPI contract" in info.value.message
    # -compat hoverfly: a label is only a label, as in Hoverfly
    assert _compiled(pairs, lenient=True).contracts is None
