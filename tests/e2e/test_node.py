"""A real node: the kubelet, containerd and runc run pods the control plane schedules.

Each test is a thing our composed workloads rely on: an image loaded without a
registry runs as a Pod, a Service reaches it through kube-proxy, a Job's termination message
reaches the Pod's status, a namespace enforcing the `restricted` Pod Security level admits and
runs a hardened pod; a template's discovery Job, exactly as the composer writes it, runs a
test AIM image's dry-run and the composer reads the real result; and a model cache's claim is
bound by the real volume binder and its download Job fills the volume.
"""

from __future__ import annotations

import base64
import dataclasses
import ipaddress
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import grpc
import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from devtools.cluster import oci
from devtools.cluster.aimimage import (
    ENTRYPOINT,
    STORAGE_INITIALIZER_ENTRYPOINT,
    storage_initializer_image,
    stub_image,
)
from devtools.cluster.controlplane import SERVICE_RANGE, ControlPlane
from devtools.cluster.kube import Credentials, Kube, KubeError, wait_for
from devtools.cluster.node import NODE_NAME, Node, node_local_volume
from devtools.cluster.oci import File, write_archive
from devtools.cluster.registry import PASSWORD, USER, Registry
from devtools.cluster.timing import TIMES
from devtools.pkg.image import Image
from devtools.tools import ROOT, Tools
from function.api.cache import DEFAULT_DOWNLOAD_IMAGE
from function.api.meta import Manifest
from function.compose.cache import compose_model_cache
from function.compose.cache.steps import DOWNLOAD_JOB, PVC, REPORT, SIZE_CHECK_JOB
from function.compose.service import INFERENCE_SERVICE, compose_service
from function.compose.service.adapters import DISK as ADAPTER_DISK
from function.compose.service.adapters import JOB_PREFIX as ADAPTER_JOB_PREFIX
from function.compose.template import DISCOVERY_JOB, compose_template
from function.kube.contract import Composition, Observed
from function.settings import Settings
from tests.cases import Case, table
from tests.e2e.hubmirror import ADAPTER_FILES, FILES, TOKEN, hugging_face_mirror
from tests.e2e.journey import docker_config
from tests.e2e.nodeplane import AIM_IMAGE, NS, node_cluster
from tests.unit import loop

RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
}


@pytest.fixture(scope="module")
def cluster(
    tools: Tools,
    runtime_image: Image,
    private_registry: Registry,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ControlPlane, Node]]:
    """A control plane with one real node, the function's runtime image loaded on it."""
    root = tmp_path_factory.mktemp("node")
    with node_cluster(tools, runtime_image, root, registries=[private_registry.host]) as cluster:
        yield cluster


def function_image(image: Image) -> str:
    """The name containerd gives the runtime image's docker-archive."""
    return f"docker.io/library/function-aim:{image.tag}"


def container(image: Image, **extra: Any) -> dict[str, Any]:
    """A container of the function's image that passes `restricted`."""
    return {
        "name": "main",
        "image": function_image(image),
        "imagePullPolicy": "Never",
        "securityContext": RESTRICTED,
        **extra,
    }


def pod_status(kube: Kube, name: str) -> dict[str, Any]:
    """The Pod's status (empty while it does not exist)."""
    status: dict[str, Any] = (kube.get("v1", "Pod", name, NS) or {}).get("status", {})
    return status


def test_a_pod_runs_on_the_node_and_a_service_reaches_it(
    cluster: tuple[ControlPlane, Node], runtime_image: Image
) -> None:
    """The function's image, loaded without a registry, runs as a Pod under `restricted`, turns
    Ready by its gRPC probe, and answers RunFunction through a ClusterIP Service."""
    plane, _ = cluster
    kube = plane.admin
    args = ["--insecure", "--address=:9443", "--health-address=:8081", "--workers=1"]
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "function", "namespace": NS, "labels": {"app": "function"}},
            "spec": {
                "automountServiceAccountToken": False,
                "containers": [
                    container(
                        runtime_image,
                        args=args,
                        ports=[{"containerPort": 9443}],
                        readinessProbe={"grpc": {"port": 8081}, "periodSeconds": 1},
                    )
                ],
            },
        }
    )
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "function", "namespace": NS},
            "spec": {"selector": {"app": "function"}, "ports": [{"port": 9443}]},
        }
    )

    def ready() -> bool:
        conditions = pod_status(kube, "function").get("conditions", [])
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    wait_for(
        "the function's Pod Ready",
        ready,
        timeout_s=120,
        explain=lambda: str(pod_status(kube, "function")),
    )
    status = pod_status(kube, "function")
    assert kube.get("v1", "Pod", "function", NS)["spec"]["nodeName"] == NODE_NAME  # type: ignore[index]
    assert status["podIP"].startswith("10.244.0.")

    cluster_ip = kube.get("v1", "Service", "function", NS)["spec"]["clusterIP"]  # type: ignore[index]
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.update(
        {
            "apiVersion": "aim.silogen.ai/v1alpha1",
            "kind": "AIMRuntimeConfig",
            "metadata": {"name": "d", "namespace": NS},
            "spec": {},
        }
    )

    def answered() -> fnv1.RunFunctionResponse | None:
        try:
            with grpc.insecure_channel(f"{cluster_ip}:9443") as channel:
                stub = grpcv1.FunctionRunnerServiceStub(channel)  # type: ignore[no-untyped-call]
                rsp: fnv1.RunFunctionResponse = stub.RunFunction(req, timeout=5)
                return rsp
        except grpc.RpcError:
            return None

    rsp = wait_for("RunFunction through the Service", answered, timeout_s=30)
    assert not rsp.results


def test_a_cluster_ip_kube_proxy_does_not_translate_refuses_the_connection(
    cluster: tuple[ControlPlane, Node],
) -> None:
    """A host process that dials an address of the Service range that kube-proxy has no rule
    for (a Service it has not synced yet; here one that does not exist) has its connection
    refused, and retries as a client in a cluster would. Without the node's rule the dial
    would leave by the host's default route, where this machine's egress proxy answers port 80
    with a 404 of its own that a proxy (the KEDA HTTP add-on's interceptor) relays as the
    server's answer."""
    plane, _ = cluster
    taken = {s["spec"].get("clusterIP") for s in plane.admin.list("v1", "Service")}
    free = next(
        str(ip)
        for ip in reversed(list(ipaddress.ip_network(SERVICE_RANGE).hosts()))
        if str(ip) not in taken
    )
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((free, 80), timeout=10).close()


def test_a_jobs_termination_message_reaches_the_pod_status(
    cluster: tuple[ControlPlane, Node], runtime_image: Image
) -> None:
    """Discovery's result travels in the termination message: a container that writes it and
    exits leaves it in `state.terminated.message`, and the Job completes."""
    plane, node = cluster
    kube = plane.admin
    script = "open('/dev/termination-log', 'w').write('{\"profile\": \"ok\"}'); print('done')"
    kube.apply(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "writes-result", "namespace": NS},
            "spec": {
                "backoffLimit": 0,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "automountServiceAccountToken": False,
                        "containers": [container(runtime_image, command=["python3", "-c", script])],
                    }
                },
            },
        }
    )

    def finished_pod() -> dict[str, Any] | None:
        pods = kube.list("v1", "Pod", NS, labels={"job-name": "writes-result"})
        done = [p for p in pods if p.get("status", {}).get("phase") in {"Succeeded", "Failed"}]
        return done[0] if done else None

    pod = wait_for("the Job's Pod finished", finished_pod, timeout_s=120)
    assert pod["status"]["phase"] == "Succeeded"
    [state] = pod["status"]["containerStatuses"]
    assert state["state"]["terminated"]["message"] == '{"profile": "ok"}'
    assert node.pod_log(NS, pod["metadata"]["name"], "main") == "done\n"

    def complete() -> bool:
        job = kube.get("batch/v1", "Job", "writes-result", NS) or {}
        return any(
            c["type"] == "Complete" and c["status"] == "True"
            for c in job.get("status", {}).get("conditions", [])
        )

    wait_for("the Job Complete", complete, timeout_s=30)


def test_a_pod_that_breaks_restricted_is_refused(
    cluster: tuple[ControlPlane, Node], runtime_image: Image
) -> None:
    """The node's namespaces enforce `restricted` as the team namespaces do: a pod without the
    hardened security context never reaches the kubelet."""
    plane, _ = cluster

    with pytest.raises(KubeError) as refused:
        plane.admin.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "plain", "namespace": NS},
                "spec": {"containers": [{"name": "main", "image": function_image(runtime_image)}]},
            }
        )
    assert refused.value.status == 403
    assert "violates PodSecurity" in str(refused.value)


PULL_SECRET = "registry-credentials"  # noqa: S105 - a Secret's name


@pytest.fixture(scope="module")
def private_aim_image(
    cluster: tuple[ControlPlane, Node], private_registry: Registry, tools: Tools, aim_images: Path
) -> str:
    """The test AIM image in the registry with basic auth, and a pull secret for it in `NS`."""
    plane, node = cluster
    archive = node.root / "images" / "private-aim.tar"
    archive.parent.mkdir(parents=True, exist_ok=True)
    write_archive(stub_image(tools, AIM_IMAGE, aim_images), archive)
    image = private_registry.push_archive(archive, "aim/stub", "1")
    plane.admin.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": PULL_SECRET, "namespace": NS},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": docker_config(private_registry.host, USER, PASSWORD)},
        }
    )
    plane.admin.apply(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": NODE_NAME, "labels": {"amd.com/gpu.device-id": "74a1"}},
        }
    )
    return image


def discovery(
    kube: Kube, image: str, name: str, pull_secrets: list[str], env: dict[str, str] | None = None
) -> tuple[Manifest, Manifest, Composition, str]:
    """A model of `image` and a template of it (with `env`), and its discovery Job, created."""
    api = "aim.silogen.ai/v1alpha1"
    model: Manifest = {
        "apiVersion": api,
        "kind": "AIMModel",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": {"image": image, "imagePullSecrets": [{"name": s} for s in pull_secrets]},
        "status": {"status": "Progressing", "imageEntrypoint": list(ENTRYPOINT)},
    }
    template: Manifest = {
        "apiVersion": api,
        "kind": "AIMServiceTemplate",
        "metadata": {"name": f"{name}-latency", "namespace": NS, "uid": f"uid-{name}-tpl"},
        "spec": {
            "modelName": name,
            "metric": "latency",
            "precision": "fp8",
            "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
            **({"env": [{"name": k, "value": v} for k, v in env.items()]} if env else {}),
        },
    }
    real_node = kube.get("v1", "Node", NODE_NAME)
    assert real_node is not None
    started = loop.reconcile(compose_template, Observed(template), [model, real_node])
    job = started.resources[DISCOVERY_JOB].manifest
    kube.create(job)
    return model, template, started, str(job["metadata"]["name"])  # type: ignore[call-overload,index]


def job_pods(kube: Kube, job: str) -> list[dict[str, Any]]:
    """A Job's pods, with the kind a list's items lack (Crossplane's required resources have it)."""
    listed = kube.list("v1", "Pod", NS, labels={"job-name": job})
    return [{"apiVersion": "v1", "kind": "Pod", **p} for p in listed]


@dataclass(frozen=True)
class SchemaCase(Case):
    schema: str


SCHEMA_CASES = [
    SchemaCase("gpu-schema", "AIM images up to 0.10: metadata.gpu and gpu_count", "gpu"),
    SchemaCase(
        "accelerator-schema",
        "newer AIM images: accelerator_* metadata, and only AIM_ACCELERATOR_* read",
        "accelerator",
    ),
]


@table(SCHEMA_CASES)
def test_a_discovery_job_runs_the_aim_image_and_the_template_reads_its_result(
    cluster: tuple[ControlPlane, Node], private_aim_image: str, case: SchemaCase
) -> None:
    """The template composer's discovery Job, applied as composed, passes `restricted`, pulls the
    model's image from a registry with basic auth by the model's pull secret, runs its
    `dry-run --format=json` through the discovery wrapper on a real kubelet, and the composer
    turns the Pod's real termination message into the template's profile and sources, the same
    whichever schema the image prints (the stand-in prints the one `AIM_STUB_SCHEMA` names).

    Simulated: the node's GPU (its AMD GPU operator label; no GPU is used by discovery)."""
    plane, _ = cluster
    kube = plane.admin
    schema = case.schema
    model, template, started, name = discovery(
        kube, private_aim_image, f"small-{schema}", [PULL_SECRET], {"AIM_STUB_SCHEMA": schema}
    )

    def finished() -> list[dict[str, Any]] | None:
        pods = job_pods(kube, name)
        phases = {p.get("status", {}).get("phase") for p in pods}
        return pods if pods and phases <= {"Succeeded", "Failed"} else None

    pods = wait_for(
        "the discovery Pod finished",
        finished,
        timeout_s=120,
        explain=lambda: str([p.get("status") for p in job_pods(kube, name)]),
    )
    assert pods[0]["spec"]["imagePullSecrets"] == [{"name": PULL_SECRET}]
    # The image printed the schema asked for (so the composer read that one, not the other).
    [terminated] = [
        c["state"].get("terminated", {}) for c in pods[0]["status"]["containerStatuses"]
    ]
    printed = json.loads(terminated.get("message", "null"))[0]["profile"]["metadata"]
    assert ("accelerator_model" in printed, "gpu" in printed) == (
        schema == "accelerator",
        schema == "gpu",
    ), (case.reason, printed)
    observed_job = wait_for(
        "the Job's status",
        lambda: (
            (kube.get("batch/v1", "Job", name, NS) or {}).get("status", {}).get("succeeded")
            and kube.get("batch/v1", "Job", name, NS)
        ),
        timeout_s=30,
    )
    real_node = kube.get("v1", "Node", NODE_NAME) or {}
    done = loop.reconcile(
        compose_template,
        Observed({**template, "status": started.status}, resources={DISCOVERY_JOB: observed_job}),
        [model, real_node, *pods],
    )

    assert done.status["status"] == "Available", done.conditions
    profile = done.status["resolvedProfile"]
    assert isinstance(profile, dict)
    assert (profile["type"], profile["gpuCount"]) == ("optimized", 1)
    found = done.status["profile"]
    assert isinstance(found, dict)
    assert found["metadata"] == {
        "engine": "vllm",
        "gpu": "MI300X",
        "gpu_count": 1,
        "metric": "latency",
        "precision": "fp8",
        "type": "optimized",
    }
    assert done.status["modelSources"] == [
        {
            "name": "Org/Small",
            "modelId": "Org/Small",
            "sourceUri": "hf://Org/Small",
            "size": "512Mi",
        }
    ]


def test_a_discovery_pod_the_registry_refuses_says_so_in_the_template(
    cluster: tuple[ControlPlane, Node], private_aim_image: str
) -> None:
    """A model without the pull secret its registry wants: the real kubelet cannot pull the
    discovery image, and the composer turns the pod's waiting reason, in the kubelet's and the
    registry's own words, into the template's failed discovery."""
    plane, _ = cluster
    kube = plane.admin
    model, template, started, name = discovery(kube, private_aim_image, "unpullable", [])

    def stuck() -> list[dict[str, Any]] | None:
        pods = job_pods(kube, name)
        reasons = {
            (c.get("state") or {}).get("waiting", {}).get("reason")
            for p in pods
            for c in p.get("status", {}).get("containerStatuses") or []
        }
        return pods if reasons & {"ErrImagePull", "ImagePullBackOff"} else None

    pods = wait_for(
        "the kubelet giving up on the image",
        stuck,
        timeout_s=120,
        explain=lambda: str([p.get("status") for p in job_pods(kube, name)]),
    )
    observed_job = kube.get("batch/v1", "Job", name, NS) or {}
    real_node = kube.get("v1", "Node", NODE_NAME) or {}
    refused = loop.reconcile(
        compose_template,
        Observed({**template, "status": started.status}, resources={DISCOVERY_JOB: observed_job}),
        [model, real_node, *pods],
    )

    # Failure repeats the failing condition's reason; the words are read off Discovered.
    [discovered] = [
        c
        for c in refused.conditions
        if c.type == "Discovered" and c.reason == "DiscoveryImagePullFailed"
    ]
    assert ("True", "DiscoveryImagePullFailed") in {
        (c.status.value, c.reason) for c in refused.conditions if c.type == "Failure"
    }
    assert name in discovered.message
    assert private_aim_image in discovered.message
    assert "401 Unauthorized" in discovered.message  # the registry's answer, via the kubelet


STORAGE_INITIALIZER = "aim.local/storage-initializer:1"
"""The model download image of the caches here, and of their size checks."""
SNOOPING_STORAGE_INITIALIZER = "aim.local/storage-initializer-snooping:1"
# Run first in the snooping download image's download container: it tries what a hostile download
# image would, opening the service-account token through every other process's root directory
# (the pod shares its process namespace), says what it found in its termination message, then
# downloads as usual.
SNOOP = """
import json, os, sys
token = "var/run/secrets/kubernetes.io/serviceaccount/token"
found = {}
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    try:
        cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        continue
    if b"AIM_PROGRESS_DIR" not in cmdline:
        continue
    try:
        open(f"/proc/{pid}/root/{token}").read()
        found[pid] = "read"
    except OSError as e:
        found[pid] = type(e).__name__
with open("/dev/termination-log", "w") as log:
    json.dump(found, log)
os.execv(sys.argv[1], sys.argv[1:])
"""
HUB_TOKEN = "hf-token"  # noqa: S105 - the Secret's name
HF_TOKEN: dict[str, Any] = {
    "name": "HF_TOKEN",
    "valueFrom": {"secretKeyRef": {"name": HUB_TOKEN, "key": "token"}},
}


@pytest.fixture(scope="module")
def hub_token(cluster: tuple[ControlPlane, Node]) -> dict[str, Any]:
    """The Secret with the mirror's token, in `NS`; the cache's variable that gives it."""
    plane, _ = cluster
    plane.admin.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": HUB_TOKEN, "namespace": NS},
            "data": {"token": base64.b64encode(TOKEN.encode()).decode()},
        }
    )
    return HF_TOKEN


@pytest.fixture(scope="module")
def storage_initializer(cluster: tuple[ControlPlane, Node], aim_images: Path) -> str:
    """`STORAGE_INITIALIZER`, loaded on the node."""
    _, node = cluster
    node.load(storage_initializer_image(STORAGE_INITIALIZER, aim_images))
    return STORAGE_INITIALIZER


def model_cache(
    name: str,
    image: str,
    endpoint: str,
    repo: str = "Org/Small",
    env: tuple[dict[str, Any], ...] = (),
    **spec: str,
) -> Manifest:
    """An AIMModelCache of `hf://<repo>` downloaded or measured by `image` from `endpoint`,
    with `env` besides `HF_ENDPOINT`."""
    return {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMModelCache",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": {
            "sourceUri": f"hf://{repo}",
            "modelId": repo,
            "storageClassName": "node-local",
            "modelDownloadImage": image,
            "env": [{"name": "HF_ENDPOINT", "value": endpoint}, *env],
            **spec,
        },
    }


def snooping_storage_initializer(work: Path) -> oci.Image:
    """The storage initializer with `SNOOP` run before its entrypoint."""
    plain = storage_initializer_image(SNOOPING_STORAGE_INITIALIZER, work)
    return dataclasses.replace(
        plain,
        files={**plain.files, "/usr/local/bin/snoop.py": File(SNOOP.encode(), 0o755)},
        entrypoint=("python3", "/usr/local/bin/snoop.py", *STORAGE_INITIALIZER_ENTRYPOINT),
    )


def volume_bytes(root: Path) -> int:
    """The bytes of the files under `root`, links not followed, as the progress sidecar counts."""
    return sum(
        (Path(d) / f).lstat().st_size
        for d, _, files in os.walk(root)
        for f in files
        if (Path(d) / f).is_file() and not (Path(d) / f).is_symlink()
    )


def install_download_progress_role(kube: Kube) -> None:
    """package/rbac's ClusterRole the report's binding names, as a platform applies it."""
    kube.apply(yaml.safe_load((ROOT / "package" / "rbac" / "download-progress.yaml").read_text()))


def create_composed(
    kube: Kube, cache: Manifest, settings: Settings | None = None
) -> tuple[Composition, dict[str, dict[str, Any]]]:
    """Compose `cache` and create what it composed, as Crossplane would, until nothing new comes
    (the size, the claim, then the download); the last composition and the manifests."""
    made: dict[str, dict[str, Any]] = {}
    while True:
        observed = Observed(cache, resources=made, settings=settings or Settings())
        composed = loop.reconcile(compose_model_cache, observed, [])
        new = {k: dict(d.manifest) for k, d in composed.resources.items() if k not in made}
        if not new:
            return composed, made
        for key, manifest in new.items():
            kube.create(manifest)
            made[key] = manifest


def wait_job_finished(kube: Kube, job: str, timeout_s: float = 120) -> dict[str, Any]:
    """The Job once Complete or Failed."""

    def finished() -> dict[str, Any] | None:
        observed = kube.get("batch/v1", "Job", job, NS) or {}
        conditions = observed.get("status", {}).get("conditions", [])
        done = any(
            c["type"] in {"Complete", "Failed"} and c["status"] == "True" for c in conditions
        )
        return observed if done else None

    return wait_for(
        f"Job {job} to finish",
        finished,
        timeout_s=timeout_s,
        explain=lambda: str(kube.list("v1", "Pod", NS, labels={"job-name": job})),
    )


def test_a_model_cache_downloads_into_a_volume_the_binder_bound_and_reports_its_bytes(
    cluster: tuple[ControlPlane, Node],
    aim_images: Path,
    hub_token: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The cache composer's PVC is bound by the real volume binder to a node-local volume, its
    download Job runs a storage initializer built as KServe's is (kserve-storage, with
    huggingface_hub) on a private repository of a Hugging Face mirror, with the token the cache's
    env takes from a Secret; the files land in the volume, and the composer reads the finished
    Job and the bound claim as an Available cache. The download's sidecar reported the bytes
    into the cache's ConfigMap through the `kubernetes` Service with the token the kubelet
    projected for the download's own account, bound to package/rbac's ClusterRole; that token
    can do nothing beyond the namespace's ConfigMaps, and the download container, which tried to
    open it through the sidecar's root directory, was refused by the kernel.

    Simulated: the Hub (a mirror on the node's address); the storage initializer runs a script
    that tries to steal the token before its entrypoint."""
    plane, node = cluster
    kube = plane.admin
    node.load(snooping_storage_initializer(aim_images))
    install_download_progress_role(kube)
    volume = tmp_path_factory.mktemp("volume")
    node_local_volume(kube, "node-local", volume, "node-local")
    with hugging_face_mirror(node.ip) as endpoint:
        cache = model_cache(
            "org-small", SNOOPING_STORAGE_INITIALIZER, endpoint, env=(hub_token,), size="1Gi"
        )
        composed, made = create_composed(kube, cache)
        claim_name = str(made[PVC]["metadata"]["name"])
        job_name = str(made[DOWNLOAD_JOB]["metadata"]["name"])
        observed_job = wait_job_finished(kube, job_name)
    pods = job_pods(kube, job_name)
    observed_claim = kube.get("v1", "PersistentVolumeClaim", claim_name, NS) or {}

    assert observed_claim["status"]["phase"] == "Bound"
    assert observed_claim["spec"]["volumeName"] == "node-local"
    report_name = str(made[REPORT]["metadata"]["name"])
    report = kube.get("v1", "ConfigMap", report_name, NS) or {}
    # Everything on the volume: the files, and huggingface_hub's own records of them
    # (.cache/huggingface), which a download into a directory leaves there.
    written = volume_bytes(volume)
    total = sum(len(data) for data in FILES.values())
    assert written > total
    assert report.get("data", {}).get("downloadedBytes") == str(written), report
    available = loop.reconcile(
        compose_model_cache,
        Observed(
            {**cache, "status": composed.status},
            resources={PVC: observed_claim, DOWNLOAD_JOB: observed_job},
        ),
        [report, *pods],
    )
    assert available.status["status"] == "Available", available.conditions
    assert {f: (volume / f).read_bytes() for f in FILES} == FILES
    # Read off the real Job controller's counts and the real sidecar's report.
    download: Any = available.status["download"]
    assert (download["attempt"], download["totalAttempts"]) == (1, 3)
    assert (download["downloadedBytes"], download["percent"]) == (written, 100)
    # The check ran after the download and held every file to the mirror's hashes.
    assert available.status["verification"] == {
        "method": "huggingface-sha256",
        "files": len(FILES),
        "bytes": total,
    }

    # The repository is private: the download had the Secret's token, passed as the cache gave it.
    download_container = next(
        c
        for c in made[DOWNLOAD_JOB]["spec"]["template"]["spec"]["initContainers"]
        if c["name"] == "download"
    )
    assert hub_token in download_container["env"]

    # The download container saw the reporter's process and could not open the token.
    [pod] = pods
    statuses = {c["name"]: c for c in pod["status"]["initContainerStatuses"]}
    snooped = json.loads(statuses["download"]["state"]["terminated"]["message"])
    assert list(snooped.values()) == ["PermissionError"], f"the reporter's token: {snooped}"

    # The account the report is written with can patch the namespace's ConfigMaps, nothing else:
    # not even read its own report.
    account = str(made["download-account"]["metadata"]["name"])
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    path = f"/api/v1/namespaces/{NS}/serviceaccounts/{account}/token"
    token = kube.request("POST", path, request).body["status"]["token"]
    reporter = Kube(Credentials(kube.credentials.server, kube.credentials.ca, token=token))
    mine = reporter.request(
        "PATCH",
        f"/api/v1/namespaces/{NS}/configmaps/{report_name}",
        {"data": {"updatedAt": "2026-01-01T00:00:00Z"}},
        content_type="application/merge-patch+json",
    )
    assert mine.body["data"]["updatedAt"] == "2026-01-01T00:00:00Z"
    for method, where in (
        ("PATCH", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt"),
        ("GET", f"/api/v1/namespaces/{NS}/configmaps"),
        ("GET", f"/api/v1/namespaces/{NS}/configmaps/{report_name}"),
        ("POST", f"/api/v1/namespaces/{NS}/configmaps"),
        ("GET", f"/api/v1/namespaces/{NS}/secrets"),
        ("PATCH", f"/api/v1/namespaces/{NS}/serviceaccounts/{account}"),
    ):
        body: dict[str, Any] | None = {"data": {}} if method in {"PATCH", "POST"} else None
        with pytest.raises(KubeError) as refused:
            reporter.request(method, where, body, content_type="application/merge-patch+json")
        assert refused.value.status == 403, (method, where)


def test_a_download_that_does_not_match_the_hub_s_hashes_fails_the_cache(
    cluster: tuple[ControlPlane, Node],
    storage_initializer: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A Hub whose weights are not what it lists (a proxy that corrupts them): the real check
    after each attempt finds the sha256 differs, the Job's attempts end, and the cache is Failed
    with ChecksumMismatch naming the file, not Available with corrupt weights.

    Simulated: the Hub (a mirror)."""
    plane, node = cluster
    kube = plane.admin
    node_local_volume(
        kube, "node-local-corrupt", tmp_path_factory.mktemp("corrupt-volume"), "node-local"
    )
    with hugging_face_mirror(node.ip) as endpoint:
        cache = model_cache(
            "org-corrupt", storage_initializer, endpoint, repo="Org/Corrupt", size="1Gi"
        )
        composed, made = create_composed(kube, cache)
        job_name = str(made[DOWNLOAD_JOB]["metadata"]["name"])
        observed_job = wait_job_finished(kube, job_name, timeout_s=180)
    verdict = loop.reconcile(
        compose_model_cache,
        Observed({**cache, "status": composed.status}, resources={DOWNLOAD_JOB: observed_job}),
        job_pods(kube, job_name),
    )
    [ready] = [c for c in verdict.conditions if c.type == "DownloadReady"]
    assert ready.reason == "ChecksumMismatch", ready
    assert "checksum mismatch: config.json" in ready.message  # the first file the Hub lists
    assert verdict.status["status"] == "Failed"


def test_a_download_that_stops_growing_is_stopped_and_the_cache_says_it_stalled(
    cluster: tuple[ControlPlane, Node],
    storage_initializer: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A Hub that stops sending halfway: the real sidecar sees the files stop growing, records
    it and stops the attempt; the Job's three attempts end the same way, and the composer says
    DownloadStalled with what the sidecar saw, instead of "downloading" for ever.

    Simulated: the Hub (a mirror that hangs)."""
    plane, node = cluster
    kube = plane.admin
    install_download_progress_role(kube)
    node_local_volume(
        kube, "node-local-stall", tmp_path_factory.mktemp("stall-volume"), "node-local"
    )
    settings = Settings(download_stall_s=4)
    with hugging_face_mirror(node.ip) as endpoint:
        cache = model_cache(
            "org-stall", storage_initializer, endpoint, repo="Org/Stall", size="1Gi"
        )
        composed, made = create_composed(kube, cache, settings)
        job_name = str(made[DOWNLOAD_JOB]["metadata"]["name"])
        observed_job = wait_job_finished(kube, job_name, timeout_s=180)
        report = kube.get("v1", "ConfigMap", str(made[REPORT]["metadata"]["name"]), NS) or {}

    assert observed_job["status"].get("failed") == 3, observed_job["status"]
    assert "no growth for 4s" in report.get("data", {}).get("stalled", ""), report
    verdict = loop.reconcile(
        compose_model_cache,
        Observed(
            {**cache, "status": composed.status},
            resources={DOWNLOAD_JOB: observed_job},
            settings=settings,
        ),
        [report],
    )
    [ready] = [c for c in verdict.conditions if c.type == "DownloadReady"]
    assert ready.reason == "DownloadStalled", ready
    assert "no growth for 4s" in ready.message
    assert verdict.status["status"] == "Failed"


def test_a_size_check_measures_the_source_on_a_real_pod(
    cluster: tuple[ControlPlane, Node], storage_initializer: str, hub_token: dict[str, Any]
) -> None:
    """A cache without a size: the cache composer's size-check Job runs `python3` with
    `huggingface_hub` in the storage initializer against a private repository of a Hugging Face
    mirror, with the token from the cache's Secret, under `restricted`, and the composer reads
    the real termination message as the measured size and asks for a claim.

    Simulated: the Hub (a mirror on the node's address)."""
    plane, node = cluster
    kube = plane.admin
    with hugging_face_mirror(node.ip) as endpoint:
        cache = model_cache("org-small-measured", storage_initializer, endpoint, env=(hub_token,))
        composed = loop.reconcile(compose_model_cache, Observed(cache), [])
        assert PVC not in composed.resources  # nothing to size it by yet
        job = composed.resources[SIZE_CHECK_JOB].manifest
        kube.create(job)
        job_name = str(job["metadata"]["name"])  # type: ignore[call-overload,index]

        def finished() -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
            observed_job = kube.get("batch/v1", "Job", job_name, NS) or {}
            conditions = observed_job.get("status", {}).get("conditions", [])
            if not any(
                c["type"] in {"Complete", "Failed"} and c["status"] == "True" for c in conditions
            ):
                return None
            listed = kube.list("v1", "Pod", NS, labels={"job-name": job_name})
            return observed_job, [{"apiVersion": "v1", "kind": "Pod", **p} for p in listed]

        observed_job, pods = wait_for(
            "the size check finished",
            finished,
            timeout_s=120,
            explain=lambda: str(kube.list("v1", "Pod", NS, labels={"job-name": job_name})),
        )

    measured = loop.reconcile(
        compose_model_cache,
        Observed({**cache, "status": composed.status}, resources={SIZE_CHECK_JOB: observed_job}),
        pods,
    )
    total = sum(len(data) for data in FILES.values())
    [known] = [c for c in measured.conditions if c.type == "SizeKnown"]
    assert (known.status.value, known.message) == ("True", f"hf://Org/Small: {total} (measured)")
    assert PVC in measured.resources


def test_a_download_image_the_registry_refuses_fails_the_cache_naming_it(
    cluster: tuple[ControlPlane, Node], private_registry: Registry
) -> None:
    """A cache whose download image is in a registry that wants credentials, with none given:
    the kubelet's pull of the size check's pod gets the registry's 401, and the cache is Failed
    with JobCannotStart naming the image and the pull secrets (none) rather than reading
    "measuring" forever."""
    plane, _ = cluster
    kube = plane.admin
    image = f"{private_registry.host}/org/downloader:1"
    cache = model_cache("org-small-locked", image, "http://unused.invalid")
    composed = loop.reconcile(compose_model_cache, Observed(cache), [])
    job = composed.resources[SIZE_CHECK_JOB].manifest
    kube.create(job)
    job_name = str(job["metadata"]["name"])  # type: ignore[call-overload,index]

    def refused() -> list[dict[str, Any]] | None:
        listed = kube.list("v1", "Pod", NS, labels={"job-name": job_name})
        waiting = [
            (s.get("state", {}).get("waiting") or {}).get("reason")
            for p in listed
            for s in p.get("status", {}).get("containerStatuses", [])
        ]
        if not {"ErrImagePull", "ImagePullBackOff"} & set(waiting):
            return None
        return [{"apiVersion": "v1", "kind": "Pod", **p} for p in listed]

    pods = wait_for("the kubelet's failed pull", refused, timeout_s=60)
    observed_job = kube.get("batch/v1", "Job", job_name, NS) or {}
    verdict = loop.reconcile(
        compose_model_cache,
        Observed({**cache, "status": composed.status}, resources={SIZE_CHECK_JOB: observed_job}),
        pods,
    )
    [known] = [c for c in verdict.conditions if c.type == "SizeKnown"]
    assert known.reason == "JobCannotStart", known
    assert f"cannot start {image}" in known.message
    assert "401 Unauthorized" in known.message
    assert "pull secrets in use: none" in known.message
    assert verdict.status["status"] == "Failed"


# --- a service's LoRA adapters, staged by the composed Job and read by a running pod -----------

LISTER = """
import os, sys, time
while True:
    seen = sorted(
        f"{name}:{','.join(sorted(os.listdir('/adapters/' + name)))}"
        for name in os.listdir("/adapters")
    )
    print("adapters " + (" ".join(seen) or "-"), flush=True)
    time.sleep(0.5)
"""


ADAPTER_CLASS: Final = "node-local-adapters"


def host_claim(kube: Kube, name: str, path: Path) -> None:
    """A volume on the node's disk at `path` for the claim `name` in `NS` (no provisioner)."""
    path.chmod(0o777)  # written by the Job's non-root user
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"{NS}-{name}"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteMany"],
                "storageClassName": ADAPTER_CLASS,
                "claimRef": {"namespace": NS, "name": name},
                "hostPath": {"path": str(path)},
            },
        }
    )


def adapter_world() -> list[dict[str, Any]]:
    """A Ready model whose labels name Org/Base, an Available template, the adapter `tone`
    whose cache is the claim `tone-cache`, and a runtime config whose storage class the
    service's adapter disk takes."""
    api = "aim.silogen.ai/v1alpha1"
    return [
        {
            "apiVersion": api,
            "kind": "AIMClusterRuntimeConfig",
            "metadata": {"name": "default"},
            "spec": {"defaultStorageClassName": ADAPTER_CLASS},
        },
        {
            "apiVersion": api,
            "kind": "AIMClusterModel",
            "metadata": {"name": "base"},
            "spec": {"image": "aim.local/base:1"},
            "status": {
                "status": "Ready",
                "imageMetadata": {"model": {"canonicalName": "Org/Base"}},
            },
        },
        {
            "apiVersion": api,
            "kind": "AIMClusterServiceTemplate",
            "metadata": {"name": "base-tpl"},
            "spec": {"modelName": "base", "hardware": {"gpu": {"requests": 1, "model": "MI300X"}}},
            "status": {"status": "Available"},
        },
        {
            "apiVersion": api,
            "kind": "AIMModelCache",
            "metadata": {"name": "tone", "namespace": NS, "uid": "uid-tone"},
            "spec": {
                "type": "adapter",
                "sourceUri": "hf://acme/tone",
                "compatibleWith": ["Org/Base"],
            },
            "status": {"status": "Available", "persistentVolumeClaim": "tone-cache"},
        },
    ]


def stage(
    kube: Kube, xr: dict[str, Any], made: dict[str, Any]
) -> tuple[dict[str, Any], Composition]:
    """Compose the service, create what is new as Crossplane would, run its staging Job on the
    node to the end, and compose again with what the Job left: the XR with that status."""
    comp = loop.reconcile(compose_service, Observed(xr, resources=made), adapter_world())
    for key, desired in comp.resources.items():
        if key not in made and key != INFERENCE_SERVICE:
            kube.create(dict(desired.manifest))
            made[key] = dict(desired.manifest)
    [job_key] = [k for k in comp.resources if k.startswith(ADAPTER_JOB_PREFIX)]
    t0 = time.monotonic()
    job = wait_job_finished(kube, made[job_key]["metadata"]["name"])
    wanted = len(xr["spec"].get("adapters") or [])
    TIMES[f"adapters: a staging Job of {wanted}, created to finished"] = time.monotonic() - t0
    made[job_key] = job  # as Crossplane observes it from now on
    pods = job_pods(kube, job["metadata"]["name"])
    xr = {**xr, "status": comp.status}
    comp = loop.reconcile(
        compose_service, Observed(xr, resources=dict(made)), [*adapter_world(), *pods]
    )
    return {**xr, "status": comp.status}, comp


def test_a_dynamic_services_adapters_are_staged_on_its_disk_and_a_running_pod_sees_them_come_and_go(
    cluster: tuple[ControlPlane, Node], aim_images: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The staging Job exactly as a dynamic service composes it runs the real script in a
    storage initializer built as KServe's is (the image the composer names, loaded on the
    node): it copies the adapter from its cache's volume onto the service's disk. A pod that
    mounts the disk as the composed InferenceService does (its `live/` read-only at
    /adapters, another user than the Job's) lists the adapter's files; when the service drops
    the adapter, the next Job removes it and the same pod, never restarted, sees it gone.

    Simulated: nothing on the node; the adapter's cache is filled by hand (its download is
    a model cache's, tested above), and KServe is played by the listing pod."""
    plane, node = cluster
    kube = plane.admin
    node.load(storage_initializer_image(f"docker.io/{DEFAULT_DOWNLOAD_IMAGE}", aim_images))
    source = tmp_path_factory.mktemp("adapter-source")
    for name, data in ADAPTER_FILES.items():
        (source / name).write_bytes(data)
    host_claim(kube, "tone-cache", source)
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "tone-cache", "namespace": NS},
            "spec": {
                "accessModes": ["ReadWriteMany"],
                "storageClassName": ADAPTER_CLASS,
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    )
    disk = tmp_path_factory.mktemp("adapter-disk")
    xr: dict[str, Any] = {
        "apiVersion": "aim.silogen.ai/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": "lora", "namespace": NS, "uid": "uid-lora"},
        "spec": {
            "model": {"ref": "base"},
            "template": {"name": "base-tpl"},
            "adapterMode": "dynamic",
            "adapters": [{"name": "tone"}],
            "adapterRuntime": {"diskSize": "1Gi"},  # the volume's size
        },
    }
    first = loop.reconcile(compose_service, Observed(xr), adapter_world())
    disk_claim: Any = first.resources[ADAPTER_DISK].manifest
    claim = str(disk_claim["metadata"]["name"])
    host_claim(kube, claim, disk)
    made: dict[str, Any] = {}

    xr, comp = stage(kube, xr, made)
    assert xr["status"]["adapters"] == [{"name": "tone", "state": "Staged"}]
    assert {f: (disk / "live" / "tone" / f).read_bytes() for f in ADAPTER_FILES} == ADAPTER_FILES
    isvc: Any = comp.resources[INFERENCE_SERVICE].manifest
    predictor = isvc["spec"]["predictor"]
    [mount] = [
        m for m in predictor["containers"][0]["volumeMounts"] if m["mountPath"] == "/adapters"
    ]
    [volume] = [v for v in predictor["volumes"] if v["name"] == mount["name"]]
    reader = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "adapter-reader", "namespace": NS},
        "spec": {
            "securityContext": {"runAsUser": 2000, "runAsGroup": 2000},
            "containers": [
                {
                    "name": "lister",
                    "image": f"docker.io/{DEFAULT_DOWNLOAD_IMAGE}",
                    "command": ["python3", "-c", LISTER],
                    "securityContext": RESTRICTED,
                    "volumeMounts": [mount],
                }
            ],
            "volumes": [volume],
        },
    }
    kube.apply(reader)

    def listed() -> str:
        lines = node.pod_log(NS, "adapter-reader", "lister").splitlines()
        return lines[-1] if lines else ""

    wait_for(
        "the pod to list tone's files",
        lambda: listed() == "adapters tone:adapter_config.json,adapter_model.safetensors",
        explain=listed,
    )
    uid = (kube.get("v1", "Pod", "adapter-reader", NS) or {})["metadata"]["uid"]

    staged = xr["status"]["adaptersStaged"]
    xr = {**xr, "spec": {**xr["spec"], "adapters": []}}
    xr, comp = stage(kube, xr, made)
    assert xr["status"].get("adapters") is None
    assert xr["status"]["adaptersStaged"] not in {None, staged}  # the empty set, staged
    wait_for("the pod to see tone gone", lambda: listed() == "adapters -", explain=listed)
    pod = kube.get("v1", "Pod", "adapter-reader", NS) or {}
    assert pod["metadata"]["uid"] == uid
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
    assert sorted(p.name for p in disk.iterdir()) == [".staged", ".staging", ".trash", "live"]
    assert [*(disk / ".staging").iterdir(), *(disk / ".trash").iterdir()] == []
    kube.delete("v1", "Pod", "adapter-reader", NS)
