"""Composed Jobs and their Pods: where a Job stands, and what its container left behind.

Discovery and the cache Jobs return their results through the termination message in the Pod's
status (a function cannot read logs), and fail with the log's tail there (FallbackToLogsOnError).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from pydantic import JsonValue

from function.api.meta import Manifest
from function.kube.contract import Observed, Requirement
from function.kube.objects import name_of, status_of
from function.kube.views import is_true, phase_of, text, word
from function.rules.pods import MAX_QUOTE, PULL_FAILURES, START_FAILURES

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
    """A container's `terminated` state as the kubelet writes it, the shape read below.

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


@dataclass(frozen=True)
class ContainerState:
    """What a Pod's status says of one of its containers: each field of its type, or empty.

    The kubelet writes it, but anyone with write access to Pod status may; a field of another
    type reads as absent, so the container reads as neither waiting nor terminated.
    """

    name: str
    waiting_reason: str = ""
    waiting_message: str = ""
    """Cut at `MAX_QUOTE` characters: it is quoted in conditions."""
    terminated: bool = False
    message: str = ""
    """The termination message, cut at `MAX_TERMINATION_MESSAGE`; empty when it left none."""


MAX_CONTAINERS: Final = 64
"""Container statuses read of one Pod (init containers and containers); ours have a few."""
MAX_TERMINATION_MESSAGE: Final = 64 * 1024
"""A kubelet keeps at most 4 KiB of one container's termination message (12 KiB of a Pod's);
a longer one is cut here, still longer than any reader accepts, which then says it is too long."""


def container_states(pod: Mapping[str, JsonValue]) -> tuple[ContainerState, ...]:
    """The states of a Pod's init containers and containers (ours run work in both), in order."""
    return tuple(_state(item) for item in _statuses(pod)[:MAX_CONTAINERS])


def _state(item: Mapping[str, JsonValue]) -> ContainerState:
    raw = item.get("state")
    state = raw if isinstance(raw, dict) else {}
    waiting, ended = state.get("waiting"), state.get("terminated")
    if not isinstance(waiting, dict):
        waiting = {}
    return ContainerState(
        name=word(item.get("name")),
        waiting_reason=word(waiting.get("reason")),
        waiting_message=text(waiting.get("message"), MAX_QUOTE),
        terminated=isinstance(ended, dict),
        message=text(ended.get("message"), MAX_TERMINATION_MESSAGE)
        if isinstance(ended, dict)
        else "",
    )


def terminated_message(pod: Mapping[str, JsonValue], container: str) -> str | None:
    """The termination message of `container` in a Pod's status, if it has terminated."""
    for state in container_states(pod):
        if state.name == container and state.terminated:
            return state.message
    return None


def waiting_problem(pods: Sequence[Mapping[str, JsonValue]], container: str) -> str | None:
    """Why `container` cannot start (image pull errors and the like), from its waiting state."""
    for pod in pods:
        for state in container_states(pod):
            if state.name == container and state.waiting_reason in _STUCK:
                return f"{state.waiting_reason}: {state.waiting_message}".strip(": ")
    return None


_STUCK: Final = PULL_FAILURES | START_FAILURES


def _statuses(pod: Mapping[str, JsonValue]) -> list[Mapping[str, JsonValue]]:
    """The statuses of a Pod's init containers and containers (ours run work in both).

    Each list is cut before it is looked at: a status may list millions of entries.
    """
    status = pod.get("status")
    found: list[Mapping[str, JsonValue]] = []
    for key in ("initContainerStatuses", "containerStatuses"):
        items = status.get(key) if isinstance(status, dict) else None
        if isinstance(items, list):
            found += [i for i in items[:MAX_CONTAINERS] if isinstance(i, dict)]
    return found
