"""An imported OpenAPI document's contracts are compiled with the simulation, never on a request."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from simproxy.engine.openapi import validate
from simproxy.engine.openapi.convert import to_simulation
from simproxy.engine.openapi.document import load_document
from tests.engine.modes.conftest import World, request

DOC = b"""
openapi: 3.1.0
paths:
  /notes/{id}:
    get:
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses:
        '200':
          description: a note
          content:
            application/json:
              example: {text: hello}
"""


def _pairs() -> list[dict[str, Any]]:
    pairs: list[dict[str, Any]] = to_simulation(load_document(DOC))["data"]["pairs"]
    return pairs


def test_the_first_request_finds_the_contracts_compiled(world: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario(w: World) -> None:
        assert w.runtime.snapshot.simulation.contracts is not None  # before any request

        def refused(_contract: dict[str, Any]) -> Any:
            raise AssertionError("a contract compiled on the request path")

        monkeypatch.setattr(validate, "_compile", refused)
        wire = await w.answer(request("/notes/abc"))
        assert wire.status == 422
        assert orjson.loads(wire.body)["violations"] == [
            {"in": "path", "path": "$.id", "message": "'abc' is not of type 'integer'"}
        ]
        assert (await w.answer(request("/notes/3"))).status == 200

    world(scenario, *_pairs())


def test_a_simulation_without_contracts_holds_none(world: Any) -> None:
    async def scenario(w: World) -> None:
        assert w.runtime.snapshot.simulation.contracts is None
        assert (await w.answer(request("/notes/3"))).status == 200

    plain = [
        {**pair, "labels": [label for label in pair.get("labels", ()) if "contract" not in label]} for pair in _pairs()
    ]
    world(scenario, *plain)
