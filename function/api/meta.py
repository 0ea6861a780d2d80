"""The API group, version and kinds every AIM object shares."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

GROUP: Final = "aim.silogen.ai"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
CATEGORY: Final = "aim"


class Kind(StrEnum):
    """The AIM kinds. Only the ones with a composer are served as XRDs so far."""

    SERVICE = "AIMService"
    MODEL = "AIMModel"
    CLUSTER_MODEL = "AIMClusterModel"
    SERVICE_TEMPLATE = "AIMServiceTemplate"
    CLUSTER_SERVICE_TEMPLATE = "AIMClusterServiceTemplate"


class Scope(StrEnum):
    """Where a resolved reference was found."""

    NAMESPACE = "Namespace"
    CLUSTER = "Cluster"
