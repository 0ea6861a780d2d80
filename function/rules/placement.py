"""Where inference pods may run: the AMD GPU device ids a template's hardware allows."""

from __future__ import annotations

from collections.abc import Iterable

from function.api.hardware import GpuRequirements
from function.rules.gpu import device_ids, models_with_vram, normalize_model


def placement(gpu: GpuRequirements | None, discovered: str | None) -> tuple[str, ...]:
    """Device ids the pods may run on; none when nothing pins a GPU model.

    The template's GPU models, else every model with its minimum VRAM, else the GPU discovery
    profiled on.

    Raises:
        ValueError: a GPU model or minimum VRAM that no AMD GPU has.
    """
    if gpu is not None and (gpu.model or gpu.models):
        models: Iterable[str] = [gpu.model] if gpu.model else gpu.models or ()
    elif gpu is not None and gpu.min_vram is not None:
        models = models_with_vram(gpu.min_vram)
        if not models:
            msg = f"no AMD GPU has minVram {gpu.min_vram} per GPU"
            raise ValueError(msg)
    elif discovered:
        models = [normalize_model(discovered)]
    else:
        return ()
    return tuple(sorted({i for m in models for i in device_ids(m)}))
