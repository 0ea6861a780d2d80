"""AIMService: what an application team creates to get an inference endpoint for a model."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Final, Literal

from pydantic import Field, model_validator

from function.api.cache import ADAPTER_RANKS
from function.api.cel import exactly_one, fixed_presence, immutable, rule, validations
from function.api.common import (
    OBJECT_NAME_PATTERN,
    ApiModel,
    EnvVar,
    LocalObjectReference,
    ModelSource,
    ObservedStatus,
    Quantity,
    ResolvedReference,
    ResourceRequirements,
)
from function.api.hardware import INT32_MAX, Hardware, Metric, Precision
from function.api.runtimeconfig import DURATION_PATTERN, RoutingConfig

DEFAULT_BASE_IMAGE: Final = "amdenterpriseai/aim-base:latest"


class CustomModel(ApiModel):
    """A model given inline by its weights; the service composes an AIMModel it owns."""

    base_image: str = Field(
        default=DEFAULT_BASE_IMAGE,
        min_length=1,
        max_length=1024,
        description="Image that downloads and serves the weights.",
    )
    model_sources: list[ModelSource] = Field(
        min_length=1, max_length=1, description="The weights to serve."
    )
    hardware: Hardware = Field(description="GPUs (or CPU) per replica.")


class ServiceModel(ApiModel):
    """Which model to serve: a catalog entry by name, an image, or custom weights."""

    model_config = ApiModel.model_config | {
        "json_schema_extra": validations(
            exactly_one(("ref", "image", "custom"), "spec.model"),
        ),
    }

    ref: str | None = Field(
        default=None,
        min_length=1,
        max_length=253,
        description="Name of an AIMModel in the namespace, else of an AIMClusterModel.",
    )
    image: str | None = Field(
        default=None,
        min_length=1,
        max_length=1024,
        description="Model image; the unique model with this image is used, else one is created.",
    )
    custom: CustomModel | None = Field(default=None, description="Custom weights to serve.")

    @model_validator(mode="after")
    def _one_source(self) -> ServiceModel:
        # The XRD's rule says the same at admission; this holds where admission did not run
        # (render, objects written before the rule existed).
        if sum(x is not None for x in (self.ref, self.image, self.custom)) != 1:
            msg = "set exactly one of spec.model.ref, spec.model.image, spec.model.custom"
            raise ValueError(msg)
        return self


class ServiceTemplateRef(ApiModel):
    """Which runtime template to use."""

    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=253,
        description="AIMServiceTemplate in the namespace, else AIMClusterServiceTemplate.",
    )
    allow_unoptimized: bool | None = Field(
        default=None,
        description="Let auto-selection pick templates of type `unoptimized` or `preview`.",
    )


class ServiceOverrides(ApiModel):
    """Profile settings over the template's; the service then runs on a derived template."""

    model_config = ApiModel.model_config | {
        "json_schema_extra": validations(
            fixed_presence("metric", "spec.overrides.metric"),
            fixed_presence("precision", "spec.overrides.precision"),
            fixed_presence("hardware", "spec.overrides.hardware"),
        ),
    }

    metric: Metric | None = Field(
        default=None,
        description="Optimisation goal.",
        json_schema_extra=validations(immutable("spec.overrides.metric")),
    )
    precision: Precision | None = Field(
        default=None,
        description="Weight precision.",
        json_schema_extra=validations(immutable("spec.overrides.precision")),
    )
    hardware: Hardware | None = Field(
        default=None,
        description="GPUs (or CPU) per replica.",
        json_schema_extra=validations(immutable("spec.overrides.hardware")),
    )


class MetricTarget(ApiModel):
    """The value a metric is held at (KServe's MetricTarget)."""

    type: Literal["Utilization", "Value", "AverageValue"] = Field(
        description="How the metric is compared: per pod on average, in total, or in percent."
    )
    value: Quantity | None = Field(default=None, description="The total to hold (`Value`).")
    average_value: Quantity | None = Field(
        default=None, description="The per-pod average to hold (`AverageValue`)."
    )
    average_utilization: int | None = Field(
        default=None, ge=1, le=100, description="Percent of the request (`Utilization`)."
    )


class PodMetricSource(ApiModel):
    """A metric the inference server exports, collected by OpenTelemetry (KServe's PodMetric)."""

    backend: Literal["opentelemetry"] = Field(
        default="opentelemetry", description="Where KEDA reads it: KServe's OpenTelemetry path."
    )
    metric_names: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(
        min_length=1,
        max_length=8,
        description="The metrics the collector scrapes, e.g. `vllm:num_requests_running`.",
    )
    query: str | None = Field(
        default=None, max_length=1024, description="The expression KEDA evaluates over them."
    )
    server_address: str | None = Field(
        default=None, max_length=253, description="The OpenTelemetry scaler's address."
    )
    operation_over_time: str | None = Field(
        default=None, max_length=32, description="How samples over time combine (e.g. `avg`)."
    )


class PodMetric(ApiModel):
    """A per-pod metric and its target."""

    metric: PodMetricSource = Field(description="The metric.")
    target: MetricTarget = Field(description="Its target.")


class AutoScalingMetric(ApiModel):
    """One metric the service scales on."""

    type: Literal["PodMetric"] = Field(description="Pod metrics from the inference server.")
    podmetric: PodMetric = Field(description="The pod metric.")


class AutoScaling(ApiModel):
    """Scaling on inference load through KServe's KEDA autoscaler class."""

    metrics: list[AutoScalingMetric] = Field(
        min_length=1, max_length=8, description="The metrics; KEDA scales on the highest."
    )


class ScaleToZero(ApiModel):
    """When a service at `minReplicas: 0` has no pod."""

    idle_after: str | None = Field(
        default=None,
        pattern=DURATION_PATTERN,
        description=(
            "How long without a request before the predictor has no pod, e.g. `15m`; default "
            "the runtime config's `scaleToZero.idleAfter`, else `5m`."
        ),
    )


class AdapterMode(StrEnum):
    """When a service's adapters can change."""

    STATIC = "static"
    DYNAMIC = "dynamic"


class ServiceAdapter(ApiModel):
    """A LoRA adapter the service serves on its model."""

    name: str = Field(
        min_length=1,
        max_length=253,
        pattern=OBJECT_NAME_PATTERN,
        description=(
            "An AIMModelCache of `type: adapter` in the service's namespace. Clients ask for "
            "the adapter by this name, as the `model` of a request."
        ),
    )


class AdapterRuntime(ApiModel):
    """How the inference server holds adapters, and the disk they are staged on."""

    max_rank: int | None = Field(
        default=None,
        ge=1,
        le=512,
        description=(
            "Dynamic mode: the highest adapter rank the server accepts, one of 1, 8, 16, 32, "
            "64, 128, 256, 320, 512 (default 32); an adapter above it is refused. Static mode "
            "takes the highest rank of its adapters."
        ),
        json_schema_extra=validations(
            rule(
                f"self in {list(ADAPTER_RANKS)}",
                "spec.adapterRuntime.maxRank must be one of 1, 8, 16, 32, 64, 128, 256, 320, 512",
            ),
        ),
    )
    disk_size: Quantity | None = Field(
        default=None,
        description="Size of the service's adapter disk (ReadWriteMany), default 10Gi.",
    )
    storage_class_name: str | None = Field(
        default=None,
        max_length=253,
        pattern=OBJECT_NAME_PATTERN,
        description=(
            "Storage class of the adapter disk, default the runtime config's "
            "`defaultStorageClassName`; it must offer ReadWriteMany."
        ),
    )


class AIMServiceSpec(ApiModel):
    """Desired state of an AIMService."""

    model_config = ApiModel.model_config | {
        "json_schema_extra": validations(
            fixed_presence("template", "spec.template"),
            fixed_presence("overrides", "spec.overrides"),
            rule(
                "!has(self.minReplicas) || !has(self.maxReplicas)"
                " || self.minReplicas <= self.maxReplicas",
                "spec.minReplicas must not exceed spec.maxReplicas",
            ),
            rule(
                "!has(self.minReplicas) || self.minReplicas > 0 || has(self.maxReplicas)",
                "spec.minReplicas 0 (scale to zero) needs spec.maxReplicas, at least 1: the most "
                "pods a woken service runs",
            ),
            rule(
                "!has(self.minReplicas) || self.minReplicas > 0 || !has(self.autoScaling)",
                "spec.minReplicas 0 scales on requests through the Gateway; remove "
                "spec.autoScaling, or set spec.minReplicas to at least 1 to scale on metrics",
            ),
            rule(
                "self.adapterMode == 'dynamic' || (has(self.adapters) == has(oldSelf.adapters)"
                " && (!has(self.adapters) || self.adapters == oldSelf.adapters))",
                "spec.adapters cannot change in static mode (spec.adapterMode: static, the "
                "default): recreate the service, or create it with spec.adapterMode: dynamic",
            ),
            rule(
                "!has(self.adapterRuntime) || has(self.adapters) || self.adapterMode == 'dynamic'",
                "spec.adapterRuntime sizes the disk adapters are staged on: list spec.adapters, "
                "or set spec.adapterMode: dynamic, or remove it",
            ),
            rule(
                "!has(self.adapterRuntime) || !has(self.adapterRuntime.maxRank)"
                " || self.adapterMode == 'dynamic'",
                "spec.adapterRuntime.maxRank is for dynamic mode: in static mode the server "
                "takes the highest rank of the adapters it starts with",
            ),
        ),
    }

    model: ServiceModel = Field(
        description="The model to serve.",
        json_schema_extra=validations(immutable("spec.model")),
    )
    template: ServiceTemplateRef | None = Field(
        default=None,
        description="The runtime template; auto-selected among the model's when omitted.",
        json_schema_extra=validations(immutable("spec.template")),
    )
    overrides: ServiceOverrides | None = Field(
        default=None, description="Profile settings over the template's."
    )
    cache_model: bool | None = Field(
        default=None,
        description=(
            "Pre-warm the model artifacts into caches and mount them. Unset follows the runtime "
            "config's `caching.mode` (off by default); true or false here wins over it. A "
            "custom model, or a template with `caching.enabled`, caches in any case."
        ),
    )
    replicas: int = Field(default=1, ge=0, le=INT32_MAX, description="Inference pods to run.")
    min_replicas: int | None = Field(
        default=None,
        ge=0,
        le=INT32_MAX,
        description=(
            "Fewest pods when autoscaled. 0 scales to zero: after `scaleToZero.idleAfter` "
            "without a request the predictor has no pod (its cache stays), and the next request "
            "through the Gateway is held until a pod is ready, then answered. Needs routing, "
            "`maxReplicas` and the KEDA HTTP add-on."
        ),
    )
    max_replicas: int | None = Field(
        default=None, ge=1, le=INT32_MAX, description="Most pods when autoscaled."
    )
    auto_scaling: AutoScaling | None = Field(
        default=None,
        description=(
            "Scale between minReplicas (default 1) and maxReplicas on the inference server's "
            "metrics, through KServe's KEDA class (needs KEDA and the OpenTelemetry operator)."
        ),
    )
    scale_to_zero: ScaleToZero | None = Field(
        default=None,
        description="With `minReplicas: 0`: how long without requests before zero pods.",
    )
    adapters: list[ServiceAdapter] | None = Field(
        default=None,
        max_length=64,
        description=(
            "LoRA adapters served on the model, each an AIMModelCache of `type: adapter` that "
            "names the model in `compatibleWith`. Staged onto a disk of the service's, mounted "
            "read-only at /adapters."
        ),
        json_schema_extra=validations(
            rule(
                "self.all(a, self.filter(b, b.name == a.name).size() == 1)",
                "spec.adapters names each adapter once",
            ),
        ),
    )
    adapter_mode: AdapterMode = Field(
        default=AdapterMode.STATIC,
        description=(
            "static: the adapters are fixed at creation and loaded when the server starts. "
            "dynamic: `spec.adapters` can change; adapters are staged and loaded while the "
            "server runs, without a restart."
        ),
        json_schema_extra=validations(immutable("spec.adapterMode")),
    )
    adapter_runtime: AdapterRuntime | None = Field(
        default=None, description="The adapters' rank cap and disk."
    )
    runtime_config_name: str = Field(
        default="default",
        min_length=1,
        max_length=253,
        description="AIMRuntimeConfig (merged over the AIMClusterRuntimeConfig) to apply.",
    )
    resources: ResourceRequirements | None = Field(
        default=None, description="Container resources, over the template's and the model's."
    )
    env: list[EnvVar] | None = Field(
        default=None, description="Environment of the inference container (highest precedence)."
    )
    routing: RoutingConfig | None = Field(
        default=None, description="HTTP routing through Gateway API, over the runtime config's."
    )
    image_pull_secrets: list[LocalObjectReference] | None = Field(
        default=None, description="Secrets for pulling the model image."
    )
    service_account_name: str | None = Field(
        default=None,
        max_length=253,
        pattern=OBJECT_NAME_PATTERN,
        description="Service account of the inference pods.",
    )


class ServiceStatusValue(StrEnum):
    """The coarse lifecycle state shown in `kubectl get aimservice`."""

    PENDING = "Pending"
    STARTING = "Starting"
    RUNNING = "Running"
    DEGRADED = "Degraded"
    FAILED = "Failed"


class RoutingStatus(ApiModel):
    """Where the service is reachable."""

    path: str | None = Field(default=None, description="HTTP path prefix of the HTTPRoute.")
    http_route: str | None = Field(default=None, description="Name of the composed HTTPRoute.")
    hostnames: list[str] | None = Field(
        default=None, description="Hostnames the route answers for; unset: any its listener has."
    )


class ReplicaStatus(ApiModel):
    """The inference pods: the bounds, and what the autoscaler has and wants."""

    min_replicas: int = Field(ge=0, le=INT32_MAX, description="Fewest pods.")
    max_replicas: int = Field(ge=0, le=INT32_MAX, description="Most pods.")
    current_replicas: int = Field(ge=0, le=INT32_MAX, description="Pods the autoscaler counts.")
    desired_replicas: int = Field(ge=0, le=INT32_MAX, description="Pods it wants.")
    replicas: str = Field(
        max_length=64,
        description="`<current>` for a fixed count, else `<current>/<desired> (<min>-<max>)`.",
    )


class AdapterState(StrEnum):
    """Where an adapter of the service is."""

    PENDING = "Pending"
    STAGING = "Staging"
    STAGED = "Staged"
    FAILED = "Failed"


class AdapterStatus(ApiModel):
    """One adapter of the service."""

    name: str = Field(max_length=253, description="The adapter, as `spec.adapters` names it.")
    state: AdapterState = Field(description="Pending, Staging, Staged or Failed.")
    message: str | None = Field(default=None, max_length=300, description="Why, when not Staged.")


class AIMServiceStatus(ObservedStatus):
    """Observed state of an AIMService, written by the function."""

    status: ServiceStatusValue = Field(
        default=ServiceStatusValue.PENDING, description="Lifecycle state."
    )
    resolved_runtime_config: ResolvedReference | None = Field(
        default=None, description="The runtime config in use."
    )
    resolved_model: ResolvedReference | None = Field(default=None, description="The model.")
    resolved_template: ResolvedReference | None = Field(
        default=None, description="The template in use."
    )
    inference_service: str | None = Field(
        default=None, description="Name of the composed KServe InferenceService."
    )
    template_cache: str | None = Field(
        default=None,
        description="The AIMTemplateCache filling the caches the service mounts, if it has one.",
    )
    routing: RoutingStatus | None = Field(default=None, description="HTTP routing.")
    runtime: ReplicaStatus | None = Field(
        default=None,
        description="Inference pods, from the autoscaler's HorizontalPodAutoscaler if it has one.",
    )
    adapters: list[AdapterStatus] | None = Field(
        default=None, max_length=64, description="The adapters, in the order they are declared."
    )
    adapter_max_rank: int | None = Field(
        default=None, ge=1, le=512, description="The rank cap the server is started with."
    )
    adapters_staged: str | None = Field(
        default=None,
        max_length=64,
        description="Digest of the adapter set last staged on the adapter disk.",
    )
