"""The profile a template runs: what its spec says, else what discovery found, else its label.

A template states some of its profile (metric, precision, GPUs, tuning level) and leaves the rest
to discovery; a template made from an image's recommended deployment also carries the tuning level
the deployment declared. Selection, the InferenceService and `kubectl get` must all agree on one
answer, so this module is the only place that decides it.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from function.api.template import ClusterServiceTemplateSpec, Profile, ResolvedProfile
from function.rules import labels


def effective_profile(
    spec: ClusterServiceTemplateSpec,
    discovered: Profile | None,
    template_labels: Mapping[str, JsonValue] | None = None,
) -> ResolvedProfile:
    """Each field from the spec when set, else the discovered profile, else the template label.

    Only the tuning level has a label fallback: it is the one thing a recommended deployment can
    declare that neither the template's spec nor a dry-run that predates it records.
    """
    found = discovered.metadata if discovered else None
    gpu = spec.hardware.gpu if spec.hardware else None
    gpu_model = (gpu.model or (gpu.models[0] if gpu.models else None)) if gpu else None
    declared = (template_labels or {}).get(labels.PROFILE_TYPE)
    return ResolvedProfile(
        type=_first(spec.type, found.type if found else None, declared),
        metric=_first(spec.metric, found.metric if found else None),
        precision=_first(spec.precision, found.precision if found else None),
        gpu=_first(gpu_model, found.gpu if found else None),
        gpu_count=gpu.requests
        if gpu and gpu.requests is not None
        else (found.gpu_count if found else None),
    )


def _first(*values: object) -> str | None:
    for value in values:
        if isinstance(value, str) and value:
            return value
    return None
