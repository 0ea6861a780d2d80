"""The Function as Crossplane runs it: installed from the registry with its embedded runtime
image, run by Crossplane's default Deployment runtime on a real node, and called over mTLS.

Its own control plane and node (the scenarios' plane runs the function on the host). Crossplane
core is a host process there, so it reaches the function's Service by the name /etc/hosts gives
it (`devtools.cluster.node.ServiceHosts`, standing in for cluster DNS) and its ClusterIP through
kube-proxy; the TLS certificates are the ones Crossplane itself makes (`core init`'s CA, the
runtime's server secret).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from devtools.cluster.controlplane import CROSSPLANE_NAMESPACE, ControlPlane, start_control_plane
from devtools.cluster.kube import condition, wait_for
from devtools.cluster.node import NODE_CONTROLLERS, NODE_NAME, Node, start_node
from devtools.cluster.platform import aim, install, install_third_party_crds
from devtools.cluster.registry import start_registry
from devtools.pkg.image import Image
from devtools.pkg.publish import publish
from devtools.tools import ROOT, Tools


@pytest.fixture(scope="module")
def installed(
    tools: Tools, crds: Path, runtime_image: Image, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ControlPlane, Node]]:
    """A plane with a node and the AIM packages installed from the loopback registry."""
    root = tmp_path_factory.mktemp("runtime")
    (root / "registry").mkdir()
    with (
        start_registry(tools, root / "registry", auth=False) as registry,
        start_control_plane(
            tools, root / "plane", extra_controllers=NODE_CONTROLLERS, deployment_runtime=True
        ) as plane,
        start_node(tools, plane, root / "node", registries=[registry.host]) as node,
    ):
        install_third_party_crds(plane.admin, crds)
        published = publish(
            tools,
            f"{registry.host}/aim-crossplane",
            out=root / "packages",
            runtime_image_tarball=runtime_image.tarball,
        )
        install(plane, published)
        yield plane, node


def test_the_function_runs_as_a_deployment_and_composes(
    installed: tuple[ControlPlane, Node],
) -> None:
    """Crossplane pulls the Function package's runtime image onto the node, runs it as its
    Deployment, and a composition reaches it: an AIMRuntimeConfig turns Ready and Synced."""
    plane, _ = installed
    kube = plane.admin
    deployments = kube.list("apps/v1", "Deployment", CROSSPLANE_NAMESPACE)
    assert [d["status"].get("readyReplicas") for d in deployments] == [1]
    [pod] = kube.list("v1", "Pod", CROSSPLANE_NAMESPACE)
    assert pod["spec"]["nodeName"] == NODE_NAME
    [container] = pod["status"]["containerStatuses"]
    assert "/aim-crossplane/function-aim" in container["image"]  # pulled from the registry

    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    kube.apply(aim("AIMRuntimeConfig", "default", "team", {"defaultStorageClassName": "fast"}))

    def ready() -> bool:
        obj = kube.get("aim.silogen.ai/v1alpha1", "AIMRuntimeConfig", "default", "team")
        return all((condition(obj, t) or {}).get("status") == "True" for t in ("Synced", "Ready"))

    wait_for(
        "the runtime config composed by the function in its pod",
        ready,
        timeout_s=120,
        explain=lambda: str(
            kube.get("aim.silogen.ai/v1alpha1", "AIMRuntimeConfig", "default", "team")
        ),
    )


def test_the_documented_probes_turn_the_functions_pod_ready(
    installed: tuple[ControlPlane, Node],
) -> None:
    """docs/operations.md's DeploymentRuntimeConfig, given to the installed Function, rolls its
    Deployment: the new pod answers the kubelet's gRPC probes on --health-address and turns
    Ready."""
    plane, _ = installed
    kube = plane.admin
    readme = (ROOT / "docs" / "operations.md").read_text()
    block = readme.split("kind: DeploymentRuntimeConfig", 1)[1].split("```", 1)[0]
    config = yaml.safe_load(
        "apiVersion: pkg.crossplane.io/v1beta1\nkind: DeploymentRuntimeConfig" + block
    )
    kube.apply(config)
    [function] = kube.list("pkg.crossplane.io/v1", "Function")
    kube.request(
        "PATCH",
        kube.path("pkg.crossplane.io/v1", "Function", None, function["metadata"]["name"]),
        {"spec": {"runtimeConfigRef": {"name": config["metadata"]["name"]}}},
        content_type="application/merge-patch+json",
    )

    def probed_and_ready() -> bool:
        for pod in kube.list("v1", "Pod", CROSSPLANE_NAMESPACE):
            [container] = pod["spec"]["containers"]
            ready = [c for c in pod["status"].get("conditions", []) if c["type"] == "Ready"]
            if container.get("readinessProbe") and ready and ready[0]["status"] == "True":
                return "--health-address=:8081" in container.get("args", [])
        return False

    wait_for(
        "the function's pod Ready by its gRPC probe",
        probed_and_ready,
        timeout_s=120,
        explain=lambda: yaml.safe_dump(kube.list("v1", "Pod", CROSSPLANE_NAMESPACE)),
    )
