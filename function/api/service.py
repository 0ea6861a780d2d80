"""AIMService: what an application team creates to get an inference endpoint for a model."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from function.api.common import ApiModel, EnvVar, LocalObjectReference, ResourceRequirements
from function.api.meta import Scope


class ServiceModel(ApiModel):
    """Which model to serve: a catalog entry by name, or a container image."""

    model_config = ApiModel.model_config | {
        "json_schema_extra": {
            "x-kubernetes-validations": [
                {
                    "rule": "[has(self.ref), has(self.image)].filter(x, x).size() == 1",
                    "message": "set exactly one of spec.model.ref or spec.model.image",
                },
            ],
        },
    }

    ref: str | None = Field(
        default=None,
        min_length=1,
        description="Name of an AIMModel in the namespace, else of an AIMClusterModel.",
    )
    image: str | None = Field(
        default=None, min_length=1, description="Model container image to serve directly."
    )


class ServiceTemplateRef(ApiModel):
    """Which runtime template to use."""

    name: str | None = Field(
        default=None,
        min_length=1,
        description="AIMServiceTemplate in the namespace, else AIMClusterServiceTemplate.",
    )


class AIMServiceSpec(ApiModel):
    """Desired state of an AIMService."""

    model: ServiceModel = Field(description="The model to serve.")
    template: ServiceTemplateRef | None = Field(
        default=None, description="The runtime template; auto-selected when omitted."
    )
    replicas: int = Field(default=1, ge=0, le=2**31 - 1, description="Inference pods to run.")
    runtime_config_name: str = Field(
        default="default", min_length=1, description="AIMRuntimeConfig to apply."
    )
    resources: ResourceRequirements | None = Field(
        default=None, description="Container resources, over the template's."
    )
    env: list[EnvVar] | None = Field(
        default=None, description="Environment for the inference container (highest precedence)."
    )
    image_pull_secrets: list[LocalObjectReference] | None = Field(
        default=None, description="Secrets for pulling the model image."
    )
    service_account_name: str | None = Field(
        default=None, description="Service account of the inference pods."
    )


class ServiceStatusValue(StrEnum):
    """The coarse lifecycle state shown in `kubectl get aimservice`."""

    PENDING = "Pending"
    STARTING = "Starting"
    RUNNING = "Running"
    DEGRADED = "Degraded"
    FAILED = "Failed"


class ResolvedReference(ApiModel):
    """An AIM object a reference resolved to."""

    name: str = Field(description="Name of the object.")
    namespace: str | None = Field(default=None, description="Namespace; unset for cluster scope.")
    scope: Scope = Field(description="Whether a namespaced or a cluster-scoped object matched.")
    kind: str = Field(description="Kind of the object.")


class AIMServiceStatus(ApiModel):
    """Observed state of an AIMService, written by the function."""

    status: ServiceStatusValue = Field(
        default=ServiceStatusValue.PENDING, description="Lifecycle state."
    )
    resolved_template: ResolvedReference | None = Field(
        default=None, description="The template in use."
    )
    inference_service: str | None = Field(
        default=None, description="Name of the composed KServe InferenceService."
    )
