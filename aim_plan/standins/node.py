"""A GPU node as the kubelet registers it and the AMD GPU operator labels it; neither runs here.

The Node holds only what the function reads of one, the GPU labels and allocatable `amd.com/gpu`
(`function/rules/gpu.py`), with the CPU, memory and pod room of a GPU server. The labeller's
device id is the label the function places pods by; its family and product name, which the
function reads only of a node without a device id, are written where a real node of the model
was seen with them.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Final

from function.rules.gpu import DEVICE_ID_LABEL, DEVICE_IDS, normalize_model

LABELLED: Final = MappingProxyType(
    {
        "MI300X": {
            "amd.com/gpu.family": "AI",
            "amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM",
        },
    }
)
"""What the AMD GPU operator's node labeller puts on a node beside the device id, by model."""


def known_model(model: str) -> str:
    """`model` as the function names AMD GPUs (`mi300x` is `MI300X`).

    Raises:
        ValueError: `model` is no AMD GPU the function knows.
    """
    known = normalize_model(model)
    if not DEVICE_IDS.get(known):
        msg = f"{model!r} is no AMD GPU model the function knows ({', '.join(sorted(DEVICE_IDS))})"
        raise ValueError(msg)
    return known


def gpu_node(name: str, model: str = "MI300X", gpus: int = 8) -> dict[str, Any]:
    """The Node `name` with `gpus` GPUs of `model`, labelled and allocatable.

    Raises:
        ValueError: `model` is no AMD GPU the function knows.
    """
    known = known_model(model)
    labels = {
        DEVICE_ID_LABEL: DEVICE_IDS[known][0],
        **LABELLED.get(known, {}),
        "kubernetes.io/hostname": name,
    }
    room = {"amd.com/gpu": str(gpus), "cpu": "192", "memory": "2Ti", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": room, "allocatable": room},
    }
