"""Precedence rules for what several AIM objects contribute to one container.

Container resources: GPU-derived defaults, then the model's, the template's and the service's, key
by key. Environment: AIM defaults, runtime config, template profile, template env, the custom
model's id, service env, merged by name. Hardware: an override's fields over the base's. Pull
secrets: every object's, once each.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Final

from pydantic import JsonValue

from function import jsontext
from function.api.common import EnvVar, LocalObjectReference, ResourceRequirements
from function.api.hardware import CpuRequirements, GpuRequirements, Hardware

_MAX_ENGINE_ARGS_BYTES: Final = 65536

DEFAULT_ENV: Mapping[str, str] = {
    "AIM_CACHE_PATH": "/workspace/cache",
    "VLLM_ENABLE_METRICS": "true",
}
ENGINE_ARGS = "AIM_ENGINE_ARGS"

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


def merge_env(*layers: Iterable[EnvVar]) -> list[dict[str, JsonValue]]:
    """One entry per name, later layers winning, sorted by name.

    `AIM_ENGINE_ARGS` holds a JSON object of engine flags; when two layers both give one, the
    objects are deep-merged, so a service can change one flag without restating the template's.
    """
    by_name: dict[str, dict[str, JsonValue]] = {}
    for layer in layers:
        for var in layer:
            entry = var.model_dump(exclude_none=True)
            previous = by_name.get(var.name)
            if var.name == ENGINE_ARGS and previous is not None:
                entry = _merge_engine_args(previous, entry)
            by_name[var.name] = entry
    return [by_name[name] for name in sorted(by_name)]


def literal_env(values: Mapping[str, str | None]) -> list[EnvVar]:
    """Variables with literal values, leaving out the unset ones."""
    return [EnvVar(name=k, value=v) for k, v in values.items() if v is not None]


def _merge_engine_args(
    previous: dict[str, JsonValue], entry: dict[str, JsonValue]
) -> dict[str, JsonValue]:
    old, new = _json_object(previous.get("value")), _json_object(entry.get("value"))
    if old is None or new is None:
        return entry
    return {"name": ENGINE_ARGS, "value": json.dumps(_deep_merge(old, new), sort_keys=True)}


def _json_object(value: JsonValue) -> dict[str, JsonValue] | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = jsontext.loads(value, max_bytes=_MAX_ENGINE_ARGS_BYTES)
    except jsontext.JsonTextError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _deep_merge(base: dict[str, JsonValue], over: dict[str, JsonValue]) -> dict[str, JsonValue]:
    merged = dict(base)
    for key, value in over.items():
        current = merged.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            merged[key] = _deep_merge(current, value)
        else:
            merged[key] = value
    return merged


def merge_hardware(base: Hardware | None, override: Hardware | None) -> Hardware | None:
    """`override` over `base`: the GPU and CPU fields `override` sets win, the rest are kept."""
    if base is None or override is None:
        return override or base
    gpu: GpuRequirements | None = base.gpu
    if override.gpu is not None:
        fields = override.gpu.model_dump(exclude_unset=True, by_alias=False)
        gpu = base.gpu.model_copy(update=fields) if base.gpu else override.gpu
    cpu: CpuRequirements | None = base.cpu
    if override.cpu is not None:
        fields = override.cpu.model_dump(exclude_unset=True, by_alias=False)
        cpu = base.cpu.model_copy(update=fields) if base.cpu else override.cpu
    return Hardware(gpu=gpu, cpu=cpu)


def secret_names(*lists: Iterable[LocalObjectReference] | None) -> list[str]:
    """Secret names from every list, once each, in order of precedence."""
    names: dict[str, None] = {}
    for refs in lists:
        for ref in refs or ():
            names.setdefault(ref.name)
    return list(names)
