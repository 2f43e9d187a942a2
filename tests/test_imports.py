"""What a start imports: a one-worker start (simulate mode, in-process store, no ``-import``) loads
none of the packages that only some features use; those are imported on first use.

Each check runs a fresh interpreter, since this one has imported everything the other tests use.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ON_FIRST_USE = frozenset(
    {
        "aiohttp",  # capture, spy, diff, remote middleware and actions: engine.outbound.upstream
        "faker",  # the templating helper faker: engine.templating.engine
        "redis",  # -redis-url or several workers: store.redis
        "jwt",  # -auth: engine.auth
        "bcrypt",  # -auth: engine.auth
        "cryptography",  # HTTPS interception: engine.server.certs (and jwt)
        "jsonschema",  # simulation uploads and -import: admin.api.simfile
        "lxml",  # xpath matchers and templating helpers: engine.gocompat.xpath
        "jsonpath_ng",  # jsonpath matchers and templating helpers: engine.gocompat.jsonpath_k8s
        "prometheus_client",  # GET /metrics: admin.api.metrics
        "pypac",  # PAC files, in their own child process: engine.outbound.pac_child
        "dukpy",  # the JavaScript engine under pypac
        "h2",  # HTTP/2: engine.server.http2 when a connection turns to it, engine.outbound.h2upstream
        "hpack",  # HTTP/2's header coding, under h2
        "hyperframe",  # HTTP/2's frames, under h2
        "yaml",  # OpenAPI documents: engine.openapi.document
    }
)


def _modules_after(*imports: str) -> set[str]:
    """Every module in ``sys.modules`` once a new interpreter has imported ``imports``."""
    code = "".join(f"import {name}\n" for name in imports) + "import json, sys\nprint(json.dumps(list(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout))


def _packages(modules: set[str]) -> set[str]:
    return {name.partition(".")[0] for name in modules}


@pytest.mark.slow  # starts a process
def test_importing_simproxy_loads_neither_the_client_nor_the_engine() -> None:
    """Every worker imports ``simproxy.engine...``, and with it the root package: that stays light."""
    modules = _modules_after("simproxy")
    assert {name for name in modules if name.startswith("simproxy")} == {"simproxy"}


@pytest.mark.slow  # starts a process
def test_a_one_worker_start_imports_no_package_of_an_optional_feature() -> None:
    modules = _modules_after("simproxy.admin.process.cli", "simproxy.admin.process.server", "simproxy.admin.api.app")
    assert {
        "simproxy.admin.process.server",
        "simproxy.admin.api.app",
        "simproxy.engine.server.protocol",
        "simproxy.engine.server.listener",
    } <= modules  # the start path itself did load
    assert _packages(modules) & ON_FIRST_USE == set()
    assert "simproxy.engine.gocompat.ottosyntax" not in modules  # otto's words, -compat hoverfly only


@pytest.mark.slow  # starts a process
def test_the_command_line_alone_imports_neither_the_server_nor_the_engine() -> None:
    """``-help``, ``-version`` and usage errors are answered without loading the request path."""
    modules = _modules_after("simproxy.admin.process.cli")
    assert (
        modules
        & {
            "simproxy.admin.process.server",
            "simproxy.admin.api.app",
            "simproxy.engine.server.protocol",
            "simproxy.engine.modes.dispatch",
            "simproxy.store.redis",
        }
        == set()
    )
    assert _packages(modules) & (ON_FIRST_USE | {"sanic"}) == set()


@pytest.mark.slow  # starts a process
def test_the_redis_store_is_still_importable_from_the_store_package() -> None:
    modules = _modules_after("simproxy.store")
    assert "simproxy.store.redis" not in modules
    import simproxy.store
    import simproxy.store.redis

    assert simproxy.store.RedisStore is simproxy.store.redis.RedisStore
    assert simproxy.store.key_prefix is simproxy.store.redis.key_prefix


@pytest.mark.slow  # starts a process
def test_the_admin_client_loads_no_event_loop_nor_any_store() -> None:
    """``from simproxy import Client`` in a test or script: the standard library's HTTP and the error
    tree, nothing of the server (asyncio comes with aiohttp, for ``AsyncClient``, on first use)."""
    modules = _modules_after("simproxy", "simproxy.admin.kit.client")
    assert {"asyncio", "aiohttp", "simproxy.store.memory", "simproxy.store.redis"} & modules == set()
    assert not any(name.startswith("simproxy.engine") for name in modules)
