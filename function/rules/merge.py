"""Precedence rules for what several AIM objects contribute to one container.

Container resources: GPU-derived defaults, then the model's, the template's, the template's
`hardware.cpu` and the service's, key by key; a CPU or memory request without a limit is its own
limit. Environment: AIM defaults, runtime config, template profile, template env, an image
model's env (a custom model's goes under the template's), the custom model's id, service env,
merged by name. Hardware: an override's fields over the base's. Pull secrets: every object's,
once each.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, TypeVar

from pydantic import JsonValue

from function.api.common import EnvVar, LocalObjectReference, ResourceRequirements
from function.api.hardware import CpuRequirements, GpuRequirements, Hardware
from function.rules import jsontext, quantity

_MAX_ENGINE_ARGS_BYTES: Final = 65536
_REQUEST_BOUNDED: Final = ("cpu", "memory")

DEFAULT_ENV: Mapping[str, str] = {
    "AIM_CACHE_PATH": "/workspace/cache",
    "VLLM_ENABLE_METRICS": "true",
}
ENGINE_ARGS = "AIM_ENGINE_ARGS"

ResourceMap = dict[str, dict[str, str]]
E = TypeVar("E")


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
            for key, value in (values or {}).items():
                merged.setdefault(section, {})[key] = str(value)
    return merged


def cpu_resources(cpu: CpuRequirements | None) -> ResourceRequirements | None:
    """A profile's `hardware.cpu` as container resources: its request, and its limit if given."""
    if cpu is None:
        return None
    limits = {"cpu": cpu.limits} if cpu.limits is not None else None
    return ResourceRequirements(requests={"cpu": cpu.requests}, limits=limits)


def cpu_above_limit(cpu: CpuRequirements | None) -> bool:
    """Whether a `hardware.cpu` requests more than its limit.

    Quantities that do not parse are left to the API server, which refuses them by name.
    """
    if cpu is None or cpu.limits is None:
        return False
    try:
        return quantity.amount(cpu.requests) > quantity.amount(cpu.limits)
    except ValueError:
        return False


def limit_requests(resources: ResourceMap) -> ResourceMap:
    """The resources with a limit equal to each CPU or memory request that has none.

    KServe's InferenceService defaulter fills a missing CPU or memory limit from its
    configuration (1 CPU and 2Gi in the one it ships), below what an inference server requests
    (4 CPUs and 32Gi per GPU), and the API server then refuses the predictor's Deployment.
    """
    requests, limits = resources.get("requests", {}), dict(resources.get("limits", {}))
    for key in _REQUEST_BOUNDED:
        if key in requests and key not in limits:
            limits[key] = requests[key]
    return {**resources, "limits": limits} if limits else dict(resources)


def request_limit_conflicts(resources: ResourceMap) -> list[str]:
    """What the API server would refuse in the predictor's pods, one phrase per resource.

    A request above its limit (`requests.cpu (4) is above limits.cpu (1)`), and an extended
    resource such as a GPU whose request and limit differ: those cannot be overcommitted.
    Quantities that do not parse are left to the API server, which refuses them by name.
    """
    found = []
    limits = resources.get("limits", {})
    for key, requested in resources.get("requests", {}).items():
        if key not in limits:
            continue
        try:
            request, limit = quantity.amount(requested), quantity.amount(limits[key])
        except ValueError:
            continue
        both = f"requests.{key} ({requested})", f"limits.{key} ({limits[key]})"
        if _extended(key) and request != limit:
            found.append(f"{both[0]} differs from {both[1]}, and {key} cannot be overcommitted")
        elif request > limit:
            found.append(f"{both[0]} is above {both[1]}")
    return found


def _extended(resource: str) -> bool:
    """Whether Kubernetes treats a resource name as an extended resource (e.g. `amd.com/gpu`)."""
    domain, slash, _ = resource.partition("/")
    return bool(slash) and domain != "kubernetes.io" and not domain.endswith(".kubernetes.io")


def by_name(
    layers: Iterable[Iterable[E] | None],
    name: Callable[[E], str | None],
    combine: Callable[[E, E], E] = lambda _, newer: newer,
) -> list[E]:
    """The one way environments merge: one entry per name, the last layer's winning.

    A later layer's entry takes an earlier one's place (or is `combine`d with it); entries
    without a name are all kept, in order.
    """
    merged: dict[str | tuple[int, int], E] = {}
    for i, layer in enumerate(layers):
        for j, entry in enumerate(layer or ()):
            key: str | tuple[int, int] = name(entry) or (i, j)
            merged[key] = combine(merged[key], entry) if key in merged else entry
    return list(merged.values())


def merged_env(*layers: Sequence[EnvVar] | None) -> list[EnvVar]:
    """Environment layers merged by name; later layers win."""
    return by_name(layers, lambda e: e.name)


def merge_env(*layers: Iterable[EnvVar]) -> list[dict[str, JsonValue]]:
    """A container's environment from its layers: merged by name, sorted by name.

    `AIM_ENGINE_ARGS` holds a JSON object of engine flags; when two layers both give one, the
    objects are deep-merged, so a service can change one flag without restating the template's.
    """
    entries = by_name(
        ([v.model_dump(exclude_none=True) for v in layer] for layer in layers),
        lambda e: str(e["name"]),
        lambda old, new: _merge_engine_args(old, new) if new["name"] == ENGINE_ARGS else new,
    )
    return sorted(entries, key=lambda e: str(e["name"]))


def literal_env(values: Mapping[str, str | None]) -> list[EnvVar]:
    """Variables with literal values, leaving out the unset ones."""
    return [EnvVar(name=k, value=v) for k, v in values.items() if v is not None]


def _merge_engine_args(
    previous: dict[str, JsonValue], entry: dict[str, JsonValue]
) -> dict[str, JsonValue]:
    old, new = _json_object(previous.get("value")), _json_object(entry.get("value"))
    if old is None or new is None:
        return entry
    return {"name": ENGINE_ARGS, "value": json.dumps(deep_merge(old, new), sort_keys=True)}


def _json_object(value: JsonValue) -> dict[str, JsonValue] | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = jsontext.loads(value, max_bytes=_MAX_ENGINE_ARGS_BYTES)
    except jsontext.JsonTextError:
        return None
    return parsed if isinstance(parsed, dict) else None


def deep_merge(
    base: Mapping[str, JsonValue],
    over: Mapping[str, JsonValue],
    rules: Mapping[str, Callable[[JsonValue, JsonValue], JsonValue | None]] | None = None,
) -> dict[str, JsonValue]:
    """The one deep merge: `over` on top of `base`, objects key by key, anything else replaced.

    Where `rules` has a rule for a key (at any depth), what it returns is taken instead (None:
    no opinion).
    """
    merged = dict(base)
    for key, value in over.items():
        current = merged.get(key)
        rule = rules.get(key) if rules else None
        ruled = rule(current, value) if rule is not None and current is not None else None
        if ruled is not None:
            merged[key] = ruled
        elif isinstance(current, dict) and isinstance(value, dict):
            merged[key] = deep_merge(current, value, rules)
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
