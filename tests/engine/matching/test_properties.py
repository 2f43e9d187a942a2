"""Property tests: whatever a client uploads or sends, the importer and the matchers raise nothing but
their declared errors (BadRequest, SimulationError, ImportFailure), and matching never raises."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simproxy.admin.api.simfile import parse_simulation
from simproxy.admin.errors import BadRequest
from simproxy.engine.errors import ImportFailure, SimulationError
from simproxy.engine.matching.registry import BUILTIN_MATCHERS
from simproxy.engine.matching.scoring import compile_simulation, match
from simproxy.engine.simulation.codec import decode_simulation
from simproxy.engine.simulation.importing import import_simulation
from simproxy.engine.wire.request import RequestDetails
from tests.engine.conftest import REGISTRY

EXAMPLES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=12)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
# values a matcher may be given: well-formed ones of every kind, and broken ones
SAMPLES = ["", "/a", "*", "^/a$", "(", "[", '{"a": 1}', '{"a"', "$.a", "$[", "/x/y", "<a>1</a>", "<a", "a.b.c"]
matcher_values = st.sampled_from(SAMPLES) | st.text(max_size=12) | json_values
matchers = st.fixed_dictionaries(
    {"matcher": st.sampled_from([*BUILTIN_MATCHERS, "unknown", "GLOB"]), "value": matcher_values},
    optional={"config": json_values, "doMatch": st.none() | st.just({"matcher": "exact", "value": "x"})},
)
matcher_lists = st.lists(matchers, max_size=3)
requests = st.fixed_dictionaries(
    {},
    optional={
        "path": matcher_lists,
        "method": matcher_lists,
        "destination": matcher_lists,
        "body": matcher_lists,
        "query": st.dictionaries(st.text(max_size=5), matcher_lists, max_size=2),
        "headers": st.dictionaries(st.text(max_size=5), matcher_lists, max_size=2),
        "requiresState": st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
    },
)
responses = st.fixed_dictionaries(
    {"status": st.integers(0, 999) | json_values},
    optional={
        "body": st.text(max_size=20) | json_values,
        "encodedBody": st.booleans() | json_values,
        "templated": st.booleans(),
        "headers": st.dictionaries(st.text(max_size=5), st.lists(st.text(max_size=5), max_size=2), max_size=2),
        "fixedDelay": st.integers(-5, 10**6) | json_values,
        "transitionsState": st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
    },
)
pairs = st.lists(st.fixed_dictionaries({"request": requests, "response": responses}), max_size=3)
versions = st.sampled_from(["v5", "v5.3", "v4", "v1", "v9", ""])
documents = st.fixed_dictionaries(
    {"data": st.fixed_dictionaries({"pairs": pairs}), "meta": st.fixed_dictionaries({"schemaVersion": versions})}
)


def _import(raw: bytes) -> None:
    """The path of a PUT /api/v2/simulation body, short of storing it."""
    doc = parse_simulation(raw)
    incoming = decode_simulation(doc["data"])
    compile_simulation(incoming, REGISTRY)
    result = import_simulation(None, incoming)
    compile_simulation(result.simulation, REGISTRY)


def _refused_cleanly(raw: bytes) -> bool:
    try:
        _import(raw)
    except (BadRequest, SimulationError, ImportFailure):
        return False
    return True


@EXAMPLES
@given(st.binary(max_size=200) | json_values.map(orjson.dumps))
def test_any_body_is_imported_or_refused_with_a_declared_error(raw: bytes) -> None:
    _refused_cleanly(raw)


@EXAMPLES
@given(documents)
def test_any_simulation_shaped_document_is_imported_or_refused_with_a_declared_error(doc: dict[str, Any]) -> None:
    _refused_cleanly(orjson.dumps(doc))


request_details = st.builds(
    RequestDetails.build,
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "X"]),
    scheme=st.sampled_from(["http", "https"]),
    destination=st.text(max_size=10),
    path=st.text(max_size=10).map(lambda p: "/" + p),
    raw_query=st.text(max_size=10),
    body=st.text(max_size=30) | json_values.map(lambda v: orjson.dumps(v).decode()),
    headers=st.dictionaries(
        st.sampled_from(["Content-Type", "X-A", "Authorization"]),
        st.lists(st.text(max_size=8), min_size=1, max_size=2),
        max_size=3,
    ),
)


@EXAMPLES
@given(documents, st.lists(request_details, min_size=1, max_size=4), st.sampled_from(["strongest", "first"]))
def test_matching_a_simulation_that_imported_never_raises(
    doc: dict[str, Any], reqs: list[RequestDetails], strategy: Any
) -> None:
    try:
        incoming = decode_simulation(parse_simulation(orjson.dumps(doc))["data"])
        sim = compile_simulation(incoming, REGISTRY)
    except (BadRequest, SimulationError, ImportFailure):
        return
    for req in reqs:
        result = match(sim, req, {}, strategy)
        assert result.pair is None or result.pair in sim.pairs
