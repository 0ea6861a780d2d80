"""The KEDA HTTP add-on beside the end-to-end control plane: its three programs as host processes.

The add-on (built by scripts/build-tools.sh) scales an HTTP workload from zero and holds the
request that wakes it. Its interceptor is a reverse proxy that routes by Host (and path) to the
HTTPScaledObject naming the workload, counts the requests in flight, waits until the workload's
Service has a ready endpoint and then forwards to `<service>.<namespace>:<port>`; its scaler is
a KEDA external-push scaler that polls every interceptor's queue counts and tells KEDA's operator
when a workload is wanted; its operator turns each HTTPScaledObject into a ScaledObject whose
trigger names that scaler. KEDA (devtools/cluster/keda.py) does the scaling itself.

There is no cluster DNS and the programs are not pods, so each listener is fronted by a Service
with no selector whose EndpointSlice holds the node's address (`keda.host_service`), with the
stock install's names: the scaler finds the interceptors by their admin Service's slice, KEDA's
operator dials the scaler at `<service>.keda:<port>` and the interceptor dials workloads by
their Services' names, both resolved by the node's `ServiceHosts` lines in /etc/hosts and
routed by kube-proxy. Nothing is simulated: the workload, its readiness and its endpoints are
the node's, the kubelet's and kube-controller-manager's.
"""

from __future__ import annotations

import contextlib
import http.client
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import grpc
import yaml

from devtools.cluster.controlplane import (
    Component,
    ControlPlane,
    http_ok,
    node_ip,
    wait_established,
)
from devtools.cluster.keda import NAMESPACE, host_service
from devtools.cluster.kube import KubeError
from devtools.tools import Tools, free_port

API: Final = "http.keda.sh/v1alpha1"
KIND: Final = "HTTPScaledObject"
# The stock install's Service names (the add-on's Helm chart and config/), so that what a
# platform's manifests name is what runs here.
PROXY_SERVICE: Final = "keda-add-ons-http-interceptor-proxy"
ADMIN_SERVICE: Final = "keda-add-ons-http-interceptor-admin"
SCALER_SERVICE: Final = "keda-add-ons-http-external-scaler"
PROXY_PORT: Final = 8080
ADMIN_PORT: Final = 9090
SCALER_PORT: Final = 9090
"""The Services' ports; the processes listen on free ports of this host behind them."""


@dataclass(frozen=True)
class Timeouts:
    """How long the interceptor holds a request, in seconds.

    The add-on's defaults (1.5 s for the workload to have a ready endpoint, 0.5 s for the
    upstream's response headers) are for web servers already up; a pod's cold start, or an
    inference server's first answer, takes longer, and a request cut short is a 502.
    """

    condition_wait: float = 120.0
    response_header: float = 60.0

    def env(self) -> dict[str, str]:
        """The interceptor's environment variables for them.

        They are its globals; an HTTPScaledObject's `spec.timeouts` overrides them.
        """
        return {
            "KEDA_CONDITION_WAIT_TIMEOUT": f"{round(self.condition_wait * 1000)}ms",
            "KEDA_RESPONSE_HEADER_TIMEOUT": f"{round(self.response_header * 1000)}ms",
        }


@dataclass(frozen=True)
class KedaHttp:
    """A running add-on: its processes and where this host reaches the interceptor's proxy."""

    interceptor: Component
    scaler: Component
    operator: Component
    proxy_url: str
    timeouts: Timeouts

    @property
    def service_url(self) -> str:
        """The interceptor's proxy by its Service's name, as a client in the cluster reaches it.

        On this host the name resolves through `ServiceHosts`, and kube-proxy routes it.
        """
        return f"http://{PROXY_SERVICE}.{NAMESPACE}:{PROXY_PORT}"

    @property
    def backend_ref(self) -> dict[str, Any]:
        """An HTTPRoute's backendRef to the interceptor's proxy Service.

        A route in another namespace needs a ReferenceGrant in `keda` to name it.
        """
        return {
            "kind": "Service",
            "namespace": NAMESPACE,
            "name": PROXY_SERVICE,
            "port": PROXY_PORT,
        }


def _crd(tools: Tools) -> dict[str, Any]:
    [path] = sorted((tools.autoscaling_crds / "keda-http").glob("*.yaml"))
    crd: dict[str, Any] = yaml.safe_load(path.read_text())
    return crd


def fronts(ip: str, proxy: int, admin: int, scaler: int) -> list[dict[str, Any]]:
    """The Services, each with its EndpointSlice at `ip`, of the three listeners' ports."""
    return [
        *host_service(NAMESPACE, PROXY_SERVICE, ip, proxy, ("http", PROXY_PORT)),
        *host_service(NAMESPACE, ADMIN_SERVICE, ip, admin, ("admin", ADMIN_PORT)),
        *host_service(NAMESPACE, SCALER_SERVICE, ip, scaler, ("grpc", SCALER_PORT)),
    ]


def _interceptor_ready(port: int) -> bool:
    """The interceptor's own readiness (its routing table synced), probed as the kubelet does.

    That is a request no HTTPScaledObject routes, from a `kube-probe/` user agent.
    """
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/readyz", headers={"User-Agent": "kube-probe/1.35"})
        return conn.getresponse().status == 200  # noqa: PLR2004
    finally:
        conn.close()


def _grpc_serving(port: int, service: str) -> bool:
    """Whether grpc.health.v1 says `service` is SERVING on the loopback port.

    The protobuf messages are written by hand: a request's field 1 is the service's name, a
    response's field 1 the status, 1 for SERVING.
    """
    name = service.encode()
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        check = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=bytes,
            response_deserializer=bytes,
        )
        try:
            answer: bytes = check(b"\x0a" + bytes([len(name)]) + name, timeout=2)
        except grpc.RpcError:
            return False
    return answer == b"\x08\x01"


@contextlib.contextmanager
def start_keda_http(
    tools: Tools, plane: ControlPlane, timeouts: Timeouts | None = None
) -> Iterator[KedaHttp]:
    """Start the add-on's interceptor, scaler and operator against `plane`; stop them on exit.

    Needs KEDA running (`devtools.cluster.keda.start_keda`: its namespace, its ScaledObject CRD
    and its operator) and a node (`ServiceHosts` and kube-proxy carry the dials by name).
    """
    timeouts = timeouts or Timeouts()
    admin = plane.admin
    crd = _crd(tools)
    admin.apply(crd)
    wait_established(admin, crd["metadata"]["name"])
    proxy, admin_port, scaler_port = free_port(), free_port(), free_port()
    listeners = fronts(node_ip(), proxy, admin_port, scaler_port)
    admin.apply_all(listeners)
    kubeconfig = {"KUBECONFIG": str(plane.kubeconfig)}
    sup = plane.supervisor
    try:
        interceptor = sup.start(
            "keda-http-interceptor",
            [tools.keda_http_interceptor],
            env={
                **kubeconfig,
                "KEDA_HTTP_CURRENT_NAMESPACE": NAMESPACE,
                "KEDA_HTTP_PROXY_PORT": str(proxy),
                "KEDA_HTTP_ADMIN_PORT": str(admin_port),
                # Its Prometheus exporter's fixed default port (2223) could be taken on a shared
                # host, and nothing scrapes it here.
                "OTEL_PROM_EXPORTER_ENABLED": "false",
                # It proxies with Go's ProxyFromEnvironment: a developer's HTTP_PROXY would
                # capture its dials to in-cluster Services.
                "NO_PROXY": "*",
                **timeouts.env(),
            },
        )
        sup.wait_ready(interceptor, lambda: _interceptor_ready(proxy))
        scaler = sup.start(
            "keda-http-scaler",
            [tools.keda_http_scaler],
            env={
                **kubeconfig,
                "KEDA_HTTP_SCALER_PORT": str(scaler_port),
                "KEDA_HTTP_SCALER_TARGET_ADMIN_NAMESPACE": NAMESPACE,
                "KEDA_HTTP_SCALER_TARGET_ADMIN_SERVICE": ADMIN_SERVICE,
                "KEDA_HTTP_SCALER_TARGET_ADMIN_DEPLOYMENT": "keda-add-ons-http-interceptor",
                # The port it asks each address of the admin Service's slice on: the process's.
                "KEDA_HTTP_SCALER_TARGET_ADMIN_PORT": str(admin_port),
            },
        )
        # Serving once it has read the interceptors' queue counts through their slice.
        sup.wait_ready(scaler, lambda: _grpc_serving(scaler_port, "readiness"))
        health = free_port()
        operator = sup.start(
            "keda-http-operator",
            [
                tools.keda_http_operator,
                f"--metrics-bind-address=127.0.0.1:{free_port()}",
                f"--health-probe-bind-address=127.0.0.1:{health}",
            ],
            env={
                **kubeconfig,
                # What each ScaledObject's trigger names as `scalerAddress`:
                # <service>.<namespace>:<port>, which KEDA's operator dials.
                "KEDAHTTP_OPERATOR_EXTERNAL_SCALER_SERVICE": SCALER_SERVICE,
                "KEDAHTTP_OPERATOR_EXTERNAL_SCALER_PORT": str(SCALER_PORT),
                "KEDA_HTTP_OPERATOR_NAMESPACE": NAMESPACE,
            },
        )
        sup.wait_ready(operator, lambda: http_ok(f"http://127.0.0.1:{health}/readyz"))
        yield KedaHttp(interceptor, scaler, operator, f"http://127.0.0.1:{proxy}", timeouts)
    finally:
        for name in ("keda-http-operator", "keda-http-scaler", "keda-http-interceptor"):
            sup.retire(name)
        for obj in listeners:
            with contextlib.suppress(KubeError, OSError):  # the plane may be failing already
                meta = obj["metadata"]
                admin.delete(obj["apiVersion"], obj["kind"], meta["name"], meta["namespace"])
