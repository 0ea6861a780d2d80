"""Building blocks shared by every AIM kind: the base model and Kubernetes-shaped field types.

The models here define the API once: the function parses XRs with them, and `devtools.xrds`
generates the XRD schemas from them (see `function.api.schema`).
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field, JsonValue, WithJsonSchema
from pydantic.alias_generators import to_camel

QUANTITY_PATTERN: Final = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?"
    r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


class ApiModel(BaseModel):
    """A part of an AIM spec: camelCase on the wire, unknown fields refused, immutable once parsed.

    `extra="forbid"` mirrors the API server, which prunes or rejects unknown fields; a field we
    parse but the XRD does not declare (or the reverse) shows up as a test failure, not a silent
    drop.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="forbid",
        frozen=True,
    )


Quantity = Annotated[
    int | str,
    WithJsonSchema(
        {
            # The shape controller-gen gives resource.Quantity, which the API server expects.
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": True,
        }
    ),
]
"""A Kubernetes resource quantity (`4`, `500m`, `16Gi`)."""

FreeForm = Annotated[
    dict[str, JsonValue],
    WithJsonSchema({"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
]
"""An object whose schema belongs to Kubernetes (for example an EnvVar's `valueFrom`)."""


class EnvVar(ApiModel):
    """A container environment variable, as in a Pod spec."""

    name: str = Field(min_length=1, description="Name of the environment variable.")
    value: str | None = Field(default=None, description="Literal value.")
    value_from: FreeForm | None = Field(
        default=None, description="Source for the value (secretKeyRef, configMapKeyRef, ...)."
    )


class ResourceRequirements(ApiModel):
    """Container resource requests and limits, as in a Pod spec."""

    requests: dict[str, Quantity] | None = Field(
        default=None, description="Minimum resources, by resource name."
    )
    limits: dict[str, Quantity] | None = Field(
        default=None, description="Maximum resources, by resource name."
    )


class LocalObjectReference(ApiModel):
    """A reference to an object in the same namespace."""

    name: str = Field(min_length=1, description="Name of the referenced object.")
