"""The condition types and reasons AIM objects report, and readiness rules per composed kind."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from pydantic import JsonValue


class ConditionType(StrEnum):
    """AIM condition types set by the function (Crossplane owns Ready and Synced)."""

    MODEL_READY = "ModelReady"
    TEMPLATE_READY = "TemplateReady"
    INFERENCE_SERVICE_READY = "InferenceServiceReady"


class Reason(StrEnum):
    """Machine-readable reasons for AIM conditions."""

    RESOLVING = "Resolving"
    UNSUPPORTED = "Unsupported"
    RESOLVED = "Resolved"
    TEMPLATE_NOT_SPECIFIED = "TemplateNotSpecified"
    TEMPLATE_NOT_FOUND = "TemplateNotFound"
    TEMPLATE_INVALID = "TemplateInvalid"
    CREATING = "Creating"
    READY = "Ready"


def condition_is_true(obj: Mapping[str, JsonValue], condition_type: str) -> bool:
    """Whether `status.conditions` of an observed object has `condition_type` set to True."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return False
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return False
    return any(
        isinstance(c, dict) and c.get("type") == condition_type and c.get("status") == "True"
        for c in conditions
    )


def inference_service_ready(observed: Mapping[str, JsonValue] | None) -> bool:
    """KServe marks an InferenceService serving-ready with its `Ready` condition."""
    return observed is not None and condition_is_true(observed, "Ready")
