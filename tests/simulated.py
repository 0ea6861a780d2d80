"""Simulated kubelet: the Pod status of a discovery Job, for tests where no kubelet runs.

Both test tiers build the observed state of discovery Pods here.
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
