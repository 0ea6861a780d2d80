"""Conditions, the health of each thing a service depends on, and readiness of composed kinds.

A composer reports one `Health` per component (runtime config, model, template, ...). Each becomes
a `<Component>Ready` condition, and the worst of them decides the coarse `status.status`: a user
reading `kubectl get` sees the headline, and the condition that caused it says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum, StrEnum

from pydantic import JsonValue

from function.state import Condition, ConditionStatus


class ConditionType(StrEnum):
    """AIM condition types set by the function (Crossplane owns Ready and Synced)."""

    RUNTIME_CONFIG_READY = "RuntimeConfigReady"
    MODEL_READY = "ModelReady"
    TEMPLATE_READY = "TemplateReady"
    CACHE_READY = "CacheReady"
    INFERENCE_SERVICE_READY = "InferenceServiceReady"
    HTTP_ROUTE_READY = "HTTPRouteReady"
    METADATA_EXTRACTED = "MetadataExtracted"
    TEMPLATES_READY = "TemplatesReady"
    GPU_READY = "GPUReady"
    DISCOVERED = "Discovered"
    SIZE_KNOWN = "SizeKnown"
    VOLUME_READY = "VolumeReady"
    DOWNLOAD_READY = "DownloadReady"


class Reason(StrEnum):
    """Machine-readable reasons for AIM conditions."""

    RESOLVING = "Resolving"
    RESOLVED = "Resolved"
    INVALID = "InvalidSpec"
    RUNTIME_CONFIG_RESOLVED = "RuntimeConfigResolved"
    DEFAULT_RUNTIME_CONFIG_ABSENT = "DefaultRuntimeConfigNotFound"
    RUNTIME_CONFIG_NOT_FOUND = "RuntimeConfigNotFound"
    MODEL_RESOLVED = "ModelResolved"
    MODEL_NOT_FOUND = "ModelNotFound"
    MODEL_AMBIGUOUS = "ModelAmbiguous"
    CREATING_MODEL = "CreatingModel"
    MODEL_NOT_READY = "ModelNotReady"
    TEMPLATE_NOT_FOUND = "TemplateNotFound"
    TEMPLATE_NOT_READY = "TemplateNotReady"
    TEMPLATE_INVALID = "TemplateInvalid"
    TEMPLATE_MODEL_MISMATCH = "TemplateModelMismatch"
    TEMPLATE_SELECTION_AMBIGUOUS = "TemplateSelectionAmbiguous"
    CREATING_DERIVED_TEMPLATE = "CreatingDerivedTemplate"
    WAITING = "WaitingForDependencies"
    CREATING = "Creating"
    READY = "Ready"
    GATEWAY_NOT_CONFIGURED = "GatewayNotConfigured"
    ROUTE_TEMPLATE_INVALID = "RouteTemplateInvalid"
    ROUTE_PENDING = "HTTPRoutePending"
    ROUTE_ACCEPTED = "HTTPRouteAccepted"
    ROUTE_BACKEND_UNRESOLVED = "HTTPRouteBackendNotResolved"
    # Models: image metadata.
    CUSTOM_MODEL = "CustomModel"
    METADATA_PROVIDED = "MetadataProvided"
    DISCOVERY_DISABLED = "DiscoveryDisabled"
    SECRET_NOT_FOUND = "SecretNotFound"  # noqa: S105 - a reason, not a password
    SECRET_INVALID = "SecretInvalid"  # noqa: S105 - a reason, not a password
    INSPECTING = "InspectingImage"
    IMAGE_LABELS_INVALID = "ImageLabelsInvalid"
    METADATA_EXTRACTED = "MetadataExtracted"
    # Models: their templates.
    AWAITING_METADATA = "AwaitingMetadata"
    NO_TEMPLATES_EXPECTED = "NoTemplatesExpected"
    CREATING_TEMPLATES = "CreatingTemplates"
    ALL_TEMPLATES_READY = "AllTemplatesReady"
    SOME_TEMPLATES_READY = "SomeTemplatesReady"
    ALL_TEMPLATES_FAILED = "AllTemplatesFailed"
    NO_TEMPLATES_AVAILABLE = "NoTemplatesAvailable"
    SOME_TEMPLATES_DEGRADED = "SomeTemplatesDegraded"
    TEMPLATES_PROGRESSING = "TemplatesProgressing"
    DEPLOYMENT_SKIPPED = "RecommendedDeploymentSkipped"
    # Templates: GPUs and discovery.
    GPU_AVAILABLE = "GPUAvailable"
    GPU_NOT_AVAILABLE = "GPUNotAvailable"
    NO_GPU_NEEDED = "NoGPURequired"
    INLINE_MODEL_SOURCES = "InlineModelSources"
    DISCOVERY_COMPLETE = "DiscoveryComplete"
    DISCOVERY_STARTING = "DiscoveryJobCreated"
    DISCOVERY_RUNNING = "DiscoveryRunning"
    DISCOVERY_FAILED = "DiscoveryFailed"
    DISCOVERY_BACKOFF = "AwaitingDiscoveryRetry"
    DISCOVERY_OUTPUT_INVALID = "DiscoveryOutputInvalid"
    DISCOVERY_OUTPUT_TOO_LARGE = "DiscoveryOutputTooLarge"
    DISCOVERY_IMAGE_PULL = "DiscoveryImagePullFailed"
    MODEL_IMAGE_MISSING = "ModelImageMissing"
    # Caches.
    CACHE_UNAUTHORIZED = "DownloadUnauthorized"
    CACHE_SOURCE_NOT_FOUND = "SourceNotFound"
    CACHE_STORAGE_FULL = "StorageFull"
    CACHE_DOWNLOAD_FAILED = "DownloadFailed"
    SIZE_UNKNOWN = "CheckingSize"
    SIZE_KNOWN = "SizeKnown"
    SIZE_CHECK_INVALID = "SizeCheckOutputInvalid"
    PVC_PENDING = "VolumePending"
    PVC_BOUND = "VolumeBound"
    DOWNLOADING = "Downloading"
    DOWNLOADED = "Downloaded"
    CACHE_WAITING = "WaitingForTemplate"
    CACHES_CREATING = "CreatingCaches"
    CACHES_READY = "AllCachesAvailable"
    CACHES_NOT_READY = "CachesNotAvailable"
    CACHE_FAILED = "CacheFailed"
    CACHE_LOST = "CacheLost"
    NO_CACHE = "NotCached"


class State(IntEnum):
    """How far along one component is; lower is worse, and the worst decides the headline."""

    FAILED = 0
    """The user must change something."""
    DEGRADED = 1
    """Something that worked is broken, or only part of the service can work."""
    PENDING = 2
    """Waiting for something upstream (a model, a template) to exist or become ready."""
    PROGRESSING = 3
    """Our own objects exist and are on their way to ready."""
    READY = 4


@dataclass(frozen=True)
class Health:
    """What one component reports: its condition, its state, and why."""

    condition: ConditionType
    state: State
    reason: str
    message: str

    def to_condition(self) -> Condition:
        """Positive polarity: True only when ready; Unknown while its inputs are being fetched."""
        if self.state is State.READY:
            status = ConditionStatus.TRUE
        elif self.reason == Reason.RESOLVING:
            status = ConditionStatus.UNKNOWN
        else:
            status = ConditionStatus.FALSE
        return Condition(self.condition, status, self.reason, self.message)


def worst(healths: Iterable[Health]) -> State:
    """The state of the least healthy component; PENDING when nothing was reported yet."""
    return min((h.state for h in healths), default=State.PENDING)


def condition_is_true(obj: Mapping[str, JsonValue], condition_type: str) -> bool:
    """Whether `status.conditions` of an observed object has `condition_type` set to True."""
    return find_condition(status_of(obj).get("conditions"), condition_type).get("status") == "True"


def find_condition(conditions: JsonValue, condition_type: str) -> Mapping[str, JsonValue]:
    """The condition of that type in a `conditions` list, or an empty mapping."""
    if isinstance(conditions, list):
        for c in conditions:
            if isinstance(c, dict) and c.get("type") == condition_type:
                return c
    return {}


def status_of(obj: Mapping[str, JsonValue] | None) -> Mapping[str, JsonValue]:
    """An object's `status`, empty when it has none yet."""
    status = obj.get("status") if obj is not None else None
    return status if isinstance(status, dict) else {}


def aim_status(obj: Mapping[str, JsonValue] | None) -> str | None:
    """The `status.status` value AIM objects report, if any."""
    value = status_of(obj).get("status")
    return value if isinstance(value, str) else None


def inference_service_ready(observed: Mapping[str, JsonValue] | None) -> bool:
    """KServe marks an InferenceService serving-ready with its `Ready` condition."""
    return observed is not None and condition_is_true(observed, "Ready")
