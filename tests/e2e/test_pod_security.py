"""The pods function-aim composes pass the Kubernetes `restricted` Pod Security level.

The team namespace carries the enforce, warn and audit labels for `restricted`. Pod Security
checks a Job's Pod template when the Job is written (warn and audit) and each Pod when the Job
controller creates it (enforce). Its findings for a write land in the API server's audit log as
the annotation pod-security.kubernetes.io/audit-violations, which is what these tests read.
"""

from __future__ import annotations

from typing import Any, Final

import pytest

from devtools.cluster.controlplane import CROSSPLANE_USER
from devtools.cluster.converge import ISVC, one
from devtools.cluster.kube import KubeError, wait_for
from devtools.cluster.platform import Platform, aim
from devtools.cluster.simulate import simulate_gpu_node

VIOLATIONS: Final = "pod-security.kubernetes.io/audit-violations"


def job_writes(platform: Platform, namespace: str, user: str) -> list[dict[str, Any]]:
    """Audit events of Job writes in a namespace by a user."""
    return [
        e
        for e in platform.cluster.audit_events()
        if e.get("objectRef", {}).get("resource") == "jobs"
        and e["objectRef"].get("namespace") == namespace
        and e.get("user", {}).get("username") == user
        and e.get("stage") == "ResponseComplete"
    ]


def test_composed_jobs_raise_no_pod_security_findings(platform: Platform) -> None:
    """A discovery Job and a model download Job, written by Crossplane: no findings, and the
    Pods the real Job controller makes from them are admitted under `enforce`.

    Simulated: a GPU node (for the template to reach discovery).
    """
    kube = platform.kube
    simulate_gpu_node(kube, "gpu-node-psa")
    ns = platform.team_namespace("team-psa")
    kube.apply(
        aim(
            "AIMModel",
            "m",
            ns,
            {"image": "amdenterpriseai/aim-qwen3:0.8.5", "discovery": {"enabled": False}},
        )
    )
    kube.apply(
        aim(
            "AIMServiceTemplate",
            "t",
            ns,
            {"modelName": "m", "hardware": {"gpu": {"requests": 1, "model": "MI300X"}}},
        )
    )
    kube.apply(
        aim(
            "AIMModelCache",
            "weights",
            ns,
            {"sourceUri": "hf://Qwen/Qwen3-32B", "size": "61Gi"},
        )
    )

    def two_jobs_with_pods() -> list[dict[str, Any]] | None:
        jobs = kube.list("batch/v1", "Job", ns)
        pods = kube.list("v1", "Pod", ns)
        return jobs if len(jobs) == 2 and len(pods) == 2 else None

    jobs = wait_for(
        "a discovery and a download Job, each with its Pod",
        two_jobs_with_pods,
        timeout_s=120,
        explain=platform.diagnose,
    )
    names = {j["metadata"]["name"] for j in jobs}

    def writes_of_both() -> list[dict[str, Any]] | None:
        writes = job_writes(platform, ns, CROSSPLANE_USER)
        return writes if {e["objectRef"]["name"] for e in writes} >= names else None

    writes = wait_for("the audit events of Crossplane's Job writes", writes_of_both)
    findings = {
        e["objectRef"]["name"]: e["annotations"][VIOLATIONS]
        for e in writes
        if VIOLATIONS in e.get("annotations", {})
    }
    assert findings == {}


def test_a_privileged_job_is_caught(platform: Platform) -> None:
    """The check above can fail: a Job that breaks `restricted` is reported, to its writer as a
    warning and in the audit log as a finding. Simulated: nothing."""
    kube = platform.kube
    ns = platform.team_namespace("team-psa-control")
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "privileged", "namespace": ns},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "c", "image": "busybox", "securityContext": {"privileged": True}}
                    ],
                }
            }
        },
    }
    response = kube.create(job)
    assert any("privileged" in w for w in response.warnings), response.warnings
    writes = wait_for(
        "the audit event of the privileged Job",
        lambda: job_writes(platform, ns, "aim-e2e-admin") or None,
    )
    assert "privileged" in writes[0]["annotations"][VIOLATIONS]


def predictor_pod(isvc: dict[str, Any], name: str) -> dict[str, Any]:
    """The Pod KServe's raw deployment makes from an InferenceService's predictor: the predictor
    is a PodSpec plus KServe's own fields (replicas), which the Pod leaves out."""
    spec = {
        k: v
        for k, v in isvc["spec"]["predictor"].items()
        if k not in {"minReplicas", "maxReplicas"}
    }
    meta = {"name": name, "namespace": isvc["metadata"]["namespace"]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def test_the_inference_pod_is_admitted_where_restricted_is_enforced(platform: Platform) -> None:
    """A service's InferenceService, composed by the function from a namespace's catalog: the
    Pod its predictor becomes is admitted by the API server's own Pod Security admission in a
    namespace that enforces `restricted` (a server-side dry run, as KServe cannot run here), and
    the same Pod without our security context is refused, so the check can fail.

    Simulated: a GPU node (for the template to be Available); KServe (not run: the Pod is made
    from the predictor as KServe's raw deployment makes it).
    """
    kube = platform.kube
    simulate_gpu_node(kube, "gpu-node-psa-isvc")
    ns = platform.team_namespace("team-psa-isvc")
    source = {"modelId": "org/small", "sourceUri": "hf://org/small", "size": "1Gi"}
    base = {"image": "amdenterpriseai/aim-base:0.9", "discovery": {"enabled": False}}  # no labels
    kube.apply(aim("AIMModel", "m", ns, base))
    kube.apply(
        aim(
            "AIMServiceTemplate",
            "t",
            ns,
            {
                "modelName": "m",
                "modelSources": [source],
                "hardware": {"gpu": {"requests": 1, "models": ["MI300X"]}},
            },
        )
    )
    kube.apply(aim("AIMService", "chat", ns, {"model": {"ref": "m"}, "template": {"name": "t"}}))
    isvc = one(platform, ISVC, "InferenceService", ns)

    pod = predictor_pod(isvc, "predictor")
    response = kube.create(pod, dry_run=True)
    assert response.warnings == ()

    bare = predictor_pod(isvc, "bare")
    del bare["spec"]["securityContext"]
    for container in bare["spec"]["containers"]:
        del container["securityContext"]
    with pytest.raises(KubeError, match="violates PodSecurity"):
        kube.create(bare, dry_run=True)
