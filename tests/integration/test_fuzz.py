"""The admin API fuzzed by schemathesis from its own OpenAPI document, with authentication off and on.

Every generated request (both namespaces, every operation but shutdown) must get an answer the
document allows: no 5xx, the documented status codes and content types, bodies that match their
schemas (every error is ``{"error": ...}``). With ``-auth`` schemathesis also checks that requests
without the token, or with a bad one, are refused. The runs are bounded (examples per operation,
fixed seed) and the number of generated cases is printed at the end of the test session.
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest

from tests.integration.conftest import FUZZ_CASES, Simproxy

pytestmark = pytest.mark.slow

EXAMPLES = 10
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
)


def _fuzz(sp: Simproxy, *extra: str, checks: tuple[str, ...] = CHECKS) -> tuple[int, str]:
    command = [
        sys.executable, "-m", "schemathesis.cli", "run", f"http://127.0.0.1:{sp.admin_port}/api/v2/openapi.json",
        "--checks", ",".join(checks), "--max-examples", str(EXAMPLES), "--seed", "20261121", "--workers", "1",
        "--exclude-path", "/api/v2/shutdown", "--no-color", *extra,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    return done.returncode, done.stdout + done.stderr


def _generated(output: str) -> int:
    found = re.search(r"(\d+) generated", output)
    assert found, output[-3000:]
    return int(found[1])


def _record(request: pytest.FixtureRequest, name: str, cases: int) -> None:
    request.config.stash.setdefault(FUZZ_CASES, {})[name] = cases


def test_the_api_answers_every_generated_request_as_documented(simproxy_factory: Any, request: Any) -> None:
    sp: Simproxy = simproxy_factory()
    status, output = _fuzz(sp)
    cases = _generated(output)
    _record(request, "auth off", cases)
    assert status == 0, output[-6000:]
    assert cases >= 500  # every operation got its examples
    assert sp.admin("GET", "/api/health")[0] == 200  # and simproxy is still up


def test_with_auth_on_only_the_token_opens_the_api(simproxy_factory: Any, request: Any) -> None:
    sp: Simproxy = simproxy_factory("-auth", "-username", "fuzz", "-password", "not-a-guess")
    login = sp.admin_json("POST", "/api/token-auth", {"username": "fuzz", "password": "not-a-guess"})
    assert login[0] == 200
    bearer = f"Authorization: Bearer {login[1]['token']}"
    status, output = _fuzz(sp, "--header", bearer, "--exclude-path", "/api/logout", checks=(*CHECKS, "ignored_auth"))
    cases = _generated(output)
    _record(request, "auth on", cases)
    assert status == 0, output[-6000:]
    assert cases >= 500
    assert sp.admin("GET", "/api/v2/hoverfly/mode")[0] == 401  # still locked for anyone without the token
