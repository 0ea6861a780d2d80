"""The claims flavour on its own control plane: a team's claim converges to a Running service.

The claims Configuration (v1 LegacyCluster XRDs) is installed from the registry like the other
flavour. The team applies the same manifests as in test_scenarios.py: an AIMRuntimeConfig and an
AIMService, which are claims here; Crossplane makes their XAIM... composites, and what the
function composes lands in the team's namespace, owned by the composite.

Simulated, as in test_scenarios.py: a GPU node, KServe reporting the InferenceService Ready, and a
Gateway accepting the route.
"""

from __future__ import annotations

import time
from typing import Any

from devtools.cluster.converge import (
    AIM,
    CONVERGE_S,
    ISVC,
    ROUTE,
    one,
    templates_of,
    wait_condition,
    wait_status,
)
from devtools.cluster.kube import wait_for
from devtools.cluster.platform import Platform, aim, catalog_entry
from devtools.cluster.simulate import (
    simulate_gateway_accepts,
    simulate_gpu_node,
    simulate_kserve_ready,
)
from devtools.cluster.timing import TIMES
from tests.e2e.journey import Journey
from tests.e2e.test_journeys import service_by_image_shared
from tests.e2e.test_scenarios import service, services_share_one_cluster_model


def composite_of(platform: Platform, kind: str, name: str, namespace: str) -> dict[str, Any]:
    """The composite Crossplane made for a claim (named in the claim's spec.resourceRef)."""

    def bound() -> dict[str, Any] | None:
        claim = platform.kube.get(AIM, kind, name, namespace) or {}
        ref = claim.get("spec", {}).get("resourceRef")
        return platform.kube.get(AIM, f"X{kind}", ref["name"]) if ref else None

    return wait_for(f"the composite of {kind} {namespace}/{name}", bound, timeout_s=CONVERGE_S)


def test_a_claim_in_a_team_namespace_converges_to_running_and_deleting_it_removes_everything(
    claims_platform: Platform,
) -> None:
    """A claim converges to Running, and deleting it removes everything it made."""
    platform = claims_platform
    kube = platform.kube
    t0 = time.monotonic()
    simulate_gpu_node(kube, "gpu-node-1")
    # The platform team's catalog: cluster kinds, which have no claims, as in the other flavour.
    kube.apply_all(catalog_entry("AIMClusterModel", "llama-8b", None))
    wait_status(platform, "AIMClusterModel", "llama-8b", None, "Ready")
    [template] = templates_of(kube, "AIMClusterServiceTemplate", "llama-8b")
    catalog = str(template["metadata"]["name"])
    wait_status(platform, "AIMClusterServiceTemplate", catalog, None, "Available")
    t1 = time.monotonic()
    TIMES["claims: catalog Available"] = t1 - t0

    ns = platform.team_namespace("team-claims")
    routing = {"enabled": True, "gatewayRef": {"name": "inference", "namespace": "gateways"}}
    kube.apply(aim("AIMRuntimeConfig", "default", ns, {"routing": routing}))
    kube.apply(service("chat", ns, "llama-8b", catalog))
    composite = composite_of(platform, "AIMService", "chat", ns)
    assert composite["metadata"]["labels"]["crossplane.io/claim-namespace"] == ns
    assert composite["metadata"].get("namespace") is None  # cluster-scoped, as LegacyCluster is

    # Composed in the claim's namespace, controlled by the composite; the route's gateway comes
    # from the namespace's runtime config, itself a claim the function looked up.
    isvc = one(platform, ISVC, "InferenceService", ns)
    route = one(platform, ROUTE, "HTTPRoute", ns)
    for obj in (isvc, route):
        [owner] = obj["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"]) == ("XAIMService", composite["metadata"]["uid"])
    assert isvc["spec"]["predictor"]["containers"][0]["env"]
    [parent] = route["spec"]["parentRefs"]
    assert (parent["name"], parent["namespace"]) == ("inference", "gateways")
    # Crossplane copies the composite's status to the claim a moment after it writes it.
    wait_for(
        "the claim to show the template its composite resolved",
        lambda: (
            ((kube.get(AIM, "AIMService", "chat", ns) or {}).get("status") or {})
            .get("resolvedTemplate", {})
            .get("name")
            == catalog
        ),
        timeout_s=CONVERGE_S,
    )

    simulate_kserve_ready(kube, ns, isvc["metadata"]["name"])
    simulate_gateway_accepts(kube, ns, route["metadata"]["name"])
    # The claim shows the composite's status and conditions.
    wait_status(platform, "AIMService", "chat", ns, "Running")
    wait_condition(platform, "AIMService", "chat", ns, "Ready", "True")
    t2 = time.monotonic()
    TIMES["claims: claim applied to Running"] = t2 - t1

    kube.delete(AIM, "AIMService", "chat", ns)
    wait_for(
        "the claim, its composite and everything composed to go",
        lambda: (
            kube.get(AIM, "AIMService", "chat", ns) is None
            and kube.get(AIM, "XAIMService", composite["metadata"]["name"]) is None
            and not kube.list(ISVC, "InferenceService", ns)
            and not kube.list(ROUTE, "HTTPRoute", ns)
        ),
        timeout_s=CONVERGE_S,
    )
    TIMES["claims: claim deleted to everything gone"] = time.monotonic() - t2
    assert kube.get(AIM, "AIMRuntimeConfig", "default", ns) is not None
    assert kube.get(AIM, "AIMClusterServiceTemplate", catalog) is not None


def test_services_by_image_share_the_model_they_compose_and_hand_it_over(
    claims_journey: Journey,
) -> None:
    """Seed 004's service by image in the claims flavour: the AIMModel the first service composes
    is a claim controlled by that service's composite; the second service's claim becomes a
    co-owner; deleting the first claim hands the model to the second's composite without a
    pause in its Running status; deleting the second removes the model.

    Simulated: the MI300X node, the kubelet (discovery dry-runs), KServe.
    """
    t0 = time.monotonic()
    platform = claims_journey.platform

    def composite(name: str, namespace: str) -> tuple[str, str]:
        # A cluster-scoped object's events are recorded in `default`.
        return composite_of(platform, "AIMService", name, namespace)["metadata"]["name"], "default"

    service_by_image_shared(claims_journey, composite)
    TIMES["claims: service by image, shared, handed over, removed"] = time.monotonic() - t0


def test_services_by_image_in_two_namespaces_share_one_cluster_model(
    claims_journey: Journey,
) -> None:
    """`creationScope: Cluster` in the claims flavour: the AIMClusterRuntimeConfig lists the
    AIMService claims of every namespace (not their composites) and creates one AIMClusterModel
    for both; see `services_share_one_cluster_model`. Simulated: nothing runs."""
    services_share_one_cluster_model(claims_journey)
