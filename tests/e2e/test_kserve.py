"""KServe's own controller serves the InferenceService the service composer writes.

The manager of the pinned KServe release runs beside a plane with a real node
(devtools/cluster/kserve.py): the InferenceService, as composed, passes KServe's defaulting and
validating webhooks, KServe turns it into a Deployment and a Service in Standard mode, the
predictor pod (the test AIM image, whose entrypoint serves an OpenAI-compatible endpoint as real
AIM images do) starts on the node under `restricted`, answers through the Service, and the
composer reads KServe's own status as a Running service. KEDA runs too (devtools/cluster/keda.py):
a service scaling on its metrics is scaled by KEDA's HPA, and the service reports it.

Simulated: the GPUs. The node advertises `amd.com/gpu` capacity and an MI300X device id label,
as AMD's GPU operator would, so the scheduler can place a pod that asks for one; no GPU exists
here and the stand-in server uses none. And the metric KEDA scales on: KEDA asks a stand-in
scaler in place of its OpenTelemetry add-on (fed by a collector from the pods' metrics), and the
test sets the value it answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from devtools.cluster.aimimage import stub_image
from devtools.cluster.controlplane import ControlPlane
from devtools.cluster.keda import SCALER_METRIC, Keda, start_keda
from devtools.cluster.kserve import start_kserve
from devtools.cluster.kube import Kube, condition, wait_for
from devtools.cluster.node import NODE_NAME, Node
from devtools.cluster.registry import Registry
from devtools.pkg.image import Image
from devtools.tools import Tools
from function.api.meta import Manifest
from function.compose.service import INFERENCE_SERVICE, compose_service
from function.kube.contract import Observed
from function.rules.pods import PREDICTOR_LABEL
from function.rules.status import Condition
from tests.e2e.nodeplane import AIM_IMAGE, NS, chat, node_cluster
from tests.unit import loop

API = "aim.silogen.ai/v1alpha1"
ISVC_API = "serving.kserve.io/v1beta1"
MI300X = "74a1"


@pytest.fixture(scope="module")
def node_plane(
    tools: Tools,
    runtime_image: Image,
    private_registry: Registry,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ControlPlane, Node]]:
    """A plane with a node that has (fake) AMD GPUs."""
    root = tmp_path_factory.mktemp("kserve")
    gpus = {"amd.com/gpu": "8"}
    with node_cluster(
        tools, runtime_image, root, capacity=gpus, registries=[private_registry.host]
    ) as (plane, node):
        yield plane, node


@pytest.fixture(scope="module")
def keda(tools: Tools, node_plane: tuple[ControlPlane, Node]) -> Iterator[Keda]:
    """KEDA's operator and metrics adapter beside the plane, and the scaler it asks."""
    plane, _ = node_plane
    with start_keda(tools, plane, plane.root.parent / "keda") as running:
        yield running


@pytest.fixture(scope="module")
def cluster(
    tools: Tools,
    node_plane: tuple[ControlPlane, Node],
    keda: Keda,
    aim_images: Path,
) -> Iterator[tuple[ControlPlane, Node]]:
    """The plane and node with the test AIM image, KEDA, and KServe's controller beside them
    (its OpenTelemetry metrics' ScaledObjects naming KEDA's scaler)."""
    plane, node = node_plane
    with start_kserve(
        tools, plane, plane.root.parent / "kserve", metric_scaler=keda.scaler.address
    ):
        plane.admin.apply(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": NODE_NAME, "labels": {"amd.com/gpu.device-id": MI300X}},
            }
        )
        node.load(stub_image(tools, AIM_IMAGE, aim_images))
        yield plane, node


def aim(kind: str, name: str, spec: dict[str, Any], status: str) -> Manifest:
    return {
        "apiVersion": API,
        "kind": kind,
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": spec,
        "status": {"status": status},
    }


# The catalog the service resolves against, as the model and template composers leave it.
MODEL = aim("AIMModel", "small", {"image": AIM_IMAGE}, "Ready")
TEMPLATE = aim(
    "AIMServiceTemplate",
    "small-latency",
    {
        "modelName": "small",
        "metric": "latency",
        "precision": "fp8",
        "type": "optimized",
        "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
    },
    "Available",
)
SERVICE: Manifest = {
    "apiVersion": API,
    "kind": "AIMService",
    "metadata": {"name": "chat", "namespace": NS, "uid": "uid-chat"},
    "spec": {
        "model": {"ref": "small"},
        "template": {"name": "small-latency"},
        "replicas": 1,
        # The template's defaults ask for 4 CPUs and 32 GiB, more than this machine has.
        "resources": {
            "requests": {"cpu": "100m", "memory": "64Mi"},
            "limits": {"memory": "256Mi"},
        },
    },
}


def isvc_explain(kube: Kube, name: str) -> str:
    """What KServe and the node say while the InferenceService is not Ready."""
    isvc = kube.get(ISVC_API, "InferenceService", name, NS) or {}
    pods = kube.list("v1", "Pod", NS, labels={"serving.kserve.io/inferenceservice": name})
    return json.dumps(
        {
            "isvc": isvc.get("status", {}),
            "pods": [p.get("status", {}) for p in pods],
            "events": [
                f"{e['involvedObject']['kind']}/{e['involvedObject']['name']}: {e['message']}"
                for e in kube.list("v1", "Event", NS)
            ][-10:],
        },
        indent=1,
    )


def predictor_object(kube: Kube, isvc: str, api_version: str, kind: str) -> dict[str, Any]:
    """The object of `kind` KServe makes for the InferenceService's predictor, once it exists."""
    return wait_for(
        f"KServe's {kind} for the predictor",
        lambda: kube.get(api_version, kind, f"{isvc}-predictor", NS),
        timeout_s=60,
        explain=lambda: isvc_explain(kube, isvc),
    )


SCALED: Manifest = {"minReplicas": 1, "maxReplicas": 3}


def service_manifest(name: str, spec: Manifest, drop: tuple[str, ...] = ()) -> Manifest:
    """A variant of SERVICE named `name`, with `spec` over its spec and `drop` left out."""
    base = SERVICE["spec"]
    assert isinstance(base, dict)
    body = {k: v for k, v in {**base, **spec}.items() if k not in drop}
    meta: Manifest = {"name": name, "namespace": NS, "uid": f"uid-{name}"}
    return {**SERVICE, "metadata": meta, "spec": body}


BIG = aim(
    "AIMServiceTemplate",
    "big",
    {
        "modelName": "small",
        "metric": "throughput",
        "precision": "fp8",
        "type": "optimized",
        "hardware": {"gpu": {"requests": 16, "model": "MI300X"}},
    },
    "Available",
)
"""A template for more GPUs than the node has (a 16-GPU node does not exist either)."""


def create_isvc(
    kube: Kube,
    name: str,
    spec: Manifest,
    drop: tuple[str, ...] = (),
    pool: tuple[Manifest, ...] | list[Manifest] = (),
) -> str:
    """The InferenceService the composer writes for a variant of SERVICE, created; its name."""
    service = service_manifest(name, spec, drop)
    composed = loop.reconcile(compose_service, Observed(service), [MODEL, TEMPLATE, *pool])
    manifest = composed.resources[INFERENCE_SERVICE].manifest
    kube.create(manifest)
    return str(manifest["metadata"]["name"])  # type: ignore[call-overload,index]


def pods_verdict(
    kube: Kube,
    isvc_name: str,
    service: Manifest,
    pool: tuple[Manifest, ...] | list[Manifest] = (),
    *,
    until: Callable[[dict[str, Any]], bool] = lambda pod: bool(condition(pod, "PodScheduled")),
) -> tuple[str, dict[str, Any]]:
    """The service's headline and InferenceServicePodsReady condition, composed over KServe's
    InferenceService and the predictor's pods once `until` holds for each (by default: the
    scheduler has ruled on it)."""

    def settled() -> list[dict[str, Any]] | None:
        pods = kube.list("v1", "Pod", NS, labels={PREDICTOR_LABEL: isvc_name})
        return pods if pods and all(until(p) for p in pods) else None

    listed = wait_for(
        "the predictor pod to show its problem",
        settled,
        timeout_s=60,
        explain=lambda: isvc_explain(kube, isvc_name),
    )
    # A list's items lack their kind, which Crossplane's required resources carry.
    pods = [{**p, "apiVersion": "v1", "kind": "Pod"} for p in listed]
    isvc = kube.get(ISVC_API, "InferenceService", isvc_name, NS) or {}
    composed = loop.reconcile(
        compose_service,
        Observed(service, resources={INFERENCE_SERVICE: isvc}),
        [MODEL, TEMPLATE, *pool, *pods],
    )
    [pods_ready] = [c for c in composed.conditions if c.type == "InferenceServicePodsReady"]
    verdict = {"reason": pods_ready.reason, "message": pods_ready.message}
    return str(composed.status["status"]), verdict


def test_kserve_serves_the_composed_inference_service(
    cluster: tuple[ControlPlane, Node],
) -> None:
    """The composed InferenceService is admitted by KServe's webhooks, reconciled into a
    Deployment whose pod serves on the node, reachable through KServe's Service; the composer
    reads KServe's status as Running."""
    plane, _ = cluster
    kube = plane.admin
    pool = [MODEL, TEMPLATE]
    starting = loop.reconcile(compose_service, Observed(SERVICE), pool)
    assert starting.status["status"] == "Starting", starting.conditions
    manifest = starting.resources[INFERENCE_SERVICE].manifest
    name = str(manifest["metadata"]["name"])  # type: ignore[call-overload,index]
    kube.create(manifest)

    def ready() -> dict[str, Any] | None:
        isvc = kube.get(ISVC_API, "InferenceService", name, NS)
        return isvc if (condition(isvc, "Ready") or {}).get("status") == "True" else None

    isvc = wait_for(
        "KServe reports the InferenceService Ready",
        ready,
        timeout_s=180,
        explain=lambda: isvc_explain(kube, name),
    )

    # KServe's defaulter stores the legacy mode name we compose (KServe before 0.15 knows only
    # that one) as Standard, and the controller ran the service in that mode, not Knative.
    assert isvc["metadata"]["annotations"]["serving.kserve.io/deploymentMode"] == "Standard"
    assert isvc["status"]["deploymentMode"] == "Standard"
    # KServe's own objects: a Deployment and a Service for the predictor, owned by the ISVC.
    deployment = kube.get("apps/v1", "Deployment", f"{name}-predictor", NS)
    assert deployment is not None
    assert deployment["metadata"]["ownerReferences"][0]["name"] == name
    [pod] = kube.list("v1", "Pod", NS, labels={"serving.kserve.io/inferenceservice": name})
    assert pod["spec"]["nodeName"] == NODE_NAME
    [predictor] = [c for c in pod["spec"]["containers"] if c["name"] == "kserve-container"]
    assert predictor["resources"]["requests"]["amd.com/gpu"] == "1"
    assert predictor["securityContext"]["allowPrivilegeEscalation"] is False  # ours, kept

    service = kube.get("v1", "Service", f"{name}-predictor", NS)
    assert service is not None
    address = (service["spec"]["clusterIP"], service["spec"]["ports"][0]["port"])
    seen: list[str] = []
    answer = wait_for(
        "the predictor answering through KServe's Service",
        lambda: chat(*address, seen),
        timeout_s=30,  # kube-proxy programs the Service once its EndpointSlice lists the pod
        explain=lambda: f"{seen[-3:]}\n{kube.list('discovery.k8s.io/v1', 'EndpointSlice', NS)}",
    )
    assert answer["choices"][0]["message"]["content"] == "a stand-in answer"

    running = loop.reconcile(
        compose_service,
        Observed({**SERVICE, "status": starting.status}, resources={INFERENCE_SERVICE: isvc}),
        pool,
    )
    assert running.status["status"] == "Running", running.conditions


def test_the_default_resources_make_a_deployment_kserve_accepts(
    cluster: tuple[ControlPlane, Node],
) -> None:
    """A service with the template's default resources (4 CPUs and 32Gi per GPU) gets its
    predictor Deployment: the CPU limit we compose keeps KServe's defaulter from adding its own
    1-CPU limit below the request, which made the API server refuse the Deployment.

    The pod itself stays Pending here (this machine has 2 CPUs); that is the scheduler's call."""
    plane, _ = cluster
    kube = plane.admin
    name = create_isvc(kube, "defaults", {}, drop=("resources",))

    deployment = predictor_object(kube, name, "apps/v1", "Deployment")
    [predictor] = deployment["spec"]["template"]["spec"]["containers"]
    assert predictor["resources"]["requests"]["cpu"] == "4"
    assert predictor["resources"]["limits"]["cpu"] == "4"
    isvc = kube.get(ISVC_API, "InferenceService", name, NS)
    assert (condition(isvc, "PredictorReady") or {}).get("reason") != "ReconcileFailed"

    # The real scheduler's verdict, as the service reports it.
    headline, verdict = pods_verdict(
        kube, name, service_manifest("defaults", {}, drop=("resources",))
    )
    assert headline == "Pending"
    assert verdict["reason"] == "InsufficientResources", verdict
    assert "waits for a node with 4 free cpu" in verdict["message"]
    assert "Insufficient cpu" in verdict["message"]  # the scheduler's own words, quoted


def test_a_service_asking_more_gpus_than_any_node_has_says_so(
    cluster: tuple[ControlPlane, Node],
) -> None:
    """A template asking 16 GPUs on a node with 8: the predictor pod stays unscheduled, and the
    service's InferenceServicePodsReady says it waits for a node with 16 free amd.com/gpu, in
    the scheduler's words (the headline Pending, as the operator reports FailedScheduling)."""
    plane, _ = cluster
    kube = plane.admin
    name = create_isvc(kube, "big", {"template": {"name": "big"}}, pool=[BIG])
    predictor_object(kube, name, "apps/v1", "Deployment")
    big = service_manifest("big", {"template": {"name": "big"}})
    headline, verdict = pods_verdict(kube, name, big, pool=[BIG])
    assert headline == "Pending"
    assert verdict["reason"] == "InsufficientGPU", verdict
    assert "waits for a node with 16 free amd.com/gpu" in verdict["message"]
    assert "Insufficient amd.com/gpu" in verdict["message"]


def test_an_autoscaled_service_gets_kserves_horizontal_pod_autoscaler(
    cluster: tuple[ControlPlane, Node],
) -> None:
    """A service with minReplicas and maxReplicas: KServe's validator accepts the HPA class we
    compose in Standard mode, and KServe's controller makes the HorizontalPodAutoscaler between
    those bounds for the predictor's Deployment."""
    plane, _ = cluster
    kube = plane.admin
    name = create_isvc(kube, "scaled", SCALED)

    hpa = predictor_object(kube, name, "autoscaling/v2", "HorizontalPodAutoscaler")
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 3)
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": f"{name}-predictor",
    }

    # The HPA controller's own status (no metrics here, so it counts and scales nothing) is
    # what the service reports.
    def counted_and_judged() -> dict[str, Any] | None:
        found = kube.get("autoscaling/v2", "HorizontalPodAutoscaler", f"{name}-predictor", NS)
        status = (found or {}).get("status", {})
        return found if status.get("currentReplicas") and status.get("conditions") else None

    counted = wait_for("the HPA controller counting the predictor's replicas", counted_and_judged)
    isvc = kube.get(ISVC_API, "InferenceService", name, NS) or {}
    reported = loop.reconcile(
        compose_service,
        Observed(service_manifest("scaled", SCALED), resources={INFERENCE_SERVICE: isvc}),
        [MODEL, TEMPLATE, counted],
    )
    assert reported.status["runtime"] == {
        "minReplicas": 1,
        "maxReplicas": 3,
        "currentReplicas": 1,
        "desiredReplicas": 1,
        "replicas": "1/1 (1-3)",
    }
    # No metrics pipeline runs here: the HPA controller's own verdict, quoted on HPAReady.
    [hpa_ready] = [c for c in reported.conditions if c.type == "HPAReady"]
    assert hpa_ready.reason in {"WaitingForMetrics", "MetricsFailed"}, hpa_ready
    assert "FailedGetResourceMetric" in hpa_ready.message, hpa_ready


def keda_hpa(kube: Kube, isvc: str) -> dict[str, Any] | None:
    """The HPA KEDA makes for the predictor's ScaledObject."""
    return kube.get("autoscaling/v2", "HorizontalPodAutoscaler", f"keda-hpa-{isvc}-predictor", NS)


def wait_keda_hpa(
    kube: Kube, isvc: str, what: str, until: Callable[[dict[str, Any]], bool], timeout_s: float
) -> dict[str, Any]:
    """KEDA's HPA once `until` holds for its status (the HPA controller's own)."""

    def probe() -> dict[str, Any] | None:
        found = keda_hpa(kube, isvc)
        return found if found and until(found.get("status") or {}) else None

    def explain() -> str:
        status = (keda_hpa(kube, isvc) or {}).get("status")
        return f"{json.dumps(status, indent=1)}\n{isvc_explain(kube, isvc)}"

    return wait_for(what, probe, timeout_s=timeout_s, explain=explain)


def scaling_reported(
    kube: Kube, isvc: str, service: Manifest, hpa: dict[str, Any]
) -> tuple[object, Condition]:
    """The service's `runtime` status and HPAReady condition, composed over KServe's
    InferenceService and KEDA's HPA."""
    found = kube.get(ISVC_API, "InferenceService", isvc, NS) or {}
    composed = loop.reconcile(
        compose_service,
        Observed(service, resources={INFERENCE_SERVICE: found}),
        [MODEL, TEMPLATE, hpa],
    )
    [hpa_ready] = [c for c in composed.conditions if c.type == "HPAReady"]
    return composed.status["runtime"], hpa_ready


def running_pods(kube: Kube, isvc: str, count: int) -> list[dict[str, Any]] | None:
    """The predictor's pods once `count` of them run."""
    pods = kube.list("v1", "Pod", NS, labels={PREDICTOR_LABEL: isvc})
    up = [p for p in pods if p.get("status", {}).get("phase") == "Running"]
    return up if len(up) == count else None


def test_a_service_scaling_on_its_metrics_is_scaled_by_keda(
    cluster: tuple[ControlPlane, Node], keda: Keda
) -> None:
    """A service with `autoScaling` metrics: KServe's validator accepts the KEDA class and the
    metrics we compose, and KServe's controller makes the ScaledObject on them (and the
    OpenTelemetry collector that would feed it). KEDA's operator makes the HPA from it, the HPA
    controller reads the metric through KEDA's adapter, and the service reports that HPA as
    ready with its replicas; when the metric rises, the HPA controller scales the predictor,
    the new pod runs on the node, and the service's replicas follow."""
    plane, _ = cluster
    kube = plane.admin
    keda.scaler.set(1)  # half the target per pod: one replica is enough
    metric: Manifest = {
        "type": "PodMetric",
        "podmetric": {
            "metric": {
                "backend": "opentelemetry",
                "metricNames": ["vllm:num_requests_running"],
                "query": "vllm:num_requests_running",
            },
            "target": {"type": "Value", "value": "2"},
        },
    }
    spec: Manifest = {"maxReplicas": 4, "autoScaling": {"metrics": [metric]}}
    name = create_isvc(kube, "keda", spec)
    predictor = f"{name}-predictor"

    scaled = predictor_object(kube, name, "keda.sh/v1alpha1", "ScaledObject")
    assert (scaled["spec"]["minReplicaCount"], scaled["spec"]["maxReplicaCount"]) == (1, 4)
    assert scaled["spec"]["scaleTargetRef"]["name"] == predictor
    [trigger] = scaled["spec"]["triggers"]
    assert trigger["type"] == "external"
    assert "vllm:num_requests_running" in trigger["metadata"]["metricQuery"]
    assert trigger["metadata"]["scalerAddress"] == keda.scaler.address  # KServe's config
    collectors = kube.list("opentelemetry.io/v1beta1", "OpenTelemetryCollector", NS)
    assert [c["metadata"]["name"] for c in collectors] == [predictor]

    # KEDA's operator makes the HPA, owned by the ScaledObject, on the scaler's metric.
    hpa = wait_for(
        "KEDA's HPA for the ScaledObject",
        lambda: keda_hpa(kube, name),
        explain=lambda: plane.component("keda-operator").tail(),
    )
    [owner] = hpa["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"]) == ("ScaledObject", predictor)
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 4)
    assert hpa["spec"]["scaleTargetRef"]["name"] == predictor
    [external] = [m["external"] for m in hpa["spec"]["metrics"]]
    assert external["metric"]["name"] == f"s0-{SCALER_METRIC}"
    assert external["target"] == {"type": "AverageValue", "averageValue": "2"}

    # The HPA controller reads the metric through KEDA's adapter (the aggregated external
    # metrics API) and scales on it; the service's HPAReady and replicas come from that HPA.
    reading = wait_keda_hpa(
        kube,
        name,
        "the HPA controller reading the metric through KEDA's adapter",
        lambda st: (condition({"status": st}, "ScalingActive") or {}).get("status") == "True",
        timeout_s=90,
    )
    runtime, hpa_ready = scaling_reported(kube, name, service_manifest("keda", spec), reading)
    assert (hpa_ready.status, hpa_ready.reason) == ("True", "HPAOperational"), hpa_ready
    assert runtime == {
        "minReplicas": 1,
        "maxReplicas": 4,
        "currentReplicas": 1,
        "desiredReplicas": 1,
        "replicas": "1/1 (1-4)",
    }
    assert keda.scaler.asked.get(f"{NS}/{predictor}"), "KEDA never asked the scaler"

    # The load rises to 3 against a target of 2 per pod: the HPA controller wants 2 pods and
    # scales the predictor's Deployment; both pods run on the node, and the service counts them.
    keda.scaler.set(3)
    scaled_up = wait_keda_hpa(
        kube,
        name,
        "the HPA controller scaling the predictor to 2 pods",
        lambda st: st.get("currentReplicas") == st.get("desiredReplicas") == 2,
        timeout_s=120,
    )
    running = wait_for(
        "both predictor pods running",
        lambda: running_pods(kube, name, 2),
        explain=lambda: isvc_explain(kube, name),
    )
    assert {p["spec"]["nodeName"] for p in running} == {NODE_NAME}
    runtime, hpa_ready = scaling_reported(kube, name, service_manifest("keda", spec), scaled_up)
    assert hpa_ready.status == "True", hpa_ready
    assert runtime == {
        "minReplicas": 1,
        "maxReplicas": 4,
        "currentReplicas": 2,
        "desiredReplicas": 2,
        "replicas": "2/2 (1-4)",
    }


def pulling_failed(pod: dict[str, Any]) -> bool:
    """The kubelet has tried to pull the predictor's image and failed."""
    return any(
        (c.get("state", {}).get("waiting") or {}).get("reason")
        in {"ErrImagePull", "ImagePullBackOff"}
        for c in pod.get("status", {}).get("containerStatuses", [])
    )


def test_an_image_the_registry_refuses_names_the_image_and_the_pull_secrets(
    cluster: tuple[ControlPlane, Node], private_registry: Registry
) -> None:
    """A model whose image is in a registry that needs credentials, served without them: the
    kubelet's pull gets the registry's 401, and the service is Failed with
    ImagePullAuthFailure naming the image and the pull secrets the pod used (none), and
    where to name one."""
    plane, _ = cluster
    kube = plane.admin
    image = f"{private_registry.host}/org/locked:1"
    model = aim("AIMModel", "locked", {"image": image}, "Ready")
    template = aim(
        "AIMServiceTemplate",
        "locked-latency",
        {**TEMPLATE["spec"], "modelName": "locked"},  # type: ignore[dict-item]
        "Available",
    )
    spec: Manifest = {"model": {"ref": "locked"}, "template": {"name": "locked-latency"}}
    name = create_isvc(kube, "locked", spec, pool=[model, template])
    headline, verdict = pods_verdict(
        kube, name, service_manifest("locked", spec), [model, template], until=pulling_failed
    )
    assert headline == "Failed"
    assert verdict["reason"] == "ImagePullAuthFailure", verdict
    assert f"cannot pull {image}" in verdict["message"]
    assert "pull secrets in use: none" in verdict["message"]
    assert "401 Unauthorized" in verdict["message"]  # the registry's answer, via containerd


def crash_looping(pod: dict[str, Any]) -> bool:
    """The kubelet has restarted the predictor's container and backs off before the next try."""
    return any(
        (c.get("state", {}).get("waiting") or {}).get("reason") == "CrashLoopBackOff"
        for c in pod.get("status", {}).get("containerStatuses", [])
    )


def test_a_server_that_keeps_exiting_is_reported_with_its_last_words(
    cluster: tuple[ControlPlane, Node],
) -> None:
    """An inference server that fails at start (the stub exits with code 3 saying why): the
    kubelet restarts it into CrashLoopBackOff, and the service is Degraded with the exit code and
    the server's last log line, which reach the function as the termination message only
    because the composed container asks for FallbackToLogsOnError (KServe keeps it)."""
    plane, _ = cluster
    kube = plane.admin
    said = "RuntimeError: no GPU is visible to the server"
    spec: Manifest = {"env": [{"name": "AIM_STUB_EXIT", "value": said}]}
    name = create_isvc(kube, "crashing", spec)
    headline, verdict = pods_verdict(
        kube, name, service_manifest("crashing", spec), until=crash_looping
    )
    assert headline == "Degraded"
    assert verdict["reason"] == "CrashLoopBackOff", verdict
    assert f"last with code 3 (Error): {said}" in verdict["message"]


def test_a_server_killed_for_memory_names_the_limit_to_raise(
    cluster: tuple[ControlPlane, Node],
) -> None:
    """A server that needs more memory than its limit (the stub touches 128 MiB under a 64Mi
    limit): the kernel kills it, the kubelet says OOMKilled, and the service is Degraded with
    PodOOMKilled naming the limit and the field that raises it."""
    plane, _ = cluster
    kube = plane.admin
    spec: Manifest = {
        "env": [{"name": "AIM_STUB_ALLOCATE_MIB", "value": "128"}],
        "resources": {
            "requests": {"cpu": "100m", "memory": "64Mi"},
            "limits": {"memory": "64Mi"},
        },
    }
    name = create_isvc(kube, "hungry", spec)
    headline, verdict = pods_verdict(
        kube, name, service_manifest("hungry", spec), until=crash_looping
    )
    assert headline == "Degraded"
    assert verdict["reason"] == "PodOOMKilled", verdict
    assert "its memory limit, 64Mi" in verdict["message"]
    assert "spec.resources.limits.memory" in verdict["message"]
