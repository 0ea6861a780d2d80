"""A GPU node as the kubelet registers it and the AMD GPU operator labels it; neither runs here.

The Node holds only what the function reads of one: the GPU labels and allocatable `amd.com/gpu`
(`function/rules/gpu.py`), with the CPU, memory and pod room of a GPU server.
"""

from __future__ import annotations

from typing import Any

from function.rules.gpu import DEVICE_IDS, normalize_model


def gpu_node(model: str, count: int) -> dict[str, Any]:
    """A Node as the kubelet registers it and the AMD GPU operator labels it (`--gpu-node`).

    Only what the function reads: the GPU labels and allocatable `amd.com/gpu`.

    Raises:
        ValueError: `model` is no AMD GPU the function knows.
    """
    known = normalize_model(model)
    ids = DEVICE_IDS.get(known)
    if not ids:
        msg = f"{model!r} is no AMD GPU model the function knows ({', '.join(sorted(DEVICE_IDS))})"
        raise ValueError(msg)
    name = f"plan-gpu-node-{known.lower()}"
    gpus = {"amd.com/gpu": str(count), "cpu": "192", "memory": "2Ti", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "amd.com/gpu.device-id": ids[0],
                "kubernetes.io/hostname": name,
            },
        },
        "status": {"capacity": gpus, "allocatable": gpus},
    }
