"""Precedence rules for what several AIM objects contribute to one container.

Container resources: GPU-derived defaults, then the template's, then the service's, key by key.
Environment: AIM defaults, template profile, template env, service env, merged by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import JsonValue

from function.api.common import EnvVar, ResourceRequirements
from function.api.template import ServiceTemplateSpec

DEFAULT_ENV: Mapping[str, str] = {
    "AIM_CACHE_PATH": "/workspace/cache",
    "VLLM_ENABLE_METRICS": "true",
}

ResourceMap = dict[str, dict[str, str]]


def gpu_default_resources(gpu_resource: str, gpu_count: int) -> ResourceMap:
    """Per-GPU CPU and memory that inference runtimes need; nothing without GPUs."""
    if gpu_count <= 0:
        return {}
    return {
        "requests": {
            "cpu": str(4 * gpu_count),
            "memory": f"{32 * gpu_count}Gi",
            gpu_resource: str(gpu_count),
        },
        "limits": {"memory": f"{48 * gpu_count}Gi", gpu_resource: str(gpu_count)},
    }


def merge_resources(base: ResourceMap, *overlays: ResourceRequirements | None) -> ResourceMap:
    """Overlay requests and limits key by key; later overlays win."""
    merged = {section: dict(values) for section, values in base.items()}
    for overlay in overlays:
        if overlay is None:
            continue
        for section, values in (("requests", overlay.requests), ("limits", overlay.limits)):
            for key, quantity in (values or {}).items():
                merged.setdefault(section, {})[key] = str(quantity)
    return merged


def merge_env(
    template: ServiceTemplateSpec, service_env: Sequence[EnvVar] | None
) -> list[dict[str, JsonValue]]:
    """The inference container's environment, one entry per name, sorted by name."""
    profile = {
        "AIM_PROFILE_ID": template.profile_id,
        "AIM_METRIC": template.metric,
        "AIM_PRECISION": template.precision,
    }
    by_name: dict[str, dict[str, JsonValue]] = {}
    layers: Iterable[Iterable[EnvVar]] = (
        (EnvVar(name=k, value=v) for k, v in DEFAULT_ENV.items()),
        (EnvVar(name=k, value=str(v)) for k, v in profile.items() if v is not None),
        template.env or (),
        service_env or (),
    )
    for layer in layers:
        for var in layer:
            by_name[var.name] = var.model_dump(exclude_none=True)
    return [by_name[name] for name in sorted(by_name)]
