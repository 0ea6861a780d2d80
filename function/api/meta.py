"""The API group, version and kinds every AIM object shares."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from pydantic import JsonValue

GROUP: Final = "aim.silogen.ai"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
CATEGORY: Final = "aim"

Manifest = dict[str, JsonValue]
"""A Kubernetes object in its JSON/YAML form, the way builders and composers pass it around."""


class Kind(StrEnum):
    """The AIM kinds, each served as an XRD."""

    CLUSTER_RUNTIME_CONFIG = "AIMClusterRuntimeConfig"
    RUNTIME_CONFIG = "AIMRuntimeConfig"
    CLUSTER_MODEL = "AIMClusterModel"
    MODEL = "AIMModel"
    CLUSTER_MODEL_SOURCE = "AIMClusterModelSource"
    CLUSTER_SERVICE_TEMPLATE = "AIMClusterServiceTemplate"
    SERVICE_TEMPLATE = "AIMServiceTemplate"
    SERVICE = "AIMService"
    TEMPLATE_CACHE = "AIMTemplateCache"
    MODEL_CACHE = "AIMModelCache"


class Scope(StrEnum):
    """Where a resolved reference was found: the AIM API's values but `Unknown`, never the case."""

    NAMESPACE = "Namespace"
    CLUSTER = "Cluster"
