"""AIMServiceTemplate / AIMClusterServiceTemplate: a runtime profile for one model on some hardware.

A template is also a discovery cache: a discovery Job finds which model artifacts the profile
needs and the result is kept in status for services and caches to reuse.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from function.api.cel import fixed_presence, immutable, validations
from function.api.common import (
    MODEL_ID_PATTERN,
    OBJECT_NAME_PATTERN,
    SOURCE_URI_RULE,
    ApiModel,
    EnvVar,
    FreeForm,
    LocalObjectReference,
    ModelSource,
    ObservedStatus,
    Quantity,
    ResolvedReference,
    ResourceRequirements,
    StringMap,
)
from function.api.hardware import Hardware, Metric, Precision, ProfileType

_IMMUTABLE_PROFILE = validations(
    fixed_presence("metric", "spec.metric"),
    fixed_presence("precision", "spec.precision"),
    fixed_presence("hardware", "spec.hardware"),
)


class ClusterServiceTemplateSpec(ApiModel):
    """Spec of an AIMClusterServiceTemplate, and the part every template shares."""

    model_config = ApiModel.model_config | {"json_schema_extra": _IMMUTABLE_PROFILE}

    model_name: str = Field(
        min_length=1,
        max_length=253,
        description="The AIMModel (same namespace) or AIMClusterModel this template runs.",
        json_schema_extra=validations(immutable("spec.modelName")),
    )
    metric: Metric | None = Field(
        default=None,
        description="Optimisation goal.",
        json_schema_extra=validations(immutable("spec.metric")),
    )
    precision: Precision | None = Field(
        default=None,
        description="Weight precision.",
        json_schema_extra=validations(immutable("spec.precision")),
    )
    hardware: Hardware | None = Field(
        default=None,
        description="GPUs (or CPU) per replica.",
        json_schema_extra=validations(immutable("spec.hardware")),
    )
    type: ProfileType | None = Field(default=None, description="Profile tuning level.")
    profile_id: str | None = Field(
        default=None, max_length=253, description="Runtime profile the container should select."
    )
    runtime_config_name: str = Field(
        default="default", min_length=1, max_length=253, description="Runtime config to apply."
    )
    model_sources: list[ModelSource] | None = Field(
        default=None,
        max_length=16,
        description="Model artifacts, given inline; discovery is then skipped.",
    )
    env: list[EnvVar] | None = Field(
        default=None, description="Environment of the inference container."
    )
    resources: ResourceRequirements | None = Field(
        default=None, description="Container resources, over the model's."
    )
    image_pull_secrets: list[LocalObjectReference] | None = Field(
        default=None, description="Secrets for pulling the model image."
    )
    service_account_name: str | None = Field(
        default=None,
        max_length=253,
        pattern=OBJECT_NAME_PATTERN,
        description="Service account of discovery and inference.",
    )


class TemplateCaching(ApiModel):
    """Pre-warming the template's model artifacts into caches in its namespace."""

    enabled: bool = Field(default=False, description="Compose an AIMTemplateCache.")
    env: list[EnvVar] | None = Field(
        default=None, description="Environment of the downloads (credentials, proxies)."
    )


class ServiceTemplateSpec(ClusterServiceTemplateSpec):
    """Spec of an AIMServiceTemplate; caching is a namespace concern, so only it may cache."""

    caching: TemplateCaching | None = Field(default=None, description="Model caching.")


class TemplateStatusValue(StrEnum):
    """The coarse lifecycle state shown in `kubectl get aimservicetemplate`."""

    PENDING = "Pending"
    PROGRESSING = "Progressing"
    AVAILABLE = "Available"
    DEGRADED = "Degraded"
    FAILED = "Failed"
    NOT_AVAILABLE = "NotAvailable"


class DiscoveredSource(ApiModel):
    """A model artifact the template needs, as discovery (or the spec) reported it."""

    name: str | None = Field(default=None, description="Name of the model.")
    model_id: str | None = Field(
        default=None,
        max_length=256,
        pattern=MODEL_ID_PATTERN,
        description="Canonical model id, `org/name`.",
    )
    source_uri: str = Field(
        max_length=2048,
        pattern=SOURCE_URI_RULE,
        description="Where the artifact is downloaded from: `hf://org/model` or `s3://bucket/key`.",
    )
    size: Quantity | None = Field(default=None, description="Storage the artifact needs.")


class ProfileMetadata(ApiModel):
    """The summary of a discovered profile."""

    engine: str | None = Field(default=None, description="Inference engine, e.g. `vllm`.")
    gpu: str | None = Field(default=None, description="GPU model of the profile.")
    gpu_count: int | None = Field(
        default=None, alias="gpu_count", ge=0, description="GPUs per replica."
    )
    metric: str | None = Field(default=None, description="Optimisation goal.")
    precision: str | None = Field(default=None, description="Weight precision.")
    type: str | None = Field(default=None, description="Tuning level, e.g. `optimized`.")


class Profile(ApiModel):
    """The runtime profile discovery selected."""

    engine_args: FreeForm | None = Field(
        default=None, alias="engine_args", description="Engine arguments, as the image gives them."
    )
    env_vars: StringMap | None = Field(
        default=None, alias="env_vars", description="Environment the profile sets."
    )
    metadata: ProfileMetadata | None = Field(default=None, description="Profile summary.")


class ResolvedProfile(ApiModel):
    """The profile the template runs: its spec where set, else discovery's answer.

    Auto-selection ranks templates by these values, and `kubectl get` shows them.
    """

    type: str | None = Field(default=None, description="Tuning level, e.g. `optimized`.")
    metric: str | None = Field(default=None, description="Optimisation goal.")
    precision: str | None = Field(default=None, description="Weight precision.")
    gpu: str | None = Field(default=None, description="GPU model.")
    gpu_count: int | None = Field(default=None, ge=0, description="GPUs per replica.")


class DiscoveryState(ApiModel):
    """Discovery attempts, kept in status so retries back off across reconciles."""

    attempts: int = Field(default=0, ge=0, description="Failed attempts so far.")
    last_attempt_time: str | None = Field(
        default=None, description="When the last attempt started (RFC 3339)."
    )
    last_failure_reason: str | None = Field(default=None, description="Why it last failed.")
    job: str | None = Field(default=None, description="Name of the current discovery Job.")
    last_failed_job: str | None = Field(
        default=None, description="The last Job counted as a failed attempt."
    )
    spec_hash: str | None = Field(
        default=None, description="Hash of the inputs the attempts were made with."
    )
    completed: bool | None = Field(
        default=None, description="Whether discovery succeeded for these inputs."
    )
    no_profile: bool | None = Field(
        default=None,
        description=(
            "Whether the image has no profile for these inputs; discovery runs again only when "
            "they change."
        ),
    )


class TemplateStatus(ObservedStatus):
    """Observed state of a template, written by the function."""

    status: TemplateStatusValue = Field(
        default=TemplateStatusValue.PENDING, description="Lifecycle state."
    )
    resolved_runtime_config: ResolvedReference | None = Field(
        default=None, description="The runtime config in use."
    )
    resolved_model: ResolvedReference | None = Field(default=None, description="The model.")
    model_sources: list[DiscoveredSource] | None = Field(
        default=None, description="Model artifacts the template needs."
    )
    profile: Profile | None = Field(default=None, description="The discovered runtime profile.")
    resolved_profile: ResolvedProfile | None = Field(
        default=None, description="The profile in effect: the spec's values, else discovery's."
    )
    hardware_summary: str | None = Field(
        default=None, description="Short hardware description, e.g. `2 x MI300X`."
    )
    discovery: DiscoveryState | None = Field(default=None, description="Discovery attempts.")
