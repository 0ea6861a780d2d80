"""The kubelet running Pods and reporting their containers; no node runs here.

It writes a Pod's status: its phase, and each container's state, `terminated` with its exit code
and termination message (what the container wrote to /dev/termination-log, or under
FallbackToLogsOnError the end of its log) or `waiting` with why it cannot start. That is what the
function reads of a Job's Pod (`function/kube/jobs.py`: the message is a Job's result, the waiting
reason why it cannot run). The containers never become ready or restart: the stand-ins run each
once, to its end or not at all.

In `aim plan`, where no Job controller makes the Pod either, `job_pod` is the Pod it would make.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from function.kube.jobs import JOB_NAME_LABEL, terminated

IMAGE_DIGEST: Final = "sha256:" + "0" * 64
"""The digest the kubelet reports for every image it "pulled": none was."""


def exited(code: int, message: str, at: str) -> dict[str, Any]:
    """A container's state once it exited with `code`, leaving `message`."""
    return {"terminated": terminated(code, message, at)}


def waiting(reason: str, message: str) -> dict[str, Any]:
    """A container's state while it cannot start (ImagePullBackOff, say), and why."""
    return {"waiting": {"reason": reason, "message": message}}


def phase_after(code: int) -> str:
    """A Pod's phase once its container exited with `code` (the Jobs' Pods never restart)."""
    return "Succeeded" if code == 0 else "Failed"


def container_status(container: Mapping[str, Any], state: Mapping[str, Any]) -> dict[str, Any]:
    """A container's entry in `status.containerStatuses`, in `state`."""
    image = str(container.get("image") or "")
    return {
        "name": container["name"],
        "image": image,
        "imageID": f"{image}@{IMAGE_DIGEST}",
        "ready": False,
        "restartCount": 0,
        "started": False,
        "state": dict(state),
    }


def pod_status(
    containers: Iterable[Mapping[str, Any]],
    phase: str,
    state: Mapping[str, Any],
    start_time: str | None = None,
) -> dict[str, Any]:
    """A Pod's status in `phase`, each of `containers` in `state`.

    `start_time` once the kubelet started its containers (none while an image cannot be pulled).
    """
    status: dict[str, Any] = {
        "phase": phase,
        "containerStatuses": [container_status(c, state) for c in containers],
    }
    if start_time is not None:
        status["startTime"] = start_time
    return status


def job_pod(job: Mapping[str, Any], suffix: str, status: Mapping[str, Any]) -> dict[str, Any]:
    """The Pod the Job controller makes for `job`, in `status`.

    Named `<job>-<suffix>`, labelled with the template's labels and the Job's name, and controlled
    by the Job (so the Job's deletion collects it).
    """
    meta = job["metadata"]
    template_meta = ((job.get("spec") or {}).get("template") or {}).get("metadata") or {}
    pod_meta: dict[str, Any] = {
        "name": f"{meta['name']}-{suffix}",
        "namespace": meta["namespace"],
        "labels": {**(template_meta.get("labels") or {}), JOB_NAME_LABEL: meta["name"]},
    }
    if meta.get("uid"):  # a Job written by hand in a test has none: an owner needs one
        pod_meta["ownerReferences"] = [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": meta["name"],
                "uid": meta["uid"],
                "controller": True,
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": pod_meta,
        "status": dict(status),
    }
