"""AIMServiceTemplate / AIMClusterServiceTemplate: a runtime profile for one model on one GPU.

Only the function reads templates so far (the service resolves them); their XRDs, composer and
status come with the template issues. The spec is the newest seed generation's.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from function.api.common import (
    ApiModel,
    EnvVar,
    LocalObjectReference,
    Quantity,
    ResourceRequirements,
)

DEFAULT_GPU_RESOURCE = "amd.com/gpu"


class Metric(StrEnum):
    """What the runtime profile optimises for."""

    LATENCY = "latency"
    THROUGHPUT = "throughput"


class Precision(StrEnum):
    """Numeric precision of the model weights at run time."""

    AUTO = "auto"
    FP4 = "fp4"
    FP8 = "fp8"
    FP16 = "fp16"
    FP32 = "fp32"
    BF16 = "bf16"
    INT4 = "int4"
    INT8 = "int8"


class GpuRequirements(ApiModel):
    """The GPUs a template needs."""

    requests: int | None = Field(
        default=None, ge=0, le=2**31 - 1, description="Number of GPUs per replica."
    )
    model: str | None = Field(
        default=None, max_length=64, description="AMD GPU model to run on, for example MI300X."
    )
    min_vram: Quantity | None = Field(
        default=None, description="Smallest GPU memory acceptable; excludes `model`."
    )
    resource_name: str = Field(
        default=DEFAULT_GPU_RESOURCE,
        min_length=1,
        description="Extended resource name the GPU device plugin advertises.",
    )


class CpuRequirements(ApiModel):
    """CPU for templates that run without GPUs."""

    requests: Quantity = Field(description="CPU requested per replica.")
    limits: Quantity | None = Field(default=None, description="CPU limit per replica.")


class Hardware(ApiModel):
    """Hardware a template runs on."""

    gpu: GpuRequirements | None = Field(default=None, description="GPU requirements.")
    cpu: CpuRequirements | None = Field(default=None, description="CPU requirements.")


class ServiceTemplateSpec(ApiModel):
    """Spec shared by AIMServiceTemplate and AIMClusterServiceTemplate."""

    model_name: str = Field(min_length=1, description="The AIMModel or AIMClusterModel served.")
    metric: Metric | None = Field(default=None, description="Optimisation goal.")
    precision: Precision | None = Field(default=None, description="Weight precision.")
    hardware: Hardware | None = Field(default=None, description="Hardware requirements.")
    profile_id: str | None = Field(default=None, description="Runtime profile to select.")
    env: list[EnvVar] | None = Field(default=None, description="Extra runtime environment.")
    resources: ResourceRequirements | None = Field(
        default=None, description="Container resources, over the GPU-derived defaults."
    )
    image_pull_secrets: list[LocalObjectReference] | None = Field(
        default=None, description="Secrets for pulling the model image."
    )
    service_account_name: str | None = Field(
        default=None, description="Service account for pods run for this template."
    )
