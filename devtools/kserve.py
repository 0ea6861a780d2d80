"""KServe's own controller beside the end-to-end control plane, as a host process.

The manager of the pinned KServe release (built by scripts/build-tools.sh) reconciles
InferenceServices into Deployments and Services in Standard (raw Deployment) mode, and serves its
admission webhooks (the InferenceService defaulter and validator, the pod mutator) to the API
server at a loopback URL with a certificate from the plane's CA. Its configuration, CRDs and
webhook manifests are the release's own, read from its module; only what a plane without Knative,
Istio or an ingress needs is changed (see `config_map`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.controlplane import Component, ControlPlane, http_ok, wait_established
from devtools.pki import loopback_server
from devtools.render import Tools, free_port

NAMESPACE: Final = "kserve"
CONFIG_MAP: Final = Path("config/configmap/inferenceservice.yaml")
CRDS: Final = Path("config/crd/full")
WEBHOOKS: Final = Path("config/webhook/manifests.yaml")


@dataclass(frozen=True)
class KServe:
    """A running KServe manager."""

    component: Component
    webhook_url: str


def config_map(src: Path) -> dict[str, Any]:
    """The release's `inferenceservice-config`, for a cluster without Knative or an ingress.

    Standard (raw Deployment) is the default mode, as AIM runs it; no Ingress is created, since
    the AIM service composes its own HTTPRoute and the plane has no ingress controller.
    """
    cm: dict[str, Any] = yaml.safe_load((src / CONFIG_MAP).read_text())
    data = cm["data"]
    data["deploy"] = json.dumps({"defaultDeploymentMode": "Standard"})
    ingress = json.loads(data["ingress"])
    ingress["disableIngressCreation"] = True
    data["ingress"] = json.dumps(ingress)
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


def _crds(src: Path) -> list[dict[str, Any]]:
    files = sorted((src / CRDS).glob("serving.kserve.io_*.yaml"))
    return [yaml.safe_load(p.read_text()) for p in files]


@contextlib.contextmanager
def start_kserve(tools: Tools, plane: ControlPlane, root: Path) -> Iterator[KServe]:
    """Start KServe's manager against `plane`; stop it on exit.

    Its CRDs and configuration are applied first (the manager reads the config map once, at
    start); the webhooks are registered only once it serves them, so no admission fails for want
    of a server.
    """
    src, admin = tools.kserve_src, plane.admin
    for crd in _crds(src):
        admin.apply(crd)
        wait_established(admin, crd["metadata"]["name"])
    admin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    admin.apply(config_map(src))

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
            yield KServe(manager, base_url)
        finally:
            # Failing webhooks with no server behind them would refuse every InferenceService.
            for hook in hooks:
                admin.delete(hook["apiVersion"], hook["kind"], hook["metadata"]["name"])
    finally:
        plane.supervisor.retire("kserve-manager")
