"""Workloads at zero behind the KEDA HTTP add-on, and requests that wake them, timed.

What the scale-to-zero tests and the cold-start benchmark share: a Deployment of the test AIM
image's OpenAI-compatible server at zero replicas, its Service and the HTTPScaledObject that
wakes it (`workload`); a wait until the add-on and KEDA have taken it up (`wait_taken_up`); and
a chat completion sent through the interceptor while the pods are polled, so that the answer
comes back with when the pod appeared and turned Ready (`held_request`). Everything it reads is
written by the real controllers and the kubelet (devtools/cluster/node.py, keda.py, kedahttp.py).
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

from devtools.cluster.kedahttp import API, KIND
from devtools.cluster.kube import Kube, condition, wait_for

KEDA_API: Final = "keda.sh/v1alpha1"
RESTRICTED: Final = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "runAsUser": 65532,
    "seccompProfile": {"type": "RuntimeDefault"},
}
POLL_S: Final = 0.1
"""How often `held_request` lists the pods: the resolution of its pod times."""


@dataclass(frozen=True)
class Workload:
    """Where a workload at zero lives and how a request reaches it."""

    namespace: str
    name: str
    image: str

    @property
    def host(self) -> str:
        """The Host its HTTPScaledObject routes: a name of the platform's, as a Gateway sets it."""
        return f"{self.name}.{self.namespace}.aim.internal"

    def objects(
        self,
        scaledown_s: int,
        env: dict[str, str] | None = None,
        timeouts: dict[str, str] | None = None,
    ) -> list[dict[str, Any]]:
        """The namespace, the server's Deployment at zero and its Service, and its HTTPScaledObject.

        `timeouts` go over the interceptor's own.
        """
        labels = {"app": self.name}
        meta = {"name": self.name, "namespace": self.namespace}
        scaled: dict[str, Any] = {
            "hosts": [self.host],
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": self.name,
                "service": self.name,
                "port": 80,
            },
            "replicas": {"min": 0, "max": 1},
            "scaledownPeriod": scaledown_s,
            "scalingMetric": {"concurrency": {"targetValue": 1}},
        }
        if timeouts:
            scaled["timeouts"] = timeouts
        return [
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": self.namespace,
                    "labels": {"pod-security.kubernetes.io/enforce": "restricted"},
                },
            },
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": meta,
                "spec": {
                    "replicas": 0,
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {"containers": [self._server(env or {})]},
                    },
                },
            },
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": meta,
                "spec": {
                    "selector": labels,
                    "ports": [{"name": "http", "port": 80, "targetPort": 8000}],
                },
            },
            {"apiVersion": API, "kind": KIND, "metadata": meta, "spec": scaled},
        ]

    def _server(self, env: dict[str, str]) -> dict[str, Any]:
        return {
            "name": "server",
            "image": self.image,
            "imagePullPolicy": "Never",
            "env": [{"name": k, "value": v} for k, v in env.items()],
            "ports": [{"name": "http", "containerPort": 8000}],
            "securityContext": RESTRICTED,
            # A probe every second, so that the pod is ready as soon as it serves (the default
            # period is 10 s, which a cold start would wait out).
            "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 1},
            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
        }

    def pods(self, kube: Kube) -> list[dict[str, Any]]:
        """Its pods, whatever their phase (one being deleted included)."""
        return kube.list("v1", "Pod", self.namespace, labels={"app": self.name})

    def explain(self, kube: Kube) -> str:
        """What the Deployment, KEDA and the pods say, for a wait that timed out."""
        ns = self.namespace
        deployment = kube.get("apps/v1", "Deployment", self.name, ns) or {}
        scaled = kube.get(KEDA_API, "ScaledObject", self.name, ns) or {}
        return json.dumps(
            {
                "deployment": deployment.get("status"),
                "scaledObject": scaled.get("status"),
                "pods": [p.get("status") for p in self.pods(kube)],
                "events": [
                    f"{e['involvedObject']['kind']}/{e['involvedObject']['name']}: {e['message']}"
                    for e in kube.list("v1", "Event", ns)
                ][-10:],
            },
            indent=1,
        )


def is_ready(pod: dict[str, Any]) -> bool:
    """The kubelet reports the pod Ready (its readiness probe passed)."""
    return (condition(pod, "Ready") or {}).get("status") == "True"


def wait_taken_up(kube: Kube, workload: Workload) -> None:
    """Wait until the add-on and KEDA have taken `workload` up, still at zero.

    The add-on's operator has made the ScaledObject and called the HTTPScaledObject Ready, KEDA's
    operator has called the ScaledObject Ready (it reached the add-on's scaler), and the Service
    has its (empty) EndpointSlice, which the interceptor waits on.
    """
    name, ns = workload.name, workload.namespace
    wait_for(
        "the add-on's operator making the ScaledObject",
        lambda: kube.get(KEDA_API, "ScaledObject", name, ns),
    )
    wait_for(
        "the add-on's operator reporting the HTTPScaledObject Ready",
        lambda: (condition(kube.get(API, KIND, name, ns), "Ready") or {}).get("status") == "True",
        explain=lambda: json.dumps(kube.get(API, KIND, name, ns), indent=1),
    )
    wait_for(
        "KEDA's operator reporting the ScaledObject Ready",
        lambda: (
            (condition(kube.get(KEDA_API, "ScaledObject", name, ns), "Ready") or {}).get("status")
            == "True"
        ),
        timeout_s=90,
        explain=lambda: workload.explain(kube),
    )
    wait_for(
        "the Service's (empty) EndpointSlice",
        lambda: (
            kube.list(
                "discovery.k8s.io/v1",
                "EndpointSlice",
                ns,
                labels={"kubernetes.io/service-name": name},
            )
            or None
        ),
    )


def chat(url: str, host: str, timeout_s: float) -> tuple[int, dict[str, str], bytes]:
    """A chat completion sent to `url` with `host` as the Host: status, headers and body."""
    address = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(address.hostname or "", address.port, timeout=timeout_s)
    body = json.dumps({"model": "Org/Small", "messages": [{"role": "user", "content": "hi"}]})
    try:
        conn.request(
            "POST",
            "/v1/chat/completions",
            body,
            {"Host": host, "Content-Type": "application/json"},
        )
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


@dataclass(frozen=True)
class Held:
    """A request sent while its workload was at zero, and what was seen while it was held.

    Times are seconds after it was sent; the pods' are from polling them every `POLL_S`.
    """

    status: int
    headers: dict[str, str]
    body: bytes
    answered_s: float
    pod_seen_s: float | None = None
    pod_ready_s: float | None = None


def held_request(kube: Kube, url: str, workload: Workload, timeout_s: float) -> Held:
    """Send a chat completion for `workload` to `url` and watch its pods until the answer comes."""
    seen = ready = None
    with ThreadPoolExecutor(max_workers=1) as pool:
        t0 = time.monotonic()
        sent = pool.submit(chat, url, workload.host, timeout_s)
        while not sent.done():
            now = time.monotonic() - t0
            found = workload.pods(kube)
            seen = seen if seen is not None or not found else now
            ready = ready if ready is not None or not any(map(is_ready, found)) else now
            time.sleep(POLL_S)
        status, headers, body = sent.result()
        answered = time.monotonic() - t0
    return Held(status, headers, body, answered, seen, ready)
