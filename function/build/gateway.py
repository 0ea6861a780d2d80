"""Gateway API HTTPRoute (gateway.networking.k8s.io/v1) in front of a KServe predictor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from function.api.meta import Manifest

PREDICTOR_PORT = 80
"""Port of the Service KServe creates for a predictor (it forwards to the container's 8000)."""


@dataclass(frozen=True)
class Waker:
    """A proxy in another namespace that holds requests until the predictor is up.

    The route sends requests there with their Host rewritten to `host`, by which the proxy knows
    which predictor they are for.
    """

    name: str
    namespace: str
    port: int
    host: str


def build_http_route(  # noqa: PLR0913 - one keyword per field of the manifest is the point
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    parent: Mapping[str, JsonValue],
    path: str,
    backend_service: str,
    hostnames: Sequence[str] = (),
    request_timeout: str | None = None,
    waker: Waker | None = None,
) -> Manifest:
    """Route `<path>/...` on the parent Gateway to the predictor, with the prefix stripped.

    Clients call `http://<gateway><path>/v1/chat/completions`; the model server sees
    `/v1/chat/completions`, as if it were called directly. With `hostnames`, only requests for
    those hosts match; without, the route has no `hostnames` field at all, as before there was
    one, so routes composed by earlier versions are not changed. With a `waker`, requests go to it
    instead, for `waker.host`.
    """
    rewrite: Manifest = {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}
    backend: Manifest = {
        "group": "",
        "kind": "Service",
        "name": backend_service,
        "namespace": namespace,
        "port": PREDICTOR_PORT,
    }
    if waker is not None:
        rewrite["hostname"] = waker.host
        backend |= {"name": waker.name, "namespace": waker.namespace, "port": waker.port}
    rule: Manifest = {
        "matches": [{"path": {"type": "PathPrefix", "value": path}}],
        "filters": [{"type": "URLRewrite", "urlRewrite": rewrite}],
        "backendRefs": [backend],
    }
    if request_timeout:
        rule["timeouts"] = {"request": request_timeout}
    metadata: Manifest = {"name": name, "namespace": namespace, "labels": dict(labels)}
    if annotations:
        metadata["annotations"] = dict(annotations)
    spec: Manifest = {"parentRefs": [dict(parent)]}
    if hostnames:
        spec["hostnames"] = list(hostnames)
    spec["rules"] = [rule]
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": metadata,
        "spec": spec,
    }
