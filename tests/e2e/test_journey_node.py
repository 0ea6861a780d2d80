"""A user's journey with every controller real but the GPUs: from an image in a registry to a
chat completion.

A cluster with Crossplane and KServe (`tests/e2e/target.py`): the one `AIM_E2E_KUBECONFIG`
names (a kind cluster, say: docs/e2e.md), or else one the tier makes, with a real node and
scheduler, and reaches only as it would a user's, by a kubeconfig file and registry addresses.
The packages are installed from the registry; Crossplane runs the Function as its Deployment, the
scheduler places every pod the AIM objects compose and KServe's own controller serves the
InferenceService. A platform team registers a model by its image; the function reads the
image's labels from the registry, creates its template, whose discovery Job pulls the image and
runs its dry-run on the node; an application team asks for a service, which runs as KServe's
Deployment and answers through KServe's Service.

Simulated: the GPUs (a node advertises `amd.com/gpu` and an MI300X device id label, as AMD's
GPU operator would; the test AIM image's server uses none). The image is the test AIM image
(`devtools.cluster.aimimage`), pushed under a `ghcr.io` name the nodes and the function pull from
the registry.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from devtools.cluster import amdecho, amdimage, amdsmi_standin
from devtools.cluster.aimimage import storage_initializer_image, stub_image
from devtools.cluster.converge import (
    AIM,
    ISVC,
    ROUTE,
    one,
    templates_of,
    wait_condition,
    wait_status,
)
from devtools.cluster.gateway import CONTROLLER, Gateway
from devtools.cluster.kube import Kube, KubeError, condition, wait_for
from devtools.cluster.node import node_local_volume
from devtools.cluster.oci import Image as OciImage
from devtools.cluster.oci import write_archive
from devtools.cluster.platform import PUBLIC_REGISTRY, SYSTEM_NAMESPACE, aim
from devtools.cluster.timing import TIMES
from devtools.pkg.image import Image
from devtools.tools import ROOT, Tools
from function.api.cache import DEFAULT_DOWNLOAD_IMAGE
from function.rules.labels import SERVICE as AIM_SERVICE_LABEL
from tests.e2e.hubmirror import hugging_face_mirror
from tests.e2e.target import ClusterPlatform, Target, attach, chat_through_service, own_cluster

REPOSITORY: Final = "org/small"
IMAGE: Final = f"{PUBLIC_REGISTRY}/{REPOSITORY}:1"
SMALL: Final = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}
"""What the stand-in server needs: the seeds' 4 CPUs and 32Gi per GPU do not fit this machine."""


@pytest.fixture(scope="module")
def target_cluster(
    tools: Tools,
    crds: Path,
    runtime_image: Image,
    aim_images: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ClusterPlatform]:
    """The packages installed on the target cluster, with the test AIM image in its registry."""
    root = tmp_path_factory.mktemp("journey-node")
    with contextlib.ExitStack() as stack:
        target = Target.from_env(os.environ)
        pod_log = None
        if target is None:
            target, pod_log = stack.enter_context(own_cluster(tools, crds, root / "own"))
        platform = stack.enter_context(attach(tools, target, runtime_image, root, pod_log))
        archive = root / "aim-image.tar"
        write_archive(stub_image(tools, IMAGE, aim_images), archive)
        platform.registry.push_archive(archive, REPOSITORY, "1")
        yield platform


def holds_a_gpu(pod: dict[str, Any]) -> bool:
    """Whether a pod that is not finished asks for an AMD GPU."""
    asks = any(
        "amd.com/gpu" in (c.get("resources") or {}).get("limits", {})
        for c in pod["spec"]["containers"]
    )
    return asks and pod.get("status", {}).get("phase") not in {"Succeeded", "Failed"}


@pytest.fixture(autouse=True)
def gpus_given_back(target_cluster: ClusterPlatform) -> Iterator[None]:
    """After each test, its services are deleted and their pods gone: the node advertises 8
    GPUs, as one MI300X node has, and the module's services together would hold more, so a
    test run after the others (the order is random) would wait for a GPU forever."""
    yield
    kube = target_cluster.kube
    for svc in kube.list(AIM, "AIMService"):
        kube.delete(AIM, "AIMService", svc["metadata"]["name"], svc["metadata"]["namespace"])
    wait_for(
        "the deleted services' pods to give their GPUs back",
        lambda: not [p for p in kube.list("v1", "Pod") if holds_a_gpu(p)],
        timeout_s=180,
        explain=lambda: str(
            [p["metadata"]["name"] for p in kube.list("v1", "Pod") if holds_a_gpu(p)]
        ),
    )


def kubelet_ran_pod(kube: Kube, namespace: str, prefix: str) -> bool:
    """Whether a kubelet reported starting a pod named `prefix...` in `namespace` (its events
    outlive the pod, and any cluster keeps them)."""
    return any(
        (
            e.get("source", {}).get("component") == "kubelet"
            or e.get("reportingComponent") == "kubelet"
        )
        and e.get("reason") == "Started"
        and e["involvedObject"].get("name", "").startswith(prefix)
        for e in kube.list("v1", "Event", namespace)
    )


def test_a_model_image_becomes_a_service_that_answers(target_cluster: ClusterPlatform) -> None:
    """A cluster model of an image in a registry: its template comes from the image's labels and
    is discovered by a real dry-run on the node; a service on it runs as KServe's Deployment
    (its pod carrying the labels the team's runtime config propagates), turns Running on
    KServe's own status, and answers a chat completion through KServe's Service."""
    platform = target_cluster
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
    # its result is in status, but the kubelet's events say it ran the pod.
    assert available["status"]["modelSources"][0]["size"] == "512Mi"
    assert kubelet_ran_pod(kube, SYSTEM_NAMESPACE, f"discover-{name}")

    # The application team's side: its runtime config copies its billing labels onward.
    ns = platform.team_namespace("team-node")
    propagation = {"enabled": True, "match": ["billing.example.com/*"]}
    kube.apply(aim("AIMRuntimeConfig", "default", ns, {"labelPropagation": propagation}))
    chat_service = aim("AIMService", "chat", ns, {"model": {"ref": "small"}, "resources": SMALL})
    chat_service["metadata"]["labels"] = {"billing.example.com/project": "chat", "owner": "alice"}
    kube.apply(chat_service)
    wait_status(platform, "AIMService", "chat", ns, "Running", timeout_s=180)
    wait_condition(platform, "AIMService", "chat", ns, "InferenceServiceReady", "True", "Ready")
    wait_condition(
        platform, "AIMService", "chat", ns, "InferenceServicePodsReady", "True", "PodsReady"
    )

    # `kubectl describe` tells the story: Normal events as conditions changed, from the first
    # waits to the pods serving.
    def normal_events() -> list[str] | None:
        messages = [
            str(e.get("message"))
            for e in kube.list("v1", "Event", ns)
            if e["involvedObject"].get("kind") == "AIMService" and e.get("type") == "Normal"
        ]
        pods_ready = any("InferenceServicePodsReady is True: PodsReady" in m for m in messages)
        return messages if pods_ready else None

    told = wait_for("a Normal event for the service's pods turning Ready", normal_events)
    assert any("TemplateReady is True: Resolved" in m for m in told), told
    isvc = one(platform, ISVC, "InferenceService", ns)
    isvc_name = isvc["metadata"]["name"]
    [pod] = kube.list("v1", "Pod", ns, labels={"serving.kserve.io/inferenceservice": isvc_name})
    assert pod["spec"]["nodeName"] == platform.gpu_node
    # The service's selected label reached the pod: function → InferenceService → KServe.
    assert pod["metadata"]["labels"]["billing.example.com/project"] == "chat"
    assert "owner" not in pod["metadata"]["labels"]
    [container] = [c for c in pod["spec"]["containers"] if c["name"] == "kserve-container"]
    assert container["image"] == IMAGE
    assert container["resources"]["limits"]["amd.com/gpu"] == "1"

    service = kube.get("v1", "Service", f"{isvc_name}-predictor", ns) or {}
    port = int(service["spec"]["ports"][0]["port"])
    seen: list[str] = []
    answer = wait_for(
        "the service answering through KServe's Service",
        lambda: chat_through_service(kube, ns, f"{isvc_name}-predictor", port, seen),
        timeout_s=30,  # the Service's endpoints list the pod once it is Ready
        explain=lambda: "\n".join(seen[-3:]),
    )
    assert answer["choices"][0]["message"]["content"] == "a stand-in answer"
    assert kube.get(AIM, "AIMService", "chat", ns) is not None


def chat_through_gateway(
    url: str,
    seen: list[str],
    host: str | None = None,
    timeout_s: float = 10,
    model: str = "Org/Small",
) -> Any:
    """An OpenAI chat completion for `model` sent to `url` as a client of the Gateway would, for
    `host` when given (the Gateway listens on loopback; a client would resolve the name to it);
    None (the reason noted in `seen`) while the Gateway does not carry it through."""
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
    return post_through_gateway(url, body, seen, host, timeout_s)


def post_through_gateway(
    url: str, body: Any, seen: list[str], host: str | None = None, timeout_s: float = 10
) -> Any:
    """`body` posted to `url` as JSON; the JSON answer, or None (the reason noted in `seen`)."""
    headers = {"Content-Type": "application/json", **({"Host": host} if host else {})}
    request = urllib.request.Request(  # noqa: S310 - the test's own loopback Gateway
        url, json.dumps(body).encode(), headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310
            return json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError) as e:
        seen.append(f"{type(e).__name__}: {e}")
        return None


def gateway_status(url: str, host: str) -> int:
    """The HTTP status the Gateway answers a chat request for `host` with."""
    body = {"model": "Org/Small", "messages": [{"role": "user", "content": "hi"}]}
    headers = {"Content-Type": "application/json", "Host": host}
    request = urllib.request.Request(  # noqa: S310 - the test's own loopback Gateway
        url, json.dumps(body).encode(), headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            return int(response.status)
    except urllib.error.HTTPError as e:
        return e.code


def routable(platform: ClusterPlatform) -> Gateway:
    """The tier's Traefik Gateway, with the cluster model `small` Ready to route services of.

    Skips where the target cluster has none this host can reach.
    """
    if platform.gateway is None:
        pytest.skip(
            "the target cluster has no Gateway this host can reach: only the cluster the tier "
            "makes runs Traefik"
        )
    platform.kube.apply(aim("AIMClusterModel", "small", None, {"image": IMAGE}))
    wait_status(platform, "AIMClusterModel", "small", None, "Ready", timeout_s=180)
    return platform.gateway


def test_a_service_answers_through_a_real_gateway(target_cluster: ClusterPlatform) -> None:
    """A team's runtime config routes its services through the platform's shared Gateway: the
    service's HTTPRoute is accepted by Traefik itself (HTTPRouteReady from the parent status it
    wrote), and a chat completion sent to the Gateway at the route's path reaches the predictor
    pod on the node and comes back: client, Gateway, Service, pod. A route naming a listener
    the Gateway does not have is refused by Traefik, and the service says so with its reason.

    Simulated: the GPUs, as above. Real: Traefik, built from its Go module."""
    platform = target_cluster
    kube, gateway = platform.kube, routable(platform)
    ns = platform.team_namespace("team-gateway")
    routing = {"enabled": True, "gatewayRef": gateway.parent_ref}
    kube.apply(aim("AIMRuntimeConfig", "default", ns, {"routing": routing}))
    kube.apply(aim("AIMService", "routed", ns, {"model": {"ref": "small"}, "resources": SMALL}))

    wait_condition(
        platform, "AIMService", "routed", ns, "HTTPRouteReady", "True", "HTTPRouteAccepted"
    )
    route = one(platform, ROUTE, "HTTPRoute", ns)
    [parent] = route["status"]["parents"]
    assert parent["controllerName"] == CONTROLLER, "Traefik wrote it, not a stand-in"
    running = wait_status(platform, "AIMService", "routed", ns, "Running", timeout_s=180)
    path = running["status"]["routing"]["path"]
    assert path.startswith(f"/{ns}/"), path
    seen: list[str] = []
    answer = wait_for(
        "the service answering through the Gateway",
        lambda: chat_through_gateway(f"{gateway.url}{path}/v1/chat/completions", seen),
        timeout_s=60,  # Traefik programs the route once the predictor's endpoints are ready
        explain=lambda: "\n".join(seen[-3:]),
    )
    assert answer["choices"][0]["message"]["content"] == "a stand-in answer"

    # A listener the Gateway does not have: Traefik refuses the route, in its own words.
    misrouted = {"enabled": True, "gatewayRef": {**gateway.parent_ref, "sectionName": "missing"}}
    service = {"model": {"ref": "small"}, "resources": SMALL, "routing": misrouted}
    kube.apply(aim("AIMService", "misrouted", ns, service))
    refused = wait_condition(
        platform, "AIMService", "misrouted", ns, "HTTPRouteReady", "False", "NoMatchingParent"
    )
    assert f"Gateway {gateway.name} rejected the HTTPRoute" in refused["message"], refused


def test_a_route_pinned_to_a_host_answers_only_for_it(target_cluster: ClusterPlatform) -> None:
    """The platform lets each team pin routes under its own subdomain; a service pinned to
    `chat.<ns>.example.com` answers through Traefik for that host and Traefik itself answers 404
    for any other, on the same listener and path. A service without hostnames on a Gateway with
    two listeners gets no HTTPRoute at all, with the reason and both listeners named.

    Simulated: the GPUs, as above. Real: Traefik, Crossplane reading the Gateway."""
    platform = target_cluster
    kube, gateway = platform.kube, routable(platform)
    policy = {"allowedHostnames": ["*.{.metadata.namespace}.example.com"]}
    routing = {"enabled": True, "gatewayRef": gateway.parent_ref, "policy": policy}
    kube.apply(aim("AIMClusterRuntimeConfig", "subdomains", None, {"routing": routing}))
    ns = platform.team_namespace("team-hosts")
    host = f"chat.{ns}.example.com"
    pinned = {
        "model": {"ref": "small"},
        "resources": SMALL,
        "runtimeConfigName": "subdomains",
        "routing": {"hostnames": [host]},
    }
    kube.apply(aim("AIMService", "pinned", ns, pinned))
    running = wait_status(platform, "AIMService", "pinned", ns, "Running", timeout_s=180)
    assert running["status"]["routing"]["hostnames"] == [host]
    url = f"{gateway.url}{running['status']['routing']['path']}/v1/chat/completions"
    seen: list[str] = []
    answer = wait_for(
        f"the service answering through the Gateway for {host}",
        lambda: chat_through_gateway(url, seen, host),
        timeout_s=60,
        explain=lambda: "\n".join(seen[-3:]),
    )
    assert answer["choices"][0]["message"]["content"] == "a stand-in answer"
    assert gateway_status(url, "chat.other-team.example.com") == 404
    assert gateway_status(url, "127.0.0.1") == 404, "no Host of its own: not this route either"

    # Another team's subdomain: refused by the policy, before any route exists.
    taken = {**pinned, "routing": {"hostnames": ["chat.research.example.com"]}}
    kube.apply(aim("AIMService", "taken", ns, taken))
    refused = wait_condition(
        platform, "AIMService", "taken", ns, "HTTPRouteReady", "False", "RouteHostnameNotAllowed"
    )
    assert "chat.research.example.com" in refused["message"], refused

    # A Gateway with two listeners: a route without hostnames would answer on both.
    kube.apply(
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "Gateway",
            "metadata": {"name": "two-listeners", "namespace": gateway.namespace},
            "spec": {
                "gatewayClassName": "traefik",
                "listeners": [
                    {
                        "name": name,
                        "hostname": f"{name}.example.com",
                        "protocol": "HTTP",
                        "port": int(gateway.url.rsplit(":", 1)[1]),
                        "allowedRoutes": {"namespaces": {"from": "All"}},
                    }
                    for name in ("workloads", "admin")
                ],
            },
        }
    )
    unpinned = {
        "model": {"ref": "small"},
        "resources": SMALL,
        "routing": {
            "enabled": True,
            "gatewayRef": {"name": "two-listeners", "namespace": gateway.namespace},
        },
    }
    kube.apply(aim("AIMService", "unpinned", ns, unpinned))
    exposed = wait_condition(
        platform, "AIMService", "unpinned", ns, "HTTPRouteReady", "False", "RouteHostnameRequired"
    )
    assert "(workloads, admin)" in exposed["message"], exposed
    routes = kube.list("gateway.networking.k8s.io/v1", "HTTPRoute", ns)
    assert [r["metadata"]["labels"][AIM_SERVICE_LABEL] for r in routes] == ["pinned"]


def predictor_pods(kube: Kube, namespace: str, service: str) -> list[dict[str, Any]]:
    """The predictor pods of an AIMService's InferenceService that are not going away."""
    isvc = aim_service_isvc(kube, namespace, service)
    pods = kube.list("v1", "Pod", namespace, labels={"serving.kserve.io/inferenceservice": isvc})
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def pod_start_seconds(pod: dict[str, Any]) -> float:
    """From the pod's creation to its Ready condition, by the API server's and kubelet's clocks."""
    ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")

    def at(stamp: str) -> datetime:
        return datetime.fromisoformat(stamp)

    created = at(pod["metadata"]["creationTimestamp"])
    return (at(ready["lastTransitionTime"]) - created).total_seconds()


def aim_service_isvc(kube: Kube, namespace: str, service: str) -> str:
    """The name of the InferenceService an AIMService composed."""
    found = kube.get(AIM, "AIMService", service, namespace) or {}
    return str(found["status"]["inferenceService"])


def scaled_to_zero(kube: Kube, namespace: str, service: str) -> bool:
    """Whether the service has no predictor pod and says it is scaled to zero."""
    found = condition(kube.get(AIM, "AIMService", service, namespace), "HPAReady") or {}
    said = found.get("reason") == "ScaledToZero"
    return said and not predictor_pods(kube, namespace, service)


def scaling_story(kube: Kube, namespace: str, service: str) -> str:
    """What each party says of a service's scale: for a wait that timed out."""
    isvc = aim_service_isvc(kube, namespace, service)
    predictor = f"{isvc}-predictor"
    objects = {
        "deployment": ("apps/v1", "Deployment", predictor),
        "hpa": ("autoscaling/v2", "HorizontalPodAutoscaler", f"keda-hpa-{predictor}"),
        "scaledobject": ("keda.sh/v1alpha1", "ScaledObject", predictor),
    }
    said = condition(kube.get(AIM, "AIMService", service, namespace), "HPAReady")
    parts = [f"service HPAReady: {said}"]
    for what, (api, kind, name) in objects.items():
        parts.append(f"{what}: {(kube.get(api, kind, name, namespace) or {}).get('status')}")
    parts.append(
        f"pods: {[p['metadata']['name'] for p in predictor_pods(kube, namespace, service)]}"
    )
    return "\n".join(parts)


def grant_the_interceptor(kube: Kube, namespace: str) -> None:
    """What the platform does per team: let its routes name the interceptor, in its namespace."""
    kube.apply(
        {
            "apiVersion": "gateway.networking.k8s.io/v1beta1",
            "kind": "ReferenceGrant",
            "metadata": {"name": f"routes-of-{namespace}", "namespace": "keda"},
            "spec": {
                "from": [
                    {
                        "group": "gateway.networking.k8s.io",
                        "kind": "HTTPRoute",
                        "namespace": namespace,
                    }
                ],
                "to": [{"group": "", "kind": "Service"}],
            },
        }
    )


def run_the_wake_responder(platform: ClusterPlatform) -> None:
    """What the platform does once: package/wake-responder.yaml with the Function package's
    image, as docs/scale-to-zero.md says; until its pods are ready."""
    kube = platform.kube
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": SYSTEM_NAMESPACE}})
    for obj in yaml.safe_load_all((ROOT / "package" / "wake-responder.yaml").read_text()):
        if obj["kind"] == "Deployment":
            [container] = obj["spec"]["template"]["spec"]["containers"]
            container["image"] = platform.published.function
        kube.apply(obj)

    def ready() -> bool:
        found = kube.get("apps/v1", "Deployment", "aim-wake-responder", SYSTEM_NAMESPACE) or {}
        status = found.get("status", {})
        return bool(status.get("readyReplicas")) and status["readyReplicas"] == status.get(
            "replicas"
        )

    wait_for("the wake responder's pods to be ready", ready, timeout_s=180)


def gateway_answer(url: str, timeout_s: float = 60) -> tuple[int, dict[str, str], bytes, float]:
    """A chat completion through the Gateway: its status, headers, body and seconds taken."""
    body = {"model": "Org/Small", "messages": [{"role": "user", "content": "hi"}]}
    request = urllib.request.Request(  # noqa: S310 - the test's own loopback Gateway
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}, method="POST"
    )
    start = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310
            return int(response.status), dict(response.headers), response.read(), 0.0
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read(), time.monotonic() - start


@pytest.mark.timeout(600)
def test_a_waking_request_past_the_wake_timeout_gets_503_with_retry_after(
    target_cluster: ClusterPlatform,
) -> None:
    """A service at zero whose predictor never turns ready (its server exits at start), under a
    runtime config whose wake timeout is 5 s: the request through the real Gateway wakes it, is
    held those 5 s by the interceptor, and is then failed over to the platform's wake responder
    (the function image's `aim-wake-responder`, by the ExternalName Service the function
    composed), whose 503 with `Retry-After` and an OpenAI-style error comes back to the client
    instead of the interceptor's bare 502.

    Simulated: the GPUs, as above. Real: Traefik, KServe, KEDA and its HTTP add-on, the
    responder's pods."""
    platform = target_cluster
    kube, gateway = platform.kube, routable(platform)
    if platform.keda_http is None:
        pytest.skip("the target cluster runs no KEDA HTTP add-on: only the tier's own does")
    run_the_wake_responder(platform)
    ns = platform.team_namespace("team-slow")
    grant_the_interceptor(kube, ns)
    quick = {"scaleToZero": {"wakeTimeout": "5s"}}
    kube.apply(aim("AIMClusterRuntimeConfig", "quick-wake", None, quick))
    spec = {
        "model": {"ref": "small"},
        "resources": SMALL,
        "minReplicas": 0,
        "maxReplicas": 1,
        "runtimeConfigName": "quick-wake",
        "routing": {"enabled": True, "gatewayRef": gateway.parent_ref},
        "env": [{"name": "AIM_STUB_EXIT", "value": "no GPU in this test"}],
    }
    kube.apply(aim("AIMService", "broken", ns, spec))
    wait_condition(platform, "AIMService", "broken", ns, "ScaleToZeroReady", "True", "WakeReady")
    wait_condition(
        platform, "AIMService", "broken", ns, "HTTPRouteReady", "True", "HTTPRouteAccepted"
    )
    isvc = aim_service_isvc(kube, ns, "broken")
    found = kube.get(AIM, "AIMService", "broken", ns) or {}
    url = f"{gateway.url}{found['status']['routing']['path']}/v1/chat/completions"

    # Accepted, Traefik may still take a moment to serve the route: a 404 at once till then.
    answers: list[tuple[int, dict[str, str], bytes, float]] = []

    def answered() -> bool:
        answers.append(gateway_answer(url))
        return answers[-1][0] != 404

    wait_for("the Gateway to carry the route", answered, timeout_s=60, explain=lambda: str(answers))
    status, headers, body, taken = answers[-1]
    assert status == 503, (status, body)
    assert headers.get("Retry-After") == "30", headers
    error = json.loads(body)["error"]
    assert error["code"] == 503
    assert f"{ns}/{isvc}-predictor" in error["message"], error
    assert 5 <= taken < 60, f"held for the runtime config's 5 s, then answered: {taken:.1f} s"
    TIMES["scale to zero: held past a 5 s wake timeout, to the 503"] = taken


@pytest.mark.timeout(900)  # the cluster's start is paid by the module's first test
def test_a_service_at_zero_answers_the_request_that_wakes_it(
    target_cluster: ClusterPlatform,
) -> None:
    """A service at `minReplicas: 0` idles to no pod; one chat completion through the real
    Gateway wakes it and gets the model's answer, not a 503: Traefik sends it to the KEDA HTTP
    add-on's interceptor (the route the function composed), which holds it while KEDA scales the
    predictor's Deployment to one pod and forwards it once the pod is ready. The time from request
    to answer is printed beside the pod's own start. Idle again, it goes back to no pod; a
    service at `minReplicas: 1` beside it never does.

    Simulated: the GPUs, as above. Real: Traefik, KServe, KEDA and its HTTP add-on."""
    platform = target_cluster
    kube, gateway = platform.kube, routable(platform)
    if platform.keda_http is None:
        pytest.skip("the target cluster runs no KEDA HTTP add-on: only the tier's own does")
    ns = platform.team_namespace("team-idle")
    grant_the_interceptor(kube, ns)
    routing = {"enabled": True, "gatewayRef": gateway.parent_ref}
    spec = {"routing": routing, "scaleToZero": {"idleAfter": "10s"}}
    kube.apply(aim("AIMRuntimeConfig", "default", ns, spec))
    small = {"model": {"ref": "small"}, "resources": SMALL}
    kube.apply(aim("AIMService", "sleepy", ns, {**small, "minReplicas": 0, "maxReplicas": 1}))
    kube.apply(aim("AIMService", "awake", ns, {**small, "minReplicas": 1, "maxReplicas": 1}))

    wait_condition(platform, "AIMService", "sleepy", ns, "ScaleToZeroReady", "True", "WakeReady")
    # KServe starts one pod; KEDA, finding no request waiting, scales it away.
    wait_for(
        "the sleepy service to say it is scaled to zero",
        lambda: scaled_to_zero(kube, ns, "sleepy"),
        timeout_s=240,
        explain=lambda: scaling_story(kube, ns, "sleepy"),
    )
    running = wait_status(platform, "AIMService", "sleepy", ns, "Running", timeout_s=180)
    assert not predictor_pods(kube, ns, "sleepy")
    assert running["status"]["runtime"]["replicas"] == "0/0 (0-1)"

    url = f"{gateway.url}{running['status']['routing']['path']}/v1/chat/completions"
    seen: list[str] = []
    start = time.monotonic()
    answer = chat_through_gateway(url, seen, timeout_s=150)
    waking = time.monotonic() - start
    assert answer is not None, f"the waking request was not answered: {seen}"
    assert answer["choices"][0]["message"]["content"] == "a stand-in answer"
    [pod] = predictor_pods(kube, ns, "sleepy")
    created = pod_start_seconds(pod)
    # The tier's wall-time summary prints both: what the wake adds is their difference.
    TIMES["scale to zero: waking request to answer"] = waking
    TIMES["scale to zero: its pod, created to Ready"] = created

    # Idle again: back to no pod, and the service says so; the one at 1 keeps its pod.
    wait_for(
        "the sleepy service to idle back to no pod",
        lambda: scaled_to_zero(kube, ns, "sleepy"),
        timeout_s=240,
        explain=lambda: scaling_story(kube, ns, "sleepy"),
    )
    assert len(predictor_pods(kube, ns, "awake")) == 1


NODE_RWX: Final = "node-rwx"
"""The storage class of the node-local volumes the adapters' claims bind to."""


def served_models(kube: Kube, namespace: str, isvc: str, seen: list[str]) -> list[str] | None:
    """The ids the predictor's server lists at /v1/models, through KServe's Service by the API
    server's service proxy; None (the reason in `seen`) while it does not answer."""
    path = f"/api/v1/namespaces/{namespace}/services/{isvc}-predictor:80/proxy/v1/models"
    try:
        listed = kube.request("GET", path).body
    except (KubeError, OSError) as e:
        seen.append(f"{type(e).__name__}: {e}")
        return None
    return [str(m["id"]) for m in listed["data"]]


@pytest.mark.timeout(900)
def test_a_dynamic_service_on_kserve_gains_and_loses_an_adapter_without_a_restart(
    target_cluster: ClusterPlatform, aim_images: Path, tmp_path: Path
) -> None:
    """A LoRA adapter published on a Hugging Face mirror becomes an AIMModelCache of type
    adapter: the real volume binder binds its claim, its download Job runs a storage
    initializer built as KServe's is, and it turns Available. A dynamic service on the base
    model runs as KServe's Deployment with its adapter disk mounted at /adapters; when the
    service lists the adapter, a staging Job copies it onto the disk and the running server
    lists it at /v1/models; when the service drops it, it is gone from the listing. The
    predictor's pod is the same pod throughout (same uid, no restart), and the InferenceService
    is never changed.

    Simulated: the GPUs, as above, the inference engine (the stand-in server lists the adapter
    directories it sees, as vLLM lists the adapters it loaded) and the Hub (a mirror on the
    node's address). Real: Crossplane, KServe, the kubelet, the volume binder, the Jobs."""
    platform = target_cluster
    kube, node = platform.kube, platform.own_node
    if node is None:
        pytest.skip(
            "needs a ReadWriteMany storage class and a Hub mirror its pods reach: only the "
            "tier's own node has node-local volumes"
        )
    routable(platform)  # the cluster model `small`, Ready
    node.load(storage_initializer_image(f"docker.io/{DEFAULT_DOWNLOAD_IMAGE}", aim_images))
    for name in ("adapter-cache", "adapter-disk"):
        (tmp_path / name).mkdir()
        node_local_volume(kube, name, tmp_path / name, NODE_RWX)
    ns = platform.team_namespace("team-lora")
    with hugging_face_mirror(node.ip) as endpoint:
        cache = {
            "type": "adapter",
            "sourceUri": "hf://Org/Small-Tone-LoRA",
            "compatibleWith": ["Org/Small"],
            "rank": 8,
            "size": "1Gi",
            "storageClassName": NODE_RWX,
            "env": [{"name": "HF_ENDPOINT", "value": endpoint}],
        }
        kube.apply(aim("AIMModelCache", "tone", ns, cache))
        wait_status(platform, "AIMModelCache", "tone", ns, "Available", timeout_s=240)

    service = {
        "model": {"ref": "small"},
        "resources": SMALL,
        "adapterMode": "dynamic",
        "adapterRuntime": {"diskSize": "1Gi", "storageClassName": NODE_RWX},
    }
    kube.apply(aim("AIMService", "lora", ns, service))
    wait_status(platform, "AIMService", "lora", ns, "Running", timeout_s=300)
    isvc_name = aim_service_isvc(kube, ns, "lora")
    isvc = kube.get(ISVC, "InferenceService", isvc_name, ns) or {}
    [pod] = predictor_pods(kube, ns, "lora")
    seen: list[str] = []

    def listing(want: list[str]) -> Callable[[], bool]:
        def listed() -> bool:
            got = served_models(kube, ns, isvc_name, seen)
            seen.append(f"listed {got}")
            return got == want

        return listed

    def story() -> str:
        found = (kube.get(AIM, "AIMService", "lora", ns) or {}).get("status", {})
        jobs = {
            j["metadata"]["name"]: j.get("status", {}).get("conditions")
            for j in kube.list("batch/v1", "Job", ns)
        }
        adapters = {k: found.get(k) for k in ("adapters", "adaptersStaged", "conditions")}
        return f"{seen[-3:]}\nservice: {adapters}\njobs: {jobs}"

    wait_for("the server to list the base model alone", listing(["Org/Small"]), explain=story)

    t0 = time.monotonic()
    kube.apply(aim("AIMService", "lora", ns, {**service, "adapters": [{"name": "tone"}]}))
    wait_condition(platform, "AIMService", "lora", ns, "AdaptersReady", "True", "AdaptersStaged")
    wait_for(
        "the running server to list the adapter",
        listing(["Org/Small", "tone"]),
        timeout_s=60,
        explain=story,
    )
    TIMES["adapters: listed by the service, to served by its running pod"] = time.monotonic() - t0

    kube.apply(aim("AIMService", "lora", ns, {**service, "adapters": []}))
    wait_for(
        "the running server to list the base model alone again",
        listing(["Org/Small"]),
        timeout_s=180,
        explain=story,
    )
    [same] = predictor_pods(kube, ns, "lora")
    assert same["metadata"]["uid"] == pod["metadata"]["uid"], "the pod was replaced"
    assert all(c.get("restartCount") == 0 for c in same["status"]["containerStatuses"])
    after = kube.get(ISVC, "InferenceService", isvc_name, ns) or {}
    assert (after["metadata"]["uid"], after["metadata"]["generation"]) == (
        isvc["metadata"]["uid"],
        isvc["metadata"]["generation"],
    ), "the InferenceService was changed: KServe would have rolled its pods"


def amd_service_answers(
    platform: ClusterPlatform,
    aim_images: Path,
    tmp_path: Path,
    *,
    name: str,
    namespace: str,
    model: str,
    spec: dict[str, Any],
) -> Any:
    """A service of AMD's GPU image answering through the Gateway: the service `spec` in a
    namespace whose runtime config routes through the Gateway and puts caches on a node-local
    ReadWriteMany volume; its weights downloaded from the Hub mirror, the GPU a device plugin
    would give its pod told to the AMD SMI stand-in. Returns the chat completion for `model`
    sent to the Gateway, once the service is Running; its predictor never restarted. Skips
    without the tier's own node."""
    kube, node = platform.kube, platform.own_node
    if node is None or platform.gateway is None:
        pytest.skip("needs the tier's own node: node-local volumes, a Hub mirror, Traefik")
    gateway = platform.gateway
    node.load(storage_initializer_image(f"docker.io/{DEFAULT_DOWNLOAD_IMAGE}", aim_images))
    (tmp_path / "weights").mkdir()
    node_local_volume(kube, f"{name}-weights", tmp_path / "weights", NODE_RWX)
    ns = platform.team_namespace(namespace)
    config = {
        "routing": {"enabled": True, "gatewayRef": gateway.parent_ref},
        "defaultStorageClassName": NODE_RWX,
    }
    kube.apply(aim("AIMRuntimeConfig", "default", ns, config))
    with hugging_face_mirror(node.ip) as endpoint:
        service = {
            **spec,
            "resources": {
                "requests": {"cpu": "100m", "memory": "128Mi"},
                "limits": {"memory": "512Mi"},
            },
            "env": [
                # The downloads' Hub (the service's env reaches its caches' Jobs too).
                {"name": "HF_ENDPOINT", "value": endpoint},
                # The device plugin's part, which nothing runs here: the GPU it gave the pod.
                {"name": amdsmi_standin.VARIABLE, "value": "74a1"},
            ],
        }
        kube.apply(aim("AIMService", name, ns, service))
        running = wait_status(platform, "AIMService", name, ns, "Running", timeout_s=420)
    path = running["status"]["routing"]["path"]
    seen: list[str] = []
    answer = wait_for(
        f"AMD's runtime answering for {model} through the Gateway",
        lambda: chat_through_gateway(f"{gateway.url}{path}/v1/chat/completions", seen, model=model),
        timeout_s=60,
        explain=lambda: "\n".join(seen[-3:]),
    )
    [pod] = predictor_pods(kube, ns, name)
    assert all(c.get("restartCount") == 0 for c in pod["status"]["containerStatuses"])
    return answer


def pushed(cluster: ClusterPlatform, work: Path, image: OciImage, repository: str) -> str:
    """`image` written as an archive under `work` and pushed to the cluster's registry as
    `repository` at its tag; its name."""
    tag = image.name.rsplit(":", 1)[1]
    archive = work / f"{repository.replace('/', '_')}-{tag}.tar"
    write_archive(image, archive)
    cluster.registry.push_archive(archive, repository, tag)
    return image.name


AMD_REPOSITORY: Final = "amdenterpriseai/aim-qwen-qwen3-32b"
AMD_IMAGE: Final = f"{PUBLIC_REGISTRY}/{AMD_REPOSITORY}:0.9.0"
AMD_MODEL: Final = "Qwen/Qwen3-32B"


@pytest.fixture(scope="module")
def amd_image(target_cluster: ClusterPlatform, aim_images: Path) -> str:
    """AMD's own AIM image of Qwen/Qwen3-32B, built from aim-build's source with the labels
    AMD's generator makes, and with stand-ins only for vLLM and the AMD SMI library (see
    devtools/cluster/amdimage.py), in the registry. Skips where the source is absent."""
    src, generator = amdimage.source("0.9"), amdimage.source("2026")
    if isinstance(src, str) or isinstance(generator, str):
        pytest.skip(src if isinstance(src, str) else str(generator))
    metadata = src.path / "metadata" / AMD_MODEL / "metadata.yaml"
    labels = amdimage.generated_labels(metadata, generator, model=AMD_MODEL, version="0.9.0")
    image = amdimage.model_image(
        AMD_IMAGE, src, AMD_MODEL, labels=labels, extra=amdimage.gpu_standins()
    )
    return pushed(target_cluster, aim_images, image, AMD_REPOSITORY)


@pytest.mark.timeout(900)
def test_amds_own_image_from_the_catalog_to_a_chat_through_the_gateway(
    target_cluster: ClusterPlatform, amd_image: str, aim_images: Path, tmp_path: Path
) -> None:
    """AMD's runtime all the way: a cluster model of AMD's Qwen3-32B image gets its templates
    from the labels AMD's generator wrote; the latency one is discovered by AMD's dry-run in a
    Job on the node, and holds the profile AMD's selector chose; a caching service on it runs
    as KServe's Deployment, where AMD's `serve` detects the GPU, selects that profile and starts
    the engine on the weights our cache holds; a chat completion sent to the Gateway comes back
    from it.

    Simulated: the GPU (the node's label and capacity, and the AMD SMI stand-in in the image,
    told by the service's env which GPU the device plugin would have given the pod), the engine
    (the vLLM stand-in), and the Hub (a mirror on the node's address). Real: AMD's runtime,
    profiles and labels, Crossplane, KServe, Traefik, the kubelet, the volume binder, the Jobs."""
    platform = target_cluster
    kube, node = platform.kube, platform.own_node
    if node is None or platform.gateway is None:
        pytest.skip("needs the tier's own node: node-local volumes, a Hub mirror, Traefik")

    kube.apply(aim("AIMClusterModel", "qwen3", None, {"image": amd_image}))
    wait_status(platform, "AIMClusterModel", "qwen3", None, "Ready", timeout_s=180)

    def latency_fp16() -> dict[str, Any] | None:
        made = templates_of(kube, "AIMClusterServiceTemplate", "qwen3")
        wanted = [
            t
            for t in made
            if (t["spec"].get("metric"), t["spec"].get("precision")) == ("latency", "fp16")
        ]
        return wanted[0] if wanted else None

    template = wait_for(
        "the latency template AMD's labels recommend",
        latency_fp16,
        timeout_s=60,
        explain=lambda: json.dumps(kube.get(AIM, "AIMClusterModel", "qwen3"), indent=1),
    )
    name = str(template["metadata"]["name"])
    available = wait_status(
        platform, "AIMClusterServiceTemplate", name, None, "Available", timeout_s=240
    )
    profile = available["status"]["profile"]
    assert profile["metadata"]["type"] == "optimized"
    assert profile["engine_args"]["reasoning-parser"] == "qwen3"  # the profile file's own
    assert profile["env_vars"]["GPU_ARCHS"] == "gfx942"
    assert available["status"]["modelSources"][0]["sourceUri"] == f"hf://{AMD_MODEL}"
    # The Job ran AMD's dry-run on the node. A long template name's Job has a shortened name,
    # which status keeps; its pod's is the Job's cut to the 58 characters a generated name
    # leaves before its random suffix.
    job = available["status"]["discovery"]["job"]
    assert kubelet_ran_pod(kube, SYSTEM_NAMESPACE, job[:58])

    answer = amd_service_answers(
        platform,
        aim_images,
        tmp_path,
        name="qwen3",
        namespace="team-amd",
        model=AMD_MODEL,
        spec={"model": {"ref": "qwen3"}, "template": {"name": name}, "cacheModel": True},
    )
    # The engine AMD's runtime started was pointed at our cache's mount, not at the Hub.
    assert (
        answer["choices"][0]["message"]["content"]
        == f"stand-in vLLM serving /workspace/cache/{AMD_MODEL}"
    )


ECHO_REPOSITORY: Final = "amdenterpriseai/aim-example-echo-model"
ECHO_IMAGE: Final = f"{PUBLIC_REGISTRY}/{ECHO_REPOSITORY}:2026.9"


@pytest.fixture(scope="module")
def echo_image(target_cluster: ClusterPlatform, aim_images: Path) -> str:
    """AMD's CPU play model, example/echo-model, built from aim-build's newer tree with the
    labels AMD's generator makes (devtools/cluster/amdecho.py), in the registry. Skips where
    the tree is absent."""
    src = amdimage.source("2026")
    if isinstance(src, str):
        pytest.skip(src)
    metadata = src.path / "assets" / "cpu" / amdecho.MODEL / "metadata.yaml"
    labels = amdimage.generated_labels(metadata, src, model=amdecho.MODEL, version="2026.9")
    image = amdecho.echo_image(ECHO_IMAGE, src, labels=labels)
    return pushed(target_cluster, aim_images, image, ECHO_REPOSITORY)


@pytest.mark.timeout(900)
def test_amds_cpu_echo_model_answers_through_the_gateway(
    target_cluster: ClusterPlatform, echo_image: str
) -> None:
    """Nothing stood in for, from apply to answer: a cluster model of AMD's echo-model image
    is Ready from its real labels, which recommend no deployment, so the platform team writes
    a CPU template; AMD's dry-run, in the discovery Job on the node, detects the CPU and selects
    the BentoML profile; a service on it runs as KServe's Deployment, where AMD's `serve`
    starts BentoML; `POST /predict` sent to the Gateway (client, Traefik, the Service, AMD's
    runtime, BentoML) comes back with the text reversed."""
    platform = target_cluster
    kube = platform.kube
    if platform.own_node is None or platform.gateway is None:
        pytest.skip("needs the tier's own node and its Traefik Gateway")
    gateway = platform.gateway

    kube.apply(aim("AIMClusterModel", "echo", None, {"image": echo_image}))
    wait_status(platform, "AIMClusterModel", "echo", None, "Ready", timeout_s=180)
    assert templates_of(kube, "AIMClusterServiceTemplate", "echo") == []
    template = {
        "modelName": "echo",
        "metric": "latency",
        "precision": "fp32",
        # The echo profile is `unoptimized`: AMD's runtime selects it only when named.
        "profileId": amdecho.PROFILE,
        "hardware": {"cpu": {"requests": "100m"}},
        "env": [
            {"name": "AIM_ENGINE", "value": amdecho.ENGINE},
            # The predictor's user has no home to write BentoML's own to.
            {"name": "BENTOML_HOME", "value": "/tmp/bentoml"},  # noqa: S108 - in the pod
        ],
    }
    kube.apply(aim("AIMClusterServiceTemplate", "echo-cpu", None, template))
    available = wait_status(
        platform, "AIMClusterServiceTemplate", "echo-cpu", None, "Available", timeout_s=240
    )
    assert available["status"]["hardwareSummary"] == "CPU"
    assert available["status"]["profile"]["metadata"]["engine"] == amdecho.ENGINE
    assert kubelet_ran_pod(kube, SYSTEM_NAMESPACE, available["status"]["discovery"]["job"][:58])

    ns = platform.team_namespace("team-echo")
    config = {"routing": {"enabled": True, "gatewayRef": gateway.parent_ref}}
    kube.apply(aim("AIMRuntimeConfig", "default", ns, config))
    service = {
        "model": {"ref": "echo"},
        "template": {"name": "echo-cpu"},
        "resources": {
            "requests": {"cpu": "100m", "memory": "256Mi"},
            "limits": {"memory": "1Gi"},  # BentoML's arbiter and its one worker
        },
    }
    kube.apply(aim("AIMService", "echo", ns, service))
    running = wait_status(platform, "AIMService", "echo", ns, "Running", timeout_s=420)
    path = running["status"]["routing"]["path"]
    seen: list[str] = []
    answer = wait_for(
        "BentoML answering through the Gateway",
        lambda: post_through_gateway(f"{gateway.url}{path}/predict", {"text": "hello AIM"}, seen),
        timeout_s=60,
        explain=lambda: "\n".join(seen[-3:]),
    )
    assert answer == {"reversed": "MIA olleh", "length": 9}
    [pod] = predictor_pods(kube, ns, "echo")
    assert all(c.get("restartCount") == 0 for c in pod["status"]["containerStatuses"])


BASE_REPOSITORY: Final = "amdenterpriseai/aim-base"
BASE_IMAGE: Final = f"{PUBLIC_REGISTRY}/{BASE_REPOSITORY}:0.9.0"
CUSTOM_MODEL: Final = "Org/Custom-7B"


@pytest.fixture(scope="module")
def amd_base_image(target_cluster: ClusterPlatform, aim_images: Path) -> str:
    """AMD's AIM base image (the runtime and its general profiles, no model), built from
    aim-build 0.9's source with stand-ins only for vLLM and the AMD SMI library, in the
    registry. Skips where the source is absent."""
    src = amdimage.source("0.9")
    if isinstance(src, str):
        pytest.skip(src)
    image = amdimage.base_image(BASE_IMAGE, src, extra=amdimage.gpu_standins())
    return pushed(target_cluster, aim_images, image, BASE_REPOSITORY)


@pytest.mark.timeout(900)
def test_a_custom_model_on_amds_base_image_answers_through_the_gateway(
    target_cluster: ClusterPlatform, amd_base_image: str, aim_images: Path, tmp_path: Path
) -> None:
    """The custom-model flow on AMD's runtime: a service of custom weights from the Hub, on
    AMD's base image, caches them (a custom model always does) with a download Job on the
    node, runs as KServe's Deployment, where AMD's `serve`, told the model by AIM_MODEL_ID,
    falls back to a general profile for the GPU and starts the engine on the weights in the
    cache's mount; a chat completion for the model's id sent to the Gateway comes back from it.

    Simulated: the GPU (the node's label and capacity, and the AMD SMI stand-in in the image,
    told by the service's env which GPU the device plugin would have given the pod), the engine
    (the vLLM stand-in), and the Hub (a mirror on the node's address). Real: AMD's runtime and
    general profiles, Crossplane, KServe, Traefik, the kubelet, the volume binder, the Jobs."""
    custom = {
        "baseImage": amd_base_image,
        "modelSources": [{"modelId": CUSTOM_MODEL, "sourceUri": f"hf://{CUSTOM_MODEL}"}],
        "hardware": {"gpu": {"requests": 1, "models": ["MI300X"]}},
    }
    answer = amd_service_answers(
        target_cluster,
        aim_images,
        tmp_path,
        name="custom",
        namespace="team-custom",
        model=CUSTOM_MODEL,
        spec={"model": {"custom": custom}},
    )
    # The engine AMD's runtime started was pointed at the custom model's cache, not the Hub.
    assert (
        answer["choices"][0]["message"]["content"]
        == f"stand-in vLLM serving /workspace/cache/{CUSTOM_MODEL}"
    )
