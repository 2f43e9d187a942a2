"""deploy/kubernetes: every kustomization renders, validates against the Kubernetes schemas, and fits together."""

from __future__ import annotations

import base64
from typing import Any

import jsonschema
import kubernetes_validate
import pytest

from tests.deploy.render import KUSTOMIZE, one, render

KUSTOMIZATIONS = ["base", "overlays/external-redis", "overlays/prometheus-operator"]
# the oldest Kubernetes the schemas here know (autoscaling/v2 and policy/v1 are older) and the newest
VERSIONS = ["1.25.0", kubernetes_validate.latest_version()]

# The Prometheus Operator's CRD is not among the Kubernetes schemas: the fields used here, checked.
SERVICE_MONITOR = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "spec": {
            "type": "object",
            "required": ["selector", "endpoints"],
            "additionalProperties": False,
            "properties": {
                "selector": {
                    "type": "object",
                    "properties": {"matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}},
                },
                "endpoints": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "port": {"type": "string"},
                            "path": {"type": "string"},
                            "interval": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
                        },
                    },
                },
            },
        },
    },
}


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
@pytest.mark.parametrize("version", VERSIONS)
def test_every_object_validates_against_the_schemas(kustomization: str, version: str) -> None:
    objects = render(kustomization)
    assert objects
    for obj in objects:
        if obj["kind"] == "ServiceMonitor":
            jsonschema.validate(obj, SERVICE_MONITOR)
        else:
            kubernetes_validate.validate(obj, version, strict=True)


def _pod(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return dict(one(objects, "Deployment", name)["spec"]["template"])


def _container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    containers = _pod(objects, "simproxy")["spec"]["containers"]
    assert [c["name"] for c in containers] == ["simproxy"]
    return dict(containers[0])


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def test_the_base_wires_pods_services_scaling_and_the_simulation_together() -> None:
    objects = render("base")
    pod = _pod(objects, "simproxy")
    labels = pod["metadata"]["labels"]
    container = _container(objects)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"proxy": 8500, "admin": 8888}

    # the Services reach the pods' named ports; the Deployment's selector is the pods'
    deployment = one(objects, "Deployment", "simproxy")
    assert deployment["metadata"]["name"] == "simproxy"
    assert _selects(deployment["spec"]["selector"]["matchLabels"], labels)
    for name, port in (("simproxy-proxy", "proxy"), ("simproxy-admin", "admin")):
        service = one(objects, "Service", name)
        assert _selects(service["spec"]["selector"], labels)
        assert [p["targetPort"] for p in service["spec"]["ports"]] == [port]

    # health: every probe asks /api/health on the admin port; a stop pauses before SIGTERM
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/api/health", "port": "admin"}
    assert container["lifecycle"]["preStop"]["exec"]["command"][0] == "sleep"
    assert int(pod["spec"]["terminationGracePeriodSeconds"]) > int(
        container["lifecycle"]["preStop"]["exec"]["command"][1]
    )

    # one worker per CPU of the limit; the store's URL from the generated secret, hash suffix and all
    env = {e["name"]: e["valueFrom"] for e in container["env"]}
    assert env["SIMPROXY_WORKERS"]["resourceFieldRef"] == {
        "containerName": "simproxy",
        "resource": "limits.cpu",
        "divisor": "1",
    }
    secret = one(objects, "Secret", "simproxy-store")
    assert env["SIMPROXY_REDIS_URL"]["secretKeyRef"] == {"name": secret["metadata"]["name"], "key": "url"}
    redis_service = one(objects, "Service", "simproxy-redis")
    assert _selects(redis_service["spec"]["selector"], _pod(objects, "simproxy-redis")["metadata"]["labels"])

    # the simulation: the generated ConfigMap, mounted where -import reads it
    config_map = one(objects, "ConfigMap", "simproxy-simulation")
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    mount = next(m for m in container["volumeMounts"] if volumes[m["name"]].get("configMap"))
    assert volumes[mount["name"]]["configMap"]["name"] == config_map["metadata"]["name"]
    args = container["args"]
    imported = args[args.index("-import") + 1]
    assert imported.startswith(mount["mountPath"] + "/")
    assert imported.rsplit("/", 1)[1] in config_map["data"]
    assert "-join-fleet" in args  # a pod that restarts or scales out does not reset the fleet
    assert args[args.index("-logs") + 1] == "json"  # one JSON object per line for the log collector

    # Prometheus: the annotated port is the admin port, where /metrics is
    annotations = pod["metadata"]["annotations"]
    assert (annotations["prometheus.io/scrape"], annotations["prometheus.io/path"]) == ("true", "/metrics")
    assert int(annotations["prometheus.io/port"]) == ports["admin"]

    # scaling: the autoscaler drives this Deployment; the budget covers its pods
    hpa = one(objects, "HorizontalPodAutoscaler", "simproxy")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "simproxy"}
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    pdb = one(objects, "PodDisruptionBudget", "simproxy")
    assert _selects(pdb["spec"]["selector"]["matchLabels"], labels)
    assert pdb["spec"]["minAvailable"] < hpa["spec"]["minReplicas"]  # a drain can always move a pod

    # non-root, as the image
    assert (
        pod["spec"]["securityContext"]["runAsUser"] == 10001 and container["securityContext"]["readOnlyRootFilesystem"]
    )


def test_the_external_redis_overlay_drops_the_redis_and_points_at_the_given_url() -> None:
    objects = render("overlays/external-redis")
    assert not [o for o in objects if o["metadata"]["name"].startswith("simproxy-redis")]
    secret = one(objects, "Secret", "simproxy-store")
    url = (KUSTOMIZE / "overlays" / "external-redis" / "redis-url.txt").read_text()
    assert base64.b64decode(secret["data"]["url"]).decode() == url
    env = {e["name"]: e["valueFrom"] for e in _container(objects)["env"]}
    assert env["SIMPROXY_REDIS_URL"]["secretKeyRef"]["name"] == secret["metadata"]["name"]


def test_the_service_monitor_scrapes_the_admin_service_metrics() -> None:
    objects = render("overlays/prometheus-operator")
    monitor = one(objects, "ServiceMonitor", "simproxy")
    admin = one(objects, "Service", "simproxy-admin")
    assert _selects(monitor["spec"]["selector"]["matchLabels"], admin["metadata"]["labels"])
    assert not _selects(
        monitor["spec"]["selector"]["matchLabels"], one(objects, "Service", "simproxy-proxy")["metadata"]["labels"]
    )
    assert [(e["port"], e["path"]) for e in monitor["spec"]["endpoints"]] == [("admin", "/metrics")]
    assert [p["name"] for p in admin["spec"]["ports"]] == ["admin"]
