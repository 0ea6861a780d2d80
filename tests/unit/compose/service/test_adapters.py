"""LoRA adapters of a service: the checks, the disk and staging Job, when the server starts, and
what dynamic mode never changes. Job and Pod status are written by hand (no Job controller or
kubelet runs in unit tests); each reconcile is fed the status the one before wrote, as Crossplane
does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from function.compose.service import INFERENCE_SERVICE, compose_service
from function.compose.service.adapters import DISK, JOB_PREFIX
from function.kube.contract import Composition, Observed
from tests import simulated
from tests.cases import Case, table
from tests.unit import loop

API = "aim.silogen.ai/v1alpha1"
NS = "ml-team"
BASE = "Qwen/Qwen3-32B"


def world(*caches: Any) -> list[Any]:
    """A Ready image model whose labels name BASE, an Available template, and `caches`."""
    model = {
        "apiVersion": API,
        "kind": "AIMClusterModel",
        "metadata": {"name": "qwen3"},
        "spec": {"image": "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"},
        "status": {"status": "Ready", "imageMetadata": {"model": {"canonicalName": BASE}}},
    }
    template = {
        "apiVersion": API,
        "kind": "AIMClusterServiceTemplate",
        "metadata": {"name": "tpl"},
        "spec": {"modelName": "qwen3", "hardware": {"gpu": {"requests": 1, "model": "MI300X"}}},
        "status": {"status": "Available"},
    }
    return [model, template, *caches]


def adapter(name: str, status: str = "Available", **spec: Any) -> Any:
    """An adapter's cache, as its download leaves it."""
    body = {"sourceUri": f"hf://acme/{name}", "type": "adapter", "compatibleWith": [BASE], **spec}
    return {
        "apiVersion": API,
        "kind": "AIMModelCache",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": body,
        "status": {"status": status, "persistentVolumeClaim": f"{name}-cache"},
    }


def service(*adapters: str, mode: str | None = None, **spec: Any) -> Any:
    body: dict[str, Any] = {"model": {"ref": "qwen3"}, "template": {"name": "tpl"}, **spec}
    if adapters:
        body["adapters"] = [{"name": a} for a in adapters]
    if mode:
        body["adapterMode"] = mode
    return {
        "apiVersion": API,
        "kind": "AIMService",
        "metadata": {"name": "chat", "namespace": NS, "uid": "u1"},
        "spec": body,
    }


def conditions(comp: Composition) -> dict[str, tuple[str, str]]:
    return {c.type: (c.status.value, c.reason) for c in comp.conditions}


def status(comp: Composition) -> Any:
    return comp.status


def isvc_of(comp: Composition) -> Any:
    return comp.resources[INFERENCE_SERVICE].manifest


def message(comp: Composition, kind: str) -> str:
    return next(c.message for c in comp.conditions if c.type == kind)


@dataclass
class Cluster:
    """What Crossplane and the cluster hold between reconciles: the XR's status, the composed
    objects (with the status a Job controller and kubelet would give them) and the pool."""

    xr: Any
    pool: list[Any]
    resources: dict[str, Any] = field(default_factory=dict)

    def reconcile(self) -> Composition:
        observed = Observed(self.xr, resources=dict(self.resources))
        comp = loop.reconcile(compose_service, observed, self.pool)
        self.xr = {**self.xr, "status": status(comp)}
        previous = self.resources
        self.resources = {}
        for key, desired in comp.resources.items():
            manifest = json.loads(json.dumps(desired.manifest))
            if key in previous and "status" in previous[key]:
                manifest["status"] = previous[key]["status"]
            self.resources[key] = manifest
        return comp

    def job(self) -> tuple[str, Any]:
        [(key, job)] = [(k, v) for k, v in self.resources.items() if k.startswith(JOB_PREFIX)]
        return key, job

    def finish_job(self, verdict: dict[str, Any] | str | None = None) -> None:
        """The Job succeeds; its pod's termination message is `verdict`."""
        _, job = self.job()
        job["status"] = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
        said = verdict if isinstance(verdict, str) else json.dumps(verdict or ok(0))
        self.pool.append(job_pod(job, "Succeeded", said))


def job_pod(job: Any, phase: str, message: str) -> Any:
    """The Job's pod as the Job controller labels it and the kubelet leaves it."""
    pod = simulated.discovery_pod(job, phase, message=message)
    pod["metadata"]["labels"].update(job["spec"]["template"]["metadata"]["labels"])
    pod["status"]["containerStatuses"][0]["name"] = "stage"
    return pod


def job_env(job: Any) -> dict[str, Any]:
    """The staging container's variables, the adapter list decoded."""
    [container] = job["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    return {**env, "AIM_ADAPTERS": json.loads(env["AIM_ADAPTERS"])}


def ok(staged: int) -> dict[str, Any]:
    return {"staged": staged, "removed": 0, "failed": {}}


def test_a_static_service_starts_once_its_adapters_are_staged_and_serves_them_from_the_disk() -> (
    None
):
    """First the disk and a Job staging both adapters, no InferenceService; once the Job is
    done, the server starts with the disk's `live/` read-only at /adapters and the runtime's
    variables, the rank cap the highest declared rank rounded up; the finished Job is dropped
    and nothing is staged again."""
    cluster = Cluster(service("tone", "legal"), world(adapter("tone"), adapter("legal", rank=64)))

    comp = cluster.reconcile()
    assert INFERENCE_SERVICE not in comp.resources
    assert conditions(comp)["AdaptersReady"] == ("False", "AdaptersStaging")
    disk = cluster.resources[DISK]
    assert disk["spec"]["accessModes"] == ["ReadWriteMany"]
    assert disk["spec"]["resources"]["requests"]["storage"] == "10Gi"
    _, job = cluster.job()
    pod = job["spec"]["template"]["spec"]
    mounts = {
        m["mountPath"]: m.get("readOnly", False) for m in pod["containers"][0]["volumeMounts"]
    }
    assert mounts == {"/adapter-disk": False, "/sources/tone": True, "/sources/legal": True}
    claims = {v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]}
    assert claims == {disk["metadata"]["name"], "tone-cache", "legal-cache"}
    assert [a["name"] for a in job_env(job)["AIM_ADAPTERS"]] == ["tone", "legal"]
    assert job_env(job)["AIM_ADAPTER_MAX_RANK"] == "64"

    cluster.finish_job(ok(2))
    comp = cluster.reconcile()
    isvc = isvc_of(comp)
    container = isvc["spec"]["predictor"]["containers"][0]
    assert {
        "name": "adapters",
        "mountPath": "/adapters",
        "readOnly": True,
        "subPath": "live",
    } in container["volumeMounts"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["AIM_ADAPTER_SOURCE"] == "/adapters"
    assert env["AIM_ADAPTER_MODE"] == "static"
    assert env["AIM_ADAPTER_MAX_RANK"] == "64"
    assert conditions(comp)["AdaptersReady"] == ("True", "AdaptersStaged")
    assert [(a["name"], a["state"]) for a in status(comp)["adapters"]] == [
        ("tone", "Staged"),
        ("legal", "Staged"),
    ]
    assert status(comp)["adapterMaxRank"] == 64

    comp = cluster.reconcile()
    assert not [k for k in comp.resources if k.startswith(JOB_PREFIX)]  # done: dropped
    assert INFERENCE_SERVICE in comp.resources
    assert status(comp)["adapters"][0]["state"] == "Staged"


@dataclass(frozen=True)
class Refusal(Case):
    caches: tuple[Any, ...]
    state: str
    condition_reason: str
    says: str
    headline: str


REFUSALS = [
    Refusal(
        "missing",
        "an adapter not created yet is waited for, not an error: it may be on its way",
        (),
        "Pending",
        "AdapterNotFound",
        "spec.adapters[0]: no AIMModelCache 'tone' in this namespace",
        "Pending",
    ),
    Refusal(
        "not-an-adapter",
        "a model's weights named as an adapter would load garbage into the server",
        ({**adapter("tone"), "spec": {"sourceUri": "hf://acme/tone"}},),
        "Failed",
        "NotAnAdapter",
        "holds a model's weights (spec.type: model), not an adapter",
        "Failed",
    ),
    Refusal(
        "incompatible",
        "an adapter trained on another base model would serve nonsense",
        (adapter("tone", compatibleWith=["meta-llama/Llama-3.1-8B"]),),
        "Failed",
        "AdapterIncompatible",
        "fits meta-llama/Llama-3.1-8B (its spec.compatibleWith), not Qwen/Qwen3-32B",
        "Failed",
    ),
    Refusal(
        "downloading",
        "an adapter still downloading is waited for",
        (adapter("tone", status="Progressing"),),
        "Pending",
        "AdapterNotReady",
        "adapter 'tone' is Progressing",
        "Pending",
    ),
]


@table(REFUSALS)
def test_an_adapter_the_service_cannot_serve_yet_or_at_all_says_why(case: Refusal) -> None:
    """Nothing is staged and the server does not start; the adapter's status and the condition
    name the field and the fix; a wrong adapter fails the service, a missing one waits."""
    comp = Cluster(service("tone"), world(*case.caches)).reconcile()
    assert INFERENCE_SERVICE not in comp.resources
    assert not [k for k in comp.resources if k.startswith(JOB_PREFIX)]
    [adapter_status] = status(comp)["adapters"]
    assert adapter_status["state"] == case.state
    assert case.says in adapter_status["message"]
    assert conditions(comp)["AdaptersReady"] == ("False", case.condition_reason)
    assert case.says in message(comp, "AdaptersReady")
    assert status(comp)["status"] == case.headline


def test_an_adapter_whose_files_the_job_refused_fails_a_static_service_naming_why() -> None:
    """Staging found a rank in the files above what the cache declares: the service fails with
    the Job's words, the server never starts, and the refusal stays once the Job is gone."""
    cluster = Cluster(service("tone"), world(adapter("tone", rank=8)))
    cluster.reconcile()
    why = "its rank r is 32, over the rank 8 its cache declares (spec.rank)"
    cluster.finish_job({"staged": 0, "removed": 0, "failed": {"tone": why}})
    comp = cluster.reconcile()
    assert INFERENCE_SERVICE not in comp.resources
    assert conditions(comp)["AdaptersReady"] == ("False", "AdapterRejected")
    assert why in message(comp, "AdaptersReady")
    assert status(comp)["status"] == "Failed"
    comp = cluster.reconcile()
    assert status(comp)["adapters"][0]["state"] == "Failed"
    assert INFERENCE_SERVICE not in comp.resources


def test_a_verdict_that_cannot_be_read_is_not_taken_for_success() -> None:
    """A termination message that is not the script's JSON (a truncated line, another program's
    output): the adapters are not called staged, and the fix is named."""
    cluster = Cluster(service("tone"), world(adapter("tone")))
    cluster.reconcile()
    cluster.finish_job('{"staged": 1, "fail')
    comp = cluster.reconcile()
    assert INFERENCE_SERVICE not in comp.resources
    assert status(comp)["adapters"][0]["state"] == "Failed"
    assert "delete the service's adapter Job" in status(comp)["adapters"][0]["message"]


def test_a_failed_staging_job_fails_the_service_with_its_log() -> None:
    """The Job ran out of attempts (a disk it cannot write): its last words, and how to retry."""
    cluster = Cluster(service("tone"), world(adapter("tone")))
    cluster.reconcile()
    _, job = cluster.job()
    job["status"] = {"failed": 3, "conditions": [{"type": "Failed", "status": "True"}]}
    cluster.pool.append(job_pod(job, "Failed", "the adapter disk: Read-only file system"))
    comp = cluster.reconcile()
    assert conditions(comp)["AdaptersReady"] == ("False", "AdapterStagingFailed")
    assert "Read-only file system" in message(comp, "AdaptersReady")
    assert INFERENCE_SERVICE not in comp.resources


def test_a_dynamic_service_gains_and_loses_adapters_without_touching_its_inference_service() -> (
    None
):
    """Dynamic mode: the server starts once the disk is prepared (with no adapter yet); adding
    an adapter stages it with a new Job, removing it stages the smaller set, and the
    InferenceService's manifest is the same throughout, so its pods never restart."""
    cluster = Cluster(service(mode="dynamic"), world(adapter("tone")))
    comp = cluster.reconcile()
    assert INFERENCE_SERVICE not in comp.resources
    cluster.finish_job(ok(0))
    comp = cluster.reconcile()
    isvc = isvc_of(comp)
    headline = status(comp)["status"]
    assert conditions(comp)["AdaptersReady"] == ("True", "AdaptersStaged")
    env = {e["name"]: e.get("value") for e in isvc["spec"]["predictor"]["containers"][0]["env"]}
    assert (env["AIM_ADAPTER_MODE"], env["AIM_ADAPTER_MAX_RANK"]) == ("dynamic", "32")

    cluster.xr = {**cluster.xr, "spec": {**cluster.xr["spec"], "adapters": [{"name": "tone"}]}}
    comp = cluster.reconcile()
    assert isvc_of(comp) == isvc
    assert status(comp)["status"] == headline  # it serves while the adapter is staged
    assert conditions(comp)["AdaptersReady"] == ("False", "AdaptersStaging")
    _, job = cluster.job()
    assert [a["name"] for a in job_env(job)["AIM_ADAPTERS"]] == ["tone"]
    cluster.finish_job(ok(1))
    comp = cluster.reconcile()
    assert isvc_of(comp) == isvc
    assert status(comp)["adapters"] == [{"name": "tone", "state": "Staged"}]

    cluster.xr = {**cluster.xr, "spec": {**cluster.xr["spec"], "adapters": []}}
    comp = cluster.reconcile()
    _, job = cluster.job()
    assert job_env(job)["AIM_ADAPTERS"] == []
    assert isvc_of(comp) == isvc


def test_a_dynamic_service_stages_the_next_set_only_after_the_running_job() -> None:
    """Two Jobs writing one disk could swap the same adapter at once: while one runs, the next
    set waits, and the running Job is kept as it is."""
    cluster = Cluster(service(mode="dynamic"), world(adapter("tone"), adapter("legal")))
    cluster.reconcile()
    first, _ = cluster.job()
    cluster.xr = {**cluster.xr, "spec": {**cluster.xr["spec"], "adapters": [{"name": "tone"}]}}
    comp = cluster.reconcile()
    assert [k for k in comp.resources if k.startswith(JOB_PREFIX)] == [first]
    assert "once the staging under way ends" in message(comp, "AdaptersReady")


def test_a_set_changed_back_while_its_successor_stages_is_staged_again() -> None:
    """Found on a real node: the empty set staged, `tone` added (its Job starts), then removed
    again before that Job was seen to finish. The wanted set is the one recorded, but the disk
    is the running Job's: the Job is kept to its end, and then the wanted set is staged again,
    not taken as already there (the server kept serving `tone`)."""
    cluster = Cluster(service(mode="dynamic"), world(adapter("tone")))
    cluster.reconcile()
    cluster.finish_job(ok(0))
    cluster.reconcile()
    empty = status(cluster.reconcile())["adaptersStaged"]
    assert not [k for k in cluster.resources if k.startswith(JOB_PREFIX)]  # done: dropped

    cluster.xr = {**cluster.xr, "spec": {**cluster.xr["spec"], "adapters": [{"name": "tone"}]}}
    cluster.reconcile()
    adding, _ = cluster.job()
    cluster.xr = {**cluster.xr, "spec": {**cluster.xr["spec"], "adapters": []}}
    comp = cluster.reconcile()
    assert [k for k in comp.resources if k.startswith(JOB_PREFIX)] == [adding], (
        "the Job under way is kept, not deleted halfway"
    )
    assert conditions(comp)["AdaptersReady"] == ("False", "AdaptersStaging")

    cluster.finish_job(ok(1))
    comp = cluster.reconcile()
    again, job = cluster.job()
    assert again != adding
    assert job_env(job)["AIM_ADAPTERS"] == [], "the empty set, staged again over tone"
    cluster.finish_job({"staged": 0, "removed": 1, "failed": {}})
    comp = cluster.reconcile()
    assert status(comp)["adaptersStaged"] == empty
    assert conditions(comp)["AdaptersReady"] == ("True", "AdaptersStaged")


def test_a_dynamic_service_leaves_out_an_adapter_over_its_rank_cap_and_serves_the_rest() -> None:
    """Dynamic mode caps ranks (default 32): an adapter above is refused before staging and the
    service is Degraded, naming the cap; the other adapter is staged."""
    caches = world(adapter("tone"), adapter("big", rank=64))
    cluster = Cluster(service("tone", "big", mode="dynamic"), caches)
    comp = cluster.reconcile()
    _, job = cluster.job()
    assert [a["name"] for a in job_env(job)["AIM_ADAPTERS"]] == ["tone"]
    cluster.finish_job(ok(1))
    comp = cluster.reconcile()
    assert INFERENCE_SERVICE in comp.resources
    assert conditions(comp)["AdaptersReady"] == ("False", "AdapterRankTooHigh")
    assert "over spec.adapterRuntime.maxRank 32" in message(comp, "AdaptersReady")
    assert status(comp)["status"] == "Degraded"


def test_a_service_without_adapters_composes_nothing_for_them() -> None:
    """No adapters, static mode (the default): no disk, no Job, no condition, no status."""
    comp = Cluster(service(), world()).reconcile()
    assert DISK not in comp.resources
    assert "AdaptersReady" not in conditions(comp)
    assert "adapters" not in status(comp)


def test_the_verdict_is_read_from_the_pods_of_the_job_of_the_set_not_an_older_jobs() -> None:
    """An older staging Job on its way out (deleted but not gone, its pod saying it refused the
    adapter) beside the new Job: the new Job's pod decides, whatever order the Jobs come in."""
    cluster = Cluster(service(mode="dynamic"), world(adapter("tone")))
    cluster.reconcile()
    old_key, old = cluster.job()
    cluster.finish_job(ok(0))
    cluster.reconcile()
    cluster.xr = {**cluster.xr, "spec": {**cluster.xr["spec"], "adapters": [{"name": "tone"}]}}
    cluster.reconcile()
    cluster.finish_job(ok(1))
    refused = {"staged": 0, "removed": 0, "failed": {"tone": "an old verdict"}}
    stale = {**old, "metadata": {**old["metadata"], "name": "zzz-old"}}
    cluster.pool.insert(0, job_pod(stale, "Succeeded", json.dumps(refused)))
    done = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
    cluster.resources["adapter-job-zzzzzzzz"] = {**stale, "status": done}
    comp = cluster.reconcile()
    assert status(comp)["adapters"] == [{"name": "tone", "state": "Staged"}], old_key


def test_a_template_of_several_models_refuses_adapters_naming_them() -> None:
    """Adapters fit one base model: on a template that serves several model sources the service
    fails naming them, and nothing is composed for the adapters."""
    caches = world(adapter("tone"))
    caches[1]["spec"]["modelSources"] = [
        {"modelId": BASE, "sourceUri": f"hf://{BASE}"},
        {"modelId": "Org/Draft", "sourceUri": "hf://Org/Draft"},
    ]
    comp = Cluster(service("tone"), caches).reconcile()
    assert conditions(comp)["AdaptersReady"] == ("False", "AdapterIncompatible")
    assert f"several model sources ({BASE}, Org/Draft)" in message(comp, "AdaptersReady")
    assert status(comp)["status"] == "Failed"
    assert DISK not in comp.resources


def test_staging_that_waits_on_an_unbound_disk_says_it_needs_read_write_many() -> None:
    """The adapter disk exists but stays Pending (no ReadWriteMany class can provide it): the
    condition says so while staging waits, rather than only "staging"."""
    cluster = Cluster(service("tone"), world(adapter("tone")))
    cluster.reconcile()
    cluster.resources[DISK]["status"] = {"phase": "Pending"}
    comp = cluster.reconcile()
    assert conditions(comp)["AdaptersReady"] == ("False", "AdaptersStaging")
    assert "is Pending; it needs a ReadWriteMany storage class" in message(comp, "AdaptersReady")


def test_a_static_service_whose_adapter_cache_went_is_degraded_not_pending() -> None:
    """After the server started with its adapters, one's cache is deleted: the service serves
    on with what it loaded, Degraded and naming the adapter, its InferenceService kept."""
    cluster = Cluster(service("tone"), world(adapter("tone")))
    cluster.reconcile()
    cluster.finish_job(ok(1))
    running = cluster.reconcile()
    isvc = isvc_of(running)
    cluster.pool = [o for o in cluster.pool if o["kind"] != "AIMModelCache"]
    comp = cluster.reconcile()
    assert status(comp)["status"] == "Degraded"
    assert conditions(comp)["AdaptersReady"] == ("False", "AdapterNotFound")
    assert "the server keeps the adapters it started with" in message(comp, "AdaptersReady")
    assert isvc_of(comp) == isvc
