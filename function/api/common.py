"""Building blocks shared by every AIM kind: the base model and Kubernetes-shaped field types.

The models here define the API once: the function parses XRs with them, and `devtools.gen.xrds`
generates the XRD schemas from them (see `devtools.gen.schema`).
"""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    WithJsonSchema,
    field_validator,
)
from pydantic.alias_generators import to_camel

from function.api.cel import rule, validations
from function.api.meta import Scope

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

StringMap = Annotated[
    dict[str, str],
    WithJsonSchema({"type": "object", "additionalProperties": {"type": "string"}}),
]
"""String keys to string values (labels, annotations)."""

FreeForm = Annotated[
    dict[str, JsonValue],
    WithJsonSchema({"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
]
"""An object whose schema belongs to Kubernetes (for example an EnvVar's `valueFrom`)."""


OBJECT_NAME_PATTERN: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
"""A Kubernetes object name (a DNS subdomain): what the API server accepts for the service
accounts, secrets and storage classes that composed pods and claims name."""
ENV_NAME_PATTERN: Final = r"^[\x20-\x3C\x3E-\x7E]+$"
"""What Kubernetes accepts for an environment variable's name: printable ASCII without `=`."""


class EnvVar(ApiModel):
    """A container environment variable, as in a Pod spec."""

    name: str = Field(
        min_length=1,
        pattern=ENV_NAME_PATTERN,
        description="Name of the environment variable (printable ASCII, no `=`).",
    )
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

    name: str = Field(
        min_length=1,
        max_length=253,
        pattern=OBJECT_NAME_PATTERN,
        description="Name of the referenced object.",
    )


MODEL_ID_PATTERN: Final = r"^[a-zA-Z0-9_-]+/[a-zA-Z0-9._-]+$"
SOURCE_URI_RULE: Final = r"^(hf|s3)://[^ \t\r\n]+$"
SOURCE_URI_MESSAGE: Final = (
    "sourceUri must be hf://<org>/<model> or s3://<bucket>/<key>, without spaces"
)
_SOURCE_URI: Final = re.compile(SOURCE_URI_RULE)


def _checked_source_uri(value: str) -> str:
    # The XRD's CEL rule says the same at admission; this holds where admission did not run.
    if not _SOURCE_URI.match(value):
        raise ValueError(SOURCE_URI_MESSAGE)
    return value


SourceUri = Annotated[str, AfterValidator(_checked_source_uri)]
"""A download location as the XRDs' CEL rule admits it."""


class ModelSource(ApiModel):
    """Where a model's weights come from, for downloading them into a cache."""

    model_id: str = Field(
        max_length=256,
        pattern=MODEL_ID_PATTERN,
        description="Canonical model identifier, `org/name`; it sets the cache mount path.",
    )
    source_uri: SourceUri = Field(
        max_length=2048,
        description="Download location: `hf://org/model` (Hugging Face) or `s3://bucket/key`.",
        json_schema_extra=validations(
            rule(f"self.matches('{SOURCE_URI_RULE}')", SOURCE_URI_MESSAGE)
        ),
    )
    size: Quantity | None = Field(
        default=None,
        description="Storage the weights need; found by a size-check Job when omitted.",
    )
    env: list[EnvVar] | None = Field(
        default=None,
        max_length=64,
        description="Environment for the download (credentials such as HF_TOKEN or AWS_*).",
    )


class ParentReference(ApiModel):
    """A Gateway API parent (usually a Gateway), as in `HTTPRoute.spec.parentRefs[]`."""

    group: str | None = Field(
        default=None, max_length=253, description="API group; `gateway.networking.k8s.io`."
    )
    kind: str | None = Field(default=None, max_length=63, description="Kind; `Gateway`.")
    name: str = Field(min_length=1, max_length=253, description="Name of the parent.")
    namespace: str | None = Field(
        default=None, max_length=63, description="Namespace of the parent; the route's if unset."
    )
    section_name: str | None = Field(
        default=None, max_length=253, description="Listener of the parent to attach to."
    )
    port: int | None = Field(default=None, ge=1, le=65535, description="Port of the listener.")


class ObservedStatus(ApiModel):
    """What every AIM status carries: which generation of the spec it describes."""

    observed_generation: int | None = Field(
        default=None,
        ge=0,
        description=(
            "The metadata.generation the function last composed; older than metadata.generation "
            "while a change is not reconciled yet."
        ),
    )


class ResolvedReference(ApiModel):
    """An AIM object a reference resolved to, as recorded in status."""

    name: str = Field(description="Name of the object.")
    namespace: str | None = Field(default=None, description="Namespace; unset for cluster scope.")
    scope: Scope = Field(
        description=(
            "Namespace or Cluster object. A runtime config found in both scopes is recorded as "
            "the namespace's, which is merged over the cluster's."
        )
    )
    kind: str | None = Field(default=None, description="Kind of the object.")
    uid: str | None = Field(default=None, description="UID of the object.")

    @field_validator("scope", mode="before")
    @classmethod
    def _merged_was_the_namespaces(cls, value: object) -> object:
        # Earlier versions recorded a config found in both scopes as `Merged`; a status they
        # wrote must still be read (it carries discovery results), as the namespace's.
        return Scope.NAMESPACE.value if value == "Merged" else value
