"""The plan's stand-ins write what their controllers would, and act once."""

from __future__ import annotations

import json
from typing import Any

from aim_plan.rounds import plan
from aim_plan.simulate import gpu_node, simulate
from aim_plan.world import World
from function.kube.jobs import pod_message

NS = "ml"
OWNER = {
    "apiVersion": "aim.silogen.ai/v1alpha1",
    "kind": "AIMService",
    "metadata": {"name": "chat", "namespace": NS, "uid": "svc-uid"},
}
"""The AIM object the simulated objects belong to: the stand-ins act on what AIM composed."""


def owned(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` controlled by `OWNER`, as core composes it."""
    ref = {"apiVersion": OWNER["apiVersion"], "kind": "AIMService", "name": "chat"}
    meta = {**obj["metadata"], "ownerReferences": [{**ref, "uid": "svc-uid", "controller": True}]}
    return {**obj, "metadata": meta}


def pvc(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "16Gi"}}},
    }


def isvc(claim: str) -> dict[str, Any]:
    volume = {"name": "cache", "persistentVolumeClaim": {"claimName": claim}}
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "chat", "namespace": NS},
        "spec": {"predictor": {"volumes": [volume]}},
    }


def test_kserve_waits_for_the_claims_its_predictor_mounts() -> None:
    """An InferenceService whose cache PVC is missing stays not Ready; once the provisioner has
    bound it, KServe reports it Ready. Each simulation acts once."""
    world = World([OWNER, owned(isvc("cache-pvc"))])
    assert simulate(world) == []
    world.put(owned(pvc("cache-pvc")))
    assert simulate(world) == ["provisioner_binds: PersistentVolumeClaim ml/cache-pvc"]
    claim = world.get(("v1", "PersistentVolumeClaim", NS, "cache-pvc")) or {}
    assert claim["status"] == {
        "phase": "Bound",
        "accessModes": ["ReadWriteMany"],
        "capacity": {"storage": "16Gi"},
    }
    assert simulate(world) == ["kserve_reports_ready: InferenceService ml/chat"]
    assert simulate(world) == []


def test_the_gateway_accepts_a_route_on_each_parent_at_its_generation() -> None:
    """The function reads Accepted per parent, at the route's generation."""
    parents = [{"name": "gw", "namespace": "gateways"}, {"name": "other", "namespace": "gateways"}]
    route = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "chat", "namespace": NS},
        "spec": {"parentRefs": parents},
    }
    world = World([OWNER, owned(route)])
    assert simulate(world) == ["gateway_accepts: HTTPRoute ml/chat"]
    status = (world.get(("gateway.networking.k8s.io/v1", "HTTPRoute", NS, "chat")) or {})["status"]
    assert [p["parentRef"] for p in status["parents"]] == parents
    for parent in status["parents"]:
        assert {
            (c["type"], c["status"], c["observedGeneration"]) for c in parent["conditions"]
        } == {
            ("Accepted", "True", 1),
            ("ResolvedRefs", "True", 1),
        }


def test_a_discovery_job_prints_the_profile_it_asks_for_from_the_models_metadata() -> None:
    """The dry-run answers the Job's AIM_METRIC with the recommended deployment that has it, and
    the model the function downloads; the Pod carries it where the function reads it."""
    image = "ghcr.io/acme/model:1"
    model = {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMClusterModel",
        "metadata": {"name": "m"},
        "spec": {
            "image": image,
            "imageMetadata": {
                "model": {
                    "canonicalName": "acme/model",
                    "recommendedDeployments": [
                        {
                            "gpuModel": "MI300X",
                            "gpuCount": 1,
                            "metric": "latency",
                            "precision": "fp8",
                        },
                        {
                            "gpuModel": "MI300X",
                            "gpuCount": 2,
                            "metric": "throughput",
                            "precision": "fp16",
                        },
                    ],
                }
            },
        },
    }
    env = [{"name": "AIM_METRIC", "value": "throughput"}]
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "discover-x", "namespace": "aim-system"},
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "discovery", "image": image, "env": env}]}
            }
        },
    }
    world = World([model, owned(job), OWNER])
    assert simulate(world) == ["kubelet_runs_job: Job aim-system/discover-x"]
    pods = [o for o in world if o["kind"] == "Pod"]
    [result] = json.loads(pod_message(pods, "discovery", "Succeeded") or "")
    assert result["profile"]["metadata"]["gpu_count"] == 2
    assert result["profile"]["metadata"]["precision"] == "fp16"
    assert result["models"] == [{"name": "acme/model", "source": "hf://acme/model"}]
    done = world.get(("batch/v1", "Job", "aim-system", "discover-x")) or {}
    assert done["status"]["conditions"][0]["type"] == "Complete"


def test_another_teams_objects_are_left_to_their_own_controllers() -> None:
    """Against a live cluster, a Job or claim no AIM object composed (a CronJob's run, another
    team's data volume) is not completed or bound by the plan, so it is no change in its diff."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "etl", "namespace": "data"},
        "spec": {"template": {"spec": {"containers": [{"name": "etl", "image": "etl:1"}]}}},
    }
    world = World([job, pvc("scratch"), OWNER, owned(pvc("cache"))])
    assert simulate(world) == ["provisioner_binds: PersistentVolumeClaim ml/cache"]


def test_keda_idles_a_scale_to_zero_service_as_the_real_controllers_write_it() -> None:
    """The add-on's operator says the HTTPScaledObject is Ready, and KEDA's HPA is at zero in
    the shape the HPA controller writes (no current count, ScalingDisabled), which the function
    reads as scaled to zero; a second round acts no more."""
    scaled = {
        "apiVersion": "http.keda.sh/v1alpha1",
        "kind": "HTTPScaledObject",
        "metadata": {"name": "chat-predictor", "namespace": NS},
        "spec": {"replicas": {"min": 0, "max": 1}},
    }
    world = World([OWNER, owned(scaled)])
    assert simulate(world) == ["keda_scales_to_zero: HTTPScaledObject ml/chat-predictor"]
    key = ("http.keda.sh/v1alpha1", "HTTPScaledObject", NS, "chat-predictor")
    [ready] = (world.get(key) or {})["status"]["conditions"]
    assert (ready["type"], ready["status"]) == ("Ready", "True")
    hpa = world.get(("autoscaling/v2", "HorizontalPodAutoscaler", NS, "keda-hpa-chat-predictor"))
    status = (hpa or {})["status"]
    assert "currentReplicas" not in status
    assert {(c["type"], c["status"], c.get("reason")) for c in status["conditions"]} >= {
        ("ScalingActive", "False", "ScalingDisabled")
    }
    assert simulate(world) == []


def echo_world(hardware: dict[str, Any]) -> World:
    """A model that recommends no deployment (as AIM's CPU images), a template of `hardware` on
    it, and a GPU node."""
    return World(
        [
            {
                "apiVersion": "aim.silogen.ai/v1alpha1",
                "kind": "AIMClusterModel",
                "metadata": {"name": "echo"},
                "spec": {
                    "image": "ghcr.io/acme/echo:1",
                    "imageMetadata": {"model": {"canonicalName": "example/echo-model"}},
                },
            },
            {
                "apiVersion": "aim.silogen.ai/v1alpha1",
                "kind": "AIMClusterServiceTemplate",
                "metadata": {"name": "echo-t"},
                "spec": {
                    "modelName": "echo",
                    "metric": "latency",
                    "precision": "fp32",
                    "profileId": "bentoml-cpu-fp32-tp1-latency",
                    "hardware": hardware,
                    "env": [{"name": "AIM_ENGINE", "value": "bentoml"}],
                },
            },
            gpu_node("MI300X", 8),
        ]
    )


def test_a_cpu_templates_discovery_answers_a_cpu_profile_of_its_inputs() -> None:
    """A CPU template (`hardware.cpu`, no GPU) of a model that recommends no deployment, as AIM's
    CPU images do: the planned dry-run answers a CPU profile of the template's engine, metric,
    precision and profile id, so `aim plan` takes the template to Available on CPUs instead of
    failing it for lack of a GPU deployment."""
    planned = plan(echo_world({"cpu": {"requests": "100m"}}))

    assert planned.converged, planned.unsettled
    template = planned.world.get(
        ("aim.silogen.ai/v1alpha1", "AIMClusterServiceTemplate", "", "echo-t")
    )
    assert template is not None
    status = template["status"]
    assert status["status"] == "Available", status
    assert status["hardwareSummary"] == "CPU"
    assert status["profile"]["metadata"]["engine"] == "bentoml"
    assert status["profile"]["metadata"]["gpu_count"] == 0


def test_a_gpu_template_without_a_count_gets_no_cpu_profile() -> None:
    """A template asking for GPU memory only (no count or model reaches its Job), beside CPUs:
    the plan cannot tell which GPU profile the image would pick, and says so, rather than answer
    a CPU profile the image never printed."""
    planned = plan(echo_world({"gpu": {"minVram": "64Gi"}, "cpu": {"requests": "100m"}}))

    template = planned.world.get(
        ("aim.silogen.ai/v1alpha1", "AIMClusterServiceTemplate", "", "echo-t")
    )
    assert template is not None
    status = template["status"]
    assert status["status"] != "Available", status
    discovered = next(c for c in status["conditions"] if c["type"] == "Discovered")
    assert "aim plan runs no image" in discovered["message"], discovered
