"""The rendered Kubernetes Deployment and the Dockerfile start a real fleet: their command line, run here.

No cluster and no container runtime: the pod's command is the image's ENTRYPOINT with the
container's args, its environment the image's ENV plus the container's env (the CPU limit for the
workers, the Redis URL from the secret), the ConfigMap's files where the pod mounts them; what
Kubernetes and Docker would ask (probes, HEALTHCHECK) is asked of it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from benchmarks.procs import listeners
from simproxy.admin.command import COMMAND
from simproxy.admin.process.redisserver import RedisServer, free_port
from tests.deploy.render import one, render
from tests.integration.conftest import ROOT, call, wait_until

pytestmark = pytest.mark.slow


def _dockerfile() -> dict[str, Any]:
    """The final stage's ENTRYPOINT, ENV and HEALTHCHECK command (exec forms, as written there)."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    final = text[text.rindex("\nFROM ") :]
    env: dict[str, str] = {}
    for line in final.splitlines():
        if line.startswith("ENV "):
            env.update(re.findall(r"(\w+)=(\S+)", line))
    entrypoint = json.loads(re.search(r"^ENTRYPOINT (\[.*\])$", final, re.M).group(1))  # type: ignore[union-attr]
    health = json.loads(re.search(r"^HEALTHCHECK .*? CMD (\[.*\])$", final, re.M).group(1))  # type: ignore[union-attr]
    user = re.search(r"^USER (\S+)$", final, re.M).group(1)  # type: ignore[union-attr]
    return {"entrypoint": entrypoint, "env": env, "healthcheck": health, "user": user}


def _cpu(quantity: str) -> int:
    """``resourceFieldRef`` with divisor 1 rounds a CPU quantity up to whole CPUs."""
    millis = int(quantity[:-1]) if quantity.endswith("m") else int(float(quantity) * 1000)
    return -(-millis // 1000)


class Pod:
    """One pod of the rendered Deployment, run as a process."""

    def __init__(self, objects: list[dict[str, Any]], redis_url: str, folder: Path) -> None:
        image = _dockerfile()
        deployment = one(objects, "Deployment", "simproxy")
        self.container = deployment["spec"]["template"]["spec"]["containers"][0]
        self.pod = deployment["spec"]["template"]["spec"]
        scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
        assert image["entrypoint"] == ["simproxy"] and scripts["simproxy"] == "simproxy.admin.process.cli:main"
        # the volumes: each ConfigMap's files in a folder of its own, emptyDirs empty
        mounts: dict[str, Path] = {}
        volumes = {v["name"]: v for v in self.pod["volumes"]}
        for mount in self.container["volumeMounts"]:
            local = folder / mount["name"]
            local.mkdir(parents=True, exist_ok=True)
            source = volumes[mount["name"]]
            if "configMap" in source:
                config_map = one(objects, "ConfigMap", source["configMap"]["name"])
                for name, content in config_map["data"].items():
                    (local / name).write_text(content)
            mounts[mount["mountPath"]] = local

        def local_path(arg: str) -> str:
            for mount_path, local in mounts.items():
                if arg.startswith(mount_path + "/"):
                    return str(local / arg[len(mount_path) + 1 :])
            return str(mounts.get(arg, arg))

        self.args = [local_path(arg) for arg in self.container["args"]]
        self.admin_port, self.proxy_port = free_port(), free_port()
        env = {name: local_path(value) for name, value in image["env"].items()}
        env.update(AdminPort=str(self.admin_port), ProxyPort=str(self.proxy_port))
        for var in self.container["env"]:
            source = var["valueFrom"]
            if "resourceFieldRef" in source:
                ref = source["resourceFieldRef"]
                env[var["name"]] = str(_cpu(self.container["resources"]["limits"][ref["resource"].split(".")[1]]))
            elif "secretKeyRef" in source:
                env[var["name"]] = redis_url  # the cluster's Redis, here the test's
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Pod:
        command = [*COMMAND, *self.args]  # what the `simproxy` script runs
        self.process = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, **self.env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        probe = self.container["startupProbe"]["httpGet"]
        assert wait_until(lambda: self.probe(probe) == 200, timeout=60, interval=0.2), "the startup probe never passed"
        return self

    def port(self, name: str) -> int:
        declared = {p["name"]: p["containerPort"] for p in self.container["ports"]}
        return {declared["admin"]: self.admin_port, declared["proxy"]: self.proxy_port}[declared[name]]

    def probe(self, http_get: dict[str, Any]) -> int:
        try:
            return self.call(self.port(http_get["port"]), "GET", http_get["path"])[0]
        except OSError:
            return 0

    def call(self, port: int, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        status, _, payload = call(port, method, path, None if body is None else json.dumps(body).encode())
        return status, payload

    def stop(self) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # what the kubelet sends after the pre-stop hook
        try:
            return self.process.wait(timeout=self.pod["terminationGracePeriodSeconds"])
        except subprocess.TimeoutExpired:
            self.process.kill()  # what the kubelet does after the grace period
            self.process.wait()
            return None


@pytest.fixture
def pods() -> Iterator[list[Pod]]:
    started: list[Pod] = []
    yield started
    for pod in started:
        pod.stop()


def test_the_rendered_deployment_runs_a_fleet_that_serves_its_configmap_simulation(
    pods: list[Pod], redis_server: RedisServer, tmp_path: Path
) -> None:
    objects = render("base")
    # the secret names the Redis Service of the same rendering
    secret = one(objects, "Secret", "simproxy-store")
    url = urlsplit(base64.b64decode(secret["data"]["url"]).decode())
    redis_service = one(objects, "Service", "simproxy-redis")
    assert (url.scheme, url.hostname, url.port) == (
        "redis",
        "simproxy-redis",
        redis_service["spec"]["ports"][0]["port"],
    )

    first = Pod(objects, redis_server.url, tmp_path / "pod-1")
    pods.append(first)
    first.start()
    for probe in ("readinessProbe", "livenessProbe"):
        assert first.probe(first.container[probe]["httpGet"]) == 200
    assert first.process is not None
    # one worker per CPU of the limit, all on the proxy port
    cpus = _cpu(first.container["resources"]["limits"]["cpu"])
    assert wait_until(lambda: len(listeners(first.process.pid, first.proxy_port)) == cpus, timeout=30)
    # the image's health check passes against it
    health = _dockerfile()["healthcheck"]
    assert health[0] == "python"
    result = subprocess.run([sys.executable, *health[1:]], env={**os.environ, **first.env}, timeout=30)
    assert result.returncode == 0

    # the ConfigMap's simulation answers through the proxy port
    greeting = (200, b'{"greeting": "hello from simproxy"}')
    assert call(first.proxy_port, "GET", "http://orders.internal/api/greeting")[::2] == greeting

    # the run changes the state; a second pod (scaled out) joins without resetting it
    assert first.call(first.admin_port, "PUT", "/api/v2/state", {"state": {"stage": "load"}})[0] == 200
    second = Pod(objects, redis_server.url, tmp_path / "pod-2")
    pods.append(second)
    second.start()
    assert json.loads(second.call(second.admin_port, "GET", "/api/v2/state")[1])["state"] == {"stage": "load"}
    assert call(second.proxy_port, "GET", "http://orders.internal/api/greeting")[::2] == greeting
    journal = json.loads(second.call(second.admin_port, "GET", "/api/v2/journal")[1])
    assert journal["total"] == 2  # one journal for the fleet

    # a stop: SIGTERM drains and exits 0 within the grace period
    assert first.stop() == 0
    assert second.probe(second.container["readinessProbe"]["httpGet"]) == 200


def test_the_sample_dashboard_queries_only_metrics_that_simproxy_exposes(simproxy_factory: Any) -> None:
    dashboard = json.loads((ROOT / "deploy" / "grafana" / "simproxy-dashboard.json").read_text())
    queried = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\bsimproxy_[a-z_]+", target["expr"])
    }
    assert len(queried) >= 8
    sp = simproxy_factory("-cache-size", "10")
    sp.admin_json(
        "PUT",
        "/api/v2/simulation",
        {"data": {"pairs": [{"request": {}, "response": {"status": 200}}]}, "meta": {"schemaVersion": "v5"}},
    )
    assert sp.proxy("http://svc.test/any")[0] == 200
    status, _, text = sp.admin("GET", "/metrics")
    assert status == 200
    # declared (a labelled counter has no sample before its first count, e.g. records dropped)
    suffixes = {"histogram": ("_bucket", "_sum", "_count")}
    declared = re.findall(r"^# TYPE (\S+) (\S+)$", text.decode(), re.M)
    exposed = {name + suffix for name, kind in declared for suffix in suffixes.get(kind, ("",))}
    assert queried <= exposed, sorted(queried - exposed)
