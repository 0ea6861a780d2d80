"""AIMModel / AIMClusterModel: the model catalog, mapping a model name to its container image.

A model either points at an AIM image (whose labels describe it and recommend deployments) or is
a custom model: weights from `modelSources`, served by a base image, on explicit hardware.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from function.api.cel import rule, validations
from function.api.common import (
    OBJECT_NAME_PATTERN,
    ApiModel,
    EnvVar,
    LocalObjectReference,
    ModelSource,
    ObservedStatus,
    ResolvedReference,
    ResourceRequirements,
    StringMap,
)
from function.api.hardware import Hardware, Metric, Precision, ProfileType


class DiscoveryConfig(ApiModel):
    """Whether the model's image is inspected and templates are made from what it recommends.

    Discovery is attempted automatically (seed 004): a model without `spec.discovery`, or whose
    block omits `enabled`, reads its image's labels; `enabled: false` turns it off.
    """

    enabled: bool = Field(
        default=True,
        description="Read the image's labels from its registry; set false to turn it off.",
    )
    auto_create_templates: bool = Field(
        default=True,
        description="Create a service template for each deployment the image recommends.",
    )


class ProfileSelector(ApiModel):
    """The runtime profile a custom template asks for."""

    metric: Metric | None = Field(default=None, description="Optimisation goal.")
    precision: Precision | None = Field(default=None, description="Weight precision.")


class CustomTemplate(ApiModel):
    """A template generated for a custom model; it inherits `custom.hardware` unless it has one."""

    name: str | None = Field(
        default=None, min_length=1, max_length=63, description="Name part of the template."
    )
    type: ProfileType = Field(default=ProfileType.UNOPTIMIZED, description="Profile tuning level.")
    env: list[EnvVar] | None = Field(
        default=None, max_length=64, description="Environment of the inference container."
    )
    hardware: Hardware | None = Field(default=None, description="Hardware, over custom.hardware.")
    profile: ProfileSelector | None = Field(default=None, description="Metric and precision.")


class CustomModelConfig(ApiModel):
    """What a custom model (one with `modelSources`) runs on, and its templates."""

    hardware: Hardware | None = Field(default=None, description="Hardware of every template.")
    type: ProfileType | None = Field(default=None, description="Profile tuning level.")
    templates: list[CustomTemplate] | None = Field(
        default=None,
        max_length=16,
        description="Templates to generate; one from custom.hardware when omitted.",
    )


class RecommendedDeployment(ApiModel):
    """One deployment an image recommends."""

    gpu_model: str | None = Field(default=None, description="GPU model, e.g. `MI300X`.")
    gpu_count: int | None = Field(default=None, ge=0, description="GPUs per replica.")
    precision: str | None = Field(default=None, description="Precision, e.g. `fp8`.")
    metric: str | None = Field(default=None, description="`latency` or `throughput`.")
    profile_id: str | None = Field(
        default=None, description="Runtime profile inside the image this deployment selects."
    )
    type: str | None = Field(
        default=None, description="Tuning level of the deployment's profile, e.g. `optimized`."
    )
    description: str | None = Field(default=None, description="What this deployment is for.")


class ModelMetadata(ApiModel):
    """What an AIM image's `com.amd.aim.*` (or legacy `org.amd.silogen.*`) labels say."""

    canonical_name: str | None = Field(default=None, description="Model id, e.g. `org/name`.")
    source: str | None = Field(default=None, description="Where the model is published.")
    tags: list[str] | None = Field(default=None, description="Descriptive tags.")
    versions: list[str] | None = Field(default=None, description="Available versions.")
    variants: list[str] | None = Field(default=None, description="Model variants.")
    hf_token_required: bool | None = Field(
        default=None, description="Whether a Hugging Face token is needed."
    )
    title: str | None = Field(default=None, description="Display title.")
    description_full: str | None = Field(default=None, description="Long description.")
    release_notes: str | None = Field(default=None, description="Release notes.")
    recommended_deployments: list[RecommendedDeployment] | None = Field(
        default=None, description="Deployments the image recommends; each becomes a template."
    )


class OciMetadata(ApiModel):
    """The image's standard `org.opencontainers.image.*` labels."""

    title: str | None = Field(default=None, description="Human-readable title.")
    description: str | None = Field(default=None, description="Short description.")
    licenses: str | None = Field(default=None, description="SPDX license expression.")
    vendor: str | None = Field(default=None, description="Producing organisation.")
    authors: str | None = Field(default=None, description="Authors' contact details.")
    source: str | None = Field(default=None, description="Source repository URL.")
    documentation: str | None = Field(default=None, description="Documentation URL.")
    created: str | None = Field(default=None, description="Creation time.")
    revision: str | None = Field(default=None, description="Source revision.")
    version: str | None = Field(default=None, description="Image version.")


class ImageMetadata(ApiModel):
    """Metadata of a model image, read from its registry or given by hand (air-gapped sites)."""

    model: ModelMetadata | None = Field(default=None, description="AIM model labels.")
    oci: OciMetadata | None = Field(default=None, description="OCI image labels.")


class ModelSpec(ApiModel):
    """Spec shared by AIMModel and AIMClusterModel."""

    model_config = ApiModel.model_config | {
        "json_schema_extra": validations(
            rule(
                "!has(self.custom) || (has(self.modelSources) && size(self.modelSources) > 0)",
                "spec.custom describes a custom model: also set spec.modelSources",
            ),
            rule(
                "!has(self.modelSources) || size(self.modelSources) == 0"
                " || (has(self.custom) && (has(self.custom.hardware)"
                " || (has(self.custom.templates) && size(self.custom.templates) > 0"
                " && self.custom.templates.all(t, has(t.hardware)))))",
                "a model with modelSources needs hardware: set spec.custom.hardware, or hardware "
                "on every entry of spec.custom.templates",
            ),
        )
    }

    image: str = Field(
        min_length=1,
        max_length=1024,
        description="Container image that serves the model (for custom models, a base image).",
    )
    discovery: DiscoveryConfig | None = Field(
        default=None,
        description="Image inspection and template auto-creation; on when omitted.",
    )
    default_service_template: str | None = Field(
        default=None,
        min_length=1,
        max_length=253,
        description="Template services use when they name none.",
    )
    runtime_config_name: str = Field(
        default="default", min_length=1, max_length=253, description="Runtime config to apply."
    )
    image_pull_secrets: list[LocalObjectReference] | None = Field(
        default=None,
        description="Secrets for pulling the image (inspection and inference).",
    )
    service_account_name: str | None = Field(
        default=None,
        max_length=253,
        pattern=OBJECT_NAME_PATTERN,
        description="Service account of discovery Jobs.",
    )
    resources: ResourceRequirements | None = Field(
        default=None, description="Baseline container resources; templates and services override."
    )
    env: list[EnvVar] | None = Field(
        default=None, description="Environment of the inference container."
    )
    model_sources: list[ModelSource] | None = Field(
        default=None,
        max_length=1,
        description="Weights to download (custom model); one container serves one set of weights.",
    )
    custom: CustomModelConfig | None = Field(
        default=None, description="Hardware and templates of a custom model."
    )
    image_metadata: ImageMetadata | None = Field(
        default=None, description="Metadata given by hand; the registry is then not asked."
    )

    @property
    def discovery_enabled(self) -> bool:
        """Whether the image's labels are read: on unless `spec.discovery.enabled` is false."""
        return self.discovery is None or self.discovery.enabled


class ModelStatusValue(StrEnum):
    """The coarse lifecycle state shown in `kubectl get aimmodel`."""

    PENDING = "Pending"
    PROGRESSING = "Progressing"
    READY = "Ready"
    DEGRADED = "Degraded"
    FAILED = "Failed"


class SourceType(StrEnum):
    """Whether the model comes from an AIM image or from model sources."""

    IMAGE = "Image"
    CUSTOM = "Custom"


class ModelStatus(ObservedStatus):
    """Observed state of a model, written by the function."""

    status: ModelStatusValue = Field(
        default=ModelStatusValue.PENDING, description="Lifecycle state."
    )
    source_type: SourceType | None = Field(default=None, description="Image or Custom.")
    resolved_runtime_config: ResolvedReference | None = Field(
        default=None, description="The runtime config in use."
    )
    image_metadata: ImageMetadata | None = Field(
        default=None, description="Metadata read from the image, or spec.imageMetadata."
    )
    image_digest: str | None = Field(
        default=None, description="Digest of the image the metadata was read from."
    )
    inspected_image: str | None = Field(
        default=None,
        description="The spec.image the metadata was read for; the registry is asked again "
        "only when spec.image changes.",
    )
    image_labels: StringMap | None = Field(
        default=None, description="The image's labels as the registry served them."
    )
    image_entrypoint: list[str] | None = Field(
        default=None, description="The image's entrypoint, which discovery Jobs run."
    )
    templates: int | None = Field(
        default=None, ge=0, description="Number of service templates for this model."
    )
