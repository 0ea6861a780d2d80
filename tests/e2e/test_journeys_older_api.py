"""Seed 002's journeys: its catalog in the older API generation, converted by scripts/migrate and
applied as written, until services serve from it.

Every AIM status here is written by function-aim through Crossplane; the test writes none. What
cannot run on these machines is played by `tests/e2e/cluster.py` (the kubelet running Job pods
with the AIM image's dry-run, a storage provisioner, KServe) and by `simulate_gpu_node`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from devtools.cluster.converge import AIM, one, wait_condition, wait_status
from devtools.cluster.platform import SYSTEM_NAMESPACE
from tests.e2e.journey import Journey, env_of, kubectl_get
from tests.e2e.planned import assert_plan_reaches_the_live_end_state
from tests.e2e.test_journeys import cache_mounts, device_ids, isvc_of, predictor

CATALOG = "older-api-catalog"
MI300X = ["74a1", "74a9", "74b5", "74bd"]


def catalog(journey: Journey) -> list[dict[str, Any]]:
    """The platform's prerequisites, then seed 002's images and templates through the converter."""
    journey.step(CATALOG, "00-prerequisites.yaml")
    return journey.step(CATALOG, "01-catalog.yaml", migrate=True)


def test_a_namespace_template_with_caching_serves_from_its_caches(journey: Journey) -> None:
    """Seed 002's catalog as written: the cluster template is discovered in the system namespace;
    the research team's template, whose model lives in another namespace, is Failed and says how
    to fix it; once fixed it is discovered with its registry secret and token, caches its model
    (template cache, model cache, PVC, download with the token), and a service on it runs with
    the cache mounted and the template's pull secret, routed at the path seed 002's route
    template gives it.

    Simulated: the MI300X node, the kubelet (dry-runs, downloads), the storage provisioner, KServe,
    the Gateway.
    """
    platform = journey.platform
    docs = catalog(journey)
    research = next(d for d in docs if d["kind"] == "AIMServiceTemplate")
    ns, name = research["metadata"]["namespace"], research["metadata"]["name"]

    # The cluster side: the converted image's model is Ready once its template is discovered.
    wait_status(platform, "AIMClusterServiceTemplate", "llama-3-8b-latency", None, "Available")
    assert [p for p in journey.cluster.pods if p["metadata"]["namespace"] == SYSTEM_NAMESPACE]
    wait_status(platform, "AIMClusterModel", "meta-llama-3-8b-instruct", None, "Ready")
    wait_condition(
        platform,
        "AIMClusterModel",
        "meta-llama-3-8b-instruct",
        None,
        "RuntimeResolved",
        "True",
        "RuntimeResolved",
    )
    row = kubectl_get(platform, "AIMClusterServiceTemplate")["llama-3-8b-latency"]
    assert (row["Metric"], row["Precision"], row["Hardware"]) == ("latency", "fp16", "1 x MI300X")

    # As written, the research template names a model of another namespace.
    wait_status(platform, "AIMServiceTemplate", name, ns, "Failed")
    why = wait_condition(
        platform, "AIMServiceTemplate", name, ns, "ModelReady", "False", "ModelNotFound"
    )["message"]
    assert "spec.modelName" in why
    assert "meta-llama-3-8b-instruct-dev" in why
    assert ns in why

    journey.step(CATALOG, "02-dev-model-in-ml-research.yaml")
    available = wait_status(platform, "AIMServiceTemplate", name, ns, "Available")
    assert available["status"]["hardwareSummary"] == "2 x MI300X"
    [dry_run] = [
        p
        for p in journey.cluster.pods
        if p["metadata"]["name"].startswith("discover-") and p["metadata"]["namespace"] == ns
    ]
    assert dry_run["spec"]["imagePullSecrets"] == [{"name": "registry-credentials"}]
    # The template caches itself: its AIMTemplateCache, one model cache, a PVC, a download.
    cache = wait_status(platform, "AIMTemplateCache", name, ns, "Available")
    assert cache["status"]["resolvedTemplateKind"] == "AIMServiceTemplate"
    [download] = [p for p in journey.cluster.pods if "download" in p["metadata"]["name"]]
    token = env_of(download["spec"]["containers"][0])["HF_TOKEN"]
    assert token == {"secretKeyRef": {"name": "huggingface-creds", "key": "token"}}

    services = journey.manifests(CATALOG, "03-services.yaml", migrate=True)
    journey.apply([s for s in services if s["metadata"]["name"] == "llama-research"])
    running = wait_status(platform, "AIMService", "llama-research", ns, "Running")
    # Seed 002's route template, `{.spec.model}` included, renders once migrated.
    model = "meta-llama-3-8b-instruct-dev"
    assert running["status"]["routing"]["path"] == f"/{ns}/research/{model}"
    isvc = isvc_of(platform, ns, "llama-research")
    assert list(cache_mounts(isvc)) == ["/workspace/cache/meta-llama/Llama-3.1-8B-Instruct"]
    spec = predictor(isvc)
    assert spec["imagePullSecrets"] == [{"name": "registry-credentials"}]
    [container] = spec["containers"]
    assert container["image"] == "ghcr.io/ml-team/llama-3.1-8b-instruct:dev-latest"
    assert container["resources"]["limits"]["amd.com/gpu"] == "2"
    assert env_of(container)["HF_TOKEN"] == token
    assert device_ids(isvc) == MI300X


def test_overrides_derive_a_template_that_discovery_places_on_two_gpus(
    journey: Journey, tmp_path: Path
) -> None:
    """Seed 002's overrides: a service on the cluster latency template asking for throughput on
    two GPUs gets a namespace template derived from it, discovered like any other, and runs on
    two MI300X GPUs.

    Simulated: the MI300X node, the kubelet (dry-runs), KServe.
    """
    platform, kube = journey.platform, journey.platform.kube
    catalog(journey)
    services = journey.manifests(CATALOG, "03-services.yaml", migrate=True)
    [service] = [s for s in services if s["metadata"]["name"] == "llama-throughput"]
    assert service["spec"]["overrides"] == {
        "metric": "throughput",
        "hardware": {"gpu": {"requests": 2}},
    }
    journey.apply([service])
    ns = service["metadata"]["namespace"]

    running = wait_status(platform, "AIMService", "llama-throughput", ns, "Running")
    derived = one(platform, AIM, "AIMServiceTemplate", ns)
    assert running["status"]["resolvedTemplate"]["name"] == derived["metadata"]["name"]
    assert derived["metadata"]["labels"]["aim.silogen.ai/base-template"] == "llama-3-8b-latency"
    assert derived["spec"]["hardware"]["gpu"]["model"] == "MI300X"  # kept from the base
    row = kubectl_get(platform, "AIMServiceTemplate", ns)[derived["metadata"]["name"]]
    assert (row["Status"], row["Metric"], row["Hardware"]) == (
        "Available",
        "throughput",
        "2 x MI300X",
    )
    isvc = isvc_of(platform, ns, "llama-throughput")
    [container] = predictor(isvc)["containers"]
    assert container["resources"]["limits"]["amd.com/gpu"] == "2"
    assert env_of(container)["AIM_METRIC"] == "throughput"
    assert device_ids(isvc) == MI300X
    # The same manifests, planned with no cluster, end where the plane did.
    assert_plan_reaches_the_live_end_state(journey, tmp_path / "plan")
    assert kube.get(AIM, "AIMClusterServiceTemplate", "llama-3-8b-latency") is not None
