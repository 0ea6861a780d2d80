"""Template composer: GPU availability, and discovery from Job creation to result or backoff.

Job and Pod states are written by hand here (no Job controller or kubelet runs in unit tests);
the render tests replay the same states through the real engine.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from function.api.template import TemplateStatus
from function.compose.template import DISCOVERY_JOB, compose_template
from function.kube.contract import Composition, Observed
from function.kube.counted import DiscoveryStarted
from function.kube.parse import parse_status
from function.rules import discovery
from function.rules.pods import MAX_QUOTE
from function.settings import Settings
from tests import simulated
from tests.cases import Case, table
from tests.simulated import DRY_RUN_RESULT
from tests.unit import loop

API = "aim.silogen.ai/v1alpha1"
NS = "ml-team"
SYSTEM_NS = Settings().system_namespace
IMAGE = "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"
T0 = datetime(2026, 11, 21, 10, 0, tzinfo=UTC)


def template(
    kind: str = "AIMServiceTemplate", status: dict[str, Any] | None = None, **spec: Any
) -> Any:
    meta: dict[str, Any] = {"name": "tpl", "uid": "uid-tpl"}
    if kind == "AIMServiceTemplate":
        meta["namespace"] = NS
    body = {
        "modelName": "qwen3",
        "metric": "latency",
        "precision": "fp8",
        "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
        **spec,
    }
    out: dict[str, Any] = {"apiVersion": API, "kind": kind, "metadata": meta, "spec": body}
    if status is not None:
        out["status"] = status
    return out


def model(kind: str = "AIMModel", entrypoint: list[str] | None = None) -> Any:
    meta: dict[str, Any] = {"name": "qwen3", "uid": "uid-qwen3"}
    if kind == "AIMModel":
        meta["namespace"] = NS
    status: dict[str, Any] = {"status": "Progressing"}
    if entrypoint:
        status["imageEntrypoint"] = entrypoint
    return {
        "apiVersion": API,
        "kind": kind,
        "metadata": meta,
        "spec": {"image": IMAGE, "imagePullSecrets": [{"name": "regcred"}]},
        "status": status,
    }


def node(**labels: str) -> Any:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": labels}}


MI300X_NODE = node(**{"amd.com/gpu.device-id": "74a1"})
WORLD = [model(), MI300X_NODE]


def tree(value: object) -> Any:
    return value


def compose(
    xr: Any, pool: list[Any] | None = None, *, now: datetime = T0, **observed: Any
) -> Composition:
    return loop.reconcile(
        compose_template, Observed(xr, now=now, **observed), WORLD if pool is None else pool
    )


def conditions(comp: Composition) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status.value, c.reason) for c in comp.conditions}


def message(comp: Composition, kind: str) -> str:
    return next(c.message for c in comp.conditions if c.type == kind)


def job_of(comp: Composition) -> Any:
    return tree(comp.resources[DISCOVERY_JOB].manifest)


def job_state(job: Any, **status: Any) -> Any:
    return {**job, "status": status}


def failed_job(job: Any, at: datetime = T0, why: str = "BackoffLimitExceeded") -> Any:
    condition = {
        "type": "Failed",
        "status": "True",
        "reason": why,
        "message": "Job has reached the specified backoff limit",
        "lastTransitionTime": at.isoformat(),
    }
    return job_state(job, failed=1, conditions=[condition])


def complete_job(job: Any) -> Any:
    return job_state(job, succeeded=1, conditions=[{"type": "Complete", "status": "True"}])


pod = simulated.discovery_pod


def step(xr: Any, comp: Composition) -> Any:
    """The template as Crossplane leaves it after `comp`: status written back."""
    return {**xr, "status": comp.status}


# --- creating the Job ----------------------------------------------------------------------------


def test_a_namespaced_template_starts_a_hardened_discovery_job_in_its_namespace() -> None:
    """Discovery runs in the template's namespace, restricted, with the model's image."""
    comp = compose(template(), [model(entrypoint=["aim-runtime", "--quiet"]), MI300X_NODE])

    job = job_of(comp)
    assert job["metadata"]["namespace"] == NS
    assert job["metadata"]["name"].startswith("discover-tpl-")
    assert job["spec"]["backoffLimit"] == 0
    pod_spec = job["spec"]["template"]["spec"]
    assert_restricted(pod_spec)
    assert pod_spec["imagePullSecrets"] == [{"name": "regcred"}]
    container = pod_spec["containers"][0]
    assert container["image"] == IMAGE
    assert container["command"][0:2] == ["/bin/sh", "-c"]
    assert container["command"][3:] == ["aim-discovery", "aim-runtime", "--quiet"]
    assert container["args"] == ["dry-run", "--format=json"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["AIM_METRIC"] == "latency"
    assert env["AIM_PRECISION"] == "fp8"
    assert env["AIM_GPU_MODEL"] == "MI300X"
    assert env["AIM_GPU_COUNT"] == "1"
    assert "amd.com/gpu" not in str(container["resources"])  # the dry-run needs no GPU
    assert comp.status["status"] == "Pending"
    assert conditions(comp)["Discovered"] == ("False", "DiscoveryJobCreated")
    assert tree(comp.status)["discovery"]["job"] == job["metadata"]["name"]


def assert_restricted(pod_spec: Any) -> None:
    """The fields Kubernetes' `restricted` Pod Security level checks, for every container."""
    assert pod_spec["securityContext"]["runAsNonRoot"] is True
    assert pod_spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        assert not pod_spec.get(key)
    assert all("hostPath" not in v for v in pod_spec.get("volumes", []))
    for c in pod_spec["containers"]:
        sc = c["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False
        assert sc["capabilities"] == {"drop": ["ALL"]}
        assert not sc.get("privileged")
        assert "ports" not in c


def test_the_kept_entrypoint_runs_even_when_another_status_field_is_broken() -> None:
    """The entrypoint is read on its own: a status field of the model that fails to parse
    (another writer's, or an older version's) does not make discovery run the wrong program."""
    broken = model(entrypoint=["aim-runtime", "--quiet"])
    broken["status"]["templates"] = -1  # no count of templates
    comp = compose(template(), [broken, MI300X_NODE])

    container = job_of(comp)["spec"]["template"]["spec"]["containers"][0]
    assert "aim-runtime --quiet" in " ".join(container["command"] + container.get("args", []))


def test_without_a_known_entrypoint_the_configured_one_runs() -> None:
    """An image never inspected is run with the configured entrypoint."""
    comp = loop.reconcile(
        compose_template,
        Observed(template(), now=T0, settings=Settings(discovery_entrypoint=("/opt/aim/run",))),
        WORLD,
    )
    assert job_of(comp)["spec"]["template"]["spec"]["containers"][0]["command"][3:] == [
        "aim-discovery",
        "/opt/aim/run",
    ]


def test_a_cluster_template_discovers_in_the_system_namespace() -> None:
    """A catalog template's discovery runs in the system namespace."""
    xr = template("AIMClusterServiceTemplate")
    pool = [model("AIMClusterModel"), MI300X_NODE]
    comp = loop.reconcile(
        compose_template, Observed(xr, now=T0, settings=Settings(system_namespace="aim")), pool
    )
    assert job_of(comp)["metadata"]["namespace"] == "aim"
    assert tree(comp.status)["resolvedModel"]["kind"] == "AIMClusterModel"


def test_a_namespaced_template_falls_back_to_the_cluster_model() -> None:
    """A team template may serve a catalog model of that name."""
    comp = compose(template(), [model("AIMClusterModel"), MI300X_NODE])
    assert conditions(comp)["ModelReady"] == ("True", "ModelResolved")
    assert DISCOVERY_JOB in comp.resources


def test_a_missing_model_fails_and_starts_nothing() -> None:
    """A template without its model fails and runs no discovery."""
    comp = compose(template(), [MI300X_NODE])
    assert conditions(comp)["ModelReady"] == ("False", "ModelNotFound")
    assert "spec.modelName" in message(comp, "ModelReady")
    assert comp.status["status"] == "Failed"
    assert comp.resources == {}


# --- GPUs ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeCase(Case):
    gpu: dict[str, Any]
    labels: dict[str, str]
    available: bool


DEVICE_ID = "amd.com/gpu.device-id"
NODE_CASES = [
    NodeCase(
        "device-id",
        "the GPU operator's device-id label",
        {"model": "MI300X"},
        {DEVICE_ID: "74a1"},
        available=True,
    ),
    NodeCase(
        "device-id-spelling",
        "0x and upper case name the same id (74b5, a MI300X virtual function)",
        {"model": "MI300X"},
        {DEVICE_ID: "0x74B5"},
        available=True,
    ),
    NodeCase(
        "family-label",
        "older GPU operators label the family instead",
        {"model": "MI300X"},
        {"beta.amd.com/gpu.family": "AMD_Instinct_MI300X"},
        available=True,
    ),
    NodeCase(
        "per-id-count",
        "the per-id count label (one label per device id present)",
        {"model": "MI300X"},
        {f"{DEVICE_ID}.74a9": "8"},
        available=True,
    ),
    NodeCase(
        "other-model",
        "75a0 is a MI350X, not the model asked for",
        {"model": "MI300X"},
        {DEVICE_ID: "75a0"},
        available=False,
    ),
    NodeCase(
        "any-of-models",
        "a list of models is satisfied by any of them",
        {"models": ["MI355X", "MI350X"]},
        {DEVICE_ID: "75a0"},
        available=True,
    ),
    NodeCase(
        "vram-too-small",
        "a MI300X has 192 GiB, less than asked",
        {"minVram": "256Gi"},
        {DEVICE_ID: "74a1"},
        available=False,
    ),
    NodeCase(
        "vram-enough",
        "a MI355X has 288 GiB",
        {"minVram": "256Gi"},
        {DEVICE_ID: "75a3"},
        available=True,
    ),
    NodeCase(
        "any-gpu",
        "no model asked: any AMD GPU will do (7460, a V710)",
        {"requests": 1},
        {DEVICE_ID: "7460"},
        available=True,
    ),
    NodeCase(
        "no-gpu",
        "a node without GPU labels has no GPU",
        {"requests": 1},
        {"kubernetes.io/os": "linux"},
        available=False,
    ),
]


@table(NODE_CASES)
def test_gpu_availability_from_node_labels(case: NodeCase) -> None:
    """GPU availability is read from the AMD GPU operator's node labels."""
    xr = template(hardware={"gpu": {"requests": 1, **case.gpu}})
    comp = compose(xr, [model(), node(**case.labels)])
    available = case.available

    assert (conditions(comp)["GPUReady"][0] == "True") is available, case.reason
    assert (DISCOVERY_JOB in comp.resources) is available, case.reason
    if not available:
        assert comp.status["status"] == "NotAvailable"
        assert conditions(comp)["GPUReady"][1] == "GPUNotAvailable"
        assert comp.ttl_seconds == 300  # nodes are checked again


def test_an_unusable_min_vram_is_a_condition_not_a_crash() -> None:
    """A minVram no GPU model can meet is a condition, not an error."""
    comp = compose(template(hardware={"gpu": {"requests": 1, "minVram": "-1Gi"}}))
    assert conditions(comp)["GPUReady"] == ("False", "InvalidSpec")
    assert "minVram" in message(comp, "GPUReady")
    assert comp.status["status"] == "Failed"


def test_a_cpu_template_lists_no_nodes() -> None:
    """A template without GPUs does not ask for nodes at all."""
    comp = compose(template(hardware={"cpu": {"requests": "4"}}), [model()])
    assert conditions(comp)["GPUReady"] == ("True", "NoGPURequired")
    assert all(r.kind != "Node" for r in comp.requirements)


# --- the Job's life ------------------------------------------------------------------------------


def started() -> tuple[Any, Any]:
    """The template after its first reconcile, and the Job it composed."""
    xr = template()
    comp = compose(xr)
    return step(xr, comp), job_of(comp)


def test_a_running_job_is_progressing() -> None:
    """A discovery Job in flight keeps the template Progressing."""
    xr, job = started()
    comp = compose(xr, resources={DISCOVERY_JOB: job_state(job, active=1)})

    assert comp.status["status"] == "Progressing"
    assert conditions(comp)["Discovered"] == ("False", "DiscoveryRunning")
    assert comp.resources[DISCOVERY_JOB].ready is False


def test_only_a_job_composed_anew_is_counted_as_a_discovery_started() -> None:
    """The discovery Jobs metric counts Jobs started (first attempts and retries), not every
    call that keeps a running one."""
    xr = template()
    first = compose(xr)
    assert first.counted == [DiscoveryStarted()]

    xr, job = started()
    running = compose(xr, resources={DISCOVERY_JOB: job_state(job, active=1)})
    assert DISCOVERY_JOB in running.resources
    assert running.counted == []


def test_an_image_that_cannot_be_pulled_is_reported_while_the_job_runs() -> None:
    """A pull failure is reported while the Job waits, not only when it gives up."""
    xr, job = started()
    pool = [*WORLD, pod(job, "Pending", waiting="ImagePullBackOff")]
    comp = compose(xr, pool, resources={DISCOVERY_JOB: job_state(job, active=1)})

    assert conditions(comp)["Discovered"] == ("False", "DiscoveryImagePullFailed")
    assert "pull access denied" in message(comp, "Discovered")


def test_a_succeeded_job_fills_status_and_is_dropped() -> None:
    """A finished discovery fills the template's status, and its Job goes once a call sees the
    result in that status."""
    xr, job = started()
    pool = [
        *WORLD,
        pod(job, "Succeeded", message="log noise\n" + json.dumps(DRY_RUN_RESULT) + "\n"),
    ]
    comp = compose(xr, pool, resources={DISCOVERY_JOB: complete_job(job)})

    assert comp.status["status"] == "Available"
    assert conditions(comp)["Discovered"] == ("True", "DiscoveryComplete")
    status = tree(comp.status)
    assert status["modelSources"] == [
        {
            "name": "Org/Small",
            "modelId": "Org/Small",
            "sourceUri": "hf://Org/Small",
            "size": "512Mi",
        }
    ]
    assert status["profile"]["metadata"]["gpu_count"] == 1
    assert status["profile"]["engine_args"] == {"tensor-parallel-size": 1}
    assert status["discovery"]["completed"] is True
    # Kept (and ready) while the result is only in this answer: Crossplane deletes a dropped
    # object before it writes status, and a lost status write would lose the result with it.
    assert comp.resources[DISCOVERY_JOB].ready

    again = compose(step(xr, comp), resources={DISCOVERY_JOB: complete_job(job)})
    assert again.status["status"] == "Available"
    assert DISCOVERY_JOB not in again.resources  # the result is in status: Crossplane deletes it
    assert tree(again.status)["modelSources"] == status["modelSources"]  # not discovered again


@dataclass(frozen=True)
class OutputCase(Case):
    output: str
    want: str


OUTPUT_CASES = [
    OutputCase(
        "not-json",
        "a dry-run that crashed but exited 0",
        "Traceback (most recent call last): boom",
        "DiscoveryOutputInvalid",
    ),
    OutputCase(
        "empty-list-in-noise",
        "an empty list found among other text is no runtime's answer, which prints it alone",
        "WARNING something\n[]",
        "DiscoveryOutputInvalid",
    ),
    OutputCase(
        "no-models",
        "a profile without models would be a template with nothing to serve",
        json.dumps([{"profile": {}, "models": []}]),
        "DiscoveryOutputInvalid",
    ),
    OutputCase(
        "too-large",
        "the wrapper's marker for output past the termination message's limit",
        '{"aimDiscoveryOutputBytes": 9000, "limit": 4096}',
        "DiscoveryOutputTooLarge",
    ),
]


@table(OUTPUT_CASES)
def test_a_result_that_does_not_fit_is_a_failed_attempt(case: OutputCase) -> None:
    """Output discovery cannot read counts as a failed attempt, with a reason."""
    xr, job = started()
    pool = [*WORLD, pod(job, "Succeeded", message=case.output)]
    comp = compose(xr, pool, resources={DISCOVERY_JOB: complete_job(job)})

    assert comp.status["status"] == "Failed"
    assert conditions(comp)["Discovered"] == ("False", case.want), case.reason
    assert tree(comp.status)["discovery"]["attempts"] == 1
    assert "modelSources" not in comp.status  # never a template without its sources


def test_an_image_with_no_profile_for_the_inputs_fails_once_and_is_not_retried() -> None:
    """AIM's runtime prints `[]` and exits 0 when no profile fits (aim-build's dry-run): that is
    DiscoveryNoProfile naming the inputs, not unreadable output, and since the same inputs give
    the same answer, no Job runs again until they change."""
    xr, job = started()
    pool = [*WORLD, pod(job, "Succeeded", message="[]\n")]
    comp = compose(xr, pool, resources={DISCOVERY_JOB: complete_job(job)})

    assert comp.status["status"] == "Failed"
    assert conditions(comp)["Discovered"] == ("False", "DiscoveryNoProfile")
    said = message(comp, "Discovered")
    for part in (IMAGE, "GPU MI300X x 1", "metric latency", "precision fp8"):
        assert part in said, said
    assert tree(comp.status)["discovery"]["noProfile"] is True
    assert comp.resources[DISCOVERY_JOB].ready  # kept until status holds the answer

    # Recorded: the Job goes, and hours later no attempt starts.
    xr = step(xr, comp)
    later = compose(xr, pool, now=T0 + timedelta(hours=5))
    assert DISCOVERY_JOB not in later.resources
    assert conditions(later)["Discovered"] == ("False", "DiscoveryNoProfile")
    assert message(later, "Discovered") == said

    # Other inputs are another question: a new Job asks it.
    xr = step(xr, later)
    xr["spec"] = {**xr["spec"], "precision": "fp16"}
    asked = compose(xr, now=T0 + timedelta(hours=5))
    assert job_of(asked)["metadata"]["name"] != job["metadata"]["name"]
    assert "noProfile" not in tree(asked.status)["discovery"]


def test_a_huge_job_failure_message_is_quoted_cut() -> None:
    """The Job controller's Failed message is quoted in Discovered cut at MAX_QUOTE and marked
    `...`, as other quotes are: a Job status anyone can write cannot fill the condition."""
    xr, job = started()
    at = T0 + timedelta(seconds=30)
    huge = {"type": "Failed", "status": "True", "message": "B" * 10_000_000}
    comp = compose(
        xr, now=at, resources={DISCOVERY_JOB: job_state(job, failed=1, conditions=[huge])}
    )
    said = message(comp, "Discovered")
    assert f"{'B' * MAX_QUOTE}..." in said, said[:400]
    assert "B" * (MAX_QUOTE + 1) not in said


def test_a_failed_job_backs_off_then_retries_under_a_new_name() -> None:
    """A failed discovery is retried after a backoff, as a new Job."""
    xr, job = started()
    failed_at = T0 + timedelta(seconds=30)
    pool = [*WORLD, pod(job, "Failed", message="ERROR: model not found on the hub")]
    observed = {DISCOVERY_JOB: failed_job(job, at=failed_at)}

    comp = compose(xr, pool, now=failed_at + timedelta(seconds=10), resources=observed)
    state = tree(comp.status)["discovery"]
    assert comp.status["status"] == "Failed"
    assert conditions(comp)["Discovered"] == ("False", "DiscoveryFailed")
    assert state["attempts"] == 1
    assert "model not found on the hub" in state["lastFailureReason"]
    assert comp.resources[DISCOVERY_JOB].ready is False  # kept, for kubectl logs
    assert comp.ttl_seconds == 50  # called again when the 60 s window ends

    # The same failure seen again is not counted twice.
    xr = step(xr, comp)
    comp = compose(xr, pool, now=failed_at + timedelta(seconds=20), resources=observed)
    assert tree(comp.status)["discovery"]["attempts"] == 1

    # After the window the Job is dropped (Crossplane deletes it) ...
    comp = compose(xr, pool, now=failed_at + timedelta(seconds=61), resources=observed)
    assert DISCOVERY_JOB not in comp.resources
    # ... and the next call starts the second attempt under a new name.
    xr = step(xr, comp)
    comp = compose(xr, now=failed_at + timedelta(seconds=62))
    assert job_of(comp)["metadata"]["name"] != job["metadata"]["name"]
    assert comp.status["status"] == "Pending"


def test_backoff_doubles_and_caps_at_an_hour() -> None:
    """Retries back off exponentially and never wait more than an hour."""
    assert [discovery.backoff(n).total_seconds() for n in (1, 2, 3, 7, 12)] == [
        60,
        120,
        240,
        3600,
        3600,
    ]


def test_inside_the_window_no_job_is_created() -> None:
    """No Job is created while the backoff window is open."""
    state = {"attempts": 2, "lastAttemptTime": T0.isoformat(), "lastFailureReason": "boom"}
    xr, _ = started()
    xr = {**xr, "status": {**xr["status"], "discovery": {**xr["status"]["discovery"], **state}}}
    comp = compose(xr, now=T0 + timedelta(seconds=100))

    assert DISCOVERY_JOB not in comp.resources
    assert conditions(comp)["Discovered"] == ("False", "AwaitingDiscoveryRetry")
    assert comp.ttl_seconds == 20  # 120 s after the second failure


def test_changed_inputs_reset_the_attempts_and_replace_the_job() -> None:
    """Changing what discovery depends on starts it afresh."""
    xr, job = started()
    state = {**xr["status"]["discovery"], "attempts": 3, "lastAttemptTime": T0.isoformat()}
    xr = {**xr, "status": {**xr["status"], "discovery": state}}
    xr["spec"] = {**xr["spec"], "profileId": "vllm-mi300x-fp8-tp1-latency"}
    comp = compose(xr, resources={DISCOVERY_JOB: job_state(job, active=1)})

    assert tree(comp.status)["discovery"]["attempts"] == 0
    assert DISCOVERY_JOB not in comp.resources  # the old Job goes first


def test_inline_model_sources_need_no_discovery() -> None:
    """A template that lists its model sources needs no discovery."""
    sources = [{"modelId": "org/m", "sourceUri": "s3://bucket/m", "size": "16Gi"}]
    comp = compose(template(modelSources=sources))

    assert comp.status["status"] == "Available"
    assert conditions(comp)["Discovered"] == ("True", "InlineModelSources")
    assert tree(comp.status)["modelSources"] == [
        {"modelId": "org/m", "sourceUri": "s3://bucket/m", "size": "16Gi"}
    ]
    assert comp.resources == {}


def test_a_model_that_disappears_keeps_the_running_job_and_the_result() -> None:
    """A model that vanishes mid-discovery fails the template but leaves its Job running."""
    xr, job = started()
    comp = compose(xr, [MI300X_NODE], resources={DISCOVERY_JOB: job_state(job, active=1)})

    assert comp.status["status"] == "Failed"
    assert DISCOVERY_JOB in comp.resources  # never torn down because an input flickered


# --- credentials and the resolved profile -------------------------------------------------------


def test_discovery_job_pulls_with_every_credential_the_seeds_name() -> None:
    """Seed 004's private registry: the runtime config's pull secrets and service account reach
    the discovery Job, after the template's and the model's own (each name once)."""
    cfg = {
        "apiVersion": API,
        "kind": "AIMRuntimeConfig",
        "metadata": {"name": "default", "namespace": NS},
        "spec": {
            "serviceAccountName": "aim-runtime",
            "imagePullSecrets": [{"name": "private-registry"}, {"name": "regcred"}],
        },
    }
    comp = compose(template(imagePullSecrets=[{"name": "team-pull"}]), [*WORLD, cfg])

    pod = job_of(comp)["spec"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [
        {"name": "team-pull"},  # the template's
        {"name": "regcred"},  # the model's
        {"name": "private-registry"},  # the runtime config's
    ]
    assert pod["serviceAccountName"] == "aim-runtime"


def test_a_template_service_account_wins_over_the_runtime_configs() -> None:
    """The template's service account wins over the runtime config's."""
    cfg = {
        "apiVersion": API,
        "kind": "AIMRuntimeConfig",
        "metadata": {"name": "default", "namespace": NS},
        "spec": {"serviceAccountName": "aim-runtime"},
    }
    comp = compose(template(serviceAccountName="discoverer"), [*WORLD, cfg])
    assert job_of(comp)["spec"]["template"]["spec"]["serviceAccountName"] == "discoverer"


@dataclass(frozen=True)
class ProfileCase(Case):
    spec: dict[str, Any]
    want: dict[str, Any]


PROFILE_CASES = [
    ProfileCase(
        "discovered",
        "discovery fills what the spec leaves out: the dry-run's type",
        {},
        {"type": "optimized", "metric": "latency", "precision": "fp8", "gpuCount": 1},
    ),
    ProfileCase(
        "spec-wins", "the spec wins over discovery", {"type": "preview"}, {"type": "preview"}
    ),
    ProfileCase(
        "left-to-discovery",
        "a template that leaves metric and precision to discovery shows discovery's",
        {"metric": None, "precision": None},
        {"metric": "latency", "precision": "fp8"},
    ),
]


@table(PROFILE_CASES)
def test_resolved_profile_is_the_spec_else_discovery(case: ProfileCase) -> None:
    """The profile in effect is the spec's, else discovery's."""
    spec, want = case.spec, case.want
    xr = template(**{k: v for k, v in spec.items() if v is not None})
    for key in [k for k, v in spec.items() if v is None]:
        del xr["spec"][key]
    job = job_of(compose(xr))
    pod = simulated.discovery_pod(job, "Succeeded", message=json.dumps(DRY_RUN_RESULT))
    done = compose(
        {**xr, "status": {"discovery": {"job": job["metadata"]["name"]}}},
        [*WORLD, pod],
        resources={DISCOVERY_JOB: job_state(job, succeeded=1, conditions=[_complete()])},
    )

    resolved = tree(done.status)["resolvedProfile"]
    assert {k: resolved.get(k) for k in want} == want, case.reason


def test_a_deployments_declared_type_is_the_last_resort() -> None:
    """Inline sources, no type in the spec: the recommended deployment's label decides."""
    xr = template(modelSources=[{"modelId": "Org/Small", "sourceUri": "hf://Org/Small"}])
    xr["metadata"]["labels"] = {"aim.silogen.ai/profile-type": "optimized"}
    assert tree(compose(xr).status)["resolvedProfile"]["type"] == "optimized"


def _complete() -> dict[str, str]:
    return {"type": "Complete", "status": "True"}


@dataclass(frozen=True)
class JobNameCase(Case):
    template: str


JOB_NAME_CASES = [
    JobNameCase("fits", "a name that fits whole", "t" * 45),
    JobNameCase("one-over", "the first length that used to give 64 characters", "t" * 46),
    JobNameCase(
        "seed-004",
        "a template seed 004's cluster model generates (found by a journey)",
        "ghcr-io-silogen-aim-meta-llama-llama-3-1-1x-mi300x-lat-fp8-34f7",
    ),
]


@table(JOB_NAME_CASES)
def test_discovery_job_names_are_label_values(case: JobNameCase) -> None:
    """The Job controller labels the Job's Pods with its name, so it must fit 63 characters."""
    job = discovery.job_name(case.template, "fingerprint", 0)
    assert len(job) <= 63, case.reason
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", job), case.reason


# --- the lifecycle in the AIM API's words: Progressing, Failure, Degraded --------------------


def running() -> Composition:
    xr, job = started()
    return compose(xr, resources={DISCOVERY_JOB: job_state(job, active=1)})


def discovered() -> Composition:
    xr, job = started()
    pool = [*WORLD, pod(job, "Succeeded", message=json.dumps(DRY_RUN_RESULT))]
    return compose(xr, pool, resources={DISCOVERY_JOB: complete_job(job)})


def discovery_failed() -> Composition:
    xr, job = started()
    pool = [*WORLD, pod(job, "Failed", message="ERROR: model not found on the hub")]
    at = T0 + timedelta(seconds=30)
    return compose(xr, pool, now=at, resources={DISCOVERY_JOB: failed_job(job, at=at)})


def awaiting_retry() -> Composition:
    xr, _ = started()
    state = {**xr["status"]["discovery"], "attempts": 1, "lastAttemptTime": T0.isoformat()}
    xr = {**xr, "status": {**xr["status"], "discovery": state}}
    return compose(xr, now=T0 + timedelta(seconds=10))


INLINE = [{"modelId": "org/m", "sourceUri": "s3://bucket/m", "size": "16Gi"}]
CACHE_KEY = "template-cache"


def cached(cache_status: str | None) -> Composition:
    """A caching template with inline sources, its AIMTemplateCache observed in `cache_status`
    (None: not created yet)."""
    xr = template(modelSources=INLINE, caching={"enabled": True})
    if cache_status is None:
        return compose(xr)
    cache = {"apiVersion": API, "kind": "AIMTemplateCache", "metadata": {"name": "tpl"}}
    return compose(xr, resources={CACHE_KEY: {**cache, "status": {"status": cache_status}}})


NAMED_CONFIG = template(runtimeConfigName="team")


@dataclass(frozen=True)
class LifecycleCase(Case):
    compose: Any
    headline: str
    progressing: tuple[str, str]
    failure: tuple[str, str]
    degraded: tuple[str, str]
    says: str = ""
    """Part of the message of the condition that is True (or of Progressing, if none is)."""


LIFECYCLE_CASES = [
    LifecycleCase(
        "job-created",
        "seed 002: Progressing while discovery runs; it starts with the Job being created",
        lambda: compose(template()),
        "Pending",
        ("True", "DiscoveryJobCreated"),
        ("False", "NoFailure"),
        ("False", "GPUAvailable"),
        "creating discovery Job ml-team/discover-tpl-",
    ),
    LifecycleCase(
        "cluster-template",
        "a cluster template reports the same words, its Job in the system namespace",
        lambda: compose(
            template("AIMClusterServiceTemplate"), [model("AIMClusterModel"), MI300X_NODE]
        ),
        "Pending",
        ("True", "DiscoveryJobCreated"),
        ("False", "NoFailure"),
        ("False", "GPUAvailable"),
        "creating discovery Job aim-system/discover-tpl-",
    ),
    LifecycleCase(
        "job-running",
        "the discovery Job in flight",
        running,
        "Progressing",
        ("True", "DiscoveryRunning"),
        ("False", "NoFailure"),
        ("False", "GPUAvailable"),
        "is running",
    ),
    LifecycleCase(
        "discovered",
        "discovery done: nothing in progress, the message lists what was found",
        discovered,
        "Available",
        ("False", "DiscoveryComplete"),
        ("False", "NoFailure"),
        ("False", "GPUAvailable"),
        "hf://Org/Small",
    ),
    LifecycleCase(
        "inline",
        "sources given inline: nothing to discover",
        lambda: compose(template(modelSources=INLINE)),
        "Available",
        ("False", "InlineModelSources"),
        ("False", "NoFailure"),
        ("False", "GPUAvailable"),
        "spec.modelSources",
    ),
    LifecycleCase(
        "discovery-failed",
        "seed 002: Failure when discovery fails, naming what the dry-run said",
        discovery_failed,
        "Failed",
        ("False", "DiscoveryFailed"),
        ("True", "DiscoveryFailed"),
        ("False", "GPUAvailable"),
        "model not found on the hub",
    ),
    LifecycleCase(
        "awaiting-retry",
        "inside the backoff window the failure stands, with when the next attempt starts",
        awaiting_retry,
        "Failed",
        ("False", "AwaitingDiscoveryRetry"),
        ("True", "AwaitingDiscoveryRetry"),
        ("False", "GPUAvailable"),
        "the next attempt starts at",
    ),
    LifecycleCase(
        "model-missing",
        "a template whose model is gone has failed, and says which field names it",
        lambda: compose(template(), [MI300X_NODE]),
        "Failed",
        ("False", "ModelNotFound"),
        ("True", "ModelNotFound"),
        ("False", "GPUAvailable"),
        "spec.modelName",
    ),
    LifecycleCase(
        "config-missing",
        "a runtime config named but absent fails the template",
        lambda: compose(NAMED_CONFIG),
        "Failed",
        ("False", "RuntimeConfigMissing"),
        ("True", "RuntimeConfigMissing"),
        ("False", "GPUAvailable"),
        "spec.runtimeConfigName",
    ),
    LifecycleCase(
        "gpu-absent",
        "seed 001: Degraded is a template the cluster lacks the resources for; the headline "
        "keeps the operator's NotAvailable",
        lambda: compose(template(), [model(), node(**{DEVICE_ID: "75a0"})]),
        "NotAvailable",
        ("False", "GPUNotAvailable"),
        ("False", "NoFailure"),
        ("True", "GPUNotAvailable"),
        "no Node has MI300X",
    ),
    LifecycleCase(
        "gpu-unreadable",
        "a GPU requirement no model meets is a failure; whether the cluster has it is unknown",
        lambda: compose(template(hardware={"gpu": {"requests": 1, "minVram": "-1Gi"}})),
        "Failed",
        ("False", "InvalidSpec"),
        ("True", "InvalidSpec"),
        ("Unknown", "InvalidSpec"),
        "minVram",
    ),
    LifecycleCase(
        "cpu",
        "a template without GPUs cannot lack them",
        lambda: compose(template(hardware={"cpu": {"requests": "4"}}, modelSources=INLINE)),
        "Available",
        ("False", "InlineModelSources"),
        ("False", "NoFailure"),
        ("False", "NoGPURequired"),
    ),
    LifecycleCase(
        "cache-created",
        "seed 001: Progressing covers the cache warm too, from the cache's creation",
        lambda: cached(None),
        "Available",
        ("True", "WarmingCache"),
        ("False", "NoFailure"),
        ("False", "GPUAvailable"),
        "AIMTemplateCache 'tpl' is being created",
    ),
    LifecycleCase(
        "cache-downloading",
        "the cache downloading",
        lambda: cached("Progressing"),
        "Available",
        ("True", "WarmingCache"),
        ("False", "NoFailure"),
        ("False", "GPUAvailable"),
        "AIMTemplateCache 'tpl' is Progressing",
    ),
    LifecycleCase(
        "cache-warm",
        "the cache warm: nothing in progress",
        lambda: cached("Available"),
        "Available",
        ("False", "InlineModelSources"),
        ("False", "NoFailure"),
        ("False", "GPUAvailable"),
    ),
    LifecycleCase(
        "cache-failed",
        "a failed cache does not fail the template (services download themselves), but "
        "Progressing says the warm stopped and where to look",
        lambda: cached("Failed"),
        "Available",
        ("False", "CacheFailed"),
        ("False", "NoFailure"),
        ("False", "GPUAvailable"),
        "kubectl describe aimtemplatecache tpl",
    ),
]


@table(LIFECYCLE_CASES)
def test_the_lifecycle_conditions_say_where_the_template_stands(case: LifecycleCase) -> None:
    """Seed 002's Progressing and Failure, and seed 001's Degraded, are always present: True
    with the reason and message of the cause, else False (Unknown when it cannot be told)."""
    comp = case.compose()
    have = conditions(comp)

    assert comp.status["status"] == case.headline
    assert have["Progressing"] == case.progressing
    assert have["Failure"] == case.failure
    assert have["Degraded"] == case.degraded
    true = [t for t in ("Failure", "Degraded", "Progressing") if have[t][0] == "True"]
    assert case.says in message(comp, true[0] if true else "Progressing")


# --- the cluster's cap on discovery Jobs running at once --------------------------------------

JOB_LABELS = {
    "app.kubernetes.io/name": "aim-discovery",
    "app.kubernetes.io/component": "discovery",
    "app.kubernetes.io/managed-by": "aim-crossplane",
}


def queued(
    name: str,
    *,
    created: datetime,
    reason: str | None = None,
    kind: str = "AIMServiceTemplate",
    **spec: Any,
) -> Any:
    """Another template as Crossplane lists it: its age and the Discovered reason it last gave."""
    status = None
    if reason is not None:
        status = {"conditions": [{"type": "Discovered", "status": "False", "reason": reason}]}
    xr = template(kind, status, **spec)
    xr["metadata"] = {**xr["metadata"], "name": name, "uid": f"uid-{name}"}
    xr["metadata"]["creationTimestamp"] = created.isoformat()
    return xr


def discovery_job(
    name: str,
    namespace: str = "team-a",
    *,
    state: str = "running",
    owner: Any = None,
    **labels: str,
) -> Any:
    """A discovery Job somewhere in the cluster, running or finished; `owner` composed it."""
    statuses: dict[str, Any] = {
        "running": {"active": 1},
        "complete": {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]},
        "failed": {"failed": 1, "conditions": [{"type": "Failed", "status": "True"}]},
    }
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "labels": {**JOB_LABELS, **labels},
    }
    if owner is not None:
        meta["ownerReferences"] = [controlled_by(owner)]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "status": statuses[state]}


def controlled_by(xr: Any) -> dict[str, Any]:
    """The controller reference Crossplane gives what `xr` composes."""
    meta = xr["metadata"]
    return {"apiVersion": API, "kind": xr["kind"], "name": meta["name"], "uid": meta["uid"],
            "controller": True, "blockOwnerDeletion": True}  # fmt: skip


def discovering(name: str, namespace: str = "team-a", *, claims: bool = False) -> Any:
    """A template whose discovery Job runs (it holds a slot by its Job, not in the queue); with
    `claims`, the claim's composite, which is what composes in that flavour."""
    kind = "AIMClusterServiceTemplate" if namespace == SYSTEM_NS else "AIMServiceTemplate"
    xr = queued(name, created=T0 - timedelta(hours=1), reason="DiscoveryRunning", kind=kind)
    if kind == "AIMServiceTemplate" and claims:
        xr["kind"] = "XAIMServiceTemplate"
        xr["metadata"]["name"] = f"{name}-x7k2p"
        xr["metadata"]["labels"] = {
            "crossplane.io/claim-name": name,
            "crossplane.io/claim-namespace": namespace,
        }
        del xr["metadata"]["namespace"]
    elif kind == "AIMServiceTemplate":
        xr["metadata"]["namespace"] = namespace
    return xr


def running_jobs(count: int, namespace: str = "team-a", *, claims: bool = False) -> list[Any]:
    """`count` templates in `namespace` (cluster ones in the system namespace) and their Jobs."""
    found = []
    for i in range(count):
        owner = discovering(f"running-{namespace}-{i}", namespace, claims=claims)
        found += [owner, discovery_job(f"discover-other-{namespace}-{i}", namespace, owner=owner)]
    return found


def labelled_jobs(count: int, namespace: str = "team-b", owner: Any = None) -> list[Any]:
    """Jobs a tenant made with the three discovery labels (and `owner`'s reference, if any)."""
    return [discovery_job(f"fake-{i}", namespace, owner=owner) for i in range(count)]


def cap(limit: int) -> Any:
    """The platform team's cluster runtime config setting the cap."""
    return {
        "apiVersion": API,
        "kind": "AIMClusterRuntimeConfig",
        "metadata": {"name": "default"},
        "spec": {"maxConcurrentDiscoveryJobs": limit},
    }


ME_CREATED = T0 - timedelta(minutes=2)
A_CACHE = {**discovering("c", "team-b"), "kind": "AIMModelCache"}


@dataclass(frozen=True)
class SlotCase(Case):
    world: list[Any]
    starts: bool


SLOT_CASES = [
    SlotCase("free-slot", "9 of 10 run: the 10th starts", running_jobs(9), starts=True),
    SlotCase(
        "cap-reached", "10 of 10 run: the operator's default cap", running_jobs(10), starts=False
    ),
    SlotCase(
        "every-namespace-counts",
        "the cap is the cluster's: Jobs of every namespace and of cluster templates count",
        [*running_jobs(4, "team-a"), *running_jobs(3, "team-b"), *running_jobs(3, "aim-system")],
        starts=False,
    ),
    SlotCase(
        "complete-frees",
        "a Job that finished no longer holds a slot",
        [*running_jobs(9), discovery_job("discover-done", state="complete")],
        starts=True,
    ),
    SlotCase(
        "failed-frees",
        "a failed Job kept for inspection during its backoff holds no slot",
        [*running_jobs(9), discovery_job("discover-broken", state="failed")],
        starts=True,
    ),
    SlotCase(
        "foreign-jobs",
        "Jobs without our discovery labels (another operator's, a user's) are not counted",
        [
            discovery_job(f"other-{i}", **{"app.kubernetes.io/managed-by": "aim-controller"})
            for i in range(10)
        ],
        starts=True,
    ),
    SlotCase(
        "tenant-labelled-jobs",
        "a tenant's Jobs with the three discovery labels, no template's, take no slot (issue 46)",
        labelled_jobs(10),
        starts=True,
    ),
    SlotCase(
        "owner-not-listed",
        "a controller reference to a template that is not listed (made up, or deleted) counts not",
        labelled_jobs(10, owner=discovering("gone", "team-b") | {"kind": "AIMServiceTemplate"}),
        starts=True,
    ),
    SlotCase(
        "owner-in-another-namespace",
        "a Job in team-b claiming team-a's template: a template composes into its own namespace",
        [discovering("theirs", "team-a"), *labelled_jobs(10, "team-b", discovering("theirs"))],
        starts=True,
    ),
    SlotCase(
        "cluster-owner-outside-system-namespace",
        "a cluster template composes into the system namespace only, not a tenant's",
        [
            discovering("shared", SYSTEM_NS),
            *labelled_jobs(10, "team-b", discovering("shared", SYSTEM_NS)),
        ],
        starts=True,
    ),
    SlotCase(
        "one-job-per-template",
        "ten Jobs naming one listed template are one slot at most",
        [
            discovering("mine", "team-b"),
            *labelled_jobs(10, "team-b", discovering("mine", "team-b")),
            *running_jobs(8),
        ],
        starts=True,
    ),
    SlotCase(
        "not-a-template",
        "a Job controlled by another of our kinds (a model cache's) is no discovery",
        [A_CACHE, *labelled_jobs(10, "team-b", A_CACHE)],
        starts=True,
    ),
    SlotCase(
        "cluster-config-cap",
        "the AIMClusterRuntimeConfig sets the cap: 2 of 2 run",
        [cap(2), *running_jobs(2)],
        starts=False,
    ),
    SlotCase(
        "cluster-config-raises-cap",
        "a higher cap lets the 11th start",
        [cap(20), *running_jobs(10)],
        starts=True,
    ),
    SlotCase(
        "older-waiting-goes-first",
        "the last free slot goes to the template that has waited longest, not to both",
        [
            *running_jobs(9),
            queued(
                "older", created=ME_CREATED - timedelta(seconds=1), reason="DiscoveryCapReached"
            ),
        ],
        starts=False,
    ),
    SlotCase(
        "older-cluster-template-goes-first",
        "cluster templates queue with namespaced ones",
        [
            *running_jobs(9),
            queued(
                "older",
                kind="AIMClusterServiceTemplate",
                created=ME_CREATED - timedelta(seconds=1),
                reason="DiscoveryCapReached",
            ),
        ],
        starts=False,
    ),
    SlotCase(
        "just-started-holds-its-slot",
        "a template that was given a slot holds it until its Job shows up in the list",
        [*running_jobs(9), queued("older", created=ME_CREATED, reason="DiscoveryJobCreated")],
        starts=False,
    ),
    SlotCase(
        "newer-waits-behind",
        "a template queued after this one does not hold it back",
        [*running_jobs(9), queued("newer", created=T0, reason="DiscoveryCapReached")],
        starts=True,
    ),
    SlotCase(
        "new-template-queues",
        "a template just created has no status yet; it may be about to take a slot",
        [*running_jobs(9), queued("fresh", created=ME_CREATED - timedelta(seconds=1))],
        starts=False,
    ),
    SlotCase(
        "silent-template-stops-queueing",
        "a template that never reported discovery in 5 minutes (its spec refused) holds nothing",
        [*running_jobs(9), queued("silent", created=T0 - timedelta(minutes=10))],
        starts=True,
    ),
    SlotCase(
        "waiting-for-else-not-queued",
        "a template waiting for its model or GPU does not hold a slot",
        [
            *running_jobs(9),
            queued(
                "blocked",
                created=ME_CREATED - timedelta(minutes=1),
                reason="WaitingForDependencies",
            ),
        ],
        starts=True,
    ),
    SlotCase(
        "inline-sources-not-queued",
        "a new template with inline model sources never discovers",
        [
            *running_jobs(9),
            queued(
                "inline",
                created=ME_CREATED - timedelta(seconds=1),
                modelSources=[{"modelId": "org/m", "sourceUri": "hf://org/m"}],
            ),
        ],
        starts=True,
    ),
]


@table(SLOT_CASES)
def test_a_template_starts_discovery_only_in_a_free_slot(case: SlotCase) -> None:
    """At most maxConcurrentDiscoveryJobs discovery Jobs run in the cluster; the rest wait."""
    me = queued("tpl", created=ME_CREATED)
    comp = compose(me, [*WORLD, me, *case.world])

    assert (DISCOVERY_JOB in comp.resources) is case.starts, case.reason
    if not case.starts:
        assert conditions(comp)["Discovered"] == ("False", "DiscoveryCapReached"), case.reason
        assert comp.status["status"] == "Pending"
        # Called again after --waiting-recheck, or (Crossplane 2.4) when a listed Job changes.
        assert comp.ttl_seconds is None


def test_twenty_two_templates_arriving_together_start_ten_jobs() -> None:
    """The issue's burst: 22 models' templates at once start the cap's 10 Jobs, oldest first,
    and the other 12 say what they wait for."""
    burst = [queued(f"tpl-{i:02}", created=T0 - timedelta(seconds=i // 5)) for i in range(22)]
    pool = [*WORLD, *burst]

    comps = {xr["metadata"]["name"]: compose(xr, pool) for xr in burst}

    started = sorted(name for name, comp in comps.items() if DISCOVERY_JOB in comp.resources)
    oldest_first = sorted(
        burst, key=lambda t: (t["metadata"]["creationTimestamp"], t["metadata"]["name"])
    )
    assert started == sorted(t["metadata"]["name"] for t in oldest_first[:10])
    waiting = [comp for name, comp in comps.items() if name not in started]
    assert len(waiting) == 12
    for comp in waiting:
        assert conditions(comp)["Discovered"] == ("False", "DiscoveryCapReached")
    last = comps[oldest_first[-1]["metadata"]["name"]]
    assert message(last, "Discovered").startswith(
        "waiting for a discovery slot: 0 of at most 10 discovery Jobs run in the cluster"
    )
    assert "21 template(s) queued ahead of this one" in message(last, "Discovered")


def test_a_finished_job_frees_a_slot_for_the_next_in_line() -> None:
    """A waiting template starts once a running Job finishes."""
    me = queued("tpl", created=ME_CREATED)
    jobs = running_jobs(10)
    waiting = compose(me, [*WORLD, me, *jobs])
    assert DISCOVERY_JOB not in waiting.resources
    assert "10 of at most 10" in message(waiting, "Discovered")

    me = step(me, waiting)
    jobs[3] = discovery_job(jobs[3]["metadata"]["name"], state="complete")
    comp = compose(me, [*WORLD, me, *jobs])

    assert DISCOVERY_JOB in comp.resources
    assert conditions(comp)["Discovered"] == ("False", "DiscoveryJobCreated")


def test_a_job_that_exists_is_kept_whatever_the_count() -> None:
    """Gate, then never tear down: a running discovery is not stopped by the cap (lowered, or
    overrun by a race)."""
    xr, job = started()
    comp = compose(
        xr, [*WORLD, cap(2), *running_jobs(15)], resources={DISCOVERY_JOB: job_state(job, active=1)}
    )

    assert job_of(comp)["metadata"]["name"] == job["metadata"]["name"]
    assert conditions(comp)["Discovered"] == ("False", "DiscoveryRunning")


def test_discovery_jobs_are_counted_cluster_wide_by_their_labels() -> None:
    """The Jobs are asked for in every namespace by the labels every discovery Job carries (its
    own included), so Crossplane's RBAC must let it list Jobs cluster-wide (package/rbac)."""
    comp = compose(template())

    asked = next(r for r in comp.requirements if r.kind == "Job")
    assert asked.namespace is None
    assert dict(asked.match_labels or {}) == JOB_LABELS
    labels = job_of(comp)["metadata"]["labels"]
    assert JOB_LABELS.items() <= labels.items()


def test_claims_flavour_templates_queue_by_their_composites() -> None:
    """With claims, Crossplane copies the function's conditions to the composite only, so the
    queue is read from the XAIMServiceTemplate composites (seen as the claims they stand for)."""
    older = queued("older", created=T0 - timedelta(minutes=10), reason="DiscoveryCapReached")
    composite = {
        **older,
        "kind": "XAIMServiceTemplate",
        "metadata": {
            **older["metadata"],
            "name": "older-x7k2p",
            "labels": {"crossplane.io/claim-name": "older", "crossplane.io/claim-namespace": NS},
        },
    }
    del composite["metadata"]["namespace"]
    claim = {**older, "status": {}}  # no Discovered condition: the claim would not count
    me = queued("tpl", created=ME_CREATED)
    pool = [*WORLD, *running_jobs(9, claims=True), composite, claim]

    comp = compose(me, pool, claims=True)

    assert DISCOVERY_JOB not in comp.resources
    assert "1 template(s) queued ahead" in message(comp, "Discovered")
    asked = next(r for r in comp.requirements if r.name == "discovery-queue-templates")
    assert asked.kind == "XAIMServiceTemplate"


def test_a_status_an_earlier_version_wrote_with_scope_merged_is_still_read() -> None:
    """Earlier versions recorded a runtime config found in both scopes as `Merged`. Such a
    status must still be read after an upgrade, as the namespace's: it carries the discovery
    result, which would otherwise be forgotten and discovery run again."""
    xr = template(
        "AIMServiceTemplate",
        {
            "status": "Available",
            "resolvedRuntimeConfig": {"name": "default", "namespace": NS, "scope": "Merged"},
            "modelSources": [{"modelId": "org/m", "sourceUri": "hf://org/m", "size": "16Gi"}],
        },
    )
    status = parse_status(xr, TemplateStatus)
    assert status is not None
    assert status.resolved_runtime_config is not None
    assert status.resolved_runtime_config.scope == "Namespace"
    assert [s.source_uri for s in status.model_sources or ()] == ["hf://org/m"]
