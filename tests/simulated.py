"""Simulated kubelet: the Pod status of a discovery Job, for tests where no kubelet runs.

The unit and render tiers build the observed state of discovery Pods here; every tier that
completes a discovery uses the same dry-run output.
"""

from __future__ import annotations

from typing import Any


def discovery_pod(
    job: Any, phase: str, *, message: str | None = None, waiting: str | None = None
) -> Any:
    """The Pod of `job` as the kubelet reports it, in `phase`.

    `message` is the discovery container's termination message; `waiting` the reason it cannot
    start (ImagePullBackOff, for one).
    """
    state: dict[str, Any] = {}
    if message is not None:
        state["terminated"] = {"exitCode": 0 if phase == "Succeeded" else 1, "message": message}
    if waiting is not None:
        state["waiting"] = {"reason": waiting, "message": "pull access denied for the image"}
    name = job["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-abcde",
            "namespace": job["metadata"]["namespace"],
            "labels": {"batch.kubernetes.io/job-name": name},
        },
        "status": {"phase": phase, "containerStatuses": [{"name": "discovery", "state": state}]},
    }


# What an AIM image's `dry-run --format=json` prints: one profile and the model it downloads.
DRY_RUN_RESULT: list[dict[str, Any]] = [
    {
        "filename": "vllm-mi300x-fp8-tp1-latency.yaml",
        "profile": {
            "metadata": {
                "engine": "vllm",
                "gpu": "MI300X",
                "gpu_count": 1,
                "metric": "latency",
                "precision": "fp8",
                "type": "optimized",
            },
            "engine_args": {"tensor-parallel-size": 1},
            "env_vars": {"VLLM_USE_V1": "1"},
        },
        "models": [{"name": "Org/Small", "source": "hf://Org/Small", "size_gb": 0.5}],
    }
]
