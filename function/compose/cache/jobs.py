"""Reading the state of a composed Job and the termination message of its Pod."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from function.build import Manifest
from function.discovery import terminated_message
from function.resolve import name_of
from function.state import Observed, Requirement
from function.status import find_condition, status_of

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"


class JobState(StrEnum):
    """Where a Job stands, from its conditions."""

    RUNNING = "Running"
    COMPLETE = "Complete"
    FAILED = "Failed"


def job_state(job: Manifest) -> JobState:
    """COMPLETE or FAILED once the Job controller says so, else RUNNING."""
    conditions = status_of(job).get("conditions")
    if find_condition(conditions, "Complete").get("status") == "True":
        return JobState.COMPLETE
    if find_condition(conditions, "Failed").get("status") == "True":
        return JobState.FAILED
    return JobState.RUNNING


def pods_requirement(observed: Observed, key: str, pods_key: str) -> list[Requirement]:
    """The Pods of the Job composed as `key`, asked for while it exists (so every call asks)."""
    job = observed.resources.get(key)
    if job is None:
        return []
    labels = {JOB_NAME_LABEL: name_of(job)}
    return [Requirement(pods_key, "v1", "Pod", namespace=observed.namespace, match_labels=labels)]


def pod_message(pods: Sequence[Manifest] | None, container: str, phase: str) -> str | None:
    """The termination message of `container` in the first Pod in `phase`."""
    for pod in pods or ():
        if status_of(pod).get("phase") == phase:
            message = terminated_message(pod, container)
            if message is not None:
                return message
    return None
