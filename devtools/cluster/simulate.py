"""Stand-ins for the controllers that cannot run on these machines, one named helper each.

The control plane is real (etcd, kube-apiserver, kube-controller-manager with the Job and
garbage-collector controllers, Crossplane core); what is missing is everything that needs a node
or a vendor's controller. Each helper writes exactly what that controller would write and no
more, through the same API a controller uses (status subresources), so the function sees the
cluster as it would be with them. A test that calls one says so.

What each writes is built in `aim_plan/standins/`, one module per controller, the same objects
`aim plan` puts in its world; here they are only written, at the current time. Crossplane's
Function runtime (`simulate_package_runtime`) is the end-to-end tier's alone.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aim_plan.standins import gateway, kserve, kubelet, node, provisioner
from devtools.cluster.converge import ISVC, ROUTE
from devtools.cluster.kube import Kube, wait_for


def now() -> str:
    """The time a stand-in writes at: now, to the second, as the API server stamps its own."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def simulate_package_runtime(
    kube: Kube, function: str, endpoint: str, server_tls: Path, namespace: str
) -> str:
    """Crossplane's Function package runtime, which `--package-runtime=Function=External` skips.

    With the Deployment runtime Crossplane would run the package's image, keep its TLS server
    Secret (`<function>-tls-server` in Crossplane's namespace) and point the active
    FunctionRevision at its Service; here the function already runs on the host with the
    certificate in `server_tls` (tls.crt, tls.key, ca.crt), so that goes into the Secret, and
    the endpoint, the RuntimeHealthy condition and the Secrets' names into the revision's status.
    The revision controller waits for the server Secret before it reports the revision healthy.
    Returns the revision's name.
    """

    def active() -> str | None:
        for rev in kube.list(
            "pkg.crossplane.io/v1",
            "FunctionRevision",
            labels={"pkg.crossplane.io/package": function},
        ):
            if rev["spec"].get("desiredState") == "Active":
                return str(rev["metadata"]["name"])
        return None

    name = wait_for(f"an active FunctionRevision of {function}", active, timeout_s=120)
    # The names the package manager derives from the Function's (v1.GetSecretNameWithSuffix).
    server_secret, client_secret = f"{function}-tls-server", f"{function}-tls-client"
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": server_secret, "namespace": namespace},
            "type": "Opaque",
            "data": {
                key: base64.b64encode((server_tls / key).read_bytes()).decode()
                for key in ("tls.crt", "tls.key", "ca.crt")
            },
        }
    )
    rev = kube.get("pkg.crossplane.io/v1", "FunctionRevision", name) or {}
    conditions = [
        c for c in rev.get("status", {}).get("conditions", []) if c["type"] != "RuntimeHealthy"
    ]
    conditions.append(
        {
            "type": "RuntimeHealthy",
            "status": "True",
            "reason": "HealthyPackageRevision",
            "lastTransitionTime": now(),
        }
    )
    kube.patch_status(
        "pkg.crossplane.io/v1",
        "FunctionRevision",
        name,
        None,
        {
            "status": {
                "endpoint": endpoint,
                "conditions": conditions,
                "tlsServerSecretName": server_secret,
                "tlsClientSecretName": client_secret,
            }
        },
    )
    return name


def simulate_gpu_node(kube: Kube, name: str, gpus: int = 8) -> None:
    """An MI300X Node as the kubelet registers it and the AMD GPU operator labels it.

    No kubelet runs, so the Node object is only what the function reads: its GPU labels and
    allocatable `amd.com/gpu` (`aim_plan/standins/node.py`). The API server takes a Node's
    status only through its subresource, as the kubelet writes it.
    """
    gpu_node = node.gpu_node(name, "MI300X", gpus)
    kube.apply({k: v for k, v in gpu_node.items() if k != "status"})
    kube.patch_status("v1", "Node", name, None, {"status": gpu_node["status"]})


def simulate_kubelet_pod_succeeded(kube: Kube, pod: dict[str, Any], message: str = "") -> None:
    """The kubelet running a Job's Pod to completion: phase Succeeded, exit code 0.

    Its container terminates with `message` as the termination message (what the container wrote
    to /dev/termination-log). The real Job controller then counts the Pod and completes the Job.
    """
    simulate_kubelet_pod_exited(kube, pod, 0, message)


def simulate_kubelet_pod_exited(kube: Kube, pod: dict[str, Any], code: int, message: str) -> None:
    """The kubelet reporting a Pod whose containers exited with `code`: Succeeded for 0, or Failed.

    Each container terminates with `message` (its termination message, or for a failure under
    FallbackToLogsOnError the end of its log).
    """
    at, containers = now(), pod["spec"]["containers"]
    state = kubelet.exited(code, message, at)
    _pod_status(kube, pod, kubelet.pod_status(containers, kubelet.phase_after(code), state, at))


def simulate_kubelet_pod_waiting(
    kube: Kube, pod: dict[str, Any], reason: str, message: str
) -> None:
    """The kubelet unable to start a Pod's containers (ImagePullBackOff, say): Pending, waiting."""
    state = kubelet.waiting(reason, message)
    _pod_status(kube, pod, kubelet.pod_status(pod["spec"]["containers"], "Pending", state))


def _pod_status(kube: Kube, pod: dict[str, Any], status: dict[str, Any]) -> None:
    meta = pod["metadata"]
    kube.patch_status("v1", "Pod", meta["name"], meta["namespace"], {"status": status})


def simulate_job_pods_succeed(
    kube: Kube, namespace: str, job: str, result: dict[str, Any] | list[Any] | None = None
) -> None:
    """The kubelet completing every Pod the Job controller made for `job` (see above)."""
    pods = wait_for(
        f"the Job controller to create a Pod for Job {namespace}/{job}",
        lambda: kube.list("v1", "Pod", namespace, {"batch.kubernetes.io/job-name": job}) or None,
    )
    message = "" if result is None else json.dumps(result)
    for pod in pods:
        simulate_kubelet_pod_succeeded(kube, pod, message)


def simulate_pvc_bound(kube: Kube, namespace: str, name: str) -> None:
    """A storage provisioner binding a claim: phase Bound with the capacity it asked for."""
    pvc = kube.get("v1", "PersistentVolumeClaim", name, namespace) or {}
    status = provisioner.bound(pvc)
    kube.patch_status("v1", "PersistentVolumeClaim", name, namespace, {"status": status})


def simulate_kserve_ready(kube: Kube, namespace: str, name: str) -> None:
    """KServe's controller reporting an InferenceService serving: Ready with its URL."""
    status = kserve.ready(namespace, name, now())
    kube.patch_status(ISVC, "InferenceService", name, namespace, {"status": status})


def simulate_kserve_not_ready(kube: Kube, namespace: str, name: str, why: str) -> None:
    """KServe's controller reporting an InferenceService's predictor cannot start, and why."""
    status = kserve.not_ready(why)
    kube.patch_status(ISVC, "InferenceService", name, namespace, {"status": status})


def simulate_gateway_accepts(kube: Kube, namespace: str, name: str) -> None:
    """A Gateway API implementation accepting an HTTPRoute on each parent it names."""
    route = kube.get(ROUTE, "HTTPRoute", name, namespace) or {}
    status = gateway.accepted(route, now())
    kube.patch_status(ROUTE, "HTTPRoute", name, namespace, {"status": status})
