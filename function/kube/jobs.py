"""Composed Jobs and their Pods: where a Job stands, and what its container left behind.

Discovery and the cache Jobs return their results through the termination message in the Pod's
status (a function cannot read logs), and fail with the log's tail there (FallbackToLogsOnError).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Final

from pydantic import JsonValue

from function.api.meta import Manifest
from function.kube.contract import Observed, Requirement
from function.kube.objects import name_of, status_of
from function.kube.views import is_true, phase_of
from function.rules.containers import container_statuses
from function.rules.pods import MAX_QUOTE, PULL_FAILURES, START_FAILURES
from function.rules.text import cut

JOB_NAME_LABEL: Final = "batch.kubernetes.io/job-name"


class JobState(StrEnum):
    """Where a Job stands, from its conditions."""

    RUNNING = "Running"
    COMPLETE = "Complete"
    FAILED = "Failed"


def job_state(job: Manifest) -> JobState:
    """COMPLETE or FAILED once the Job controller says so, else RUNNING."""
    if is_true(job, "Complete"):
        return JobState.COMPLETE
    if is_true(job, "Failed"):
        return JobState.FAILED
    return JobState.RUNNING


def attempt(job: Manifest, total: int) -> int:
    """Which of a Job's `total` attempts runs now (or ran last): one after those that failed."""
    failed = status_of(job).get("failed")
    done = failed if isinstance(failed, int) and not isinstance(failed, bool) else 0
    return max(1, min(done + 1, total))


def pods_requirement(
    observed: Observed, key: str, pods_key: str, namespace: str
) -> list[Requirement]:
    """The Pods of the Job composed as `key`, asked for whatever the Job's state.

    Asked on every call while the Job exists, so the requirements do not change between
    Crossplane's calls within one reconcile (they must settle for it to proceed).
    """
    job = observed.resources.get(key)
    if job is None:
        return []
    labels = {JOB_NAME_LABEL: name_of(job)}
    return [Requirement(pods_key, "v1", "Pod", namespace=namespace, match_labels=labels)]


def pod_message(pods: Sequence[Manifest] | None, container: str, phase: str) -> str | None:
    """The termination message of `container` in the first Pod in `phase`."""
    for pod in pods or ():
        if phase_of(pod) == phase:
            message = terminated_message(pod, container)
            if message is not None:
                return message
    return None


def terminated(code: int, message: str, at: str) -> dict[str, JsonValue]:
    """A container's `terminated` state as the kubelet writes it, the shape rules.containers reads.

    For the stand-ins of the kubelet (the end-to-end tier's and `aim plan`'s), so what they
    write and what the function reads cannot drift apart.
    """
    return {
        "exitCode": code,
        "reason": "Completed" if code == 0 else "Error",
        "message": message,
        "startedAt": at,
        "finishedAt": at,
    }


def terminated_message(pod: Mapping[str, JsonValue], container: str) -> str | None:
    """The termination message of `container` in a Pod's status, if it has terminated."""
    for state in container_statuses(pod):
        if state.name == container and state.terminated is not None:
            return state.terminated.message
    return None


def waiting_problem(pods: Sequence[Mapping[str, JsonValue]], container: str) -> str | None:
    """Why `container` cannot start (image pull errors and the like), from its waiting state."""
    for pod in pods:
        for state in container_statuses(pod):
            if state.name == container and state.waiting_reason in _STUCK:
                said = cut(state.waiting_message, MAX_QUOTE)
                return f"{state.waiting_reason}: {said}".strip(": ")
    return None


_STUCK: Final = PULL_FAILURES | START_FAILURES
