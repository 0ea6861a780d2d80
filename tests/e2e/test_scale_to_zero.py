"""Scale to zero with a waking request that is held and answered: the KEDA HTTP add-on on a node.

A plane with a real node (kube-scheduler, kubelet, kube-proxy), KEDA's operator and metrics
adapter (devtools/cluster/keda.py) and the KEDA HTTP add-on's interceptor, scaler and operator
(devtools/cluster/kedahttp.py), all of them the released programs. A Deployment of the test AIM
image's OpenAI-compatible server sits at zero replicas behind its Service, with an
HTTPScaledObject (min 0, max 1) naming both. A chat completion sent to the interceptor's proxy
with the Host the HTTPScaledObject matches is held there while the add-on's scaler tells KEDA,
KEDA scales the Deployment to one, the scheduler and the kubelet start the pod and its readiness
probe passes; then the interceptor forwards it and the server's answer comes back, a 200 and not
the 502 of a proxy that gave up. Once nothing asks, KEDA scales the Deployment back to zero after
the HTTPScaledObject's scaledownPeriod.

Nothing is simulated here: every status read is the controllers' and the kubelet's own.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import pytest

from devtools.cluster.aimimage import stub_image
from devtools.cluster.controlplane import ControlPlane, start_control_plane
from devtools.cluster.keda import start_keda
from devtools.cluster.kedahttp import API, KIND, KedaHttp, Timeouts, start_keda_http
from devtools.cluster.kube import Kube, condition, wait_for
from devtools.cluster.node import NODE_CONTROLLERS, start_node
from devtools.cluster.timing import TIMES
from devtools.cluster.wake import KEDA_API, Workload, chat, held_request, is_ready, wait_taken_up
from devtools.tools import Tools

NS: Final = "wake"
NAME: Final = "small"
IMAGE: Final = "aim.local/aim-stub:1"
WORKLOAD: Final = Workload(NS, NAME, IMAGE)

SCALEDOWN_S: Final = 10
POLLING_S: Final = 15
"""The add-on's operator writes every ScaledObject with KEDA's pollingInterval at 15 s."""
COLD_START_S: Final = 120.0
"""How long the interceptor holds a request for a pod to become ready (its default is 1.5 s)."""


@pytest.fixture(scope="module")
def cluster(
    tools: Tools, aim_images: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ControlPlane, KedaHttp]]:
    """A plane with a node, the test AIM image loaded on it, KEDA and the HTTP add-on."""
    root = tmp_path_factory.mktemp("scale-to-zero")
    timeouts = Timeouts(condition_wait=COLD_START_S, response_header=30.0)
    with contextlib.ExitStack() as stack:
        plane = stack.enter_context(
            start_control_plane(tools, root / "plane", extra_controllers=NODE_CONTROLLERS)
        )
        node = stack.enter_context(start_node(tools, plane, root / "node"))
        plane.retire_rbac_manager()  # its fixed metrics port would block another plane
        node.load(stub_image(tools, IMAGE, aim_images))
        stack.enter_context(start_keda(tools, plane, root / "keda"))
        addon = stack.enter_context(start_keda_http(tools, plane, timeouts))
        yield plane, addon


def keda_events(kube: Kube, name: str) -> set[str]:
    """The reasons of KEDA's events on a ScaledObject (activated, deactivated, ...)."""
    return {
        str(e.get("reason"))
        for e in kube.list("v1", "Event", NS)
        if e["involvedObject"].get("kind") == "ScaledObject"
        and e["involvedObject"].get("name") == name
    }


def deploy_at_zero(plane: ControlPlane, workload: Workload, objects: list[dict[str, Any]]) -> None:
    """Apply a workload, wait until the add-on and KEDA have taken it up, and check what the
    add-on's operator made of it: a ScaledObject of the same name, owned by the
    HTTPScaledObject, whose trigger names the add-on's scaler; still at zero, no pod."""
    kube = plane.admin
    kube.apply_all(objects)
    wait_taken_up(kube, workload)
    scaled = kube.get(KEDA_API, "ScaledObject", workload.name, NS) or {}
    [owner] = scaled["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"]) == (KIND, workload.name)
    assert (scaled["spec"]["minReplicaCount"], scaled["spec"]["maxReplicaCount"]) == (0, 1)
    assert scaled["spec"]["cooldownPeriod"] == SCALEDOWN_S
    [trigger] = scaled["spec"]["triggers"]
    assert trigger["type"] == "external-push"
    assert trigger["metadata"]["httpScaledObject"] == workload.name
    assert (kube.get("apps/v1", "Deployment", workload.name, NS) or {})["spec"]["replicas"] == 0
    assert workload.pods(kube) == []


def stamped_ready_s(pod: dict[str, Any]) -> float:
    """Seconds from the pod's creation to its Ready condition, as the API server and the
    kubelet stamped them (whole seconds)."""
    created = datetime.fromisoformat(pod["metadata"]["creationTimestamp"])
    ready = condition(pod, "Ready") or {}
    return (datetime.fromisoformat(ready["lastTransitionTime"]) - created).total_seconds()


def _s(value: float | None) -> str:
    return "not seen" if value is None else f"{value:.1f}s"


def test_a_request_to_a_workload_at_zero_is_held_until_its_pod_is_ready_and_answered(
    cluster: tuple[ControlPlane, KedaHttp],
) -> None:
    """A Deployment at zero replicas with an HTTPScaledObject: the add-on's operator makes the
    ScaledObject KEDA acts on and reports the HTTPScaledObject Ready, and no pod runs; a request
    through the interceptor's proxy Service is held while KEDA scales the Deployment to one and
    the pod becomes ready, then answered by the server with a 200 (the interceptor marks it a
    cold start); once no request comes, KEDA scales the Deployment back to zero after the
    scaledownPeriod."""
    plane, addon = cluster
    kube = plane.admin
    deploy_at_zero(plane, WORKLOAD, WORKLOAD.objects(SCALEDOWN_S))

    held = held_request(kube, addon.service_url, WORKLOAD, COLD_START_S + 30)

    assert held.status == 200, (held, WORKLOAD.explain(kube), addon.interceptor.tail())
    answer = json.loads(held.body)
    assert answer["choices"][0]["message"]["content"] == "a stand-in answer"
    assert held.headers.get("X-Keda-Http-Cold-Start") == "true", held.headers
    [pod] = WORKLOAD.pods(kube)
    assert pod["status"]["phase"] == "Running"
    assert is_ready(pod)
    assert "KEDAScaleTargetActivated" in keda_events(kube, NAME)  # KEDA woke it, nothing else
    stamped = stamped_ready_s(pod)
    print(  # noqa: T201 - the figures this test exists to show (pytest -s)
        f"\nrequest to answer {held.answered_s:.1f}s; pod seen {_s(held.pod_seen_s)} and Ready "
        f"{_s(held.pod_ready_s)} after the request; pod creation to Ready {stamped:.0f}s "
        "(API server and kubelet timestamps, whole seconds)"
    )
    TIMES["scale from zero: request to answer"] = held.answered_s
    if held.pod_seen_s is not None and held.pod_ready_s is not None:
        TIMES["scale from zero: pod seen to Ready (polled)"] = held.pod_ready_s - held.pod_seen_s

    # Nothing asks any more: after the scaledownPeriod, at KEDA's next poll, back to zero.
    t1 = time.monotonic()
    wait_for(
        "KEDA scaling the Deployment back to zero and its pod gone",
        lambda: (
            (kube.get("apps/v1", "Deployment", NAME, NS) or {})["spec"]["replicas"] == 0
            and not WORKLOAD.pods(kube)
        ),
        timeout_s=SCALEDOWN_S + 2 * POLLING_S + 60,
        interval_s=1,
        explain=lambda: WORKLOAD.explain(kube),
    )
    TIMES["scale to zero: answer to no pods"] = time.monotonic() - t1
    assert "KEDAScaleTargetDeactivated" in keda_events(kube, NAME)
    assert WORKLOAD.pods(kube) == []


def test_a_host_no_http_scaled_object_routes_is_not_found(
    cluster: tuple[ControlPlane, KedaHttp],
) -> None:
    """The interceptor routes only the hosts HTTPScaledObjects name: another Host gets its 404
    at once, and wakes nothing."""
    _, addon = cluster
    status, _, _ = chat(addon.proxy_url, "nobody.example", timeout_s=10)
    assert status == 404


def test_a_workload_that_never_becomes_ready_gets_a_502_after_its_own_wait(
    cluster: tuple[ControlPlane, KedaHttp],
) -> None:
    """A server that exits at start (a crash loop, never ready) with an HTTPScaledObject whose
    `timeouts.conditionWait` is 3 s: KEDA wakes it, the interceptor holds the request for those
    3 s, not its own 120 s, and then answers 502 saying it waited for the workload in vain.
    This is the wait that the cold start above stayed inside."""
    plane, addon = cluster
    kube = plane.admin
    broken = Workload(NS, "broken", IMAGE)
    objects = broken.objects(
        SCALEDOWN_S, env={"AIM_STUB_EXIT": "no GPU"}, timeouts={"conditionWait": "3s"}
    )
    deploy_at_zero(plane, broken, objects)

    held = held_request(kube, addon.proxy_url, broken, COLD_START_S)

    assert held.status == 502, held
    assert b"waiting for workload reach > 0 replicas" in held.body, held.body
    assert 3 <= held.answered_s < 30, held  # the object's 3 s, far below the global 120 s
    assert held.pod_seen_s is not None  # KEDA did wake it
    assert held.pod_ready_s is None
    kube.delete(API, KIND, broken.name, NS)
    kube.delete("apps/v1", "Deployment", broken.name, NS)
