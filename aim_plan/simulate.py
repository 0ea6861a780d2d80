"""What no cluster component does on a laptop, simulated; the output names each that acted.

They play it the way the end-to-end tier's stand-ins do (devtools/cluster/simulate.py,
tests/e2e/cluster.py), one named function per controller.

Each writes only what its controller would write: a status, and for a Job the Pod the Job
controller makes with the result its container leaves in the termination message (what
function/kube/jobs.py reads). Nothing here decides for the function: a discovery's profile is
what the Job asked for, filled from the model's `imageMetadata` as the image would fill it (or
from the image's labels, `aim_plan.dryrun`, where no model has it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from pydantic import ValidationError

from aim_plan.dryrun import described
from aim_plan.load import Obj, key_of
from aim_plan.standins import gateway, jobs, keda, kserve, kubelet, node, provisioner
from aim_plan.world import World
from function.api.hardware import Hardware
from function.compose.template.gpus import wants_gpu
from function.kube.jobs import JobState, job_state

PLAN_TIME: Final = "2025-01-01T00:00:00Z"
"""The time every simulated status is written at: fixed, so two plans print the same."""

NO_SIZE: Final = (
    "aim plan measures no model source (it reads no Hugging Face or bucket): give the "
    "source's size (spec.modelSources[].size, or spec.model.custom.modelSources[].size)"
)


def kubelet_runs_job(world: World, job: Obj) -> bool:
    """The kubelet running a Job's Pod, and the Job controller completing the Job.

    The Pod (labelled as the Job controller labels it) ends as its container would
    (`aim_plan/standins/jobs.py`): discovery prints the profile the Job's environment asks for
    (AIM_GPU_MODEL, AIM_GPU_COUNT, AIM_METRIC, AIM_PRECISION), completed from the first matching
    recommended deployment of the model's `imageMetadata` (or the image's labels, read by
    `aim_plan.dryrun`), and the model it downloads; a download and its check succeed; a size
    check fails, as the plan reads no hub or bucket; a service's adapter staging stages every
    adapter it is given (the plan has no files to check). Returns whether it acted (once per Job).
    """
    if job_state(job) is not JobState.RUNNING:
        return False
    pod_spec = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
    container = (list(pod_spec.get("containers") or []) or [{"name": ""}])[0]

    def dry_run(discovery: Mapping[str, Any]) -> tuple[int, str]:
        cpu = _cpu_template(world.controller_of(job))
        return _dry_run(world, discovery, world.dry_run_images.get(key_of(job)), cpu=cpu)

    code, message = jobs.runs(container, jobs.Answers(dry_run, unsized=lambda _: NO_SIZE))
    state = kubelet.exited(code, message, PLAN_TIME)
    status = kubelet.pod_status([container], kubelet.phase_after(code), state, PLAN_TIME)
    world.put(kubelet.job_pod(job, "plan", status))
    world.put({**job, "status": jobs.job_status(job, code, PLAN_TIME)})
    return True


def provisioner_binds(world: World, pvc: Obj) -> bool:
    """A storage provisioner binding a claim: phase Bound with the capacity it asked for."""
    if provisioner.is_bound(pvc):
        return False
    world.put({**pvc, "status": provisioner.bound(pvc)})
    return True


def kserve_reports_ready(world: World, isvc: Obj) -> bool:
    """KServe's controller reporting an InferenceService serving: Ready with its URL.

    Only once every claim its predictor mounts is Bound, as a Pod cannot start before.
    """
    if kserve.is_ready(isvc):
        return False
    meta = isvc["metadata"]

    def bound(claim: str) -> bool:
        pvc = world.get(("v1", "PersistentVolumeClaim", meta["namespace"], claim))
        return pvc is not None and provisioner.is_bound(pvc)

    if kserve.unbound_claims(isvc, bound):
        return False
    world.put({**isvc, "status": kserve.ready(meta["namespace"], meta["name"], PLAN_TIME)})
    return True


def gateway_accepts(world: World, route: Obj) -> bool:
    """A Gateway API implementation accepting an HTTPRoute on each parent it names."""
    if gateway.is_accepted(route):
        return False
    world.put({**route, "status": gateway.accepted(route, PLAN_TIME)})
    return True


def keda_scales_to_zero(world: World, scaled: Obj) -> bool:
    """The KEDA HTTP add-on's operator taking an HTTPScaledObject, and KEDA idling its target.

    What each writes: `aim_plan/standins/keda.py`.
    """
    if keda.is_reconciled(scaled):
        return False
    world.put({**scaled, "status": keda.reconciled(PLAN_TIME)})
    world.put(keda.idle_hpa(scaled, PLAN_TIME))
    return True


def gpu_node(model: str, count: int) -> Obj:
    """A Node of `count` GPUs of `model`, as `--gpu-node` adds it (`aim_plan/standins/node.py`).

    Raises:
        ValueError: `model` is no AMD GPU the function knows.
    """
    known = node.known_model(model)
    return node.gpu_node(f"plan-gpu-node-{known.lower()}", known, count)


Simulation = Callable[[World, Obj], bool]
SIMULATIONS: Final[dict[tuple[str, str], Simulation]] = {
    ("batch/v1", "Job"): kubelet_runs_job,
    ("v1", "PersistentVolumeClaim"): provisioner_binds,
    ("serving.kserve.io/v1beta1", "InferenceService"): kserve_reports_ready,
    ("gateway.networking.k8s.io/v1", "HTTPRoute"): gateway_accepts,
    ("http.keda.sh/v1alpha1", "HTTPScaledObject"): keda_scales_to_zero,
}
"""The simulations a round runs, by the kind of object each acts on."""


def simulate(world: World) -> list[str]:
    """Run each simulation on the AIM-composed objects of its kind; what each did (`name: obj`).

    Another team's Job or claim in a live cluster (`--against`) is its own controllers' affair.
    """
    done: list[str] = []
    for obj in world:
        simulation = SIMULATIONS.get((str(obj.get("apiVersion")), str(obj.get("kind"))))
        if simulation is not None and world.under_aim(obj) and simulation(world, obj):
            meta = obj["metadata"]
            done.append(f"{simulation.__name__}: {obj['kind']} {meta['namespace']}/{meta['name']}")
    return done


def _cpu_template(template: Obj | None) -> bool:
    """Whether a discovery Job's template asks for CPUs and no GPU (`hardware.cpu` alone)."""
    raw = ((template or {}).get("spec") or {}).get("hardware")
    try:
        hardware = Hardware.model_validate(raw) if isinstance(raw, dict) else None
    except ValidationError:
        return False  # the function refuses such a template before it makes a Job
    return hardware is not None and hardware.cpu is not None and not wants_gpu(hardware)


def _dry_run(
    world: World, container: Mapping[str, Any], labelled: dict[str, Any] | None, *, cpu: bool
) -> tuple[int, str]:
    """What the AIM image's `dry-run --format=json` would print, from the model's metadata."""
    env = jobs.literal_env(container)
    image = str(container.get("image"))
    metadata = described(world, image) or labelled
    model = (metadata or {}).get("model") or {}
    canonical = model.get("canonicalName")
    wanted = {
        "gpuModel": env.get("AIM_GPU_MODEL"),
        "gpuCount": env.get("AIM_GPU_COUNT"),
        "metric": env.get("AIM_METRIC"),
        "precision": env.get("AIM_PRECISION"),
    }
    found = next((d for d in _deployments(model) if _fits(d, wanted)), None)
    if found is None and cpu and canonical and wanted["metric"] and wanted["precision"]:
        return 0, _cpu_profile(canonical, env)
    deployment = found or {k: v for k, v in wanted.items() if v}
    missing = [k for k in ("gpuModel", "gpuCount", "metric", "precision") if not deployment.get(k)]
    if not canonical or missing:
        what = "no spec.imageMetadata.model.canonicalName" if not canonical else ""
        what = what or f"no recommended deployment giving {', '.join(missing)}"
        return 1, (
            f"aim plan runs no image: the dry-run of {image} is answered from the model's "
            "imageMetadata or, where no model has it, the image's labels read from its registry; "
            f"there is {what} for this template; add it to the model's spec.imageMetadata"
        )
    gpu, count = str(deployment["gpuModel"]), int(str(deployment["gpuCount"]))
    metric, precision = str(deployment["metric"]), str(deployment["precision"])
    return 0, json.dumps(
        [
            {
                "filename": f"vllm-{gpu.lower()}-{precision}-tp{count}-{metric}.yaml",
                "profile": {
                    "metadata": {
                        "engine": "vllm",
                        "gpu": gpu,
                        "gpu_count": count,
                        "metric": metric,
                        "precision": precision,
                        "type": "optimized",
                    },
                    "engine_args": {"tensor-parallel-size": count},
                },
                "models": [{"name": canonical, "source": f"hf://{canonical}"}],
            }
        ]
    )


def _cpu_profile(canonical: str, env: dict[str, str]) -> str:
    """A CPU template's answer where none of the model's recommended deployments fits it.

    A CPU profile (AIM's CPU images print `accelerator_type: cpu`) of the template's metric,
    precision, engine and profile id. The real runtime selects among the image's own, which aim
    plan cannot read.
    """
    engine, metric, precision = (
        env.get("AIM_ENGINE", "vllm"),
        env["AIM_METRIC"],
        env["AIM_PRECISION"],
    )
    name = env.get("AIM_PROFILE_ID") or f"{engine}-cpu-{precision}-tp1-{metric}"
    metadata = {
        "engine": engine,
        "accelerator_type": "cpu",
        "accelerator_model": "CPU",
        "accelerator_count": 1,
        "metric": metric,
        "precision": precision,
        "type": "unoptimized",
    }
    return json.dumps(
        [
            {
                "filename": f"{name}.yaml",
                "profile": {"metadata": metadata, "engine_args": {}},
                "models": [{"name": canonical, "source": f"hf://{canonical}"}],
            }
        ]
    )


def _deployments(model: dict[str, Any]) -> Iterable[dict[str, Any]]:
    found = model.get("recommendedDeployments")
    return [d for d in found if isinstance(d, dict)] if isinstance(found, list) else []


def _fits(deployment: dict[str, Any], wanted: dict[str, str | None]) -> bool:
    return all(v is None or str(deployment.get(k)) == v for k, v in wanted.items())
