"""KEDA HTTP add-on HTTPScaledObject (http.keda.sh/v1alpha1): a predictor woken by its requests.

The add-on's interceptor routes a request by its Host to the HTTPScaledObject that names it,
counts it, holds it until the workload's Service has a ready endpoint, and forwards it there;
the add-on's operator makes a KEDA ScaledObject of the same name, so KEDA's HorizontalPodAutoscaler
is `keda-hpa-<name>`, and its scaler tells KEDA whether requests wait.
"""

from __future__ import annotations

from collections.abc import Mapping

from function.api.meta import Manifest


def build_http_scaled_object(  # noqa: PLR0913 - one keyword per field of the manifest is the point
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    host: str,
    deployment: str,
    service: str,
    port: int,
    max_replicas: int,
    scaledown_seconds: int,
    condition_wait_seconds: int,
    response_header_seconds: int | None,
    failover: tuple[str, int] | None = None,
) -> Manifest:
    """Scale `deployment` between 0 and `max_replicas` on requests for `host`.

    `scaledown_seconds` without a request scale it to zero; a request waits up to
    `condition_wait_seconds` for a ready endpoint, then its response headers up to
    `response_header_seconds` (the add-on's default is half a second, too short for a completion).
    A request still waiting then goes to the `failover` Service and port of the same namespace,
    else gets the interceptor's 502.
    """
    timeouts: Manifest = {"conditionWait": f"{condition_wait_seconds}s"}
    if response_header_seconds is not None:
        timeouts["responseHeader"] = f"{response_header_seconds}s"
    spec: Manifest = {
        "hosts": [host],
        "scaleTargetRef": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": deployment,
            "service": service,
            "port": port,
        },
        "replicas": {"min": 0, "max": max_replicas},
        "scaledownPeriod": scaledown_seconds,
        "timeouts": timeouts,
    }
    if failover is not None:
        # With a failover the add-on waits its `timeoutSeconds` (default 30), not conditionWait.
        spec["coldStartTimeoutFailoverRef"] = {
            "service": failover[0],
            "port": failover[1],
            "timeoutSeconds": condition_wait_seconds,
        }
    return {
        "apiVersion": "http.keda.sh/v1alpha1",
        "kind": "HTTPScaledObject",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": spec,
    }


def build_external_name_service(
    *, name: str, namespace: str, labels: Mapping[str, str], target: str
) -> Manifest:
    """A Service of `namespace` whose name resolves to `target`, a DNS name (a CNAME).

    The interceptor dials a failover by `<service>.<namespace>` of the HTTPScaledObject's own
    namespace; this is how that name reaches a Service the platform runs in another.
    """
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"type": "ExternalName", "externalName": target},
    }
