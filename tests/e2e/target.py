"""A cluster the tier did not make: reached by a kubeconfig and a registry both sides can reach.

The journey on a real node (`test_journey_node.py`) runs against any cluster with Crossplane and
KServe installed: `AIM_E2E_KUBECONFIG` names its kubeconfig, `AIM_E2E_REGISTRY` a plain-HTTP
registry as this host pushes to it, and `AIM_E2E_CLUSTER_REGISTRY` the same registry as the
cluster reaches it (its nodes' containerd, Crossplane and the function's pod; default: the
same address). docs/e2e.md has the steps for a kind cluster. Without them, the tier makes such
a cluster itself (`own_cluster`: a control plane with core, a node with a scheduler, KServe) and
then reaches it only as it would reach a user's: through a kubeconfig file and the registry's
addresses, by the same code.

On the cluster, `attach` installs the packages as a platform team would, replaces the `default`
DeploymentRuntimeConfig (the function's flags: the registry as a mirror of `ghcr.io`), and
advertises 8 fake `amd.com/gpu` and the MI300X device id label on one node, as AMD's GPU
operator would: a throwaway cluster, then.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from devtools.cluster.controlplane import CROSSPLANE_NAMESPACE, start_control_plane
from devtools.cluster.gateway import Gateway, start_traefik
from devtools.cluster.keda import start_keda
from devtools.cluster.kedahttp import KedaHttp, Timeouts, start_keda_http
from devtools.cluster.kserve import start_kserve
from devtools.cluster.kube import Kube, KubeError
from devtools.cluster.kubeconfig import credentials
from devtools.cluster.node import NODE_CONTROLLERS, Node, start_node
from devtools.cluster.platform import (
    E2E_RECHECKS,
    PUBLIC_REGISTRY,
    RUNTIME,
    apply_packages,
    function_args,
    install_third_party_crds,
    runtime_config,
    team_namespace,
    wait_installed,
)
from devtools.cluster.registry import Registry, start_registry
from devtools.pkg.image import Image
from devtools.pkg.publish import Published, publish
from devtools.tools import HarnessError, Tools

KUBECONFIG: Final = "AIM_E2E_KUBECONFIG"
REGISTRY: Final = "AIM_E2E_REGISTRY"
CLUSTER_REGISTRY: Final = "AIM_E2E_CLUSTER_REGISTRY"
GPU_NODE: Final = "AIM_E2E_GPU_NODE"
GPUS: Final = {"amd.com/gpu": "8"}
MI300X: Final = {"amd.com/gpu.device-id": "74a1"}
WAKE_TIMEOUTS: Final = Timeouts(condition_wait=120.0, response_header=60.0)
"""The interceptor's own bounds; an AIMService's HTTPScaledObject sets its own over them."""
REQUIRED_CRDS: Final = {
    "functions.pkg.crossplane.io": "Crossplane 2.3 or later (its Helm chart)",
    "inferenceservices.serving.kserve.io": "KServe in Standard (RawDeployment) mode",
}

PodLog = Callable[[str, str, str], str]
"""(namespace, pod, container) -> the container's log."""


@dataclass(frozen=True)
class Target:
    """A cluster and the registry it shares with this host.

    `push` is the registry as this host reaches it; `packages` as Crossplane and the nodes'
    container runtime pull packages from it; `images` as the function's pod reads AIM images
    from it (it mirrors `ghcr.io`). On a kind cluster the last two are the same address.
    """

    kubeconfig: Path
    push: str
    packages: str
    images: str
    gpu_node: str | None = None
    gateway: Gateway | None = None
    """A Gateway a real implementation serves, and the URL this host reaches it at."""
    keda_http: KedaHttp | None = None
    """The KEDA HTTP add-on, which wakes services at `minReplicas: 0`."""
    own_node: Node | None = None
    """The tier's node, where the tier made the cluster: its address (which its pods reach) and
    its disk, for node-local volumes; None on a cluster of yours."""

    @staticmethod
    def from_env(env: Mapping[str, str]) -> Target | None:
        """The target the environment names, or None when `AIM_E2E_KUBECONFIG` is unset."""
        kubeconfig = env.get(KUBECONFIG)
        if not kubeconfig:
            return None
        push = env.get(REGISTRY)
        if not push:
            msg = (
                f"{KUBECONFIG} is set but {REGISTRY} is not: name a plain-HTTP registry this "
                f"host pushes to (a kind cluster's local registry: localhost:5001), and "
                f"{CLUSTER_REGISTRY} its address in the cluster (docs/e2e.md)"
            )
            raise HarnessError(msg)
        inside = env.get(CLUSTER_REGISTRY) or push
        return Target(Path(kubeconfig), push, inside, inside, env.get(GPU_NODE) or None)


@dataclass(frozen=True)
class ClusterPlatform:
    """The AIM packages installed on a target; what the journey needs of it."""

    kube: Kube
    registry: Registry
    published: Published
    gpu_node: str
    pod_log: PodLog | None = None
    gateway: Gateway | None = None
    keda_http: KedaHttp | None = None
    own_node: Node | None = None

    def team_namespace(self, name: str) -> str:
        """A namespace for an application team, enforcing `restricted`."""
        return team_namespace(self.kube, name)

    def diagnose(self) -> str:
        """The end of the Function's pod's log, for a failed wait."""
        parts = []
        for pod in self.kube.list("v1", "Pod", CROSSPLANE_NAMESPACE):
            name = pod["metadata"]["name"]
            if not any(c["name"] == RUNTIME for c in pod["spec"]["containers"]):
                continue
            try:
                log = (self.pod_log or self._api_log)(CROSSPLANE_NAMESPACE, name, RUNTIME)
            except (KubeError, OSError) as e:
                log = f"(its log cannot be read: {e})"
            parts.append(f"--- pod {name} ---\n" + "\n".join(log.splitlines()[-15:]))
        return "\n".join(parts) or "(no Function pod)"

    def _api_log(self, namespace: str, pod: str, container: str) -> str:
        path = f"/api/v1/namespaces/{namespace}/pods/{pod}/log"
        params = {"container": container, "tailLines": "15"}
        return str(self.kube.request("GET", path, params=params, accept="*/*").body)


def preflight(kube: Kube, target: Target) -> None:
    """Fail early, naming what the cluster lacks and how to add it."""
    if not kube.ready():
        msg = f"the cluster of {target.kubeconfig} is not ready (its /readyz)"
        raise HarnessError(msg)
    for crd, what in REQUIRED_CRDS.items():
        if kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd) is None:
            msg = f"the cluster of {target.kubeconfig} has no {crd}: install {what} (docs/e2e.md)"
            raise HarnessError(msg)


def gpu_node(kube: Kube, wanted: str | None) -> str:
    """The node to advertise GPUs on: the one named, else the first Ready node that takes any
    pod (not cordoned, no NoSchedule taint: a multi-node kind cluster's control plane has one)."""
    for node in kube.list("v1", "Node"):
        name = str(node["metadata"]["name"])
        ready = any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in node.get("status", {}).get("conditions", [])
        )
        tainted = any(
            t.get("effect") in ("NoSchedule", "NoExecute") for t in node["spec"].get("taints", [])
        )
        usable = ready and not tainted and not node["spec"].get("unschedulable")
        if name == wanted or (not wanted and usable):
            return name
    msg = f"no node named {wanted}" if wanted else "no Ready schedulable node"
    raise HarnessError(msg)


def advertise_gpus(kube: Kube, node: str) -> None:
    """What AMD's GPU operator would add to a node: GPUs (a device plugin's capacity, written
    as the Kubernetes documentation advertises an extended resource) and the device id label."""
    kube.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": MI300X}})
    status = {"capacity": dict(GPUS), "allocatable": dict(GPUS)}
    kube.patch_status("v1", "Node", node, None, {"status": status})


@contextlib.contextmanager
def attach(
    tools: Tools,
    target: Target,
    runtime_image: Image,
    root: Path,
    pod_log: PodLog | None = None,
) -> Iterator[ClusterPlatform]:
    """The packages published to the target's registry and installed on its cluster."""
    kube = Kube(credentials(target.kubeconfig, root / "credentials"))
    preflight(kube, target)
    published = publish(
        tools,
        f"{target.packages}/aim-crossplane",
        push_via=f"{target.push}/aim-crossplane",
        out=root / "packages",
        runtime_image_tarball=runtime_image.tarball,
    )
    # The function reads `ghcr.io` images from the target's registry, as the nodes pull them.
    args = function_args({PUBLIC_REGISTRY: target.images}, E2E_RECHECKS, oras="oras")
    kube.apply(runtime_config([*args, "--debug"], node=None))
    apply_packages(kube, published)
    wait_installed(kube, published)
    node = gpu_node(kube, target.gpu_node)
    advertise_gpus(kube, node)
    yield ClusterPlatform(
        kube,
        Registry(target.push, tools.oras, auth=False),
        published,
        node,
        pod_log,
        target.gateway,
        target.keda_http,
        target.own_node,
    )


@contextlib.contextmanager
def own_cluster(tools: Tools, crds: Path, root: Path) -> Iterator[tuple[Target, PodLog]]:
    """A cluster as a user would bring one, made here: a control plane with Crossplane core and
    its Deployment runtime, a node with a scheduler whose containerd pulls `ghcr.io` images from
    a registry, KServe with its CRDs and Gateway API's, Traefik serving a shared Gateway, and KEDA
    with its HTTP add-on, which wakes services at zero pods; and
    the kubeconfig file and registry addresses a user would give (`Target`). Also the node's pod
    logs, which its kubelet API, on loopback, cannot serve through the API server."""
    (root / "registry").mkdir(parents=True)
    listen = "0.0.0.0"  # noqa: S104 - a test registry, for pods on the node
    with (
        start_registry(tools, root / "registry", auth=False, listen=listen) as registry,
        start_control_plane(
            tools, root / "cluster", extra_controllers=NODE_CONTROLLERS, deployment_runtime=True
        ) as plane,
        start_node(
            tools,
            plane,
            root / "node",
            registries=[registry.host, f"{PUBLIC_REGISTRY}={registry.host}"],
        ) as node,
    ):
        install_third_party_crds(plane.admin, crds)
        with (
            start_kserve(tools, plane, root / "kserve"),
            start_traefik(tools, plane, root / "traefik") as gateway,
            start_keda(tools, plane, root / "keda"),
            start_keda_http(tools, plane, WAKE_TIMEOUTS) as keda_http,
        ):
            kubeconfig = root / "kubeconfig"
            kubeconfig.write_text(plane.admin.credentials.kubeconfig("admin"))
            # Core and containerd run on this host and pull packages over loopback; the
            # function's pod reaches the registry at the node's address.
            target = Target(
                kubeconfig,
                registry.host,
                registry.host,
                registry.at(node.ip),
                gateway=gateway,
                keda_http=keda_http,
                own_node=node,
            )
            yield target, node.pod_log


def chat_through_service(
    kube: Kube, namespace: str, service: str, port: int, seen: list[str]
) -> Any:
    """An OpenAI chat completion through a Service, by the API server's service proxy (which
    reaches a cluster's pods from anywhere its API does); None (the reason noted in `seen`)
    while it does not answer."""
    path = f"/api/v1/namespaces/{namespace}/services/{service}:{port}/proxy/v1/chat/completions"
    body = {"model": "Org/Small", "messages": [{"role": "user", "content": "hi"}]}
    try:
        return kube.request("POST", path, body).body
    except (KubeError, OSError) as e:
        seen.append(f"{type(e).__name__}: {e}")
        return None
