"""Simulated kubelet: the Pod status of a discovery Job, for tests where no kubelet runs.

The unit and render tiers build the observed state of discovery Pods here, with the kubelet's
stand-in that `aim plan` and the end-to-end tier use (`aim_plan/standins/kubelet.py`); every tier
that completes a discovery uses the same dry-run output.
"""

from __future__ import annotations

from typing import Any, Final

from aim_plan.standins import kubelet
from function.build.job import CONTAINER as DISCOVERY

AT: Final = "2025-01-01T00:00:00Z"
"""When the simulated container ended: the function reads no time of a Job's Pod."""


def discovery_pod(
    job: Any, phase: str, *, message: str | None = None, waiting: str | None = None
) -> Any:
    """The Pod of `job` as the kubelet reports it, in `phase`.

    `message` is the discovery container's termination message; `waiting` the reason it cannot
    start (ImagePullBackOff, for one).
    """
    state: dict[str, Any] = {}
    if message is not None:
        state |= kubelet.exited(0 if phase == "Succeeded" else 1, message, AT)
    if waiting is not None:
        state |= kubelet.waiting(waiting, "pull access denied for the image")
    # The Job's one container, named as discovery's even where a test reuses the Pod for
    # another Job (it renames the entry), as the callers read one entry of that name.
    template = job["spec"]["template"]["spec"]
    container = {"name": DISCOVERY, "image": template["containers"][0]["image"]}
    status = kubelet.pod_status([container], phase, state)
    return kubelet.job_pod(job, "abcde", status)


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
