"""A real Gateway API implementation beside the end-to-end control plane: Traefik, on this host.

Traefik (built by scripts/build-tools.sh) watches the plane through a kubeconfig, programs the
Gateways of the GatewayClass it controls, writes their and their HTTPRoutes' status, and carries
the routes' traffic from its entry point on loopback to the backends' pod IPs, which this host
reaches as it reaches the node's pods. Only HTTP on one entry point: the Gateway's one listener
has that entry point's port, which is how Traefik pairs them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.cluster.controlplane import ControlPlane, http_ok
from devtools.cluster.kube import condition, wait_for
from devtools.tools import Tools, free_port

CONTROLLER: Final = "traefik.io/gateway-controller"
GATEWAY_CLASS: Final = "traefik"
GATEWAY_API: Final = "gateway.networking.k8s.io/v1"
GATEWAY_NAME: Final = "platform"
"""The one Gateway, which every team's routes share."""


@dataclass(frozen=True)
class Gateway:
    """A Gateway Traefik serves: where it is and the address clients reach its listener at."""

    namespace: str
    name: str
    url: str

    @property
    def parent_ref(self) -> dict[str, str]:
        """A route's (or runtime config's `spec.routing.gatewayRef`) reference to it."""
        return {"name": self.name, "namespace": self.namespace}


def static_config(web_port: int, ping_port: int) -> dict[str, Any]:
    """Traefik's static configuration: an HTTP entry point, a ping one, the Gateway provider."""
    return {
        "entryPoints": {
            "web": {"address": f"127.0.0.1:{web_port}"},
            "ping": {"address": f"127.0.0.1:{ping_port}"},
        },
        "ping": {"entryPoint": "ping"},
        "providers": {
            # Status addresses name loopback: clients here reach the entry point there.
            "kubernetesGateway": {"statusAddress": {"ip": "127.0.0.1"}},
        },
        "log": {"level": "INFO"},
        "global": {"checkNewVersion": False, "sendAnonymousUsage": False},
    }


def gateway_objects(namespace: str, name: str, port: int) -> list[dict[str, Any]]:
    """The GatewayClass Traefik controls and one shared Gateway, its listener on `port`.

    The listener takes routes from every namespace, as a platform's shared Gateway does.
    """
    return [
        {
            "apiVersion": GATEWAY_API,
            "kind": "GatewayClass",
            "metadata": {"name": GATEWAY_CLASS},
            "spec": {"controllerName": CONTROLLER},
        },
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {
            "apiVersion": GATEWAY_API,
            "kind": "Gateway",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "gatewayClassName": GATEWAY_CLASS,
                "listeners": [
                    {
                        "name": "web",
                        "protocol": "HTTP",
                        "port": port,
                        "allowedRoutes": {"namespaces": {"from": "All"}},
                    }
                ],
            },
        },
    ]


def _programmed(plane: ControlPlane, namespace: str, name: str) -> bool:
    gateway = plane.admin.get(GATEWAY_API, "Gateway", name, namespace)
    return (condition(gateway, "Programmed") or {}).get("status") == "True"


@contextlib.contextmanager
def start_traefik(
    tools: Tools, plane: ControlPlane, root: Path, *, namespace: str = "gateway"
) -> Iterator[Gateway]:
    """Start Traefik against `plane` with a Gateway it has programmed; stop it on exit.

    Needs Gateway API's CRDs installed. The GatewayClass and Gateway are applied before Traefik
    starts, and the Gateway is yielded once Traefik says it is Programmed.
    """
    root.mkdir(parents=True, exist_ok=True)
    web, ping = free_port(), free_port()
    config = root / "traefik.yml"
    config.write_text(yaml.safe_dump(static_config(web, ping)))
    for obj in gateway_objects(namespace, GATEWAY_NAME, web):
        plane.admin.apply(obj)
    traefik = plane.supervisor.start(
        "traefik",
        [tools.traefik, f"--configFile={config}"],
        env={"KUBECONFIG": str(plane.kubeconfig)},
    )
    try:
        plane.supervisor.wait_ready(traefik, lambda: http_ok(f"http://127.0.0.1:{ping}/ping"))
        wait_for(
            "Traefik to program the Gateway",
            lambda: _programmed(plane, namespace, GATEWAY_NAME),
            timeout_s=60,
            explain=lambda: traefik.tail(20),
        )
        yield Gateway(namespace, GATEWAY_NAME, f"http://127.0.0.1:{web}")
    finally:
        plane.supervisor.retire("traefik")
