"""AIMService composer: template resolution, the InferenceService it composes, and its status."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from function.build import Manifest
from function.compose.service import INFERENCE_SERVICE, compose_service
from function.errors import InvalidSpecError
from function.state import Composition, ConditionStatus, Observed

NAMESPACE = "ml-team"
IMAGE = "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"
MI300X_IDS = ["74a1", "74a9", "74b5", "74bd"]


def service(**spec: Any) -> Any:
    base: dict[str, Any] = {
        "model": {"image": IMAGE},
        "template": {"name": "tpl"},
        "replicas": 1,
        "runtimeConfigName": "default",
    }
    base.update(spec)
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": "qwen-chat", "namespace": NAMESPACE, "uid": "svc-uid"},
        "spec": base,
    }


def template(kind: str = "AIMClusterServiceTemplate", **spec: Any) -> Any:
    body: dict[str, Any] = {
        "modelName": "qwen3",
        "metric": "latency",
        "precision": "fp8",
        "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
    }
    body.update(spec)
    meta: dict[str, Any] = {"name": "tpl"}
    if kind == "AIMServiceTemplate":
        meta["namespace"] = NAMESPACE
    return {"apiVersion": "aim.silogen.ai/v1alpha1", "kind": kind, "metadata": meta, "spec": body}


def fetched(namespaced: list[Manifest], cluster: list[Manifest]) -> dict[str, tuple[Manifest, ...]]:
    return {"template": tuple(namespaced), "template-cluster": tuple(cluster)}


READY_ISVC: Manifest = {
    "apiVersion": "serving.kserve.io/v1beta1",
    "kind": "InferenceService",
    "metadata": {"name": "qwen-chat-a04542d9"},
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
}


def isvc(comp: Composition) -> Any:
    return cast("Any", comp.resources[INFERENCE_SERVICE].manifest)


def container(comp: Composition) -> Any:
    return isvc(comp)["spec"]["predictor"]["containers"][0]


def conditions(comp: Composition) -> dict[str, tuple[ConditionStatus, str]]:
    return {c.type: (c.status, c.reason) for c in comp.conditions}


@dataclass(frozen=True)
class StatusCase:
    reason: str
    xr: Manifest
    required: dict[str, tuple[Manifest, ...]] = field(default_factory=dict)
    observed: dict[str, Manifest] = field(default_factory=dict)
    want_status: str = ""
    want_conditions: dict[str, tuple[ConditionStatus, str]] = field(default_factory=dict)
    want_isvc: bool = False
    want_ready: bool = False
    want_warning: str = ""


STATUS_CASES = [
    StatusCase(
        "templates not fetched yet: wait, compose nothing, warn nobody",
        service(),
        want_status="Pending",
        want_conditions={"TemplateReady": (ConditionStatus.UNKNOWN, "Resolving")},
    ),
    StatusCase(
        "namespace template fetched, cluster lookup not answered: the namespace one is enough",
        service(),
        required={"template": (template("AIMServiceTemplate"),)},
        want_status="Starting",
        want_conditions={
            "TemplateReady": (ConditionStatus.TRUE, "Resolved"),
            "InferenceServiceReady": (ConditionStatus.FALSE, "Creating"),
        },
        want_isvc=True,
    ),
    StatusCase(
        "both lookups answered and empty: the template does not exist",
        service(),
        required=fetched([], []),
        want_status="Failed",
        want_conditions={"TemplateReady": (ConditionStatus.FALSE, "TemplateNotFound")},
        want_warning="spec.template.name: neither AIMServiceTemplate 'tpl'",
    ),
    StatusCase(
        "cluster template found, InferenceService not observed yet: starting",
        service(),
        required=fetched([], [template()]),
        want_status="Starting",
        want_conditions={
            "TemplateReady": (ConditionStatus.TRUE, "Resolved"),
            "InferenceServiceReady": (ConditionStatus.FALSE, "Creating"),
        },
        want_isvc=True,
    ),
    StatusCase(
        "KServe reports the InferenceService Ready: running, and the resource is ready",
        service(),
        required=fetched([], [template()]),
        observed={INFERENCE_SERVICE: READY_ISVC},
        want_status="Running",
        want_conditions={
            "TemplateReady": (ConditionStatus.TRUE, "Resolved"),
            "InferenceServiceReady": (ConditionStatus.TRUE, "Ready"),
        },
        want_isvc=True,
        want_ready=True,
    ),
    StatusCase(
        "template as Crossplane stores it, with spec.crossplane: used like any other",
        service(),
        required=fetched([], [template(crossplane={"compositionRef": {"name": "c"}})]),
        want_status="Starting",
        want_conditions={
            "TemplateReady": (ConditionStatus.TRUE, "Resolved"),
            "InferenceServiceReady": (ConditionStatus.FALSE, "Creating"),
        },
        want_isvc=True,
    ),
    StatusCase(
        "template names a GPU nobody makes: no InferenceService, the template is blamed",
        service(),
        required=fetched([], [template(hardware={"gpu": {"requests": 1, "model": "MI999X"}})]),
        want_status="Failed",
        want_conditions={"TemplateReady": (ConditionStatus.FALSE, "TemplateInvalid")},
        want_warning="AIMClusterServiceTemplate 'tpl' cannot be used: unknown AMD GPU model",
    ),
    StatusCase(
        "template with a field of the wrong type: no InferenceService, the template is blamed",
        service(),
        required=fetched([], [template(hardware={"gpu": {"requests": "many"}})]),
        want_status="Failed",
        want_conditions={"TemplateReady": (ConditionStatus.FALSE, "TemplateInvalid")},
        want_warning="AIMClusterServiceTemplate 'tpl' cannot be used: spec.hardware.gpu.requests",
    ),
    StatusCase(
        "no template named: auto-selection is not there yet, and the user is told",
        service(template=None),
        want_status="Failed",
        want_conditions={"TemplateReady": (ConditionStatus.FALSE, "TemplateNotSpecified")},
        want_warning="spec.template.name",
    ),
    StatusCase(
        "a model by reference: not there yet, and the user is told to use an image",
        service(model={"ref": "qwen3"}),
        want_status="Failed",
        want_conditions={"ModelReady": (ConditionStatus.FALSE, "Unsupported")},
        want_warning="spec.model.ref",
    ),
    StatusCase(
        "a custom model: not there yet, and the message names model.custom",
        service(
            model={
                "custom": {
                    "modelSources": [{"modelId": "a/b", "sourceUri": "hf://a/b"}],
                    "hardware": {"gpu": {"requests": 1}},
                }
            }
        ),
        want_status="Failed",
        want_conditions={"ModelReady": (ConditionStatus.FALSE, "Unsupported")},
        want_warning="spec.model.custom",
    ),
]


@pytest.mark.parametrize("case", STATUS_CASES, ids=lambda c: c.reason)
def test_status_follows_what_is_known(case: StatusCase) -> None:
    """Each reconcile state gives its status, conditions, resources and warnings."""
    comp = compose_service(Observed(case.xr, case.observed, case.required))

    assert case.want_status == comp.status["status"]
    assert case.want_conditions == conditions(comp)
    assert case.want_isvc == (INFERENCE_SERVICE in comp.resources)
    if case.want_isvc:
        assert case.want_ready == comp.resources[INFERENCE_SERVICE].ready
    if case.want_warning:
        assert len(comp.warnings) == 1
        assert case.want_warning in comp.warnings[0]
    else:
        assert comp.warnings == []


def test_requirements_ask_for_namespace_then_cluster_template_every_time() -> None:
    """Both lookups are declared on every call, or Crossplane would stop answering them."""
    for required in ({}, fetched([], [template()])):
        comp = compose_service(Observed(service(), {}, required))
        asked = {(r.name, r.kind, r.match_name, r.namespace) for r in comp.requirements}
        assert asked == {
            ("template", "AIMServiceTemplate", "tpl", NAMESPACE),
            ("template-cluster", "AIMClusterServiceTemplate", "tpl", None),
        }


def test_namespace_template_shadows_cluster_template() -> None:
    """A team's own template of the same name wins over the platform's."""
    ns_tpl = template("AIMServiceTemplate", hardware={"gpu": {"requests": 2, "model": "MI325X"}})
    comp = compose_service(Observed(service(), {}, fetched([ns_tpl], [template()])))

    assert comp.status["resolvedTemplate"] == {
        "name": "tpl",
        "namespace": NAMESPACE,
        "scope": "Namespace",
        "kind": "AIMServiceTemplate",
    }
    assert container(comp)["resources"]["limits"]["amd.com/gpu"] == "2"


def test_inference_service_lands_on_the_template_gpu() -> None:
    """The GPU request, device-id affinity and GPU toleration place pods on the right GPUs."""
    comp = compose_service(Observed(service(), {}, fetched([], [template()])))
    manifest = isvc(comp)
    predictor = manifest["spec"]["predictor"]

    assert manifest["metadata"]["name"] == "qwen-chat-a04542d9"
    assert manifest["metadata"]["namespace"] == NAMESPACE
    assert container(comp)["image"] == IMAGE
    assert container(comp)["resources"] == {
        "requests": {"cpu": "4", "memory": "32Gi", "amd.com/gpu": "1"},
        "limits": {"memory": "48Gi", "amd.com/gpu": "1"},
    }
    terms = predictor["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == [
        {
            "matchExpressions": [
                {"key": "amd.com/gpu.device-id", "operator": "In", "values": MI300X_IDS}
            ]
        }
    ]
    assert {"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in predictor[
        "tolerations"
    ]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (1, 1)


def test_template_accepting_several_gpu_models_matches_all_their_device_ids() -> None:
    """`gpu.models` (seed 004) lets the pods land on any of the listed GPUs."""
    tpl = template(hardware={"gpu": {"requests": 1, "models": ["MI300X", "MI325X"]}})
    comp = compose_service(Observed(service(), {}, fetched([], [tpl])))
    predictor = isvc(comp)["spec"]["predictor"]
    terms = predictor["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    [expression] = terms["nodeSelectorTerms"][0]["matchExpressions"]
    assert set(MI300X_IDS) < set(expression["values"])
    assert expression["values"] == sorted(expression["values"])


def test_template_without_gpu_model_gets_no_affinity() -> None:
    """Without a GPU model there is nothing to pin to; any node with the resource will do."""
    tpl = template(hardware={"gpu": {"requests": 1}})
    comp = compose_service(Observed(service(), {}, fetched([], [tpl])))
    assert "affinity" not in isvc(comp)["spec"]["predictor"]


def test_resources_service_over_template_over_gpu_defaults() -> None:
    """Service resources win over the template's, which win over the GPU-derived defaults."""
    tpl = template(
        hardware={"gpu": {"requests": 2, "model": "MI300X", "resourceName": "amd.com/xgmi"}},
        resources={"requests": {"cpu": "6", "memory": "40Gi"}},
    )
    svc = service(resources={"requests": {"cpu": 10}, "limits": {"amd.com/xgmi": 4}})
    comp = compose_service(Observed(svc, {}, fetched([], [tpl])))

    assert container(comp)["resources"] == {
        "requests": {"cpu": "10", "memory": "40Gi", "amd.com/xgmi": "2"},
        "limits": {"memory": "96Gi", "amd.com/xgmi": "4"},
    }


def test_environment_layers_merge_by_name_and_sort() -> None:
    """Defaults, template profile, template env, service env: later wins, one entry per name."""
    tpl = template(
        env=[{"name": "VLLM_ENABLE_METRICS", "value": "false"}, {"name": "T", "value": "t"}]
    )
    svc = service(
        env=[
            {"name": "AIM_METRIC", "value": "throughput"},
            {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
        ]
    )
    comp = compose_service(Observed(svc, {}, fetched([], [tpl])))

    assert container(comp)["env"] == [
        {"name": "AIM_CACHE_PATH", "value": "/workspace/cache"},
        {"name": "AIM_METRIC", "value": "throughput"},
        {"name": "AIM_PRECISION", "value": "fp8"},
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
        {"name": "T", "value": "t"},
        {"name": "VLLM_ENABLE_METRICS", "value": "false"},
    ]


def test_pull_secrets_and_service_account_reach_the_pods() -> None:
    """The service's pod identity settings are passed through."""
    svc = service(imagePullSecrets=[{"name": "regcred"}], serviceAccountName="inference")
    predictor = isvc(compose_service(Observed(svc, {}, fetched([], [template()]))))["spec"][
        "predictor"
    ]
    assert predictor["imagePullSecrets"] == [{"name": "regcred"}]
    assert predictor["serviceAccountName"] == "inference"


def test_same_input_same_output() -> None:
    """Composition is deterministic, so Crossplane sees no spurious changes."""
    observed = Observed(service(), {}, fetched([], [template()]))
    assert compose_service(observed) == compose_service(copy.deepcopy(observed))


def test_namespace_too_long_is_a_spec_error_naming_the_field() -> None:
    """A namespace KServe cannot fit in its names stops composition with the field named."""
    xr = service()
    xr["metadata"]["namespace"] = "n" * 50
    with pytest.raises(InvalidSpecError) as e:
        compose_service(Observed(xr, {}, {}))
    assert e.value.field == "metadata.namespace"


def test_wrong_spec_shape_names_the_field() -> None:
    """A spec the XRD would have refused (render skips admission) is reported by field path."""
    with pytest.raises(InvalidSpecError) as e:
        compose_service(Observed(service(replicas="two"), {}, {}))
    assert e.value.field == "spec.replicas"
