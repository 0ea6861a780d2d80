"""AIM objects one composer creates for another to reconcile.

A service's AIMModel, derived template and template cache, a model's templates, a template's
template cache, a template cache's model caches: all are built here.
"""

from __future__ import annotations

from collections.abc import Mapping

from function.api.common import ApiModel
from function.api.meta import API_VERSION, Kind, Manifest


def build_aim_object(
    kind: Kind, *, name: str, namespace: str | None, labels: Mapping[str, str], spec: ApiModel
) -> Manifest:
    """An AIM object with `spec` in API form (camelCase, unset fields left out).

    A cluster-scoped kind gets a None namespace.
    """
    metadata: Manifest = {"name": name, "labels": dict(labels)}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "apiVersion": API_VERSION,
        "kind": kind.value,
        "metadata": metadata,
        "spec": spec.model_dump(mode="json", by_alias=True, exclude_none=True),
    }
