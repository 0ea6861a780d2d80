"""A user's journey with every controller real but the GPUs: from an image in a registry to a
chat completion.

A platform of its own (`start_platform(node=True, workloads=True)`): Crossplane installs the
packages from the registry and runs the Function as its Deployment on a real node, where the
scheduler places every pod the AIM objects compose and KServe's own controller serves the
InferenceService. A platform team registers a model by its image; the function reads the
image's labels from the registry, creates its template, whose discovery Job pulls the image and
runs its dry-run on the node; an application team asks for a service, which runs as KServe's
Deployment and answers through KServe's Service.

Simulated: the GPUs (the node advertises `amd.com/gpu` and an MI300X device id label, as AMD's
GPU operator would; the test AIM image's server uses none). The image is the test AIM image
(`devtools.aimimage`), pushed under a `ghcr.io` name the node and the function pull from the
tier's registry.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from devtools.aimimage import stub_image
from devtools.image import Image
from devtools.kube import wait_for
from devtools.node import NODE_NAME
from devtools.oci import write_archive
from devtools.render import Tools
from tests.e2e.converge import AIM, ISVC, one, templates_of, wait_condition, wait_status
from tests.e2e.images import PUBLIC_REGISTRY
from tests.e2e.nodeplane import chat
from tests.e2e.platform import SYSTEM_NAMESPACE, Platform, aim, start_platform

REPOSITORY: Final = "org/small"
IMAGE: Final = f"{PUBLIC_REGISTRY}/{REPOSITORY}:1"
SMALL: Final = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}
"""What the stand-in server needs: the seeds' 4 CPUs and 32Gi per GPU do not fit this machine."""


@pytest.fixture(scope="module")
def platform_on_node(
    tools: Tools,
    crds: Path,
    runtime_image: Image,
    aim_images: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Platform]:
    """The platform on a node that runs its workloads, with the test AIM image in its registry."""
    root = tmp_path_factory.mktemp("journey-node")
    with start_platform(tools, crds, runtime_image, root, node=True, workloads=True) as platform:
        archive = root / "aim-image.tar"
        write_archive(stub_image(tools, IMAGE, aim_images), archive)
        platform.registry.push_archive(archive, REPOSITORY, "1")
        platform.kube.apply(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": NODE_NAME, "labels": {"amd.com/gpu.device-id": "74a1"}},
            }
        )
        yield platform


def kubelet_ran_pod(platform: Platform, namespace: str, prefix: str) -> bool:
    """Whether the kubelet wrote the status of a pod named `prefix...` in `namespace` (from the
    plane's audit log of pod writes)."""
    return any(
        e.get("userAgent", "").startswith("kubelet/")
        and e["objectRef"].get("subresource") == "status"
        and e["objectRef"].get("namespace") == namespace
        and e["objectRef"].get("name", "").startswith(prefix)
        for e in platform.cluster.audit_events()
    )


def test_a_model_image_becomes_a_service_that_answers(platform_on_node: Platform) -> None:
    """A cluster model of an image in a registry: its template comes from the image's labels and
    is discovered by a real dry-run on the node; a service on it runs as KServe's Deployment
    (its pod carrying the labels the team's runtime config propagates), turns Running on
    KServe's own status, and answers a chat completion through KServe's Service."""
    platform = platform_on_node
    kube = platform.kube
    discovery = {"enabled": True, "autoCreateTemplates": True}  # as seed 004's model has it
    kube.apply(aim("AIMClusterModel", "small", None, {"image": IMAGE, "discovery": discovery}))

    # The platform side: labels read by the function in its pod, discovery run by the kubelet.
    wait_status(platform, "AIMClusterModel", "small", None, "Ready", timeout_s=180)
    [template] = wait_for(
        "the template the image's labels recommend",
        lambda: templates_of(kube, "AIMClusterServiceTemplate", "small") or None,
        timeout_s=60,
        explain=lambda: json.dumps(kube.get(AIM, "AIMClusterModel", "small"), indent=1),
    )
    name = str(template["metadata"]["name"])
    available = wait_status(
        platform, "AIMClusterServiceTemplate", name, None, "Available", timeout_s=180
    )
    assert available["status"]["hardwareSummary"] == "1 x MI300X"
    assert available["status"]["modelSources"][0]["sourceUri"] == "hf://Org/Small"
    # Only the dry-run knows the weights' size (the image's labels do not). Its Job is gone once
    # its result is in status, but the audit log keeps who ran its pod: the kubelet.
    assert available["status"]["modelSources"][0]["size"] == "512Mi"
    assert kubelet_ran_pod(platform, SYSTEM_NAMESPACE, f"discover-{name}")

    # The application team's side: its runtime config copies its billing labels onward.
    ns = platform.team_namespace("team-node")
    propagation = {"enabled": True, "match": ["billing.example.com/*"]}
    kube.apply(aim("AIMRuntimeConfig", "default", ns, {"labelPropagation": propagation}))
    chat_service = aim("AIMService", "chat", ns, {"model": {"ref": "small"}, "resources": SMALL})
    chat_service["metadata"]["labels"] = {"billing.example.com/project": "chat", "owner": "alice"}
    kube.apply(chat_service)
    wait_status(platform, "AIMService", "chat", ns, "Running", timeout_s=180)
    wait_condition(platform, "AIMService", "chat", ns, "InferenceServiceReady", "True", "Ready")
    isvc = one(platform, ISVC, "InferenceService", ns)
    isvc_name = isvc["metadata"]["name"]
    [pod] = kube.list("v1", "Pod", ns, labels={"serving.kserve.io/inferenceservice": isvc_name})
    assert pod["spec"]["nodeName"] == NODE_NAME
    # The service's selected label reached the pod: function → InferenceService → KServe.
    assert pod["metadata"]["labels"]["billing.example.com/project"] == "chat"
    assert "owner" not in pod["metadata"]["labels"]
    [container] = [c for c in pod["spec"]["containers"] if c["name"] == "kserve-container"]
    assert container["image"] == IMAGE
    assert container["resources"]["limits"]["amd.com/gpu"] == "1"

    service = kube.get("v1", "Service", f"{isvc_name}-predictor", ns) or {}
    address = (service["spec"]["clusterIP"], service["spec"]["ports"][0]["port"])
    answer = wait_for(
        "the service answering through KServe's Service",
        lambda: chat(*address, []),
        timeout_s=30,  # kube-proxy programs the Service once its EndpointSlice lists the pod
    )
    assert answer["choices"][0]["message"]["content"] == "a stand-in answer"
    assert kube.get(AIM, "AIMService", "chat", ns) is not None
