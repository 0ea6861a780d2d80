"""AMD GPU models and the PCI device ids that identify them in Node labels.

The AMD GPU operator's node labeller publishes `amd.com/gpu.device-id`; a required node affinity on
the ids of one model is how AIM places a pod on that model. A leaf module: standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from function.rules import quantity

DEVICE_ID_LABEL: Final = "amd.com/gpu.device-id"
# Taint key that AMD GPU nodes conventionally carry so that only GPU workloads land there.
GPU_TAINT_KEY: Final = "amd.com/gpu"

DEVICE_IDS: Final = MappingProxyType(
    {
        "MI100": ("738c", "738e"),
        "MI250X": ("7408", "740c"),
        "MI210": ("740f", "7410"),
        "MI300A": ("74a0",),
        "MI300X": ("74a1", "74a9", "74b5", "74bd"),
        "MI308X": ("74a2", "74a8", "74b6"),
        "MI325X": ("74a5", "74b9"),
        "MI350X": ("75a0", "75b0"),
        "MI355X": ("75a3", "75b3"),
        "MI350P": ("75a8",),
        "V710": ("7460", "7461"),
        "W7900": ("7448", "744a", "744b"),  # 744b: W7900D
        "W7800": ("7449", "745e"),
        "W6900X": ("73a2",),
        "W6800": ("73a3",),
        "W6800X": ("73ab",),
        "V620": ("73a1", "73ae"),
        "R9700": ("7551",),  # Radeon AI PRO R9700 (Navi 48), also sold as R9700S and R9600D
        "RX9070": ("7550",),
        "RX7900": ("744c",),
        "RX6900": ("73af",),
        "RX6800": ("73bf",),
    }
)

_SEPARATORS: Final = re.compile(r"[\s_\-]+")
_VENDOR_WORDS: Final = frozenset({"AMD", "INSTINCT", "RADEON", "PRO"})


class UnknownGpuModelError(ValueError):
    """The name matches no AMD GPU model we can place pods on."""


def normalize_model(name: str) -> str:
    """`amd instinct mi300x`, `MI300X`, `mi-300x` all mean `MI300X`.

    A marketing name whose model is one word among others (`AMD Radeon AI PRO R9700`) means that
    word; a name with no known model in it keeps its first word (`AI`, a GPU family label).
    """
    tokens = [t for t in _SEPARATORS.split(name.upper()) if t and t not in _VENDOR_WORDS]
    joined = "".join(tokens)
    if joined in DEVICE_IDS:
        return joined
    known = next((t for t in tokens if t in DEVICE_IDS), None)
    if known is not None:
        return known
    return tokens[0] if tokens else ""


def known_model(name: str) -> str | None:
    """The table's name for `name` (see `normalize_model`), or None when no AMD GPU has it."""
    model = normalize_model(name)
    return model if model in DEVICE_IDS else None


def device_ids(model: str) -> tuple[str, ...]:
    """The sorted PCI device ids of a GPU model.

    Raises:
        UnknownGpuModelError: the model is not in the table, so no node would match it.
    """
    ids = DEVICE_IDS.get(normalize_model(model))
    if ids is None:
        known = ", ".join(DEVICE_IDS)
        msg = f"unknown AMD GPU model {model!r}; known models: {known}"
        raise UnknownGpuModelError(msg)
    return tuple(sorted(ids))


# Memory per GPU, in GiB, for placement by `minVram` without reading Nodes.
VRAM_GIB: Final = MappingProxyType(
    {
        "MI355X": 288,
        "MI350X": 288,
        "MI350P": 144,
        "MI325X": 256,
        "MI308X": 128,
        "MI300X": 192,
        "MI300A": 128,
        "MI250X": 128,
        "MI210": 64,
        "MI100": 32,
        "V710": 32,
        "W7900": 48,
        "W7800": 32,
        "W6900X": 32,
        "W6800": 32,
        "W6800X": 32,
        "V620": 32,
        "R9700": 32,
        "RX9070": 16,
        "RX7900": 24,
        "RX6900": 16,
        "RX6800": 16,
    }
)


def models_with_vram(min_vram: str | int) -> tuple[str, ...]:
    """GPU models with at least `min_vram` (a Kubernetes quantity, e.g. `128Gi`) per GPU.

    Raises:
        ValueError: `min_vram` is not a memory quantity.
    """
    try:
        wanted = quantity.to_bytes(min_vram)
    except ValueError:
        msg = f"minVram {min_vram!r} is not a memory quantity such as 128Gi"
        raise ValueError(msg) from None
    return tuple(sorted(m for m, gib in VRAM_GIB.items() if gib * quantity.GIB >= wanted))


_ID_TO_MODEL: Final = MappingProxyType({i: m for m, ids in DEVICE_IDS.items() for i in ids})
_LABEL_PREFIXES: Final = ("amd.com/", "beta.amd.com/")


def node_gpu_models(labels: Mapping[str, str]) -> frozenset[str]:
    """The AMD GPU models a Node's labels announce (device ids first, then the family label).

    Unknown device ids count as `AMD-<ID>`, so a node with a GPU we have no name for still
    shows that the cluster has some AMD GPU.
    """
    found: set[str] = set()
    for prefix in _LABEL_PREFIXES:
        key = prefix + "gpu.device-id"
        if labels.get(key):
            found.add(_model_of_id(labels[key]))
        for label, count in labels.items():
            if label.startswith(key + ".") and count not in {"", "0"}:
                found.add(_model_of_id(label.removeprefix(key + ".")))
    if found:
        return frozenset(found)
    for prefix in _LABEL_PREFIXES:
        key = prefix + "gpu.family"
        if labels.get(key):
            found.add(normalize_model(labels[key]))
        for label, count in labels.items():
            if label.startswith(key + ".") and count not in {"", "0"}:
                found.add(normalize_model(label.removeprefix(key + ".")))
    return frozenset(m for m in found if m)


def _model_of_id(device_id: str) -> str:
    key = device_id.strip().lower().removeprefix("0x")
    return _ID_TO_MODEL.get(key, f"AMD-{key.upper()}")
