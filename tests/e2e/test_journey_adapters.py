"""LoRA adapters, end to end on the control plane: a static service and a dynamic one on a base
model from the catalog (`examples/journeys/lora-adapters/`).

Every AIM status is written by function-aim through Crossplane; the test writes none. Simulated
(`tests/e2e/cluster.py`, `simulate_gpu_node`): the MI300X node, the kubelet (discovery, the
adapters' downloads and the staging Job, whose script runs for real in the node tier), the
storage provisioner, KServe.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from devtools.cluster.converge import AIM, CONVERGE_S, ISVC, owned_by, wait_condition, wait_status
from devtools.cluster.kube import wait_for
from tests.e2e.journey import Journey
from tests.e2e.planned import assert_plan_reaches_the_live_end_state

FLOW = "lora-adapters"


def isvc_of(journey: Journey, namespace: str, service: str) -> dict[str, Any]:
    """The InferenceService a service composed."""
    kube = journey.platform.kube
    svc = kube.get(AIM, "AIMService", service, namespace) or {}
    [isvc] = [i for i in kube.list(ISVC, "InferenceService", namespace) if owned_by(i, svc)]
    return isvc


def staged_sets(journey: Journey, namespace: str) -> list[list[str]]:
    """The adapter sets the kubelet staged in `namespace`, in the order it ran their Jobs."""
    out = []
    for pod in journey.cluster.pods:
        [container] = pod["spec"]["containers"]
        if pod["metadata"]["namespace"] == namespace and container["name"] == "stage":
            env = {e["name"]: e.get("value") for e in container["env"]}
            out.append([a["name"] for a in json.loads(env["AIM_ADAPTERS"])])
    return out


def test_a_static_service_serves_its_adapters_and_a_dynamic_one_gains_and_loses_one_in_place(
    journey: Journey, tmp_path: Path
) -> None:
    """The adapters download like model caches; the static service starts once both are
    staged, with the adapter disk's `live/` read-only at /adapters and a rank cap of 32 (the
    highest, legal-terms'); the dynamic playground starts with none, gains support-tone and
    loses it with its InferenceService untouched (same uid and generation: no pod restarts),
    staying Running throughout. Deleting the playground takes its adapter disk; the adapters'
    caches stay for the other service."""
    platform, kube = journey.platform, journey.platform.kube
    journey.step(FLOW, "01-model.yaml")
    caches = journey.step(FLOW, "02-adapters.yaml")
    ns = caches[0]["metadata"]["namespace"]
    for cache in caches:
        wait_status(platform, "AIMModelCache", cache["metadata"]["name"], ns, "Available")

    journey.step(FLOW, "03-static-service.yaml")
    running = wait_status(platform, "AIMService", "llama-assistant", ns, "Running")
    assert running["status"]["adapters"] == [
        {"name": "support-tone", "state": "Staged"},
        {"name": "legal-terms", "state": "Staged"},
    ]
    assert running["status"]["adapterMaxRank"] == 32
    wait_condition(platform, "AIMService", "llama-assistant", ns, "AdaptersReady", "True")
    [container] = isvc_of(journey, ns, "llama-assistant")["spec"]["predictor"]["containers"]
    [mount] = [m for m in container["volumeMounts"] if m["mountPath"] == "/adapters"]
    assert (mount["readOnly"], mount["subPath"]) == (True, "live")
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert (env["AIM_ADAPTER_MODE"], env["AIM_ADAPTER_MAX_RANK"]) == ("static", "32")
    assert staged_sets(journey, ns) == [["support-tone", "legal-terms"]]

    journey.step(FLOW, "04-dynamic-service.yaml")
    wait_status(platform, "AIMService", "llama-playground", ns, "Running")
    before = isvc_of(journey, ns, "llama-playground")

    journey.step(FLOW, "05-dynamic-adds-an-adapter.yaml")
    wait_for(
        "support-tone staged on the playground",
        lambda: (
            (kube.get(AIM, "AIMService", "llama-playground", ns) or {})
            .get("status", {})
            .get("adapters")
            == [{"name": "support-tone", "state": "Staged"}]
        ),
        timeout_s=CONVERGE_S,
    )
    journey.step(FLOW, "06-dynamic-removes-it.yaml")
    wait_for(
        "the playground's empty set staged again",
        lambda: staged_sets(journey, ns)[-1:] == [[]] and len(staged_sets(journey, ns)) == 4,
        timeout_s=CONVERGE_S,
        explain=lambda: str(staged_sets(journey, ns)),
    )
    after = isvc_of(journey, ns, "llama-playground")
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
    assert wait_status(platform, "AIMService", "llama-playground", ns, "Running")
    assert staged_sets(journey, ns)[1:] == [[], ["support-tone"], []]

    # The same manifests, planned with no cluster, end where the plane did.
    assert_plan_reaches_the_live_end_state(journey, tmp_path / "plan")

    svc = kube.get(AIM, "AIMService", "llama-playground", ns) or {}
    [disk] = [
        p
        for p in kube.list("v1", "PersistentVolumeClaim", ns)
        if owned_by(p, svc) and p["metadata"]["name"].endswith("-adapters")
    ]
    kube.delete(AIM, "AIMService", "llama-playground", ns)
    wait_for(
        "the playground's adapter disk to go",
        lambda: kube.get("v1", "PersistentVolumeClaim", disk["metadata"]["name"], ns) is None,
        timeout_s=CONVERGE_S,
    )
    for cache in caches:
        assert kube.get(AIM, "AIMModelCache", cache["metadata"]["name"], ns) is not None
    assert wait_status(platform, "AIMService", "llama-assistant", ns, "Running")
