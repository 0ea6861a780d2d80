"""AIM objects converging on a real control plane, as application and platform teams use them.

Each test applies manifests to the API server and waits for Crossplane and function-aim to
converge over as many reconciles as it takes; then it asserts on the objects in the API server and
on the AIM status and conditions. Controllers that cannot run here are played by the helpers of
devtools/cluster/simulate.py, and each test's docstring names the ones it uses.
"""

from __future__ import annotations

import json
import time
from functools import partial
from typing import Any

import pytest

from devtools.cluster.converge import (
    AIM,
    CONVERGE_S,
    ISVC,
    ROUTE,
    one,
    owned_by,
    templates_of,
    wait_condition,
    wait_status,
)
from devtools.cluster.kube import KubeError, condition, wait_for
from devtools.cluster.platform import BASE_IMAGE, SOURCE, Platform, aim, catalog_entry
from devtools.cluster.simulate import (
    simulate_gateway_accepts,
    simulate_job_pods_succeed,
    simulate_kserve_ready,
    simulate_pvc_bound,
)
from devtools.cluster.timing import TIMES
from function.rules import naming
from tests.e2e.journey import Journey
from tests.simulated import DRY_RUN_RESULT


def service(
    name: str, namespace: str, model: str, template: str | None, **extra: Any
) -> dict[str, Any]:
    """An AIMService."""
    spec: dict[str, Any] = {"model": {"ref": model}, **extra}
    if template:
        spec["template"] = {"name": template}
    return aim("AIMService", name, namespace, spec)


@pytest.fixture(scope="module")
def catalog(platform: Platform, gpu_node: str) -> str:
    """A cluster model and its template with inline sources, Available: the platform's catalog."""
    t0 = time.monotonic()
    kube = platform.kube
    assert kube.get("v1", "Node", gpu_node) is not None  # templates need a GPU to be Available
    kube.apply_all(catalog_entry("AIMClusterModel", "llama-8b", None))
    wait_status(platform, "AIMClusterModel", "llama-8b", None, "Ready")
    [template] = templates_of(kube, "AIMClusterServiceTemplate", "llama-8b")
    name = str(template["metadata"]["name"])
    wait_status(platform, "AIMClusterServiceTemplate", name, None, "Available")
    TIMES["catalog fixture: cluster model to template Available"] = time.monotonic() - t0
    return name


def test_cluster_model_to_running_service(platform: Platform, catalog: str) -> None:
    """Catalog → AIMService → InferenceService and HTTPRoute → Running.

    Simulated: a GPU node (Node object with the AMD labels), KServe reporting the
    InferenceService Ready, and a Gateway accepting the route.
    """
    kube = platform.kube
    ns = platform.team_namespace("team-serve")
    template = kube.get(AIM, "AIMClusterServiceTemplate", catalog) or {}
    assert template["status"]["modelSources"][0]["sourceUri"] == SOURCE["sourceUri"]

    # The team's defaults: every service in the namespace is routed through this gateway.
    kube.apply(
        aim(
            "AIMRuntimeConfig",
            "default",
            ns,
            {
                "routing": {
                    "enabled": True,
                    "gatewayRef": {"name": "inference", "namespace": "gateways"},
                }
            },
        )
    )
    kube.apply(service("chat", ns, "llama-8b", catalog))
    isvc = one(platform, ISVC, "InferenceService", ns)
    route = one(platform, ROUTE, "HTTPRoute", ns)
    svc = kube.get(AIM, "AIMService", "chat", ns) or {}
    assert owned_by(isvc, svc)
    assert owned_by(route, svc)
    predictor = isvc["spec"]["predictor"]
    [container] = predictor["containers"]
    assert container["image"] == BASE_IMAGE
    assert container["resources"]["limits"]["amd.com/gpu"] == "1"
    [term] = predictor["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    [gpu] = term["matchExpressions"]
    assert gpu["key"] == "amd.com/gpu.device-id"
    assert "74a1" in gpu["values"]  # the device id the simulated node carries
    [parent] = route["spec"]["parentRefs"]
    assert (parent["name"], parent["namespace"]) == ("inference", "gateways")
    [rule] = route["spec"]["rules"]
    assert rule["backendRefs"][0]["name"] == f"{isvc['metadata']['name']}-predictor"
    # Until KServe and the gateway report, the service is Starting, and so not Ready.
    wait_status(platform, "AIMService", "chat", ns, "Starting")
    wait_condition(platform, "AIMService", "chat", ns, "Ready", "False")

    simulate_kserve_ready(kube, ns, isvc["metadata"]["name"])
    simulate_gateway_accepts(kube, ns, route["metadata"]["name"])
    wait_status(platform, "AIMService", "chat", ns, "Running")
    wait_condition(platform, "AIMRuntimeConfig", "default", ns, "Synced", "True")
    wait_condition(platform, "AIMRuntimeConfig", "default", ns, "Ready", "True")
    # The conditions come a moment after the AIM status, in Crossplane's own status update.
    wait_condition(platform, "AIMService", "chat", ns, "InferenceServiceReady", "True", "Ready")
    wait_condition(platform, "AIMService", "chat", ns, "Ready", "True")


def test_a_status_write_from_a_stale_copy_is_refused(platform: Platform, catalog: str) -> None:
    """The function makes Crossplane's status apply carry the version of the copy it answered
    (function/kube/precondition.py): when core re-applies an older copy's conditions
    (crossplane/crossplane#7062), the API server refuses it and the service keeps its own.

    This is the API server's half, with core's own field manager on the XR's status: a copy
    read while the service was Starting, applied after it is Running, changes nothing.
    """
    kube = platform.kube
    ns = platform.team_namespace("team-stale")
    kube.apply(service("chat", ns, "llama-8b", catalog))
    isvc = one(platform, ISVC, "InferenceService", ns)
    wait_condition(platform, "AIMService", "chat", ns, "InferenceServiceReady", "False")
    stale = kube.get(AIM, "AIMService", "chat", ns) or {}
    simulate_kserve_ready(kube, ns, isvc["metadata"]["name"])
    wait_condition(platform, "AIMService", "chat", ns, "InferenceServiceReady", "True", "Ready")
    live = kube.get(AIM, "AIMService", "chat", ns) or {}

    meta = stale["metadata"]
    replay = {
        "apiVersion": stale["apiVersion"],
        "kind": stale["kind"],
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion")},
        "status": {"conditions": stale["status"]["conditions"]},
    }
    with pytest.raises(KubeError) as refused:
        kube.request(
            "PATCH",
            kube.path(AIM, "AIMService", ns, "chat") + "/status",
            json.dumps(replay),
            content_type="application/apply-patch+yaml",
            params={"fieldManager": "apiextensions.crossplane.io/composite", "force": "true"},
        )
    assert refused.value.status == 409, refused.value
    # Core may write the XR again on its own (Synced, a poll), so its resourceVersion is no
    # witness; an unchanged transition time is: a stale write that landed and was corrected
    # afterwards would have flipped the condition twice.
    after = kube.get(AIM, "AIMService", "chat", ns) or {}
    ready = condition(after, "InferenceServiceReady") or {}
    assert ready.get("status") == "True"
    was = condition(live, "InferenceServiceReady") or {}
    assert ready.get("lastTransitionTime") == was.get("lastTransitionTime")


@pytest.mark.usefixtures("gpu_node")
def test_discovery_template_becomes_available(platform: Platform) -> None:
    """A template without sources runs a discovery Job; its result makes it Available.

    Simulated: the kubelet (the Pod the real Job controller made succeeds, with the dry-run's
    JSON as its termination message) and the GPU node. The Job controller is real.
    """
    kube = platform.kube
    ns = platform.team_namespace("team-discover")
    kube.apply(
        aim(
            "AIMModel",
            "qwen",
            ns,
            {"image": "amdenterpriseai/aim-qwen3:0.8.5", "discovery": {"enabled": False}},
        )
    )
    kube.apply(
        aim(
            "AIMServiceTemplate",
            "qwen-lat",
            ns,
            {
                "modelName": "qwen",
                "metric": "latency",
                "precision": "fp8",
                "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
            },
        )
    )
    job = one(platform, "batch/v1", "Job", ns)
    assert wait_status(platform, "AIMServiceTemplate", "qwen-lat", ns, "Progressing")
    simulate_job_pods_succeed(kube, ns, job["metadata"]["name"], DRY_RUN_RESULT)
    available = wait_status(platform, "AIMServiceTemplate", "qwen-lat", ns, "Available")
    [source] = available["status"]["modelSources"]
    assert source["sourceUri"] == "hf://Org/Small"  # the dry-run's model
    # The Job did its work and is gone (garbage-collected by Crossplane).
    wait_for(
        "the discovery Job to be deleted",
        lambda: not kube.list("batch/v1", "Job", ns),
        timeout_s=CONVERGE_S,
    )


def test_cached_service_mounts_its_caches(platform: Platform, catalog: str) -> None:
    """cacheModel → template cache → model cache → PVC and download Job → mounted read-only.

    Simulated: a storage provisioner binding the PVC, and the kubelet completing the download
    Job's Pod. The Job controller is real.
    """
    kube = platform.kube
    ns = platform.team_namespace("team-cache")
    kube.apply(service("cached", ns, "llama-8b", catalog, cacheModel=True))
    pvc = one(platform, "v1", "PersistentVolumeClaim", ns)
    job = one(platform, "batch/v1", "Job", ns)
    assert not kube.list(ISVC, "InferenceService", ns)  # nothing serves before the cache is warm
    simulate_pvc_bound(kube, ns, pvc["metadata"]["name"])
    simulate_job_pods_succeed(kube, ns, job["metadata"]["name"])
    [cache] = wait_for("an AIMModelCache", lambda: kube.list(AIM, "AIMModelCache", ns) or None)
    wait_status(platform, "AIMModelCache", cache["metadata"]["name"], ns, "Available")
    isvc = one(platform, ISVC, "InferenceService", ns)
    volumes = isvc["spec"]["predictor"].get("volumes", [])
    claims = [v["persistentVolumeClaim"] for v in volumes if "persistentVolumeClaim" in v]
    assert claims == [{"claimName": pvc["metadata"]["name"], "readOnly": True}]


@pytest.mark.usefixtures("gpu_node")
def test_namespace_model_shadows_cluster_model(platform: Platform) -> None:
    """A team's AIMModel wins over the AIMClusterModel of the same name. Simulated: the GPU node."""
    kube = platform.kube
    ns = platform.team_namespace("team-shadow")
    kube.apply_all(catalog_entry("AIMClusterModel", "shadowed", None))
    kube.apply_all(catalog_entry("AIMModel", "shadowed", ns, image="amdenterpriseai/aim-base:1.0"))
    wait_status(platform, "AIMModel", "shadowed", ns, "Ready")
    # No template named: the service picks among the model's.
    kube.apply(aim("AIMService", "svc", ns, {"model": {"ref": "shadowed"}}))
    isvc = one(platform, ISVC, "InferenceService", ns)
    [container] = isvc["spec"]["predictor"]["containers"]
    assert container["image"] == "amdenterpriseai/aim-base:1.0"
    resolved = wait_for(
        "the service's status.resolvedModel",
        lambda: ((kube.get(AIM, "AIMService", "svc", ns) or {}).get("status") or {}).get(
            "resolvedModel"
        ),
    )
    team_model = kube.get(AIM, "AIMModel", "shadowed", ns) or {}
    assert resolved == {
        "kind": "AIMModel",
        "name": "shadowed",
        "namespace": ns,
        "scope": "Namespace",
        "uid": team_model["metadata"]["uid"],
    }


def test_deleting_a_service_collects_what_it_composed_and_nothing_else(
    platform: Platform, catalog: str
) -> None:
    """Deleting one AIMService removes its InferenceService and HTTPRoute (the real garbage
    collector, following Crossplane's owner references); the other service and the catalog stay.
    Simulated: nothing beyond the GPU node."""
    kube = platform.kube
    ns = platform.team_namespace("team-delete")
    routing = {"enabled": True, "gatewayRef": {"name": "inference", "namespace": "gateways"}}
    for name in ("keep", "drop"):
        kube.apply(service(name, ns, "llama-8b", catalog, routing=routing))

    def both() -> list[dict[str, Any]] | None:
        found = kube.list(ISVC, "InferenceService", ns)
        return found if len(found) == 2 else None

    isvcs = wait_for("two InferenceServices", both, timeout_s=CONVERGE_S)
    drop = kube.get(AIM, "AIMService", "drop", ns) or {}
    dropped = [i["metadata"]["name"] for i in isvcs if owned_by(i, drop)]
    kept = [i["metadata"]["name"] for i in isvcs if not owned_by(i, drop)]
    assert len(dropped) == 1
    assert len(kept) == 1
    kube.delete(AIM, "AIMService", "drop", ns)
    wait_for(
        "the dropped service's objects to go",
        lambda: (
            not any(
                owned_by(o, drop)
                for o in [
                    *kube.list(ISVC, "InferenceService", ns),
                    *kube.list(ROUTE, "HTTPRoute", ns),
                ]
            )
        ),
        timeout_s=CONVERGE_S,
    )
    assert [i["metadata"]["name"] for i in kube.list(ISVC, "InferenceService", ns)] == kept
    assert len(kube.list(ROUTE, "HTTPRoute", ns)) == 1
    assert kube.get(AIM, "AIMService", "keep", ns) is not None
    assert kube.get(AIM, "AIMClusterServiceTemplate", catalog) is not None


def test_bad_manifest_is_rejected_at_admission(platform: Platform) -> None:
    """Two model sources at once: refused by the API server, naming the field; nothing stored."""
    kube = platform.kube
    ns = platform.team_namespace("team-bad")
    bad = aim("AIMService", "bad", ns, {"model": {"ref": "llama-8b", "image": BASE_IMAGE}})
    with pytest.raises(KubeError) as refused:
        kube.create(bad)
    assert refused.value.status == 422
    assert "spec.model" in refused.value.message
    assert kube.get(AIM, "AIMService", "bad", ns) is None


def test_a_team_cannot_take_another_teams_path_on_a_shared_gateway(
    journey: Journey, catalog: str
) -> None:
    """Two namespaces route through one Gateway under the default route policy (no
    AIMClusterRuntimeConfig `default` sets one: each namespace under `/<namespace>/`). Team A's
    service is routed at `/<A>/chat`; team B's service whose template claims `/<A>/chat` gets no
    HTTPRoute, `HTTPRouteReady` False `RoutePathNotAllowed` naming the path and B's prefix, and
    A's route is the same object with the same rules.

    Simulated (in the background, tests/e2e/cluster.py): KServe; no Gateway controller runs, and
    none is needed to tell who may have a path.
    """
    kube = journey.platform.kube
    platform = journey.platform
    team_a, team_b = journey.namespace("team-route-a"), journey.namespace("team-route-b")
    gateway = {"name": "inference", "namespace": "gateways"}
    own = {"enabled": True, "gatewayRef": gateway, "pathTemplate": "/{.metadata.namespace}/chat"}
    journey.apply([service("chat", team_a, "llama-8b", catalog, routing=own)])
    route_a = one(platform, ROUTE, "HTTPRoute", team_a)
    [rule] = route_a["spec"]["rules"]
    assert rule["matches"][0]["path"]["value"] == f"/{team_a}/chat"

    taken = {**own, "pathTemplate": f"/{team_a}/chat"}
    journey.apply([service("chat", team_b, "llama-8b", catalog, routing=taken)])
    refused = wait_condition(
        platform, "AIMService", "chat", team_b, "HTTPRouteReady", "False", "RoutePathNotAllowed"
    )
    assert f"renders /{team_a}/chat" in refused["message"]
    assert f"/{team_b}/" in refused["message"]
    # The condition and the desired state come from the same call: no route was composed.
    assert kube.list(ROUTE, "HTTPRoute", team_b) == []
    [still] = kube.list(ROUTE, "HTTPRoute", team_a)
    assert still["metadata"]["uid"] == route_a["metadata"]["uid"]
    assert still["spec"]["rules"] == route_a["spec"]["rules"]


def test_two_cached_services_share_one_template_cache_and_outlive_each_other(
    journey: Journey, catalog: str
) -> None:
    """Two services with `cacheModel` on one template share one AIMTemplateCache (and so one
    download and one PVC); deleting the one that composed it leaves the other Running with its
    volumes, and the cache, its model cache and the PVC are the same objects as before.

    Simulated (in the background, tests/e2e/cluster.py): the kubelet (the download), the
    storage provisioner, KServe.
    """
    kube = journey.platform.kube
    platform = journey.platform
    ns = journey.namespace("team-share")
    for name in ("first", "second"):
        journey.apply([service(name, ns, "llama-8b", catalog, cacheModel=True)])
        wait_status(platform, "AIMService", name, ns, "Running")
    [tc] = kube.list(AIM, "AIMTemplateCache", ns)
    [pvc] = kube.list("v1", "PersistentVolumeClaim", ns)
    second = kube.get(AIM, "AIMService", "second", ns) or {}
    assert second["status"]["templateCache"] == tc["metadata"]["name"]
    wait_for(
        "the second service to co-own the template cache",
        lambda: any(
            r["uid"] == second["metadata"]["uid"]
            for r in (kube.get(AIM, "AIMTemplateCache", tc["metadata"]["name"], ns) or {})[
                "metadata"
            ].get("ownerReferences", [])
        ),
        timeout_s=CONVERGE_S,
    )

    kube.delete(AIM, "AIMService", "first", ns)
    statuses: list[str] = []

    def adopted() -> bool:
        svc = kube.get(AIM, "AIMService", "second", ns) or {}
        statuses.append((svc.get("status") or {}).get("status", ""))
        cache = kube.get(AIM, "AIMTemplateCache", tc["metadata"]["name"], ns) or {}
        controllers = [
            r["name"]
            for r in cache.get("metadata", {}).get("ownerReferences", [])
            if r.get("controller")
        ]
        return kube.get(AIM, "AIMService", "first", ns) is None and controllers == ["second"]

    wait_for("the second service to adopt the template cache", adopted, timeout_s=CONVERGE_S)
    assert set(statuses) == {"Running"}, statuses
    kept = kube.get("v1", "PersistentVolumeClaim", pvc["metadata"]["name"], ns) or {}
    assert kept["metadata"]["uid"] == pvc["metadata"]["uid"]  # the same download, not a new one


def test_a_redeployed_service_mounts_the_weights_its_predecessor_left(
    journey: Journey, catalog: str
) -> None:
    """The team's runtime config makes caching the default (`caching.mode: Always`), so a
    service that says nothing about caching caches. Deleted, it leaves its template cache, model
    cache and PVC to the namespace, which says until when it keeps them; re-created within
    the retention, the service adopts them and runs with no second download Job. With the
    retention shortened, the cache then gives its weights up: the model cache and PVC go.

    Simulated (in the background, tests/e2e/cluster.py): the kubelet (the download), the
    storage provisioner, KServe.
    """
    kube = journey.platform.kube
    platform = journey.platform
    ns = journey.namespace("team-redeploy")
    journey.apply([aim("AIMRuntimeConfig", "default", ns, {"caching": {"mode": "Always"}})])
    journey.apply([service("chat", ns, "llama-8b", catalog)])
    wait_status(platform, "AIMService", "chat", ns, "Running")
    [tc] = kube.list(AIM, "AIMTemplateCache", ns)
    [mc] = kube.list(AIM, "AIMModelCache", ns)
    [pvc] = kube.list("v1", "PersistentVolumeClaim", ns)
    tc_name, mc_name, pvc_name = (o["metadata"]["name"] for o in (tc, mc, pvc))
    wait_condition(platform, "AIMTemplateCache", tc_name, ns, "Retained", "False", "InUse")

    kube.delete(AIM, "AIMService", "chat", ns)
    retained = wait_condition(
        platform, "AIMTemplateCache", tc_name, ns, "Retained", "True", "Unused"
    )
    wait_for(
        "the InferenceService to go",
        lambda: not kube.list(ISVC, "InferenceService", ns),
        timeout_s=CONVERGE_S,
    )
    cache = kube.get(AIM, "AIMTemplateCache", tc_name, ns) or {}
    assert cache["status"]["retainedUntil"] in retained["message"]
    owners = cache["metadata"]["ownerReferences"]
    assert [(r["kind"], r.get("controller", False)) for r in owners] == [("Namespace", False)]

    # Re-created: no download Job may appear while it converges.
    jobs_seen: set[str] = set()

    def running() -> bool:
        jobs_seen.update(j["metadata"]["name"] for j in kube.list("batch/v1", "Job", ns))
        svc = kube.get(AIM, "AIMService", "chat", ns) or {}
        return (svc.get("status") or {}).get("status") == "Running"

    journey.apply([service("chat", ns, "llama-8b", catalog)])
    wait_for("the re-created service to run", running, timeout_s=CONVERGE_S)
    assert jobs_seen == set(), jobs_seen
    for api_version, kind, name, before in (
        (AIM, "AIMModelCache", mc_name, mc),
        ("v1", "PersistentVolumeClaim", pvc_name, pvc),
    ):
        now = kube.get(api_version, kind, name, ns) or {}
        assert now["metadata"]["uid"] == before["metadata"]["uid"], f"{kind} {name} was re-made"
    wait_condition(platform, "AIMTemplateCache", tc_name, ns, "Retained", "False", "InUse")

    # Deleted again, with a retention of one second: the weights are given up.
    kube.delete(AIM, "AIMService", "chat", ns)
    journey.apply(
        [
            aim(
                "AIMRuntimeConfig",
                "default",
                ns,
                {"caching": {"mode": "Always", "retention": "1s"}},
            )
        ]
    )
    wait_condition(
        platform, "AIMTemplateCache", tc_name, ns, "Retained", "False", "RetentionExpired"
    )
    wait_for(
        "the model cache and its PVC to go",
        lambda: (
            kube.get(AIM, "AIMModelCache", mc_name, ns) is None
            and kube.get("v1", "PersistentVolumeClaim", pvc_name, ns) is None
        ),
        timeout_s=CONVERGE_S,
    )


def test_services_by_image_in_two_namespaces_share_one_cluster_model(journey: Journey) -> None:
    """Services by image in two namespaces share one AIMClusterModel; see
    `services_share_one_cluster_model`. Simulated: nothing runs."""
    services_share_one_cluster_model(journey)


def services_share_one_cluster_model(journey: Journey) -> None:
    """With `model.creationScope: Cluster`, services by the same image in two namespaces get
    one AIMClusterModel, created by their AIMClusterRuntimeConfig (a namespaced service cannot
    compose a cluster object), and no AIMModel in either namespace; both resolve to it. The
    model stays while one service is left, and goes with the last.

    The config has a name of its own, so other tests' `default` is untouched; its image has no
    AIM labels and discovery is off, so nothing reads a registry.
    """
    kube = journey.platform.kube
    platform = journey.platform
    config, image = "shared-models", f"{BASE_IMAGE}-shared"
    journey.apply(
        [
            aim(
                "AIMClusterRuntimeConfig",
                config,
                None,
                {"model": {"creationScope": "Cluster", "autoDiscovery": False}},
            )
        ]
    )
    namespaces = [journey.namespace("team-east"), journey.namespace("team-west")]
    for ns in namespaces:
        journey.apply(
            [
                aim(
                    "AIMService",
                    "chat",
                    ns,
                    {"model": {"image": image}, "runtimeConfigName": config},
                )
            ]
        )
    auto = naming.auto_model_name(image)

    def resolved(ns: str) -> bool:
        svc = kube.get(AIM, "AIMService", "chat", ns) or {}
        ref = (svc.get("status") or {}).get("resolvedModel") or {}
        return (ref.get("kind"), ref.get("name")) == ("AIMClusterModel", auto)

    for ns in namespaces:
        wait_for(f"{ns}'s service to resolve {auto}", partial(resolved, ns), timeout_s=CONVERGE_S)
    [model] = [m for m in kube.list(AIM, "AIMClusterModel") if m["spec"]["image"] == image]
    assert model["metadata"]["name"] == auto
    assert model["spec"]["runtimeConfigName"] == config
    assert [r["name"] for r in model["metadata"]["ownerReferences"]] == [config]
    for ns in namespaces:
        assert kube.list(AIM, "AIMModel", ns) == []
    condition = wait_condition(
        platform, "AIMClusterRuntimeConfig", config, None, "AutoCreatedModels", "True"
    )
    assert auto in condition["message"]

    kube.delete(AIM, "AIMService", "chat", namespaces[0])
    wait_for(
        "the first service to go",
        lambda: kube.get(AIM, "AIMService", "chat", namespaces[0]) is None,
        timeout_s=CONVERGE_S,
    )
    kept = kube.get(AIM, "AIMClusterModel", auto) or {}
    assert kept["metadata"]["uid"] == model["metadata"]["uid"]  # still needed by the other
    kube.delete(AIM, "AIMService", "chat", namespaces[1])
    wait_for(
        "the model to go with its last service",
        lambda: kube.get(AIM, "AIMClusterModel", auto) is None,
        timeout_s=CONVERGE_S,
    )
