"""AIMService composer: resolution, selection, overrides, the objects it composes, its status.

`reconcile` stands in for Crossplane's required-resources loop (the real loop runs in the render
tests): it answers each requirement from a pool of objects by kind, name and namespace, and calls
the composer again until the requirements stop changing.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, cast

import pytest

from function.api.meta import Manifest
from function.compose.service import (
    DERIVED_TEMPLATE,
    HTTP_ROUTE,
    INFERENCE_SERVICE,
    MODEL,
    compose_service,
)
from function.errors import InvalidSpecError
from function.kube.contract import Composition, Observed
from function.kube.counted import TemplateSelected
from function.rules import naming
from function.rules.pods import PREDICTOR_LABEL
from tests.cases import Case, table
from tests.podsecurity import restricted_violations
from tests.unit import loop

NS = "ml-team"
IMAGE = "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"
MI300X_IDS = ["74a1", "74a9", "74b5", "74bd"]
API = "aim.silogen.ai/v1alpha1"
CLUSTER_KINDS = {"AIMClusterModel", "AIMClusterServiceTemplate", "AIMClusterRuntimeConfig"}


def service(**spec: Any) -> Any:
    body: dict[str, Any] = {
        "model": {"ref": "qwen3"},
        "template": {"name": "tpl"},
        "replicas": 1,
        "runtimeConfigName": "default",
    }
    body.update({k: v for k, v in spec.items() if v is not None})
    for k, v in spec.items():
        if v is None:
            body.pop(k, None)
    return {
        "apiVersion": API,
        "kind": "AIMService",
        "metadata": {"name": "qwen-chat", "namespace": NS, "uid": "0b5e-uid"},
        "spec": body,
    }


def obj(kind: str, name: str, spec: dict[str, Any], status: str | None = None) -> Any:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}"}
    if kind not in CLUSTER_KINDS:
        meta["namespace"] = NS
    out: dict[str, Any] = {"apiVersion": API, "kind": kind, "metadata": meta, "spec": spec}
    if status is not None:
        out["status"] = {"status": status}
    return out


def model(
    name: str = "qwen3", kind: str = "AIMModel", status: str | None = "Ready", **spec: Any
) -> Any:
    return obj(kind, name, {"image": IMAGE, **spec}, status)


def template(
    name: str = "tpl",
    kind: str = "AIMServiceTemplate",
    status: str | None = "Available",
    **spec: Any,
) -> Any:
    body: dict[str, Any] = {
        "modelName": "qwen3",
        "metric": "latency",
        "precision": "fp8",
        "type": "optimized",
        "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
    }
    body.update(spec)
    return obj(kind, name, body, status)


def config(kind: str = "AIMRuntimeConfig", name: str = "default", **spec: Any) -> Any:
    return obj(kind, name, spec)


def reconcile(
    xr: Manifest, pool: list[Manifest], observed: dict[str, Manifest] | None = None
) -> Composition:
    """The service composer through Crossplane's requirements loop."""
    return loop.reconcile(compose_service, Observed(xr, observed or {}), pool)


WORLD = [model(), template()]


def status(comp: Composition) -> Any:
    return comp.status


def isvc(comp: Composition) -> Any:
    return comp.resources[INFERENCE_SERVICE].manifest


def container(comp: Composition) -> Any:
    return isvc(comp)["spec"]["predictor"]["containers"][0]


def env(comp: Composition) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container(comp)["env"]}


def message_of(comp: Composition, condition_type: str) -> str:
    """The message of the condition of that type."""
    return next(c.message for c in comp.conditions if c.type == condition_type)


def conditions(comp: Composition) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status.value, c.reason) for c in comp.conditions}


def ready(kind: str = "InferenceService", **status: Any) -> Any:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x"}, "status": status}


READY_ISVC = ready(conditions=[{"type": "Ready", "status": "True"}])
UNREADY_ISVC = ready(conditions=[{"type": "Ready", "status": "False"}])


def predictor_pod(status: dict[str, Any]) -> Any:
    """A pod KServe made for the service's InferenceService (by its label), with `status`."""
    isvc_name = naming.inference_service_name(service()["metadata"]["name"], NS)
    meta = {"name": "p-1", "namespace": NS, "labels": {PREDICTOR_LABEL: isvc_name}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {}, "status": status}


UNSCHEDULED = predictor_pod(
    {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/2 nodes are available: 2 Insufficient amd.com/gpu.",
            }
        ],
    }
)
PULL_REFUSED = predictor_pod(
    {
        "phase": "Pending",
        "containerStatuses": [
            {
                "name": "kserve-container",
                "state": {"waiting": {"reason": "ErrImagePull", "message": "401 Unauthorized"}},
            }
        ],
    }
)
SERVING = predictor_pod({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]})


# --- the life of a service: Pending -> Starting -> Running, and every way it can stop -----------


@dataclass(frozen=True)
class LifeCase(Case):
    xr: Any
    pool: list[Any]
    observed: dict[str, Any]
    want: str
    want_conditions: dict[str, tuple[str, str]]
    want_resources: set[str]


CASES = [
    LifeCase(
        "model-not-ready",
        "model not Ready yet: Pending, nothing composed",
        service(),
        [model(status="Progressing"), template()],
        {},
        "Pending",
        {"ModelReady": ("False", "ModelNotReady"), "TemplateReady": ("True", "Resolved")},
        set(),
    ),
    LifeCase(
        "template-discovering",
        "template still in discovery: Pending",
        service(),
        [model(), template(status="Progressing")],
        {},
        "Pending",
        {"TemplateReady": ("False", "TemplateNotReady")},
        set(),
    ),
    LifeCase(
        "template-gpu-absent",
        "template's GPU is on no node: Pending, and the message says so",
        service(),
        [model(), template(status="NotAvailable")],
        {},
        "Pending",
        {"TemplateReady": ("False", "TemplateNotReady")},
        set(),
    ),
    LifeCase(
        "starting",
        "model Ready, template Available: Starting with the InferenceService composed",
        service(),
        WORLD,
        {},
        "Starting",
        {
            "RuntimeConfigReady": ("True", "DefaultRuntimeConfigMissing"),
            "ModelReady": ("True", "ModelResolved"),
            "TemplateReady": ("True", "Resolved"),
            "InferenceServiceReady": ("False", "Creating"),
        },
        {INFERENCE_SERVICE},
    ),
    LifeCase(
        "running",
        "KServe reports Ready: Running",
        service(),
        WORLD,
        {INFERENCE_SERVICE: READY_ISVC},
        "Running",
        {"InferenceServiceReady": ("True", "Ready")},
        {INFERENCE_SERVICE},
    ),
    LifeCase(
        "running-with-its-pods",
        "KServe Ready and a Ready predictor pod: Running, and the pods condition counts it",
        service(),
        [*WORLD, SERVING],
        {INFERENCE_SERVICE: READY_ISVC},
        "Running",
        {"InferenceServicePodsReady": ("True", "PodsReady")},
        {INFERENCE_SERVICE},
    ),
    LifeCase(
        "pods-unschedulable",
        "the predictor pod finds no node with free GPUs: Pending (not Starting), and why",
        service(),
        [*WORLD, UNSCHEDULED],
        {INFERENCE_SERVICE: UNREADY_ISVC},
        "Pending",
        {
            "InferenceServiceReady": ("False", "Creating"),
            "InferenceServicePodsReady": ("False", "InsufficientGPU"),
        },
        {INFERENCE_SERVICE},
    ),
    LifeCase(
        "pods-pull-refused",
        "the registry refuses the predictor's image: Failed, and the InferenceService is kept "
        "(fixing the pull secret must not need it recreated)",
        service(),
        [*WORLD, PULL_REFUSED],
        {INFERENCE_SERVICE: UNREADY_ISVC},
        "Failed",
        {"InferenceServicePodsReady": ("False", "ImagePullAuthFailure")},
        {INFERENCE_SERVICE},
    ),
    LifeCase(
        "model-absent",
        "model named but absent in both scopes: Failed",
        service(),
        [template()],
        {},
        "Failed",
        {"ModelReady": ("False", "ModelNotFound")},
        set(),
    ),
    LifeCase(
        "template-absent",
        "template named but absent: Failed",
        service(),
        [model()],
        {},
        "Failed",
        {"TemplateReady": ("False", "TemplateNotFound")},
        set(),
    ),
    LifeCase(
        "runtime-config-absent",
        "named runtime config absent: Failed",
        service(runtimeConfigName="team-a"),
        WORLD,
        {},
        "Failed",
        {"RuntimeConfigReady": ("False", "RuntimeConfigMissing")},
        set(),
    ),
    LifeCase(
        "model-failed",
        "model Failed: the service is Failed too",
        service(),
        [model(status="Failed"), template()],
        {},
        "Failed",
        {"ModelReady": ("False", "ModelNotReady")},
        set(),
    ),
    LifeCase(
        "template-unknown-gpu",
        "template names a GPU nobody makes: Failed, the template is blamed",
        service(),
        [model(), template(hardware={"gpu": {"requests": 1, "model": "MI999X"}})],
        {},
        "Failed",
        {"TemplateReady": ("False", "TemplateInvalid")},
        set(),
    ),
    LifeCase(
        "template-other-model",
        "template of another model: Failed, not a silently wrong deployment",
        service(),
        [model(), template(modelName="llama")],
        {},
        "Failed",
        {"TemplateReady": ("False", "TemplateModelMismatch")},
        set(),
    ),
    LifeCase(
        "template-wrong-type",
        "template with a field of the wrong type: Failed, the template is blamed",
        service(),
        [model(), template(hardware={"gpu": {"requests": "many"}})],
        {},
        "Failed",
        {"TemplateReady": ("False", "TemplateInvalid")},
        set(),
    ),
]


@table(CASES)
def test_status_follows_the_world(case: LifeCase) -> None:
    """The headline and each condition say where the service stands as its dependencies change."""
    comp = reconcile(case.xr, case.pool, case.observed)
    assert status(comp)["status"] == case.want, case.reason
    assert case.want_conditions.items() <= conditions(comp).items(), case.reason
    assert set(comp.resources) == case.want_resources, case.reason
    if case.want in {"Failed", "Degraded"}:
        assert comp.warnings, "a user-facing failure is also an event"
    else:
        assert comp.warnings == []


def test_a_crashing_server_leaves_its_logs_tail_for_the_pods_condition() -> None:
    """The function cannot read logs: the inference container's termination message, filled
    from its log's tail when it fails, is how a crash loop explains itself."""
    comp = reconcile(service(), WORLD)
    assert container(comp)["terminationMessagePolicy"] == "FallbackToLogsOnError"


def test_before_crossplane_answers_everything_is_unknown_not_missing() -> None:
    """First call: nothing fetched yet, so nothing is reported missing."""
    comp = compose_service(Observed(service(), {}, {}))
    assert status(comp)["status"] == "Pending"
    assert conditions(comp)["ModelReady"] == ("Unknown", "Resolving")
    assert conditions(comp)["TemplateReady"] == ("Unknown", "Resolving")
    assert comp.warnings == []
    assert comp.resources == {}


def test_requirements_are_the_same_whatever_the_answers() -> None:
    """Crossplane stops calling once requirements repeat; they must not depend on answers."""
    first = compose_service(Observed(service(), {}, {})).requirements
    assert reconcile(service(), WORLD).requirements == first
    assert {(r.name, r.kind, r.match_name, r.namespace) for r in first} == {
        ("runtime-config", "AIMRuntimeConfig", "default", NS),
        ("runtime-config-cluster", "AIMClusterRuntimeConfig", "default", None),
        ("model", "AIMModel", "qwen3", NS),
        ("model-cluster", "AIMClusterModel", "qwen3", None),
        ("template", "AIMServiceTemplate", "tpl", NS),
        ("template-cluster", "AIMClusterServiceTemplate", "tpl", None),
    }


# --- model resolution ---------------------------------------------------------------------------


def test_model_by_name_falls_back_to_cluster_scope() -> None:
    """A team can serve the platform's catalog by name without a model of its own."""
    comp = reconcile(service(), [model(kind="AIMClusterModel"), template()])
    assert status(comp)["resolvedModel"] == {
        "name": "qwen3",
        "scope": "Cluster",
        "kind": "AIMClusterModel",
        "uid": "uid-qwen3",
    }


def test_namespace_model_shadows_cluster_model() -> None:
    """A team's own model wins over the catalog's of the same name, as the seeds promise."""
    pool = [model(kind="AIMClusterModel", image="other:1"), model(), template()]
    comp = reconcile(service(), pool)
    assert status(comp)["resolvedModel"]["scope"] == "Namespace"
    assert container(comp)["image"] == IMAGE


def test_model_by_image_reuses_the_one_model_with_that_image() -> None:
    """Naming an image does not create a second model when one already serves it."""
    pool = [model(name="qwen3"), model(name="other", image="x:1"), template()]
    comp = reconcile(service(model={"image": IMAGE}), pool)
    assert status(comp)["resolvedModel"]["name"] == "qwen3"
    assert MODEL not in comp.resources


def test_model_by_image_prefers_the_namespace_match() -> None:
    """By image as by name, the team's model wins over the catalog's."""
    pool = [model(name="qwen3"), model(name="cq", kind="AIMClusterModel"), template()]
    comp = reconcile(service(model={"image": IMAGE}), pool)
    assert status(comp)["resolvedModel"]["name"] == "qwen3"


def test_model_by_image_with_two_matches_lists_them() -> None:
    """An ambiguous image fails with both candidates named, so the user can pick one."""
    pool = [model(name="qwen3"), model(name="qwen3-copy"), template()]
    comp = reconcile(service(model={"image": IMAGE}, template=None), pool)
    assert status(comp)["status"] == "Failed"
    assert conditions(comp)["ModelReady"] == ("False", "ModelAmbiguous")
    assert "qwen3, qwen3-copy" in comp.warnings[0]
    assert "spec.model.ref" in comp.warnings[0]


def test_model_by_image_tie_is_broken_by_the_named_template() -> None:
    """The named template's model settles which of two models with one image is meant."""
    pool = [model(name="qwen3"), model(name="qwen3-copy"), template()]
    comp = reconcile(service(model={"image": IMAGE}), pool)
    assert status(comp)["resolvedModel"]["name"] == "qwen3"
    assert INFERENCE_SERVICE in comp.resources


def test_model_by_new_image_composes_a_model_and_waits_for_it() -> None:
    """An image no model serves yet gets a model of its own, and the service waits for it."""
    comp = reconcile(
        service(model={"image": "ghcr.io/silogen/aim-dummy:0.1.10"}, template=None), []
    )
    desired = comp.resources[MODEL]
    manifest = cast("Any", desired.manifest)
    assert manifest["kind"] == "AIMModel"
    assert manifest["metadata"]["name"] == "auto-9bf80281"  # the AIM API's auto-<hash of image>
    assert manifest["metadata"]["namespace"] == NS
    assert manifest["metadata"]["labels"]["aim.silogen.ai/origin"] == "auto-generated"
    assert manifest["spec"]["image"] == "ghcr.io/silogen/aim-dummy:0.1.10"
    assert manifest["spec"]["discovery"]["enabled"] is False
    assert not desired.ready
    assert status(comp)["status"] == "Pending"
    assert conditions(comp)["ModelReady"] == ("False", "CreatingModel")


def test_a_failed_service_says_its_model_waits_rather_than_being_created() -> None:
    """A service that cannot run (routing on with no Gateway named) composes nothing new, its
    model included: ModelReady says the model waits for that, not that it is being created."""
    comp = reconcile(service(model={"image": IMAGE}, template=None, routing={"enabled": True}), [])
    assert comp.resources == {}
    assert status(comp)["status"] == "Failed"
    assert conditions(comp)["ModelReady"] == ("False", "WaitingForDependencies")
    said = message_of(comp, "ModelReady")
    assert said.startswith("AIMModel 'auto-"), said
    assert f" for {IMAGE} is not created" in said
    assert "while HTTPRouteReady is GatewayNotConfigured" in said


def test_composed_model_stays_the_service_model() -> None:
    """Once composed, the model is ours: an equal model appearing later does not replace it."""
    xr = service(model={"image": IMAGE}, template=None)
    ours = cast("Any", reconcile(xr, []).resources[MODEL].manifest)
    observed_model = {**copy.deepcopy(ours), "status": {"status": "Ready"}}
    tpl = template(modelName=ours["metadata"]["name"])
    comp = reconcile(xr, [model(name="late-copy"), tpl], {MODEL: observed_model})
    assert status(comp)["resolvedModel"]["name"] == ours["metadata"]["name"]
    assert comp.resources[MODEL].ready
    assert INFERENCE_SERVICE in comp.resources


def test_runtime_config_turns_discovery_on_for_the_models_services_compose() -> None:
    """model.autoDiscovery reaches the AIMModel a service composes in its namespace."""
    cfg = config(kind="AIMClusterRuntimeConfig", model={"autoDiscovery": True})
    comp = reconcile(service(model={"image": IMAGE}, template=None), [cfg])
    manifest = cast("Any", comp.resources[MODEL].manifest)
    assert manifest["metadata"]["namespace"] == NS
    assert manifest["spec"]["discovery"]["enabled"] is True
    assert not comp.warnings


CLUSTER_SCOPE = {"creationScope": "Cluster"}


def test_cluster_scope_waits_for_the_cluster_config_to_create_the_model() -> None:
    """With creationScope: Cluster a service composes no model (it cannot compose a cluster
    object) and says which AIMClusterRuntimeConfig creates which AIMClusterModel."""
    cfg = config(kind="AIMClusterRuntimeConfig", model=CLUSTER_SCOPE)
    comp = reconcile(service(model={"image": IMAGE}, template=None), [cfg])
    assert MODEL not in comp.resources
    assert status(comp)["status"] == "Pending"
    assert conditions(comp)["ModelReady"] == ("False", "CreatingModel")
    says = message_of(comp, "ModelReady")
    assert "AIMClusterRuntimeConfig 'default'" in says
    assert f"AIMClusterModel '{naming.auto_model_name(IMAGE)}'" in says
    assert not comp.warnings


def test_cluster_scope_resolves_the_cluster_model_once_it_exists() -> None:
    """The model the cluster config created is found by image like any cluster model."""
    cfg = config(kind="AIMClusterRuntimeConfig", model=CLUSTER_SCOPE)
    auto = model(name=naming.auto_model_name(IMAGE), kind="AIMClusterModel")
    auto["metadata"]["labels"] = {"aim.silogen.ai/origin": "auto-generated"}
    tpl = template(kind="AIMClusterServiceTemplate", modelName=auto["metadata"]["name"])
    comp = reconcile(service(model={"image": IMAGE}), [cfg, auto, tpl])
    assert MODEL not in comp.resources
    assert status(comp)["resolvedModel"]["kind"] == "AIMClusterModel"
    assert status(comp)["resolvedModel"]["name"] == auto["metadata"]["name"]
    assert INFERENCE_SERVICE in comp.resources


def test_cluster_scope_without_a_cluster_config_warns_and_composes_in_the_namespace() -> None:
    """Only an AIMClusterRuntimeConfig creates cluster models: a namespace config alone asking
    for Cluster (as seed 004's journey writes it) still gets the service its model, in the
    namespace, and RuntimeConfigReady names the ignored field and both ways to settle it (told
    as a Warning event)."""
    cfg = config(name="team", model={**CLUSTER_SCOPE, "autoDiscovery": True})
    comp = reconcile(
        service(model={"image": IMAGE}, template=None, runtimeConfigName="team"), [cfg]
    )
    manifest = cast("Any", comp.resources[MODEL].manifest)
    assert manifest["metadata"]["namespace"] == NS
    assert manifest["spec"]["discovery"]["enabled"] is True, "the rest of the config applies"
    assert conditions(comp)["RuntimeConfigReady"] == ("True", "ClusterScopeNotAllowed")
    said = next(c for c in comp.conditions if c.type == "RuntimeConfigReady")
    assert said.warn
    assert "spec.model.creationScope: Cluster is ignored" in said.message
    assert "none exists" in said.message
    assert "set creationScope: Cluster in AIMClusterRuntimeConfig 'team'" in said.message


def test_a_namespace_cannot_switch_its_services_to_cluster_models() -> None:
    """Issue 46: a namespace's `creationScope: Cluster` under a cluster config that says
    Namespace made the cluster config compose a cluster model for any image the team named,
    inspected with the system namespace's pull secrets. The service composes its own AIMModel
    instead, and says the field is ignored."""
    platform = config(kind="AIMClusterRuntimeConfig", model={"autoDiscovery": True})
    team = config(model=CLUSTER_SCOPE)
    comp = reconcile(service(model={"image": IMAGE}, template=None), [platform, team])
    manifest = cast("Any", comp.resources[MODEL].manifest)
    assert manifest["kind"] == "AIMModel"
    assert manifest["metadata"]["namespace"] == NS
    assert conditions(comp)["ModelReady"] == ("False", "CreatingModel")
    assert "AIMClusterRuntimeConfig" not in message_of(comp, "ModelReady")
    assert conditions(comp)["RuntimeConfigReady"] == ("True", "ClusterScopeNotAllowed")
    assert "it does not" in message_of(comp, "RuntimeConfigReady")


def test_a_namespace_may_opt_out_of_the_platform_s_cluster_models() -> None:
    """`Namespace` in a namespace's config still wins over the cluster's Cluster: its team pays
    for its own inspection with its own pull secrets."""
    platform = config(kind="AIMClusterRuntimeConfig", model=CLUSTER_SCOPE)
    team = config(model={"creationScope": "Namespace"})
    comp = reconcile(service(model={"image": IMAGE}, template=None), [platform, team])
    assert cast("Any", comp.resources[MODEL].manifest)["kind"] == "AIMModel"
    assert conditions(comp)["RuntimeConfigReady"] == ("True", "RuntimeConfigResolved")


def test_cluster_scope_keeps_the_namespace_model_a_service_composed_before() -> None:
    """Gate, then never tear down: a service that composed its AIMModel before the scope became
    Cluster keeps serving it rather than dropping a Ready model."""
    xr = service(model={"image": IMAGE}, template=None)
    ours = cast("Any", reconcile(xr, []).resources[MODEL].manifest)
    observed_model = {**copy.deepcopy(ours), "status": {"status": "Ready"}}
    cfg = config(kind="AIMClusterRuntimeConfig", model=CLUSTER_SCOPE)
    tpl = template(modelName=ours["metadata"]["name"])
    comp = reconcile(xr, [cfg, tpl], {MODEL: observed_model})
    assert comp.resources[MODEL].manifest["metadata"] == ours["metadata"]
    assert status(comp)["resolvedModel"]["kind"] == "AIMModel"


CUSTOM = {
    "custom": {
        "baseImage": "amdenterpriseai/aim-base:0.9",
        "modelSources": [{"modelId": "Qwen/Qwen2-0.5B", "sourceUri": "hf://Qwen/Qwen2-0.5B"}],
        "hardware": {"gpu": {"requests": 1, "models": ["MI300X"]}},
    }
}


def test_custom_model_is_composed_from_the_inline_weights() -> None:
    """Inline weights become an AIMModel with those sources, carrying the service's credentials."""
    xr = service(model=CUSTOM, template=None, env=[{"name": "HF_TOKEN", "value": "t"}])
    comp = reconcile(xr, [])
    manifest = cast("Any", comp.resources[MODEL].manifest)
    assert manifest["metadata"]["name"] == "qwen-qwen2-0-5b-8cd3ca3d"
    assert manifest["metadata"]["labels"]["aim.silogen.ai/custom-model"] == "true"
    assert manifest["spec"]["image"] == "amdenterpriseai/aim-base:0.9"
    assert manifest["spec"]["modelSources"] == CUSTOM["custom"]["modelSources"]
    assert manifest["spec"]["custom"]["hardware"]["gpu"]["models"] == ["MI300X"]
    assert manifest["spec"]["env"] == [{"name": "HF_TOKEN", "value": "t"}]


def test_custom_model_reuses_an_equal_namespace_model() -> None:
    """Two services with the same custom weights share one model instead of downloading twice."""
    existing = model(
        name="shared-qwen2",
        image="amdenterpriseai/aim-base:0.9",
        modelSources=CUSTOM["custom"]["modelSources"],
        custom={"hardware": {"gpu": {"requests": 1}}},
    )
    tpl = template(
        modelName="shared-qwen2",
        type="unoptimized",
        modelSources=CUSTOM["custom"]["modelSources"],
    )
    comp = reconcile(service(model=CUSTOM, template={"allowUnoptimized": True}), [existing, tpl])
    assert MODEL not in comp.resources
    assert status(comp)["resolvedModel"]["name"] == "shared-qwen2"
    assert container(comp)["image"] == "amdenterpriseai/aim-base:0.9"
    assert env(comp)["AIM_MODEL_ID"] == "Qwen/Qwen2-0.5B"


# --- template resolution and auto-selection -----------------------------------------------------


def test_namespace_template_shadows_cluster_template() -> None:
    """A team's template wins over the catalog's of the same name."""
    pool = [
        model(),
        template(kind="AIMClusterServiceTemplate"),
        template(hardware={"gpu": {"requests": 2, "model": "MI325X"}}),
    ]
    comp = reconcile(service(), pool)
    assert status(comp)["resolvedTemplate"]["scope"] == "Namespace"
    assert container(comp)["resources"]["limits"]["amd.com/gpu"] == "2"


def test_explicit_cluster_template() -> None:
    """A named catalog template is found in cluster scope and recorded as such."""
    comp = reconcile(service(), [model(), template(kind="AIMClusterServiceTemplate")])
    assert status(comp)["resolvedTemplate"] == {
        "name": "tpl",
        "scope": "Cluster",
        "kind": "AIMClusterServiceTemplate",
        "uid": "uid-tpl",
    }


def auto(**spec: Any) -> Any:
    return service(**{"template": None, **spec})


def test_auto_selection_picks_the_best_profile() -> None:
    """Without a named template the service runs on the best Available profile."""
    pool = [
        model(),
        template("fp16", precision="fp16"),
        template("fp8"),
        template("mi210", hardware={"gpu": {"requests": 1, "model": "MI210"}}),
    ]
    comp = reconcile(auto(), pool)
    assert status(comp)["resolvedTemplate"]["name"] == "fp8"


def test_auto_selection_tie_is_reported_not_broken() -> None:
    """Equal candidates are not chosen arbitrarily: the user is told to name one."""
    comp = reconcile(auto(), [model(), template("a"), template("b")])
    assert status(comp)["status"] == "Pending"
    assert conditions(comp)["TemplateReady"] == ("False", "TemplateSelectionAmbiguous")
    message = message_of(comp, "TemplateReady")
    assert "a (namespace): optimized, 1 x MI300X, latency, fp8" in message
    assert "b (namespace)" in message
    assert "spec.template.name" in message
    assert INFERENCE_SERVICE not in comp.resources
    # The template selections metric counts the outcome by this reason.
    assert comp.counted == [TemplateSelected("TemplateSelectionAmbiguous")]


def test_auto_selection_explains_why_nothing_qualifies() -> None:
    """Every rejected candidate is named with its reason, so the user knows what to fix."""
    pool = [model(), template("slow", status="Progressing"), template("raw", type="unoptimized")]
    comp = reconcile(auto(), pool)
    assert conditions(comp)["TemplateReady"] == ("False", "TemplateNotFound")
    message = message_of(comp, "TemplateReady")
    assert "slow (namespace): not Available (status Progressing)" in message
    assert "raw (namespace): unoptimized profile; set spec.template.allowUnoptimized" in message


def test_auto_selection_takes_unoptimized_when_allowed() -> None:
    """allowUnoptimized opens unoptimized profiles to selection."""
    pool = [model(), template("raw", type="unoptimized")]
    comp = reconcile(auto(template={"allowUnoptimized": True}), pool)
    assert status(comp)["resolvedTemplate"]["name"] == "raw"


def test_auto_selection_is_sticky() -> None:
    """A better template appearing later does not move a service that runs on another."""
    xr = auto()
    xr["status"] = {"resolvedTemplate": {"name": "fp16", "scope": "Namespace"}}
    pool = [model(), template("fp16", precision="fp16"), template("fp8")]
    assert status(reconcile(xr, pool))["resolvedTemplate"]["name"] == "fp16"


def test_models_default_template_wins_over_ranking() -> None:
    """The model's defaultServiceTemplate is used before any ranking."""
    pool = [model(defaultServiceTemplate="fp16"), template("fp16", precision="fp16"), template()]
    assert status(reconcile(auto(), pool))["resolvedTemplate"]["name"] == "fp16"


def test_cluster_templates_do_not_serve_a_namespace_model_of_the_same_name() -> None:
    """A catalog template is for the catalog's model, never a team model that shares its name."""
    pool = [model(), template("c", kind="AIMClusterServiceTemplate")]
    comp = reconcile(auto(), pool)
    assert conditions(comp)["TemplateReady"] == ("False", "TemplateNotFound")
    assert "has no usable templates yet" in message_of(comp, "TemplateReady")


def test_unreadable_template_of_the_model_is_named_not_skipped_silently() -> None:
    """A broken template is reported with its field, not dropped without a word."""
    pool = [model(), template("broken", hardware={"gpu": {"requests": "many"}})]
    comp = reconcile(auto(), pool)
    assert conditions(comp)["TemplateReady"] == ("False", "TemplateNotFound")
    assert "AIMServiceTemplate 'broken' cannot be used: spec.hardware" in message_of(
        comp, "TemplateReady"
    )


def test_no_templates_and_discovery_off_tells_the_user_what_to_do() -> None:
    """With discovery off and no templates, the message says to create one."""
    comp = reconcile(auto(), [model(discovery={"enabled": False})])
    assert "discovery is disabled" in message_of(comp, "TemplateReady")


def test_no_templates_yet_under_the_default_discovery_says_to_wait() -> None:
    """A model without `spec.discovery` discovers (the AIM API's default): no templates yet
    means waiting for them, never "discovery is disabled"."""
    comp = reconcile(auto(), [model()])
    assert "once the model's discovery creates them" in message_of(comp, "TemplateReady")


# --- overrides ----------------------------------------------------------------------------------

OVERRIDES = {"precision": "fp16", "hardware": {"gpu": {"requests": 2, "model": "MI325X"}}}


def test_overrides_compose_a_derived_template_and_wait_for_it() -> None:
    """Overrides that change the profile compose a derived template; the service waits for it."""
    comp = reconcile(service(overrides=OVERRIDES), WORLD)
    derived = cast("Any", comp.resources[DERIVED_TEMPLATE].manifest)
    assert derived["kind"] == "AIMServiceTemplate"
    assert derived["metadata"]["name"].startswith("tpl-ovr-mi325x-2gpu-fp16-")
    assert derived["metadata"]["labels"]["aim.silogen.ai/origin"] == "derived"
    assert derived["spec"]["modelName"] == "qwen3"
    assert derived["spec"]["precision"] == "fp16"
    assert derived["spec"]["metric"] == "latency"
    assert derived["spec"]["hardware"]["gpu"] == {
        "requests": 2,
        "model": "MI325X",
        "resourceName": "amd.com/gpu",
    }
    assert conditions(comp)["TemplateReady"] == ("False", "CreatingDerivedTemplate")
    assert INFERENCE_SERVICE not in comp.resources


def test_service_runs_on_the_derived_template_once_available() -> None:
    """Once the derived template is Available, the InferenceService runs on it."""
    xr = service(overrides=OVERRIDES)
    derived = copy.deepcopy(reconcile(xr, WORLD).resources[DERIVED_TEMPLATE].manifest)
    derived["status"] = {"status": "Available"}
    comp = reconcile(xr, WORLD, {DERIVED_TEMPLATE: derived})
    assert comp.resources[DERIVED_TEMPLATE].ready
    assert status(comp)["resolvedTemplate"]["name"] == cast("Any", derived)["metadata"]["name"]
    assert env(comp)["AIM_PRECISION"] == "fp16"
    assert container(comp)["resources"]["limits"]["amd.com/gpu"] == "2"
    ids = isvc(comp)["spec"]["predictor"]["affinity"]["nodeAffinity"]
    assert ids["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"
    ][0]["values"] == ["74a5", "74b9"]


def test_services_overriding_different_cpu_get_different_derived_templates() -> None:
    """Two services on one base template asking for different CPU must not compose (and fight
    over) one derived template: the override's CPU is in its name."""

    def derived_name(overrides: Any) -> str:
        derived = reconcile(service(overrides=overrides), WORLD).resources[DERIVED_TEMPLATE]
        return str(cast("Any", derived.manifest)["metadata"]["name"])

    assert derived_name({"hardware": {"cpu": {"requests": "8"}}}).startswith("tpl-ovr-8cpu-")
    assert derived_name({"hardware": {"cpu": {"requests": 16}}}).startswith("tpl-ovr-16cpu-")
    assert "cpu" not in derived_name(OVERRIDES), "the operator's name, unchanged"


def test_overrides_that_change_nothing_compose_nothing() -> None:
    """Overrides equal to the chosen template's profile create no derived template."""
    comp = reconcile(service(overrides={"precision": "fp8"}), WORLD)
    assert DERIVED_TEMPLATE not in comp.resources
    assert INFERENCE_SERVICE in comp.resources


def test_overrides_filter_auto_selection() -> None:
    """Overrides narrow auto-selection to the profiles they ask for."""
    pool = [model(), template("fp16", precision="fp16"), template("fp8")]
    comp = reconcile(auto(overrides={"precision": "fp16"}), pool)
    assert status(comp)["resolvedTemplate"]["name"] == "fp16"
    assert DERIVED_TEMPLATE not in comp.resources


# --- the InferenceService -----------------------------------------------------------------------


def test_inference_service_lands_on_the_template_gpu() -> None:
    """The predictor asks for the template's GPUs and is placed on nodes with that GPU model."""
    comp = reconcile(service(), WORLD)
    manifest = isvc(comp)
    predictor = manifest["spec"]["predictor"]
    assert manifest["metadata"]["name"] == "qwen-chat-a04542d9"
    assert manifest["metadata"]["labels"]["aim.silogen.ai/model"] == "qwen3"
    assert container(comp)["image"] == IMAGE
    assert container(comp)["resources"] == {
        "requests": {"cpu": "4", "memory": "32Gi", "amd.com/gpu": "1"},
        "limits": {"memory": "48Gi", "amd.com/gpu": "1", "cpu": "4"},
    }
    terms = predictor["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "amd.com/gpu.device-id", "operator": "In", "values": MI300X_IDS}
    ]
    assert {"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in predictor[
        "tolerations"
    ]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (1, 1)
    annotations = manifest["metadata"]["annotations"]
    assert annotations["serving.kserve.io/autoscalerClass"] == "none"


def test_gpu_count_comes_from_discovery_when_the_template_has_none() -> None:
    """A template without a GPU count takes the one discovery found."""
    tpl = template(hardware={"gpu": {"model": "MI300X"}})
    tpl["status"]["profile"] = {"metadata": {"gpu_count": 4, "gpu": "MI300X"}}
    comp = reconcile(service(), [model(), tpl])
    assert container(comp)["resources"]["limits"]["amd.com/gpu"] == "4"


def test_min_vram_places_on_every_gpu_with_enough_memory() -> None:
    """minVram places the predictor on every GPU model with enough memory."""
    tpl = template(hardware={"gpu": {"requests": 1, "minVram": "250Gi"}})
    comp = reconcile(service(), [model(), tpl])
    expression = isvc(comp)["spec"]["predictor"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"][0]["matchExpressions"][0]
    # MI325X (256 GiB), MI350X and MI355X (288 GiB); not MI300X (192 GiB).
    assert expression["values"] == ["74a5", "74b9", "75a0", "75a3", "75b0", "75b3"]


def test_template_without_gpu_model_gets_no_affinity() -> None:
    """A template that names no GPU model does not pin the predictor to one."""
    comp = reconcile(service(), [model(), template(hardware={"gpu": {"requests": 1}})])
    assert "affinity" not in isvc(comp)["spec"]["predictor"]


def test_resources_service_over_template_over_model_over_gpu_defaults() -> None:
    """Resources follow the documented precedence, key by key."""
    tpl = template(
        hardware={"gpu": {"requests": 2, "model": "MI300X", "resourceName": "amd.com/xgmi"}},
        resources={"requests": {"cpu": "6"}},
    )
    mdl = model(resources={"requests": {"cpu": "5", "memory": "40Gi"}})
    svc = service(resources={"requests": {"cpu": 10}, "limits": {"cpu": "12"}})
    comp = reconcile(svc, [mdl, tpl])
    assert container(comp)["resources"] == {
        "requests": {"cpu": "10", "memory": "40Gi", "amd.com/xgmi": "2"},
        "limits": {"memory": "96Gi", "amd.com/xgmi": "2", "cpu": "12"},
    }


def on_derived(xr: Any, pool: list[Any]) -> Composition:
    """The service once the derived template its overrides call for is Available."""
    derived = copy.deepcopy(reconcile(xr, pool).resources[DERIVED_TEMPLATE].manifest)
    derived["status"] = {"status": "Available"}
    return reconcile(xr, pool, {DERIVED_TEMPLATE: derived})


@dataclass(frozen=True)
class CpuCase(Case):
    template_cpu: Any = None
    template_resources: Any = None
    override_cpu: Any = None
    service_resources: Any = None
    requests: str = ""
    limits: str = ""


GPU1_MI300X = {"requests": 1, "model": "MI300X"}

CPU_CASES = [
    CpuCase(
        "default-4-per-gpu",
        "without hardware.cpu anywhere the pod asks 4 CPUs per GPU, its request as its limit",
        requests="4",
        limits="4",
    ),
    CpuCase(
        "template-cpu-replaces-default",
        "a template's hardware.cpu was accepted and ignored (the pod kept 4 CPUs per GPU)",
        template_cpu={"requests": "16", "limits": "24"},
        requests="16",
        limits="24",
    ),
    CpuCase(
        "template-cpu-request-is-its-limit",
        "a hardware.cpu request without a limit is its own limit, as every CPU request is",
        template_cpu={"requests": "500m"},
        requests="500m",
        limits="500m",
    ),
    CpuCase(
        "template-cpu-over-template-resources",
        "hardware.cpu names the profile's CPU; the template's generic resources are beneath it",
        template_cpu={"requests": "8"},
        template_resources={"requests": {"cpu": "6"}, "limits": {"cpu": "12"}},
        requests="8",
        limits="12",
    ),
    CpuCase(
        "override-cpu-over-template-cpu",
        "a service's overrides.hardware.cpu reaches the pod through its derived template, the "
        "template's limit kept where the override gives none",
        template_cpu={"requests": "8", "limits": "32"},
        override_cpu={"requests": "16"},
        requests="16",
        limits="32",
    ),
    CpuCase(
        "override-cpu-without-template-cpu",
        "an override's CPU replaces the per-GPU default on a template that names no CPU",
        override_cpu={"requests": "2", "limits": "3"},
        requests="2",
        limits="3",
    ),
    CpuCase(
        "service-resources-over-all",
        "the service's own resources stay the last word on its container",
        template_cpu={"requests": "8"},
        override_cpu={"requests": "16"},
        service_resources={"requests": {"cpu": "20"}, "limits": {"cpu": "40"}},
        requests="20",
        limits="40",
    ),
]


@table(CPU_CASES)
def test_hardware_cpu_reaches_the_inference_container(case: CpuCase) -> None:
    """hardware.cpu of the template, then of the service's overrides, sets the predictor's CPU
    over the per-GPU default and the template's resources; the service's resources win."""
    hardware: dict[str, Any] = {"gpu": GPU1_MI300X}
    if case.template_cpu is not None:
        hardware["cpu"] = case.template_cpu
    extra = {"resources": case.template_resources} if case.template_resources else {}
    pool = [model(), template(hardware=hardware, **extra)]
    overrides = {"hardware": {"cpu": case.override_cpu}} if case.override_cpu else None
    xr = service(overrides=overrides, resources=case.service_resources)
    comp = on_derived(xr, pool) if overrides else reconcile(xr, pool)
    resources = container(comp)["resources"]
    assert (resources["requests"]["cpu"], resources["limits"]["cpu"]) == (
        case.requests,
        case.limits,
    )
    assert resources["requests"]["amd.com/gpu"] == "1"


def test_a_cpu_only_template_asks_for_its_cpu_alone() -> None:
    """A profile without GPUs gets exactly its hardware.cpu: no GPU, no per-GPU memory."""
    pool = [model(), template(hardware={"cpu": {"requests": "2", "limits": "4"}})]
    assert container(reconcile(service(), pool))["resources"] == {
        "requests": {"cpu": "2"},
        "limits": {"cpu": "4"},
    }


def test_an_override_cpu_request_above_the_templates_limit_is_refused_by_name() -> None:
    """overrides.hardware.cpu.requests above the base template's hardware.cpu.limits would make
    a derived template the API server refuses; the service fails naming the field instead."""
    tpl = template(hardware={"gpu": GPU1_MI300X, "cpu": {"requests": "4", "limits": "8"}})
    comp = reconcile(service(overrides={"hardware": {"cpu": {"requests": "16"}}}), [model(), tpl])
    assert conditions(comp)["TemplateReady"] == ("False", "InvalidSpec")
    assert "spec.overrides.hardware.cpu.requests (16)" in message_of(comp, "TemplateReady")
    assert "hardware.cpu.limits: 8" in message_of(comp, "TemplateReady")
    assert DERIVED_TEMPLATE not in comp.resources
    assert INFERENCE_SERVICE not in comp.resources
    assert status(comp)["status"] == "Failed"


@dataclass(frozen=True)
class LimitCase(Case):
    resources: Any
    requests: Any = None
    limits: Any = None
    problem: str = ""


LIMIT_CASES = [
    LimitCase(
        "cpu-request-is-its-limit",
        "KServe's defaulter would give a missing CPU limit its configured 1 CPU, below the "
        "4 per GPU requested, and the predictor's Deployment would be refused",
        resources=None,
        requests={"cpu": "4", "memory": "32Gi", "amd.com/gpu": "1"},
        limits={"memory": "48Gi", "amd.com/gpu": "1", "cpu": "4"},
    ),
    LimitCase(
        "memory-request-above-default-limit-refused",
        "a memory request above the 48Gi-per-GPU default limit is refused by name with the "
        "fix (give the limit too) rather than composed into pods the API server refuses",
        resources={"requests": {"memory": "64Gi"}},
        problem="requests.memory (64Gi) is above limits.memory (48Gi)",
    ),
    LimitCase(
        "explicit-limit-kept",
        "a limit the user gives is theirs, even far above the request",
        resources={"limits": {"cpu": "32"}},
        requests={"cpu": "4", "memory": "32Gi", "amd.com/gpu": "1"},
        limits={"memory": "48Gi", "amd.com/gpu": "1", "cpu": "32"},
    ),
    LimitCase(
        "millicores-compare-exactly",
        "500m is below 1: quantities compare by value, not by rounding to whole units",
        resources={"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}},
        requests={"cpu": "500m", "memory": "32Gi", "amd.com/gpu": "1"},
        limits={"memory": "48Gi", "amd.com/gpu": "1", "cpu": "1"},
    ),
    LimitCase(
        "request-above-limit-refused",
        "a service asking for more CPU than its limit would get a Deployment the API server "
        "refuses, far from the field that caused it",
        resources={"requests": {"cpu": "8"}, "limits": {"cpu": "2"}},
        problem="requests.cpu (8) is above limits.cpu (2)",
    ),
    LimitCase(
        "gpu-limit-alone-refused",
        "GPUs cannot be overcommitted: a limit of 2 over the template's request of 1 is "
        "refused by name instead of guessing which was meant",
        resources={"limits": {"amd.com/gpu": "2"}},
        problem="requests.amd.com/gpu (1) differs from limits.amd.com/gpu (2)",
    ),
]


@table(LIMIT_CASES)
def test_every_request_has_a_limit_the_api_server_accepts(case: LimitCase) -> None:
    """CPU and memory requests without a limit get one equal to them; a request above its limit,
    or a GPU request unlike its limit, fails naming spec.resources."""
    svc = service(resources=case.resources)
    if case.problem:
        with pytest.raises(InvalidSpecError) as e:
            reconcile(svc, WORLD)
        assert e.value.field == "spec.resources"
        assert case.problem in e.value.problem
        return
    resources = container(reconcile(svc, WORLD))["resources"]
    assert (resources["requests"], resources["limits"]) == (case.requests, case.limits)


def test_environment_layers_merge_by_name_and_sort() -> None:
    """The environment follows the documented layers, one entry per name, in a stable order."""
    cfg = config(
        env=[
            {"name": "VLLM_ENABLE_METRICS", "value": "false"},
            {"name": "AIM_ENGINE_ARGS", "value": '{"max-model-len": 8192, "tp": {"size": 1}}'},
        ]
    )
    tpl = template(profileId="p1", env=[{"name": "T", "value": "t"}])
    svc = service(
        env=[
            {"name": "AIM_METRIC", "value": "throughput"},
            {"name": "AIM_ENGINE_ARGS", "value": '{"tp": {"size": 2}}'},
            {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
        ]
    )
    comp = reconcile(svc, [cfg, model(), tpl])
    assert container(comp)["env"] == [
        {"name": "AIM_CACHE_PATH", "value": "/workspace/cache"},
        {"name": "AIM_ENGINE_ARGS", "value": '{"max-model-len": 8192, "tp": {"size": 2}}'},
        {"name": "AIM_METRIC", "value": "throughput"},
        {"name": "AIM_PRECISION", "value": "fp8"},
        {"name": "AIM_PROFILE_ID", "value": "p1"},
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
        {"name": "T", "value": "t"},
        {"name": "VLLM_ENABLE_METRICS", "value": "false"},
    ]


@dataclass(frozen=True)
class ModelEnvCase(Case):
    model_sources: Any
    expected: str


MODEL_ENV_CASES = [
    ModelEnvCase(
        "image-model-over-template",
        "an image model's env was accepted and dropped; it comes after the template's env",
        model_sources=None,
        expected="model",
    ),
    ModelEnvCase(
        "custom-model-under-template",
        "a custom model's templates carry its env with each custom template's own over it; "
        "layering the model's again on top would undo those",
        model_sources=[{"modelId": "Org/A", "sourceUri": "hf://Org/A"}],
        expected="template",
    ),
]


@table(MODEL_ENV_CASES)
def test_a_models_env_reaches_the_inference_container(case: ModelEnvCase) -> None:
    """The model's spec.env reaches the container, between the template's and the service's."""
    mdl = model(
        env=[
            {"name": "SHARED", "value": "model"},
            {"name": "MODEL_ONLY", "value": "m"},
            {"name": "SERVICE_WINS", "value": "model"},
            {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "t"}}},
        ],
        **({"modelSources": case.model_sources} if case.model_sources else {}),
    )
    tpl = template(env=[{"name": "SHARED", "value": "template"}])
    svc = service(env=[{"name": "SERVICE_WINS", "value": "service"}])
    got = env(reconcile(svc, [mdl, tpl]))
    assert got["SHARED"] == case.expected
    assert got["MODEL_ONLY"] == "m"
    assert got["SERVICE_WINS"] == "service"
    assert got["HF_TOKEN"] == {"secretKeyRef": {"name": "hf", "key": "t"}}, "kept a reference"


def test_runtime_config_of_the_namespace_merges_over_the_cluster_one() -> None:
    """A team's runtime config refines the platform's, key by key and env by name."""
    cluster = config(
        kind="AIMClusterRuntimeConfig",
        env=[{"name": "A", "value": "cluster"}, {"name": "B", "value": "cluster"}],
        routing={"enabled": True, "gatewayRef": {"name": "gw", "namespace": "gateways"}},
    )
    namespaced = config(
        env=[{"name": "B", "value": "team"}],
        routing={"pathTemplate": "/{.metadata.namespace}/team/{.metadata.name}"},
        serviceAccountName="team-sa",
        imagePullSecrets=[{"name": "team-pull"}],
    )
    comp = reconcile(service(imagePullSecrets=[{"name": "mine"}]), [cluster, namespaced, *WORLD])
    assert status(comp)["resolvedRuntimeConfig"] == {
        "name": "default",
        "namespace": NS,
        "scope": "Namespace",  # the AIM API's scopes have no "both"; the namespace's wins
        "kind": "AIMRuntimeConfig",
        "uid": "uid-default",
    }
    assert (env(comp)["A"], env(comp)["B"]) == ("cluster", "team")
    predictor = isvc(comp)["spec"]["predictor"]
    assert predictor["serviceAccountName"] == "team-sa"
    assert predictor["imagePullSecrets"] == [{"name": "mine"}, {"name": "team-pull"}]
    assert status(comp)["routing"]["path"] == "/ml-team/team/qwen-chat"


def test_min_and_max_replicas_turn_on_kserve_autoscaling() -> None:
    """minReplicas and maxReplicas reach KServe as its autoscaling bounds."""
    comp = reconcile(service(minReplicas=2, maxReplicas=5), WORLD)
    predictor = isvc(comp)["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (2, 5)
    assert isvc(comp)["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] == "hpa"


# --- routing ------------------------------------------------------------------------------------

GATEWAY = {"name": "inference", "namespace": "gateways"}


def routed(**routing: Any) -> Any:
    return service(routing={"enabled": True, "gatewayRef": GATEWAY, **routing})


def route(comp: Composition) -> Any:
    return comp.resources[HTTP_ROUTE].manifest


def test_route_default_path_is_namespace_and_uid() -> None:
    """Without a path template a route gets a unique path from the namespace and UID."""
    comp = reconcile(routed(), WORLD)
    rule = route(comp)["spec"]["rules"][0]
    assert rule["matches"][0]["path"] == {"type": "PathPrefix", "value": "/ml-team/0b5e-uid"}
    assert rule["backendRefs"][0]["name"] == "qwen-chat-a04542d9-predictor"
    assert route(comp)["spec"]["parentRefs"] == [
        {**GATEWAY, "group": "gateway.networking.k8s.io", "kind": "Gateway"}
    ]
    assert status(comp)["routing"] == {
        "path": "/ml-team/0b5e-uid",
        "httpRoute": "qwen-chat-a04542d9",
    }
    assert conditions(comp)["HTTPRouteReady"] == ("False", "Creating")


def test_route_path_from_the_service_template() -> None:
    """A path template is rendered from the service's own fields, as a valid path."""
    xr = routed(pathTemplate="/{.metadata.namespace}/{.metadata.labels['team']}/chat/")
    xr["metadata"]["labels"] = {"team": "ML-Team"}
    comp = reconcile(xr, WORLD)
    assert status(comp)["routing"]["path"] == "/ml-team/chat"


def test_route_invalid_template_degrades_and_keeps_the_inference_service() -> None:
    """A bad path template degrades routing only; inference keeps running."""
    comp = reconcile(routed(pathTemplate="/{.metadata.labels['missing']}"), WORLD)
    assert status(comp)["status"] == "Degraded"
    assert conditions(comp)["HTTPRouteReady"] == ("False", "RouteTemplateInvalid")
    assert set(comp.resources) == {INFERENCE_SERVICE}
    assert "spec.routing.pathTemplate" in comp.warnings[0]


def test_route_without_gateway_fails_and_creates_nothing() -> None:
    """Routing without a gateway fails before anything is created."""
    comp = reconcile(service(routing={"enabled": True}), WORLD)
    assert status(comp)["status"] == "Failed"
    assert conditions(comp)["HTTPRouteReady"] == ("False", "GatewayNotConfigured")
    assert comp.resources == {}


def test_route_accepted_by_our_gateway_is_ready() -> None:
    """A route the gateway accepted makes HTTPRouteReady true."""
    parent = {
        "parentRef": GATEWAY,
        "controllerName": "example.com/gw",
        "conditions": [
            {"type": "Accepted", "status": "True"},
            {"type": "ResolvedRefs", "status": "True"},
        ],
    }
    observed = {INFERENCE_SERVICE: READY_ISVC, HTTP_ROUTE: ready("HTTPRoute", parents=[parent])}
    comp = reconcile(routed(), WORLD, observed)
    assert conditions(comp)["HTTPRouteReady"] == ("True", "HTTPRouteAccepted")
    assert comp.resources[HTTP_ROUTE].ready
    assert status(comp)["status"] == "Running"


def test_route_rejected_by_the_gateway_fails_with_its_reason() -> None:
    """A rejected route shows the gateway's own reason."""
    parent = {
        "parentRef": GATEWAY,
        "conditions": [{"type": "Accepted", "status": "False", "reason": "NotAllowedByListeners"}],
    }
    observed = {HTTP_ROUTE: ready("HTTPRoute", parents=[parent])}
    comp = reconcile(routed(), WORLD, observed)
    assert conditions(comp)["HTTPRouteReady"] == ("False", "NotAllowedByListeners")
    assert status(comp)["status"] == "Failed"
    # The gateway wrote no message: the condition still says why, not "rejected it: ".
    said = {c.type: c.message for c in comp.conditions}["HTTPRouteReady"]
    assert said.endswith("rejected the HTTPRoute: NotAllowedByListeners, with no message"), said


def test_route_status_for_another_gateway_does_not_count() -> None:
    """Only the status the route's own gateway wrote counts."""
    parent = {
        "parentRef": {"name": "other", "namespace": "gateways"},
        "conditions": [{"type": "Accepted", "status": "True"}],
    }
    comp = reconcile(routed(), WORLD, {HTTP_ROUTE: ready("HTTPRoute", parents=[parent])})
    assert conditions(comp)["HTTPRouteReady"] == ("False", "HTTPRoutePending")


# --- never tear down; deterministic; bad input ---------------------------------------------------


def test_existing_inference_service_is_kept_when_its_template_goes_missing() -> None:
    """A running InferenceService survives its template disappearing."""
    running = reconcile(service(), WORLD, {INFERENCE_SERVICE: READY_ISVC})
    observed = {INFERENCE_SERVICE: {**isvc(running), "status": READY_ISVC["status"]}}
    comp = reconcile(service(), [model()], observed)
    assert status(comp)["status"] == "Failed"
    assert conditions(comp)["TemplateReady"] == ("False", "TemplateNotFound")
    kept = cast("Any", comp.resources[INFERENCE_SERVICE].manifest)
    assert kept["spec"] == isvc(running)["spec"]
    assert "status" not in kept


def test_same_input_same_output() -> None:
    """Composing is deterministic: the same request gives the same answer."""
    observed = Observed(service(), {}, loop.answer(compose_service(Observed(service())), WORLD))
    assert compose_service(observed) == compose_service(copy.deepcopy(observed))


def test_namespace_too_long_is_a_spec_error_naming_the_field() -> None:
    """A namespace too long for derived names fails with the field named, not a crash."""
    xr = service()
    xr["metadata"]["namespace"] = "n" * 50
    with pytest.raises(InvalidSpecError) as e:
        compose_service(Observed(xr, {}, {}))
    assert e.value.field == "metadata.namespace"


def test_wrong_spec_shape_names_the_field() -> None:
    """A spec the model cannot read fails naming the field."""
    with pytest.raises(InvalidSpecError) as e:
        compose_service(Observed(service(replicas="two"), {}, {}))
    assert e.value.field == "spec.replicas"


# --- seams between kinds ------------------------------------------------------------------------


def discovered(name: str, profile_type: str | None, **spec: Any) -> Any:
    """A template as a model generates it (no spec.type), after discovery wrote its profile."""
    tpl = template(name, **spec)
    del tpl["spec"]["type"]
    if profile_type is not None:
        tpl["status"]["profile"] = {"metadata": {"type": profile_type, "gpu": "MI300X"}}
    return tpl


@dataclass(frozen=True)
class ProfileTypeCase(Case):
    candidates: list[Any]
    chosen: str


PROFILE_TYPE_CASES = [
    ProfileTypeCase(
        "discovered",
        "a generated template is optimized because its discovered profile says so",
        [discovered("gen", "optimized")],
        "gen",
    ),
    ProfileTypeCase(
        "untyped",
        "no type anywhere counts as unoptimized",
        [discovered("fp16", "optimized", precision="fp16"), discovered("raw", None)],
        "fp16",
    ),
    ProfileTypeCase(
        "label",
        "the recommended deployment's declared type is the last resort",
        [
            {
                **discovered("labelled", None),
                "metadata": {
                    "name": "labelled",
                    "namespace": NS,
                    "uid": "u",
                    "labels": {"aim.silogen.ai/profile-type": "optimized"},
                },
            }
        ],
        "labelled",
    ),
]


@table(PROFILE_TYPE_CASES)
def test_auto_selection_reads_the_effective_profile_type(case: ProfileTypeCase) -> None:
    """Selection uses the profile type in effect: the spec's, else discovery's."""
    comp = reconcile(auto(), [model(), *case.candidates])
    assert status(comp)["resolvedTemplate"]["name"] == case.chosen, case.reason


def test_a_spec_type_is_the_users_word_over_discovery() -> None:
    """A type written in the spec is the user's decision and beats what discovery found."""
    tpl = discovered("raw", "optimized")
    tpl["spec"]["type"] = "unoptimized"
    comp = reconcile(auto(), [model(), tpl])
    assert conditions(comp)["TemplateReady"] == ("False", "TemplateNotFound")


def test_a_custom_models_templates_need_no_allow_unoptimized() -> None:
    """A custom model's own templates are selectable without allowUnoptimized."""
    custom = model(modelSources=[{"modelId": "Org/A", "sourceUri": "hf://Org/A"}])
    tpl = template("mine", type="unoptimized")
    comp = reconcile(auto(), [custom, tpl])
    assert status(comp)["resolvedTemplate"]["name"] == "mine"


def test_the_predictor_pulls_with_every_secret_and_the_first_account_named() -> None:
    """Seed 002's template pull secrets and seed 004's runtime config both reach the pods."""
    cfg = config(serviceAccountName="aim-runtime", imagePullSecrets=[{"name": "private-registry"}])
    tpl = template(imagePullSecrets=[{"name": "registry-credentials"}])
    mdl = model(imagePullSecrets=[{"name": "model-pull"}])
    comp = reconcile(service(imagePullSecrets=[{"name": "svc-pull"}]), [cfg, mdl, tpl])
    predictor = isvc(comp)["spec"]["predictor"]
    assert predictor["imagePullSecrets"] == [
        {"name": "svc-pull"},
        {"name": "registry-credentials"},
        {"name": "model-pull"},
        {"name": "private-registry"},
    ]
    assert predictor["serviceAccountName"] == "aim-runtime"


def test_a_templates_service_account_comes_before_the_runtime_configs() -> None:
    """The template's service account wins over the runtime config's."""
    cfg = config(serviceAccountName="aim-runtime")
    comp = reconcile(service(), [cfg, model(), template(serviceAccountName="inference")])
    assert isvc(comp)["spec"]["predictor"]["serviceAccountName"] == "inference"


def test_overriding_the_gpu_count_keeps_the_templates_gpu_model() -> None:
    """Seed 002: `throughput` and 2 GPUs over a 1 x MI300X template is 2 x MI300X."""
    overrides = {"metric": "throughput", "hardware": {"gpu": {"requests": 2}}}
    comp = reconcile(service(overrides=overrides), WORLD)
    derived = cast("Any", comp.resources[DERIVED_TEMPLATE].manifest)
    assert derived["spec"]["hardware"]["gpu"] == {
        "requests": 2,
        "model": "MI300X",
        "resourceName": "amd.com/gpu",
    }
    assert derived["spec"]["metric"] == "throughput"
    # sha256('"count"|2|"metric"|"throughput"')[:4]: only what the service overrode is named.
    assert derived["metadata"]["name"] == "tpl-ovr-2gpu-throughput-b79a"


def test_the_predictor_passes_restricted_as_the_runtime_config_says() -> None:
    """The InferenceService's pod had no securityContext at all; now it passes `restricted`
    with uid and gid 1000 by default, or the runtime config's inferenceSecurity identity."""
    default = isvc(reconcile(service(), WORLD))["spec"]["predictor"]
    assert restricted_violations(default) == []
    assert default["securityContext"]["runAsUser"] == 1000
    assert default["securityContext"]["fsGroup"] == 1000

    identity = {"runAsUser": 2000, "runAsGroup": 44, "supplementalGroups": [109]}
    chosen = isvc(reconcile(service(), [*WORLD, config(inferenceSecurity=identity)]))
    context = chosen["spec"]["predictor"]["securityContext"]
    assert (context["runAsUser"], context["runAsGroup"], context["fsGroup"]) == (2000, 44, 44)
    assert context["supplementalGroups"] == [109]
    assert restricted_violations(chosen["spec"]["predictor"]) == []


def test_autoscaling_on_metrics_uses_kserves_keda_class_with_the_collector_annotations() -> None:
    """`autoScaling` metrics go to KServe 1:1, with the KEDA class and the annotations its
    OpenTelemetry collection needs; the bounds default as the AIM operator's do."""
    metric = {
        "type": "PodMetric",
        "podmetric": {
            "metric": {"metricNames": ["vllm:num_requests_running"]},
            "target": {"type": "AverageValue", "averageValue": "4"},
        },
    }
    comp = reconcile(service(autoScaling={"metrics": [metric]}, maxReplicas=3), WORLD)
    manifest = isvc(comp)
    predictor = manifest["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (1, 3)
    [composed] = predictor["autoScaling"]["metrics"]
    assert composed["podmetric"]["metric"] == {
        "backend": "opentelemetry",
        "metricNames": ["vllm:num_requests_running"],
    }
    assert composed["podmetric"]["target"] == {"type": "AverageValue", "averageValue": "4"}
    annotations = manifest["metadata"]["annotations"]
    assert annotations["serving.kserve.io/autoscalerClass"] == "keda"
    assert (
        annotations["sidecar.opentelemetry.io/inject"]
        == f"{manifest['metadata']['name']}-predictor"
    )
    assert annotations["prometheus.kserve.io/port"] == "8000"
    # Without metrics, bounds alone keep KServe's HPA, and a fixed count no autoscaler.
    hpa = isvc(reconcile(service(minReplicas=2), WORLD))["metadata"]["annotations"]
    assert hpa["serving.kserve.io/autoscalerClass"] == "hpa"
    assert "sidecar.opentelemetry.io/inject" not in hpa


def hpa(name: str, **status: Any) -> Any:
    """A HorizontalPodAutoscaler in the service's namespace, with the status given."""
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": NS},
        "status": status,
    }


PREDICTOR = "qwen-chat-a04542d9-predictor"
KEDA_METRIC = {
    "type": "PodMetric",
    "podmetric": {
        "metric": {"metricNames": ["vllm:num_requests_running"]},
        "target": {"type": "Value", "value": "2"},
    },
}


@dataclass(frozen=True)
class RuntimeCase(Case):
    spec: dict[str, Any]
    autoscalers: list[Any]
    runtime: dict[str, Any]


RUNTIME_CASES = [
    RuntimeCase("fixed", "a fixed count reports itself and asks for no autoscaler",
                {"replicas": 2}, [hpa(PREDICTOR, currentReplicas=9)],
                {"minReplicas": 2, "maxReplicas": 2, "currentReplicas": 2, "desiredReplicas": 2,
                 "replicas": "2"}),
    RuntimeCase("hpa-not-yet", "until KServe's HPA exists, the lower bound stands in",
                {"minReplicas": 1, "maxReplicas": 3}, [],
                {"minReplicas": 1, "maxReplicas": 3, "currentReplicas": 1, "desiredReplicas": 1,
                 "replicas": "1/1 (1-3)"}),
    RuntimeCase("hpa", "KServe's HPA says how many pods run and how many it wants",
                {"minReplicas": 1, "maxReplicas": 3},
                [hpa(PREDICTOR, currentReplicas=2, desiredReplicas=3)],
                {"minReplicas": 1, "maxReplicas": 3, "currentReplicas": 2, "desiredReplicas": 3,
                 "replicas": "2/3 (1-3)"}),
    RuntimeCase("hpa-computed-nothing", "an HPA whose metrics never answered writes desired 0, "
                "below any bound: it wants what runs (seen from the real HPA controller)",
                {"minReplicas": 1, "maxReplicas": 3},
                [hpa(PREDICTOR, currentReplicas=1, desiredReplicas=0)],
                {"minReplicas": 1, "maxReplicas": 3, "currentReplicas": 1, "desiredReplicas": 1,
                 "replicas": "1/1 (1-3)"}),
    RuntimeCase("keda", "with KEDA the HPA is KEDA's, named after the predictor",
                {"maxReplicas": 4, "autoScaling": {"metrics": [KEDA_METRIC]}},
                [hpa(PREDICTOR, currentReplicas=9),
                 hpa(f"keda-hpa-{PREDICTOR}", currentReplicas=4, desiredReplicas=4)],
                {"minReplicas": 1, "maxReplicas": 4, "currentReplicas": 4, "desiredReplicas": 4,
                 "replicas": "4/4 (1-4)"}),
    RuntimeCase("hostile-status", "another controller's status is read with bounds: a string or a "
                "negative count never becomes a count",
                {"minReplicas": 2, "maxReplicas": 5},
                [hpa(PREDICTOR, currentReplicas="7", desiredReplicas=-1)],
                {"minReplicas": 2, "maxReplicas": 5, "currentReplicas": 2, "desiredReplicas": 2,
                 "replicas": "2/2 (2-5)"}),
]  # fmt: skip


@table(RUNTIME_CASES)
def test_the_service_reports_its_replicas_from_its_autoscaler(case: RuntimeCase) -> None:
    """status.runtime: the bounds, and the counts of the autoscaler's HPA when there is one."""
    comp = reconcile(service(**case.spec), [*WORLD, *case.autoscalers])
    assert status(comp)["runtime"] == case.runtime


def hpa_conditions(able: str, active: str, reason: str = "FailedGetResourceMetric") -> Any:
    """KServe's HPA for the predictor with the HPA controller's two conditions."""
    return hpa(
        PREDICTOR,
        currentReplicas=1,
        conditions=[
            {"type": "AbleToScale", "status": able, "reason": "ReadyForNewScale"},
            {
                "type": "ScalingActive",
                "status": active,
                "reason": reason,
                "message": "the HPA was unable to compute the replica count: no metrics returned",
            },
        ],
    )


@dataclass(frozen=True)
class HpaCase(Case):
    autoscalers: list[Any]
    isvc: Any
    want: tuple[str, str]
    says: str
    headline: str


SCALED = {"minReplicas": 1, "maxReplicas": 3}
HPA_CASES = [
    HpaCase("not-yet", "KServe has not made the HPA: on its way",
            [], UNREADY_ISVC, ("False", "HPANotFound"), "no autoscaler yet", "Starting"),
    HpaCase("waiting", "no metrics while the pods start: waiting, not an error",
            [hpa_conditions("True", "False")], UNREADY_ISVC, ("False", "WaitingForMetrics"),
            "FailedGetResourceMetric", "Starting"),
    HpaCase("metrics-failed", "a serving service whose HPA reads no metrics runs but cannot "
            "scale: Degraded (the operator says Failed, which would hide that it serves)",
            [hpa_conditions("True", "False")], READY_ISVC, ("False", "MetricsFailed"),
            "runs but cannot scale", "Degraded"),
    HpaCase("operational", "an HPA with metrics: True",
            [hpa_conditions("True", "True", "ValidMetricFound")], READY_ISVC,
            ("True", "HPAOperational"), "reads its metrics", "Running"),
    HpaCase("target-not-ready", "an HPA that cannot scale its Deployment yet: on its way",
            [hpa_conditions("False", "False")], UNREADY_ISVC, ("False", "ScaleTargetNotReady"),
            "the autoscaler", "Starting"),
]  # fmt: skip


@table(HPA_CASES)
def test_hpa_ready_says_whether_the_autoscaler_works(case: HpaCase) -> None:
    """HPAReady, from the HPA controller's conditions on KServe's HPA, once the service has an
    InferenceService; a fixed count has no such condition."""
    comp = reconcile(service(**SCALED), [*WORLD, *case.autoscalers], {INFERENCE_SERVICE: case.isvc})
    assert conditions(comp)["HPAReady"] == case.want
    assert case.says in message_of(comp, "HPAReady")
    assert status(comp)["status"] == case.headline
    fixed = reconcile(service(), WORLD, {INFERENCE_SERVICE: case.isvc})
    assert "HPAReady" not in conditions(fixed)
