"""The XRDs this package serves: one entry per AIM kind, tying models to Kubernetes names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from function.api import service
from function.api.meta import Kind


@dataclass(frozen=True)
class PrinterColumn:
    """A column of `kubectl get` output."""

    name: str
    json_path: str
    type: Literal["string", "integer", "date"] = "string"
    priority: int = 0


@dataclass(frozen=True)
class XrdDefinition:
    """Everything needed to generate one XRD and its Composition."""

    kind: Kind
    plural: str
    scope: Literal["Namespaced", "Cluster"]
    short_names: tuple[str, ...]
    description: str
    spec: type[BaseModel]
    status: type[BaseModel]
    columns: tuple[PrinterColumn, ...]

    @property
    def singular(self) -> str:
        """Lowercase kind, as Kubernetes names the singular resource."""
        return self.kind.lower()


AGE = PrinterColumn("Age", ".metadata.creationTimestamp", "date")

DEFINITIONS: tuple[XrdDefinition, ...] = (
    XrdDefinition(
        kind=Kind.SERVICE,
        plural="aimservices",
        scope="Namespaced",
        short_names=("aimsvc",),
        description="An inference endpoint for one AIM model, served by KServe on AMD GPUs.",
        spec=service.AIMServiceSpec,
        status=service.AIMServiceStatus,
        columns=(
            PrinterColumn("Status", ".status.status"),
            PrinterColumn("Model", ".spec.model.ref"),
            PrinterColumn("Image", ".spec.model.image", priority=1),
            PrinterColumn("Template", ".status.resolvedTemplate.name"),
            AGE,
        ),
    ),
)
