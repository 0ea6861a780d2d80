"""AIM objects one composer creates for another to reconcile: an AIMModel, a derived template."""

from __future__ import annotations

from collections.abc import Mapping

from function.api.common import ApiModel
from function.api.meta import API_VERSION, Kind
from function.build import Manifest


def build_aim_object(
    kind: Kind, *, name: str, namespace: str, labels: Mapping[str, str], spec: ApiModel
) -> Manifest:
    """A namespaced AIM object with `spec` in API form (camelCase, unset fields left out)."""
    return {
        "apiVersion": API_VERSION,
        "kind": kind.value,
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": spec.model_dump(mode="json", by_alias=True, exclude_none=True),
    }
