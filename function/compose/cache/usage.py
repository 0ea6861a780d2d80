"""When a service last started with a model cache (`status.lastUsed`), and who relies on one.

A service uses a cache by mounting its PVC in the InferenceService it composes; it has started
once KServe reports that InferenceService Ready. So the cache lists its namespace's
InferenceServices and takes the latest time one that mounts its PVC turned Ready (its `Ready`
condition's `lastTransitionTime`). That time only moves when a service (re)starts, so the status
does not change on every call while services run; and it is never moved back, so a cache whose
services are gone keeps the last time it was used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pydantic import JsonValue

from function.api.meta import Manifest
from function.api.service import AIMServiceStatus
from function.kube.contract import Observed, Requirement
from function.kube.parse import parse_status
from function.kube.views import condition_of, field_at, string_at
from function.rules.discovery import rfc3339, timestamp

INFERENCE_SERVICES: Final = "inference-services"
"""Requirement name of the namespace's InferenceServices."""
_MAX_VOLUMES: Final = 256


def requirements(observed: Observed, *, has_volume: bool) -> list[Requirement]:
    """The namespace's InferenceServices, once the cache has a volume to mount."""
    if not has_volume:
        return []
    return [
        Requirement(
            INFERENCE_SERVICES,
            "serving.kserve.io/v1beta1",
            "InferenceService",
            namespace=observed.namespace,
        )
    ]


def last_used(observed: Observed, pvc: str | None, previous: str | None) -> str | None:
    """The latest start of a service mounting `pvc`, or `previous` when none is later."""
    best = timestamp(previous) if previous else None
    for isvc in observed.required.get(INFERENCE_SERVICES) or ():
        if pvc is None or pvc not in _claims(isvc):
            continue
        ready = condition_of(isvc, "Ready")
        if ready is None or not ready.is_true:
            continue
        started = timestamp(ready.last_transition_time)
        # Another controller's clock: a start after this call is not believed.
        if started is not None and started <= observed.now and (best is None or started > best):
            best = started
    return rfc3339(best) if best is not None else previous


def relied_on(service: Manifest) -> str | None:
    """The AIMTemplateCache a service relies on (`status.templateCache`), if any.

    A service names it while it waits for the cache's downloads as well as while it serves
    from it; template caches count their users by it.
    """
    status = parse_status(service, AIMServiceStatus)
    return status.template_cache if status else None


def _claims(isvc: Mapping[str, JsonValue]) -> set[str]:
    volumes = field_at(isvc, "spec", "predictor", "volumes")
    found = set()
    for volume in volumes[:_MAX_VOLUMES] if isinstance(volumes, list) else ():
        name = string_at(volume, "persistentVolumeClaim", "claimName")
        if name is not None:
            found.add(name)
    return found
