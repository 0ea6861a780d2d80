"""KEDA beside the end-to-end control plane: its operator and metrics adapter as host processes.

KServe's KEDA autoscaler class makes a ScaledObject; KEDA's operator (of the release KServe pins,
built by scripts/build-tools.sh) turns it into a HorizontalPodAutoscaler on an external metric,
and its metrics adapter serves that metric to the HPA controller through the API server's
aggregation layer (`external.metrics.k8s.io`, an APIService naming a Service whose
EndpointSlice holds the node's address, where the adapter listens; kube-proxy routes the
Service's cluster IP here). The operator reads the metric from the trigger's scaler when the
adapter asks, over mTLS with a certificate from the plane's CA (KEDA's own certificate rotation
and admission webhooks are not run).

Simulated: the scaler. KServe's OpenTelemetry path names KEDA's OpenTelemetry add-on, a gRPC
external scaler that the collector feeds from the pods' metrics; neither runs here. In its place
`MetricScaler` speaks KEDA's external-scaler protocol on loopback and answers with the value the
test sets, so a test decides the load the autoscaler sees.
"""

from __future__ import annotations

import base64
import contextlib
import threading
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import grpc
import yaml
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message, message_factory

from devtools.cluster.controlplane import (
    Component,
    ControlPlane,
    http_ok,
    node_ip,
    wait_established,
)
from devtools.cluster.kube import Kube, KubeError, condition
from devtools.cluster.pki import loopback_server
from devtools.tools import Tools, free_port

NAMESPACE: Final = "keda"
ADAPTER_SERVICE: Final = "keda-metrics-apiserver"
EXTERNAL_METRICS: Final = "v1beta1.external.metrics.k8s.io"
SCALER_METRIC: Final = "value"
"""The one metric the stand-in scaler reports (KEDA names it `s<trigger>-value` on the HPA)."""


@dataclass(frozen=True)
class Keda:
    """A running KEDA, and the stand-in scaler whose value the test sets."""

    operator: Component
    adapter: Component
    scaler: MetricScaler


class MetricScaler:
    """Simulated: an external scaler (KEDA's `externalscaler.ExternalScaler` gRPC service).

    It reports one metric, `value`, whose target is the trigger's `targetValue` (as KServe
    writes it for an OpenTelemetry metric) and whose current value is what `set` last said,
    active whenever above zero. Every request it answers is counted per ScaledObject, so a test
    can tell KEDA asked.
    """

    def __init__(self) -> None:
        """Not serving yet: see `serve`."""
        self._lock = threading.Lock()
        self._value = 0.0
        self.asked: dict[str, int] = {}
        self.port = 0
        self._types = _external_scaler_types()

    @property
    def address(self) -> str:
        """Where KEDA's operator (on this host) dials it."""
        return f"127.0.0.1:{self.port}"

    def set(self, value: float) -> None:
        """The metric's value from now on (the sum over the service's pods)."""
        with self._lock:
            self._value = value

    def _seen(self, ref: dict[str, Any]) -> dict[str, str]:
        with self._lock:
            name = f"{ref.get('namespace', '')}/{ref.get('name', '')}"
            self.asked[name] = self.asked.get(name, 0) + 1
        metadata: dict[str, str] = ref.get("scalerMetadata") or {}
        return metadata

    def _is_active(self, ref: dict[str, Any]) -> dict[str, Any]:
        self._seen(ref)
        with self._lock:
            return {"result": self._value > 0}

    def _metric_spec(self, ref: dict[str, Any]) -> dict[str, Any]:
        target = float(self._seen(ref).get("targetValue") or "1")
        return {"metricSpecs": [{"metricName": SCALER_METRIC, "targetSizeFloat": target}]}

    def _metrics(self, request: dict[str, Any]) -> dict[str, Any]:
        self._seen(request.get("scaledObjectRef") or {})
        with self._lock:
            value = self._value
        # KEDA reads the integer field where the float one is zero.
        return {
            "metricValues": [
                {"metricName": SCALER_METRIC, "metricValue": int(value), "metricValueFloat": value}
            ]
        }

    @contextlib.contextmanager
    def serve(self) -> Iterator[MetricScaler]:
        """Serve on a loopback port (plaintext, as KEDA dials a scaler without TLS settings)."""
        types = self._types
        handlers = {
            "IsActive": _unary(
                self._is_active, types["ScaledObjectRef"], types["IsActiveResponse"]
            ),
            "GetMetricSpec": _unary(
                self._metric_spec, types["ScaledObjectRef"], types["GetMetricSpecResponse"]
            ),
            "GetMetrics": _unary(
                self._metrics, types["GetMetricsRequest"], types["GetMetricsResponse"]
            ),
        }
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("externalscaler.ExternalScaler", handlers),)
        )
        self.port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        try:
            yield self
        finally:
            server.stop(grace=None)


MessageType = type[message.Message]


def _unary(
    answer: Callable[[dict[str, Any]], dict[str, Any]], request: MessageType, response: MessageType
) -> grpc.RpcMethodHandler[message.Message, message.Message]:
    """A unary gRPC method: the request and the answer as the protobuf JSON mapping's dicts."""

    def handle(req: message.Message, _: grpc.ServicerContext) -> message.Message:
        as_dict = json_format.MessageToDict(req)
        return json_format.ParseDict(answer(as_dict), response())

    return grpc.unary_unary_rpc_method_handler(
        handle, request_deserializer=request.FromString, response_serializer=_serialize
    )


def _serialize(msg: message.Message) -> bytes:
    return msg.SerializeToString()


_PROTO: Final = {
    "ScaledObjectRef": [
        ("name", 1, "string"),
        ("namespace", 2, "string"),
        ("scalerMetadata", 3, "map"),
    ],
    "IsActiveResponse": [("result", 1, "bool")],
    "MetricSpec": [
        ("metricName", 1, "string"),
        ("targetSize", 2, "int64"),
        ("targetSizeFloat", 3, "double"),
    ],
    "GetMetricSpecResponse": [("metricSpecs", 1, ".externalscaler.MetricSpec")],
    "GetMetricsRequest": [
        ("scaledObjectRef", 1, ".externalscaler.ScaledObjectRef"),
        ("metricName", 2, "string"),
    ],
    "MetricValue": [
        ("metricName", 1, "string"),
        ("metricValue", 2, "int64"),
        ("metricValueFloat", 3, "double"),
    ],
    "GetMetricsResponse": [("metricValues", 1, ".externalscaler.MetricValue")],
}
"""KEDA's pkg/scalers/externalscaler/externalscaler.proto (v2.18), its messages field by field."""
_REPEATED: Final = {"metricSpecs", "metricValues"}


def _external_scaler_types() -> dict[str, MessageType]:
    """The protocol's message classes, built from `_PROTO` (no generated code to vendor)."""
    f = descriptor_pb2.FieldDescriptorProto
    scalars = {"string": f.TYPE_STRING, "bool": f.TYPE_BOOL, "int64": f.TYPE_INT64}
    scalars["double"] = f.TYPE_DOUBLE
    file = descriptor_pb2.FileDescriptorProto(
        name="aim_e2e/externalscaler.proto", package="externalscaler", syntax="proto3"
    )
    for name, fields in _PROTO.items():
        msg = file.message_type.add(name=name)
        for field_name, number, kind in fields:
            field = msg.field.add(name=field_name, number=number, json_name=field_name)
            field.label = f.LABEL_REPEATED if field_name in _REPEATED else f.LABEL_OPTIONAL
            if kind == "map":
                # A proto3 map is a repeated nested entry message with the map_entry option.
                entry = msg.nested_type.add(name="ScalerMetadataEntry")
                entry.options.map_entry = True
                entry.field.add(name="key", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
                entry.field.add(name="value", number=2, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
                field.label = f.LABEL_REPEATED
                field.type = f.TYPE_MESSAGE
                field.type_name = f".externalscaler.{name}.ScalerMetadataEntry"
            elif kind.startswith("."):
                field.type = f.TYPE_MESSAGE
                field.type_name = kind
            else:
                field.type = scalars[kind]
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"externalscaler.{name}"))
        for name in _PROTO
    }


def _crds(tools: Tools) -> list[dict[str, Any]]:
    # KEDA's operator watches every kind it defines, so it needs all of its CRDs.
    return [
        yaml.safe_load(p.read_text())
        for p in sorted((tools.autoscaling_crds / "keda").glob("*.yaml"))
    ]


def host_service(
    namespace: str, name: str, ip: str, port: int, service_port: tuple[str, int]
) -> list[dict[str, Any]]:
    """A Service with no selector, and its one EndpointSlice: `ip:port`, a host process.

    An EndpointSlice may not name a loopback address, so `ip` is the node's. kube-proxy routes
    the Service's cluster IP there, and a client that reads the slice (the API server for an
    APIService, the HTTP add-on's scaler for its interceptors) finds the process too.
    `service_port` is the Service's port: its name and number.
    """
    port_name, number = service_port
    return [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"ports": [{"name": port_name, "port": number, "targetPort": port}]},
        },
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": f"{name}-host",
                "namespace": namespace,
                "labels": {"kubernetes.io/service-name": name},
            },
            "addressType": "IPv4",
            "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}],
            "ports": [{"name": port_name, "port": port, "protocol": "TCP"}],
        },
    ]


def _adapter_front(namespace: str, ip: str, port: int, ca_bundle: str) -> list[dict[str, Any]]:
    """The Service, EndpointSlice and APIService that put the adapter behind the API server."""
    service = host_service(namespace, ADAPTER_SERVICE, ip, port, ("https", 443))
    return [
        *service,
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": EXTERNAL_METRICS},
            "spec": {
                "group": "external.metrics.k8s.io",
                "version": "v1beta1",
                "service": {"name": ADAPTER_SERVICE, "namespace": namespace, "port": 443},
                "caBundle": ca_bundle,
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
            },
        },
    ]


def _available(admin: Kube) -> bool:
    found = admin.get("apiregistration.k8s.io/v1", "APIService", EXTERNAL_METRICS)
    return (condition(found, "Available") or {}).get("status") == "True"


@contextlib.contextmanager
def start_keda(tools: Tools, plane: ControlPlane, root: Path) -> Iterator[Keda]:
    """Start KEDA's operator and metrics adapter against `plane`, and the stand-in scaler.

    Stop them on exit, with the APIService (an unavailable aggregated API slows every discovery
    of the API server's groups).
    """
    admin = plane.admin
    for crd in _crds(tools):
        admin.apply(crd)
        wait_established(admin, crd["metadata"]["name"])
    admin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})

    # One certificate for both ends of the operator's gRPC metrics service (KEDA's layout:
    # ca.crt, tls.crt, tls.key in one directory) and the adapter's serving certificate, which
    # the API server checks against the Service's name.
    ip = node_ip()
    certs = root / "certs"
    pair = loopback_server(
        root / "pki",
        plane.pki.ca,
        "keda",
        sans=(f"DNS:{ADAPTER_SERVICE}.{NAMESPACE}.svc", f"IP:{ip}"),
        client=True,
    )
    certs.mkdir(parents=True, exist_ok=True)
    for src, name in ((pair.cert, "tls.crt"), (pair.key, "tls.key"), (plane.pki.ca.cert, "ca.crt")):
        (certs / name).write_bytes(src.read_bytes())
    # The CAs scalers trust besides the system's (KEDA reads every file there as PEM
    # certificates): the plane's.
    trusted = root / "ca"
    trusted.mkdir(exist_ok=True)
    (trusted / "ca.crt").write_bytes(plane.pki.ca.cert.read_bytes())
    env = {
        "KUBECONFIG": str(plane.kubeconfig),
        "WATCH_NAMESPACE": "",  # every namespace
        "POD_NAMESPACE": NAMESPACE,
        "KEDA_CLUSTER_OBJECT_NAMESPACE": NAMESPACE,  # else read from a pod's service account
    }
    grpc_port, health, adapter_port = free_port(), free_port(), free_port()
    scaler = MetricScaler()
    front = _adapter_front(
        NAMESPACE, ip, adapter_port, base64.b64encode(plane.pki.ca.cert.read_bytes()).decode()
    )
    with scaler.serve():
        sup = plane.supervisor
        try:
            operator = sup.start(
                "keda-operator",
                [
                    tools.keda_operator,
                    f"--metrics-service-bind-address=127.0.0.1:{grpc_port}",
                    f"--health-probe-bind-address=127.0.0.1:{health}",
                    "--enable-prometheus-metrics=false",  # nothing scrapes it here
                    f"--cert-dir={certs}",
                    f"--ca-dir={trusted}",
                    "--zap-log-level=info",
                ],
                env=env,
            )
            sup.wait_ready(operator, lambda: http_ok(f"http://127.0.0.1:{health}/readyz"))
            kubeconfig = str(plane.kubeconfig)
            adapter = sup.start(
                "keda-adapter",
                [
                    tools.keda_adapter,
                    f"--bind-address={ip}",
                    f"--secure-port={adapter_port}",
                    f"--cert-dir={certs}",
                    f"--tls-cert-file={certs / 'tls.crt'}",
                    f"--tls-private-key-file={certs / 'tls.key'}",
                    f"--metrics-service-address=127.0.0.1:{grpc_port}",
                    f"--port={free_port()}",  # its own /metrics listener (default :8080)
                    f"--lister-kubeconfig={kubeconfig}",
                    f"--authentication-kubeconfig={kubeconfig}",
                    f"--authorization-kubeconfig={kubeconfig}",
                ],
                env=env,
            )
            admin.apply_all(front)
            sup.wait_ready(adapter, lambda: _available(admin), timeout_s=90)
            yield Keda(operator, adapter, scaler)
        finally:
            with contextlib.suppress(KubeError, OSError):  # the plane may be failing already
                admin.delete("apiregistration.k8s.io/v1", "APIService", EXTERNAL_METRICS)
            sup.retire("keda-adapter")
            sup.retire("keda-operator")
