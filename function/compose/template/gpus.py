"""Whether the GPU a template asks for exists in the cluster, from the Nodes' AMD GPU labels.

Crossplane lists the Nodes for us; nothing here reads capacity, only which GPU models the node
labeller announced. A template whose GPU is missing is NotAvailable (not Failed: adding such a
node fixes it) and is checked again within `RECHECK_S` (the response's TTL).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from function.api.hardware import Hardware
from function.api.template import Profile
from function.kube.contract import Observed, Requirement
from function.kube.objects import labels_of
from function.rules.gpu import (
    DEVICE_IDS,
    known_model,
    models_with_vram,
    node_gpu_models,
    normalize_model,
)
from function.rules.status import ConditionType, Health, Reason

NODES: Final = "nodes"
RECHECK_S: Final = 300


@dataclass(frozen=True)
class GpuCheck:
    """The GPU component's health, and the Node listing it needs."""

    health: Health
    requirements: list[Requirement] = field(default_factory=list)
    unavailable: bool = False
    retry_after_s: int | None = None


def wants_gpu(hardware: Hardware | None) -> bool:
    """Whether the template asks for a GPU: a count, a model, models or a memory size."""
    gpu = hardware.gpu if hardware else None
    return gpu is not None and bool(gpu.requests or gpu.model or gpu.models or gpu.min_vram)


def check(observed: Observed, hardware: Hardware | None) -> GpuCheck:
    """Whether a GPU the template can run on is in the cluster."""
    gpu = hardware.gpu if hardware else None
    if gpu is None or not wants_gpu(hardware):
        return GpuCheck(
            ConditionType.GPU_READY.ready(Reason.NO_GPU_NEEDED, "the template needs no GPU")
        )
    reqs = [Requirement(NODES, "v1", "Node")]
    nodes = observed.required.get(NODES)
    if nodes is None:
        return GpuCheck(ConditionType.GPU_READY.pending(Reason.RESOLVING, "listing Nodes"), reqs)
    inventory = frozenset().union(*(node_gpu_models(_labels(n)) for n in nodes))
    if gpu.model or gpu.models:
        wanted = {normalize_model(m) for m in ([gpu.model] if gpu.model else gpu.models or [])}
        what = " or ".join(sorted(wanted))
    elif gpu.min_vram is not None:
        try:
            wanted = set(models_with_vram(gpu.min_vram))
        except ValueError as e:
            return GpuCheck(
                ConditionType.GPU_READY.failed(Reason.INVALID, f"spec.hardware.gpu.minVram: {e}"),
                reqs,
            )
        what = f"a GPU with at least {gpu.min_vram}"
    else:
        wanted = set(inventory)
        what = "an AMD GPU"
    present = sorted(wanted & inventory)
    if present:
        return GpuCheck(
            ConditionType.GPU_READY.ready(
                Reason.GPU_AVAILABLE, f"{', '.join(present)} in the cluster"
            ),
            reqs,
        )
    seen = ", ".join(sorted(inventory)) or "none"
    return GpuCheck(
        ConditionType.GPU_READY.pending(
            Reason.GPU_NOT_AVAILABLE,
            f"no Node has {what} (AMD GPUs in the cluster: {seen}); discovery waits for one",
        ),
        reqs,
        unavailable=True,
        retry_after_s=RECHECK_S,
    )


def unknown_accelerator(hardware: Hardware | None, profile: Profile | None) -> Health | None:
    """Discovery's profile runs on an accelerator we cannot place pods on: the Discovered failure.

    Pods are placed by the device ids of a GPU model, so a profile for an accelerator missing
    from `function.rules.gpu` (a new GPU) is reported by name, not dropped: the template is
    Failed, and keeps the profile in its status for the user to see. So is a CPU profile
    (`gpu_count: 0`) for a template that asks for GPUs: the image has no profile for them, and
    running it on CPUs would not be what the template promises.
    """
    meta = profile.metadata if profile else None
    if meta is not None and meta.gpu_count == 0 and not meta.gpu and wants_gpu(hardware):
        return ConditionType.DISCOVERED.failed(
            Reason.UNKNOWN_ACCELERATOR,
            "the image's profile runs on CPUs, but the template asks for a GPU "
            "(spec.hardware.gpu): the image has no profile for that GPU; choose a GPU model it "
            "supports, or make a CPU template (spec.hardware.cpu without gpu)",
        )
    if meta is None or not meta.gpu or known_model(meta.gpu) is not None:
        return None
    return ConditionType.DISCOVERED.failed(
        Reason.UNKNOWN_ACCELERATOR,
        f"the image's profile is for accelerator {meta.gpu!r}, which is no AMD GPU model this "
        f"platform can place pods on (known: {', '.join(DEVICE_IDS)}); run the template on a "
        "known GPU (spec.hardware.gpu.model) or use an image with a profile for one",
    )


def summary(hardware: Hardware | None, profile: Profile | None) -> str | None:
    """`2 x MI300X`, `MI300X`, `1 x GPU` or `CPU`: discovery's answer over the spec's."""
    meta = profile.metadata if profile else None
    if meta is not None and meta.gpu_count == 0 and not meta.gpu:
        # A CPU profile (`accelerator_type: cpu`), whatever the template asked for: a GPU
        # template given one is Failed, and says so.
        return "CPU"
    gpu = hardware.gpu if hardware else None
    count = (
        meta.gpu_count if meta and meta.gpu_count is not None else (gpu.requests if gpu else None)
    )
    model = (meta.gpu if meta and meta.gpu else None) or (gpu.model if gpu else None)
    if not count and model is None:
        if wants_gpu(hardware):
            return "GPU"
        return "CPU" if hardware and hardware.cpu else None
    if not count:
        return model
    return f"{count} x {model or 'GPU'}"


def _labels(node: object) -> dict[str, str]:
    found = labels_of(node) if isinstance(node, dict) else {}
    return {str(k): str(v) for k, v in found.items()}
