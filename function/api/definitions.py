"""The XRDs this package serves: one entry per AIM kind, tying models to Kubernetes names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from function.api import cache, model, modelsource, runtimeconfig, service, template
from function.api.meta import Kind


@dataclass(frozen=True)
class PrinterColumn:
    """A column of `kubectl get` output (Crossplane adds SYNCED, READY, COMPOSITION and AGE)."""

    name: str
    json_path: str
    type: Literal["string", "integer", "boolean", "date"] = "string"
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


def _model_columns() -> tuple[PrinterColumn, ...]:
    return (
        PrinterColumn("Status", ".status.status"),
        PrinterColumn("Source", ".status.sourceType"),
        PrinterColumn("Image", ".spec.image"),
        PrinterColumn("Model", ".status.imageMetadata.model.canonicalName", priority=1),
    )


def _template_columns() -> tuple[PrinterColumn, ...]:
    return (
        # Resolved values: a template that leaves its profile to discovery shows what it found.
        PrinterColumn("Model", ".spec.modelName"),
        PrinterColumn("Status", ".status.status"),
        PrinterColumn("Type", ".status.resolvedProfile.type"),
        PrinterColumn("Metric", ".status.resolvedProfile.metric"),
        PrinterColumn("Precision", ".status.resolvedProfile.precision"),
        PrinterColumn("Hardware", ".status.hardwareSummary"),
    )


def _runtime_config_columns() -> tuple[PrinterColumn, ...]:
    return (
        PrinterColumn("Routing", ".spec.routing.enabled", "boolean"),
        PrinterColumn("Gateway", ".spec.routing.gatewayRef.name"),
        PrinterColumn("StorageClass", ".spec.defaultStorageClassName"),
    )


DEFINITIONS: tuple[XrdDefinition, ...] = (
    XrdDefinition(
        kind=Kind.CLUSTER_RUNTIME_CONFIG,
        plural="aimclusterruntimeconfigs",
        scope="Cluster",
        short_names=("aimclrc",),
        description="Cluster-wide defaults for AIM objects: storage, routing, environment.",
        spec=runtimeconfig.ClusterRuntimeConfigSpec,
        status=runtimeconfig.RuntimeConfigStatus,
        columns=_runtime_config_columns(),
    ),
    XrdDefinition(
        kind=Kind.RUNTIME_CONFIG,
        plural="aimruntimeconfigs",
        scope="Namespaced",
        short_names=("aimrc",),
        description="A namespace's AIM defaults and credentials, merged over the cluster's.",
        spec=runtimeconfig.RuntimeConfigSpec,
        status=runtimeconfig.RuntimeConfigStatus,
        columns=_runtime_config_columns(),
    ),
    XrdDefinition(
        kind=Kind.CLUSTER_MODEL,
        plural="aimclustermodels",
        scope="Cluster",
        short_names=("aimclmdl",),
        description="A model of the cluster-wide catalog: its image, or its custom weights.",
        spec=model.ModelSpec,
        status=model.ModelStatus,
        columns=_model_columns(),
    ),
    XrdDefinition(
        kind=Kind.MODEL,
        plural="aimmodels",
        scope="Namespaced",
        short_names=("aimmdl",),
        description="A model of a namespace's catalog; shadows the cluster model of its name.",
        spec=model.ModelSpec,
        status=model.ModelStatus,
        columns=_model_columns(),
    ),
    XrdDefinition(
        kind=Kind.CLUSTER_MODEL_SOURCE,
        plural="aimclustermodelsources",
        scope="Cluster",
        short_names=("aimclsrc",),
        description="Fills the cluster catalog with a model per matching image of a registry.",
        spec=modelsource.ClusterModelSourceSpec,
        status=modelsource.ClusterModelSourceStatus,
        columns=(
            PrinterColumn("Status", ".status.status"),
            PrinterColumn("Models", ".status.discoveredModels", "integer"),
            PrinterColumn("Available", ".status.availableModels", "integer"),
            PrinterColumn("Last Sync", ".status.lastSyncTime", "date"),
        ),
    ),
    XrdDefinition(
        kind=Kind.CLUSTER_SERVICE_TEMPLATE,
        plural="aimclusterservicetemplates",
        scope="Cluster",
        short_names=("aimcltpl",),
        description="A runtime profile for a model, available to every namespace.",
        spec=template.ClusterServiceTemplateSpec,
        status=template.TemplateStatus,
        columns=_template_columns(),
    ),
    XrdDefinition(
        kind=Kind.SERVICE_TEMPLATE,
        plural="aimservicetemplates",
        scope="Namespaced",
        short_names=("aimtpl",),
        description="A runtime profile for a model in one namespace, optionally cached.",
        spec=template.ServiceTemplateSpec,
        status=template.TemplateStatus,
        columns=_template_columns(),
    ),
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
            PrinterColumn("Model", ".status.resolvedModel.name"),
            PrinterColumn("Template", ".status.resolvedTemplate.name"),
            # What runs and what the autoscaler wants: `2` fixed, `2/3 (1-4)` autoscaled.
            PrinterColumn("Replicas", ".status.runtime.replicas"),
            PrinterColumn("Path", ".status.routing.path", priority=1),
            PrinterColumn("Hosts", ".status.routing.hostnames", priority=1),
        ),
    ),
    XrdDefinition(
        kind=Kind.TEMPLATE_CACHE,
        plural="aimtemplatecaches",
        scope="Namespaced",
        short_names=("aimtc",),
        description="Pre-warms every model artifact of a template into caches in the namespace.",
        spec=cache.TemplateCacheSpec,
        status=cache.TemplateCacheStatus,
        columns=(
            PrinterColumn("Template", ".spec.templateName"),
            PrinterColumn("Status", ".status.status"),
            PrinterColumn("TemplateKind", ".status.resolvedTemplateKind"),
            # An age: how long no service has relied on a cache a service created.
            PrinterColumn("Unused", ".status.unusedSince", "date"),
            # A time to come, which kubectl cannot show as an age: the timestamp itself.
            PrinterColumn("Retained Until", ".status.retainedUntil"),
        ),
    ),
    XrdDefinition(
        kind=Kind.MODEL_CACHE,
        plural="aimmodelcaches",
        scope="Namespaced",
        short_names=("aimmc",),
        description="One model artifact downloaded into a PVC that inference pods mount.",
        spec=cache.ModelCacheSpec,
        status=cache.ModelCacheStatus,
        columns=(
            PrinterColumn("Status", ".status.status"),
            PrinterColumn("Source", ".spec.sourceUri"),
            PrinterColumn("Size", ".status.size"),
            # Percent of the source in the volume, while the download's Job exists.
            PrinterColumn("Progress", ".status.download.percent", "integer"),
            PrinterColumn("PVC", ".status.persistentVolumeClaim"),
            PrinterColumn("Last Used", ".status.lastUsed", "date"),
        ),
    ),
)
