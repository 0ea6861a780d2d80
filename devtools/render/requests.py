"""RunFunctionRequests as Crossplane builds them, for the fuzz tier and the benchmarks.

Crossplane sends the XR, the objects composed for it (observed) and, for each requirement the
function stated, the objects that match its selector. These helpers build that request from
plain manifests and do the matching, so tools that play Crossplane's loop share one rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1


def run_function_request(
    xr: Mapping[str, Any],
    observed: Mapping[str, Mapping[str, Any]],
    required: Mapping[str, Sequence[Mapping[str, Any]]],
    tag: str = "",
) -> fnv1.RunFunctionRequest:
    """The request for `xr`, with its composed objects by resource name and its lookups' answers."""
    req = fnv1.RunFunctionRequest()
    req.meta.tag = tag
    req.observed.composite.resource.update(xr)
    for name, obj in observed.items():
        req.observed.resources[name].resource.update(obj)
    for name, items in required.items():
        req.required_resources[name].SetInParent()
        for item in items:
            req.required_resources[name].items.add().resource.update(item)
    return req


def selects(selector: fnv1.ResourceSelector, obj: Mapping[str, Any]) -> bool:
    """Whether Crossplane would return `obj` for `selector`: kind, name, namespace and labels."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    return (
        obj.get("kind") == selector.kind
        and (not selector.HasField("match_name") or meta.get("name") == selector.match_name)
        and (not selector.namespace or meta.get("namespace") == selector.namespace)
        and all(labels.get(k) == v for k, v in selector.match_labels.labels.items())
    )
