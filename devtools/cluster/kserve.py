"""KServe's own controller beside the end-to-end control plane, as a host process.

The manager of the pinned KServe release (built by scripts/build-tools.sh) reconciles
InferenceServices into Deployments and Services in Standard (raw Deployment) mode, and serves its
admission webhooks (the InferenceService defaulter and validator, the pod mutator) to the API
server at a loopback URL with a certificate from the plane's CA. KEDA's ScaledObject and the
OpenTelemetry operator's collector CRDs are installed with KServe's, so that its KEDA class makes
those objects; KEDA itself runs where a test starts it (devtools/cluster/keda.py), the
OpenTelemetry operator does not, and its defaulting webhook is simulated for the field KServe's
collectors need (`CollectorDefaults`). Its configuration, CRDs and
webhook manifests are the release's own, read from its module; only what a plane without Knative,
Istio or an ingress needs is changed (see `config_map`).
"""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import shutil
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.cluster.controlplane import Component, ControlPlane, http_ok, wait_established
from devtools.cluster.pki import Pair, loopback_server
from devtools.tools import Tools, free_port

NAMESPACE: Final = "kserve"
CONFIG_MAP: Final = Path("config/configmap/inferenceservice.yaml")
CRDS: Final = Path("config/crd/full")
WEBHOOKS: Final = Path("config/webhook/manifests.yaml")


@dataclass(frozen=True)
class KServe:
    """A running KServe manager."""

    component: Component
    webhook_url: str


def config_map(src: Path, metric_scaler: str | None = None) -> dict[str, Any]:
    """The release's `inferenceservice-config`, for a cluster without Knative or an ingress.

    Standard (raw Deployment) is the default mode, as AIM runs it; no Ingress is created, since
    the AIM service composes its own HTTPRoute and the plane has no ingress controller. With
    `metric_scaler`, the ScaledObjects of KServe's OpenTelemetry metrics name that scaler
    instead of KEDA's OpenTelemetry add-on in its namespace (`keda-otel-scaler.keda.svc`).
    """
    cm: dict[str, Any] = yaml.safe_load((src / CONFIG_MAP).read_text())
    data = cm["data"]
    data["deploy"] = json.dumps({"defaultDeploymentMode": "Standard"})
    ingress = json.loads(data["ingress"])
    ingress["disableIngressCreation"] = True
    data["ingress"] = json.dumps(ingress)
    if metric_scaler is not None:
        collector = json.loads(data["opentelemetryCollector"])
        collector["metricScalerEndpoint"] = metric_scaler
        data["opentelemetryCollector"] = json.dumps(collector)
    cm["metadata"]["namespace"] = NAMESPACE
    return cm


def webhook_configurations(src: Path, base_url: str, ca_bundle: str) -> list[dict[str, Any]]:
    """The release's webhook configurations, pointed at the manager on loopback.

    Each reference to the in-cluster webhook Service becomes a URL with the plane's CA. (The
    LLM and local-model webhooks, which other managers serve, are in files of their own.)
    """
    configurations = []
    for doc in yaml.safe_load_all((src / WEBHOOKS).read_text()):
        if not doc:
            continue
        for hook in doc["webhooks"]:
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {"url": f"{base_url}{path}", "caBundle": ca_bundle}
        doc["metadata"] = {"name": doc["metadata"]["name"]}
        configurations.append(doc)
    return configurations


def _crds(tools: Tools) -> list[dict[str, Any]]:
    # KServe's own, and KEDA's and the OpenTelemetry operator's, which KServe looks for when it
    # starts: where they exist, its KEDA class makes a ScaledObject and a collector.
    files = sorted((tools.kserve_src / CRDS).glob("serving.kserve.io_*.yaml"))
    files += sorted(tools.autoscaling_crds.glob("*/*.yaml"))
    return [yaml.safe_load(p.read_text()) for p in files]


class CollectorDefaults(http.server.BaseHTTPRequestHandler):
    """Simulated: the OpenTelemetry operator's defaulting webhook, for one field.

    That operator does not run here, and KServe writes collectors with an empty
    `upgradeStrategy`, which the API server refuses until the operator's webhook has set it to
    `automatic`.
    """

    def do_POST(self) -> None:
        """Answer an AdmissionReview, setting `upgradeStrategy` where it is empty."""
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        request = review["request"]
        answer: dict[str, Any] = {"uid": request["uid"], "allowed": True}
        if not (request.get("object") or {}).get("spec", {}).get("upgradeStrategy"):
            patch = [{"op": "add", "path": "/spec/upgradeStrategy", "value": "automatic"}]
            answer["patchType"] = "JSONPatch"
            answer["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
        body = json.dumps({**review, "response": answer}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        """Quiet."""


@contextlib.contextmanager
def collector_defaults(plane: ControlPlane, pair: Pair) -> Iterator[None]:
    """`CollectorDefaults` on loopback, registered with the API server, while the context lasts."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CollectorDefaults)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pair.cert, pair.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hook: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "simulated-opentelemetry-operator"},
        "webhooks": [
            {
                "name": "mopentelemetrycollector.simulated.opentelemetry.io",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "clientConfig": {
                    "url": f"https://127.0.0.1:{server.server_port}/mutate",
                    "caBundle": base64.b64encode(plane.pki.ca.cert.read_bytes()).decode(),
                },
                "rules": [
                    {
                        "apiGroups": ["opentelemetry.io"],
                        "apiVersions": ["*"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["opentelemetrycollectors"],
                    }
                ],
            }
        ],
    }
    plane.admin.apply(hook)
    try:
        yield
    finally:
        plane.admin.delete(hook["apiVersion"], hook["kind"], hook["metadata"]["name"])
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def start_kserve(
    tools: Tools, plane: ControlPlane, root: Path, *, metric_scaler: str | None = None
) -> Iterator[KServe]:
    """Start KServe's manager against `plane`; stop it on exit.

    Its CRDs and configuration are applied first (the manager reads the config map once, at
    start; `metric_scaler`: see `config_map`); the webhooks are registered only once it serves
    them, so no admission fails for want of a server.
    """
    src, admin = tools.kserve_src, plane.admin
    for crd in _crds(tools):
        admin.apply(crd)
        wait_established(admin, crd["metadata"]["name"])
    admin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    admin.apply(config_map(src, metric_scaler))

    # controller-runtime reads its serving certificate from $TMPDIR/k8s-webhook-server/...
    tmp = root / "tmp"
    certs = tmp / "k8s-webhook-server" / "serving-certs"
    certs.mkdir(parents=True, exist_ok=True)
    pair = loopback_server(root / "pki", plane.pki.ca, "kserve-webhook")
    shutil.copy(pair.cert, certs / "tls.crt")
    shutil.copy(pair.key, certs / "tls.key")
    webhook, health = free_port(), free_port()
    manager = plane.supervisor.start(
        "kserve-manager",
        [
            tools.kserve_manager,
            f"--webhook-port={webhook}",
            f"--health-probe-addr=127.0.0.1:{health}",
            "--metrics-addr=0",  # no metrics listener: nothing scrapes it here
        ],
        env={"KUBECONFIG": str(plane.kubeconfig), "POD_NAMESPACE": NAMESPACE, "TMPDIR": str(tmp)},
    )
    try:
        plane.supervisor.wait_ready(manager, lambda: http_ok(f"http://127.0.0.1:{health}/readyz"))
        base_url = f"https://127.0.0.1:{webhook}"
        bundle = base64.b64encode(plane.pki.ca.cert.read_bytes()).decode()
        hooks = webhook_configurations(src, base_url, bundle)
        admin.apply_all(hooks)
        try:
            with collector_defaults(plane, pair):
                yield KServe(manager, base_url)
        finally:
            # Failing webhooks with no server behind them would refuse every InferenceService.
            for hook in hooks:
                admin.delete(hook["apiVersion"], hook["kind"], hook["metadata"]["name"])
    finally:
        plane.supervisor.retire("kserve-manager")
