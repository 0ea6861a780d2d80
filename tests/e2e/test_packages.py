"""The packages as Crossplane installed them from the registry: the Function package carries the
runtime image, and Crossplane's Deployment runtime runs it on the tier's node; every scenario and
journey composes through that pod."""

from __future__ import annotations

import json
import subprocess

from devtools.cluster.controlplane import CROSSPLANE_NAMESPACE
from devtools.cluster.converge import wait_condition
from devtools.cluster.kube import condition
from devtools.cluster.node import NODE_NAME
from devtools.cluster.platform import PUBLIC_REGISTRY, RUNTIME, Platform, aim
from devtools.pkg.image import Image
from devtools.tools import Tools


def test_the_installed_function_package_carries_the_runtime_image(
    platform: Platform, tools: Tools, runtime_image: Image
) -> None:
    """The Function installed from the registry carries the runtime image."""
    kube = platform.cluster.admin
    revisions = kube.list(
        "pkg.crossplane.io/v1",
        "FunctionRevision",
        labels={"pkg.crossplane.io/package": platform.published.function_name},
    )
    [active] = [r for r in revisions if r["spec"].get("desiredState") == "Active"]
    assert active["spec"]["image"] == platform.published.function
    for kind in ("RevisionHealthy", "RuntimeHealthy"):
        assert (condition(active, kind) or {}).get("status") == "True", json.dumps(active["status"])
    # What Crossplane pulled: the image's config, entrypoint and layers, plus the metadata layer.
    config = json.loads(
        subprocess.run(
            [str(tools.oras), "manifest", "fetch-config", "--plain-http", active["spec"]["image"]],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    image = runtime_image.config
    assert config["config"]["Entrypoint"] == image["config"]["Entrypoint"]
    assert config["config"]["User"] == image["config"]["User"]
    assert config["rootfs"]["diff_ids"][:-1] == image["rootfs"]["diff_ids"]


def test_the_function_serves_from_crossplanes_deployment_on_the_node(platform: Platform) -> None:
    """No function runs on the host: Crossplane's Deployment runtime runs the package's image on
    the node with the tier's flags, and an AIM object composes through that pod (its log says
    so)."""
    kube = platform.kube
    assert platform.node is not None
    assert not platform.cluster.function_endpoint
    [pod] = kube.list("v1", "Pod", CROSSPLANE_NAMESPACE)
    assert pod["spec"]["nodeName"] == NODE_NAME
    [container] = pod["spec"]["containers"]
    assert container["image"].startswith(f"{platform.registry.host}/aim-crossplane/")
    mirror = f"--registry-mirror={PUBLIC_REGISTRY}={platform.registry.at(platform.node.ip)}"
    assert mirror in container["args"]

    namespace = platform.team_namespace("packages-runtime")
    kube.apply(aim("AIMRuntimeConfig", "default", namespace, {"defaultStorageClassName": "fast"}))
    wait_condition(platform, "AIMRuntimeConfig", "default", namespace, "Ready", "True", None)
    log = platform.node.pod_log(CROSSPLANE_NAMESPACE, pod["metadata"]["name"], RUNTIME)
    assert f"{namespace}/default" in log, log[-2000:]
    now = kube.get("v1", "Pod", pod["metadata"]["name"], CROSSPLANE_NAMESPACE) or {}
    [status] = now["status"]["containerStatuses"]
    assert (status["ready"], status["restartCount"]) == (True, 0)
