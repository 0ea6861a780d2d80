"""Runtime-profile knobs shared by models, templates and services: metric, precision, hardware."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Final

from pydantic import Field, WithJsonSchema

from function.api.cel import at_least_one, rule, validations
from function.api.common import QUANTITY_PATTERN, ApiModel, Quantity

DEFAULT_GPU_RESOURCE: Final = "amd.com/gpu"
INT32_MAX: Final = 2**31 - 1

GpuModelName = Annotated[str, Field(min_length=1, max_length=64)]

CpuQuantity = Annotated[
    int | str,
    WithJsonSchema(
        {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
            # Bounded so the API server can afford the CEL rule comparing request and limit
            # (no CPU quantity is longer; the function reads none longer as a quantity either).
            "maxLength": 64,
            "x-kubernetes-int-or-string": True,
        }
    ),
]
"""A CPU quantity (`4`, `500m`)."""


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


class ProfileType(StrEnum):
    """How well a runtime profile has been tuned for its hardware."""

    OPTIMIZED = "optimized"
    PREVIEW = "preview"
    UNOPTIMIZED = "unoptimized"


class GpuRequirements(ApiModel):
    """The GPUs one replica needs."""

    model_config = ApiModel.model_config | {
        "json_schema_extra": validations(
            rule(
                "!(has(self.model) && has(self.models))",
                "set gpu.model (one GPU model) or gpu.models (a list), not both",
            ),
            rule(
                "!(has(self.model) && has(self.minVram))",
                "gpu.model and gpu.minVram are mutually exclusive: name a GPU model, "
                "or the minimum memory a GPU must have, not both",
            ),
        )
    }

    requests: int | None = Field(
        default=None, ge=0, le=INT32_MAX, description="Number of GPUs per replica."
    )
    model: GpuModelName | None = Field(
        default=None, description="The AMD GPU model to run on, for example `MI300X`."
    )
    models: list[GpuModelName] | None = Field(
        default=None,
        min_length=1,
        max_length=16,
        description="Any of these AMD GPU models will do (node affinity on all of them).",
    )
    min_vram: Quantity | None = Field(
        default=None, description="Smallest memory per GPU acceptable, for capacity planning."
    )
    resource_name: str = Field(
        default=DEFAULT_GPU_RESOURCE,
        min_length=1,
        max_length=253,
        description="Extended resource the GPU device plugin advertises.",
    )


class CpuRequirements(ApiModel):
    """CPU per replica: all of a CPU-only profile's, or what a GPU profile needs beside its GPUs."""

    model_config = ApiModel.model_config | {
        "json_schema_extra": validations(
            rule(
                # Both as strings: an int-or-string quantity may be written as a number.
                "!has(self.limits) || !isQuantity(string(self.requests))"
                " || !isQuantity(string(self.limits))"
                " || !quantity(string(self.requests)).isGreaterThan(quantity(string(self.limits)))",
                "cpu.requests must not be above cpu.limits: the API server refuses such pods; "
                "raise the limit or lower the request",
            ),
        )
    }

    requests: CpuQuantity = Field(
        description="CPU requested per replica; replaces the 4 CPUs per GPU otherwise requested."
    )
    limits: CpuQuantity | None = Field(
        default=None, description="CPU limit per replica (default: the request)."
    )


class Hardware(ApiModel):
    """The hardware a runtime profile runs on."""

    model_config = ApiModel.model_config | {
        "json_schema_extra": validations(at_least_one(("gpu", "cpu"), "hardware")),
    }

    gpu: GpuRequirements | None = Field(default=None, description="GPU requirements.")
    cpu: CpuRequirements | None = Field(default=None, description="CPU requirements.")
