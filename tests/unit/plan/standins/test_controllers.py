"""What the provisioner's, KServe's, the gateway's, KEDA's and the GPU node's stand-ins write:
the statuses the function reads of each (aim_plan/standins/)."""

from __future__ import annotations

from typing import Any

import pytest

from aim_plan.standins import gateway, keda, kserve, node, provisioner
from function.rules.gpu import node_gpu_models

AT = "2025-01-01T00:00:00Z"


def test_a_bound_claim_keeps_its_access_modes_and_the_capacity_it_asked_for() -> None:
    """The function reads a cache's size from its claim: the provisioner binds what was asked."""
    pvc = {
        "metadata": {"name": "cache", "namespace": "ns"},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "16Gi"}}},
    }
    assert not provisioner.is_bound(pvc)
    status = provisioner.bound(pvc)
    assert status == {
        "phase": "Bound",
        "accessModes": ["ReadWriteMany"],
        "capacity": {"storage": "16Gi"},
    }
    assert provisioner.is_bound({**pvc, "status": status})


def isvc(*claims: str) -> dict[str, Any]:
    """An InferenceService whose predictor mounts `claims` (and a scratch emptyDir)."""
    volumes: list[dict[str, Any]] = [{"name": "tmp", "emptyDir": {}}]
    volumes += [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]
    return {
        "metadata": {"name": "chat", "namespace": "ns"},
        "spec": {"predictor": {"volumes": volumes}},
    }


def test_kserve_waits_on_a_claim_not_bound_and_says_so() -> None:
    """A predictor cannot start before its claims are Bound: KServe names the unbound one, in
    both conditions the function reads, and reports Ready with its URL once all are bound."""
    service = isvc("cache", "adapters")
    assert kserve.unbound_claims(service, lambda claim: claim == "cache") == ["adapters"]
    waiting = kserve.not_ready("claims not bound: adapters")
    assert {(c["type"], c["status"]) for c in waiting["conditions"]} == {
        ("PredictorReady", "False"),
        ("Ready", "False"),
    }
    assert kserve.says({**service, "status": waiting}, "claims not bound: adapters")
    assert kserve.unbound_claims(service, lambda _: True) == []
    ready = kserve.ready("ns", "chat", AT)
    assert ready["url"] == "http://chat.ns.example.com"
    assert kserve.is_ready({**service, "status": ready})


def test_the_gateway_accepts_each_parent_at_the_routes_generation() -> None:
    """One parent entry per parentRef, Accepted and ResolvedRefs at the route's generation: the
    function takes an older generation's acceptance as not yet carried."""
    refs = [{"name": "gw", "namespace": "gateways"}, {"name": "other", "namespace": "gateways"}]
    route = {"metadata": {"name": "chat", "generation": 3}, "spec": {"parentRefs": refs}}
    status = gateway.accepted(route, AT)
    assert [p["parentRef"] for p in status["parents"]] == refs
    for parent in status["parents"]:
        assert parent["controllerName"] == gateway.CONTROLLER_NAME
        assert {
            (c["type"], c["status"], c["observedGeneration"]) for c in parent["conditions"]
        } == {
            ("Accepted", "True", 3),
            ("ResolvedRefs", "True", 3),
        }
    assert gateway.is_accepted({**route, "status": status})


def test_keda_idles_a_scaled_object_in_the_shape_the_hpa_controller_writes() -> None:
    """The HPA the function reads a service at zero from: no current count, scaling disabled."""
    scaled = {"metadata": {"name": "chat-predictor", "namespace": "ns"}}
    hpa = keda.idle_hpa(scaled, AT)
    assert hpa["metadata"] == {"name": "keda-hpa-chat-predictor", "namespace": "ns"}
    assert "currentReplicas" not in hpa["status"]
    assert ("ScalingActive", "False", "ScalingDisabled") in {
        (c["type"], c["status"], c.get("reason")) for c in hpa["status"]["conditions"]
    }
    assert keda.is_reconciled({**scaled, "status": keda.reconciled(AT)})


def test_a_gpu_node_announces_its_model_and_allocates_its_gpus() -> None:
    """The function places GPU pods by the labeller's device id and counts allocatable GPUs;
    an MI300X also carries the labeller's family and product name, as on a real node."""
    gpu_node = node.gpu_node("gpu-node-1", "mi300x", 4)
    labels = gpu_node["metadata"]["labels"]
    assert node_gpu_models(labels) == {"MI300X"}
    assert labels["amd.com/gpu.product-name"] == "AMD_Instinct_MI300X_OAM"
    assert labels["kubernetes.io/hostname"] == "gpu-node-1"
    assert gpu_node["status"]["allocatable"]["amd.com/gpu"] == "4"
    assert node_gpu_models(node.gpu_node("n", "MI325X")["metadata"]["labels"]) == {"MI325X"}


def test_a_gpu_model_the_function_does_not_know_is_refused_naming_the_known_ones() -> None:
    """A typo in `--gpu-node` fails at once with the models to choose from, not a node that no
    template can use."""
    with pytest.raises(ValueError, match=r"'MI999X' is no AMD GPU model .*MI300X"):
        node.gpu_node("n", "MI999X")
