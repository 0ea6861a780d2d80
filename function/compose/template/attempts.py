"""A discovery attempt's Job: built, then read back: its result, or its failure counted once.

What an attempt comes to is a `DiscoveryOutcome`: the Discovered component, the Job to keep or
drop, and the state `status.discovery` records. A failed attempt's Job is kept for inspection
until the backoff window ends; the next call then creates the next attempt's Job.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from pydantic import JsonValue

from function.api.meta import Manifest
from function.api.template import (
    ClusterServiceTemplateSpec,
    DiscoveredSource,
    DiscoveryState,
    Profile,
)
from function.build.job import CONTAINER, TERMINATION_MESSAGE_LIMIT, build_discovery_job
from function.compose.model.metadata import stored_entrypoint
from function.compose.refs import Model
from function.compose.template import slots
from function.kube.contract import Desired, Observed, Requirement, keep
from function.kube.jobs import JobState, job_state, pod_message, waiting_problem
from function.kube.objects import name_of
from function.kube.views import condition_of
from function.rules import discovery, labels
from function.rules.merge import secret_names
from function.rules.pods import MAX_QUOTE
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import ConditionType, Health, Reason
from function.rules.text import cut

PODS: Final = "discovery-pods"
REPLACE_AFTER_S: Final = 5


@dataclass(frozen=True)
class DiscoveryOutcome:
    """The Discovered component, the Job to compose, and what goes into status."""

    health: Health
    job: Desired | None = None
    sources: tuple[DiscoveredSource, ...] = ()
    profile: Profile | None = None
    state: DiscoveryState | None = None
    retry_after_s: int | None = None
    requirements: tuple[Requirement, ...] = ()
    """What deciding needs fetched: the discovery Jobs and templates, before a Job starts."""


def job_for(  # noqa: PLR0913 - everything a discovery Job is made of
    observed: Observed,
    spec: ClusterServiceTemplateSpec,
    *,
    model: Model,
    config: RuntimeConfig,
    name: str,
    namespace: str,
) -> Manifest:
    """The Job of this attempt: the model's image dry-running the template's inputs."""
    gpu = spec.hardware.gpu if spec.hardware else None
    env: list[Mapping[str, JsonValue]] = [
        {"name": "AIM_LOG_LEVEL_ROOT", "value": "CRITICAL"},
        {"name": "AIM_LOG_LEVEL", "value": "CRITICAL"},
        *(e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in spec.env or ()),
    ]
    gpu_model = gpu.model if gpu else None
    count = str(gpu.requests) if gpu and gpu.requests else None
    # Both families, as the AIM operator sets them: older images read AIM_GPU_*, newer ones
    # AIM_ACCELERATOR_* (the AIM_GPU_* names are their deprecated aliases).
    for key, value in (
        ("AIM_METRIC", spec.metric),
        ("AIM_PRECISION", spec.precision),
        ("AIM_GPU_MODEL", gpu_model),
        ("AIM_GPU_COUNT", count),
        ("AIM_ACCELERATOR_MODEL", gpu_model),
        ("AIM_ACCELERATOR_COUNT", count),
        ("AIM_PROFILE_ID", spec.profile_id),
    ):
        if value:
            env.append({"name": key, "value": str(value)})
    return build_discovery_job(
        name=name,
        namespace=namespace,
        labels={**slots.JOB_LABELS, labels.TEMPLATE: labels.value(observed.name)},
        image=model.spec.image,
        # The model read it from the image's config with its labels.
        entrypoint=stored_entrypoint(model.manifest) or observed.settings.discovery_entrypoint,
        env=env,
        # The Job pulls the model's image: the secrets of the template, the model and the
        # runtime config all apply, and the first service account named, in that order.
        pull_secrets=secret_names(
            spec.image_pull_secrets, model.spec.image_pull_secrets, config.spec.image_pull_secrets
        ),
        service_account=spec.service_account_name
        or model.spec.service_account_name
        or config.spec.service_account_name,
    )


def observe(  # noqa: PLR0913 - the attempt, and its Job as observed and as built
    observed: Observed,
    current: Manifest,
    job: Manifest,
    state: DiscoveryState,
    namespace: str,
    *,
    no_profile: str,
) -> DiscoveryOutcome:
    """Where the attempt whose Job exists stands: running, stuck, failed, or its result read."""
    name = name_of(current)
    pods = observed.required.get(PODS)
    state_of_job = job_state(current)
    if state_of_job is JobState.COMPLETE:
        return _completed(observed, current, job, state, pods, no_profile=no_profile)
    if state_of_job is JobState.FAILED:
        failed = condition_of(current, "Failed")
        why = (
            cut(failed.message, MAX_QUOTE) or failed.reason if failed else ""
        ) or "the Job failed"
        tail = pod_message(pods, CONTAINER, "Failed")
        detail = f"{why}; the dry-run said: {tail.strip()[-500:]}" if tail else why
        return failed_attempt(
            observed,
            current=current,
            job=job,
            state=state,
            reason=Reason.DISCOVERY_FAILED,
            message=detail,
        )
    stuck = waiting_problem(pods or (), CONTAINER)
    if stuck:
        return DiscoveryOutcome(
            ConditionType.DISCOVERED.failed(Reason.DISCOVERY_IMAGE_PULL, f"Job {name}: {stuck}"),
            job=Desired(job, ready=False),
            state=state,
        )
    return DiscoveryOutcome(
        ConditionType.DISCOVERED.progressing(
            Reason.DISCOVERY_RUNNING, f"Job {namespace}/{name} is running"
        ),
        job=Desired(job, ready=False),
        state=state,
    )


def _completed(  # noqa: PLR0913 - the attempt, its Job and what its pod said
    observed: Observed,
    current: Manifest,
    job: Manifest,
    state: DiscoveryState,
    pods: tuple[Manifest, ...] | None,
    *,
    no_profile: str,
) -> DiscoveryOutcome:
    """A Job that succeeded: its result, read from its pod's termination message."""
    name = name_of(current)
    if pods is None:
        return DiscoveryOutcome(
            ConditionType.DISCOVERED.progressing(
                Reason.RESOLVING, f"reading the result of Job {name}"
            ),
            job=Desired(job, ready=True),
            state=state,
        )
    message = pod_message(pods, CONTAINER, "Succeeded")
    if message is None:
        return failed_attempt(
            observed,
            current=current,
            job=job,
            state=state,
            reason=Reason.DISCOVERY_OUTPUT_INVALID,
            message=f"Job {name} succeeded but its Pod is gone, and its result with it",
        )
    try:
        result = discovery.parse_result(message, limit=TERMINATION_MESSAGE_LIMIT)
    except discovery.ResultError as e:
        if e.reason is Reason.DISCOVERY_NO_PROFILE:
            # Kept until status records it, as a result is (below): no second run.
            message = f"Job {name}: {no_profile}"
            return DiscoveryOutcome(
                ConditionType.DISCOVERED.failed(e.reason, message),
                job=keep(current, ready=True),
                state=replace_state(state, no_profile=True, last_failure_reason=message),
            )
        return failed_attempt(
            observed,
            current=current,
            job=job,
            state=state,
            reason=e.reason,
            message=f"Job {name}: {e}",
        )
    # The Job is kept until a call sees the result in the template's own status: Crossplane
    # deletes what a call drops before it writes status, and a status write that is lost
    # (a conflict, a stale re-apply) would lose the result with the Job, and run it again.
    return DiscoveryOutcome(
        ConditionType.DISCOVERED.ready(Reason.DISCOVERY_COMPLETE, found_message(result.sources)),
        job=keep(current, ready=True),
        sources=result.sources,
        profile=result.profile,
        state=replace_state(state, completed=True, last_failure_reason=None),
    )


def failed_attempt(  # noqa: PLR0913 - the attempt that failed, and why
    observed: Observed,
    *,
    current: Manifest,
    job: Manifest,
    state: DiscoveryState,
    reason: str,
    message: str,
) -> DiscoveryOutcome:
    """Count the failed attempt once; keep its Job until the backoff window ends."""
    name = name_of(current)
    if state.last_failed_job != name:
        state = replace_state(
            state,
            attempts=state.attempts + 1,
            last_failed_job=name,
            last_attempt_time=_failure_time(observed, current),
            last_failure_reason=message,
        )
    retry = discovery.retry_at(state.last_attempt_time, state.attempts, observed.now)
    if retry is None or observed.now >= retry:
        return DiscoveryOutcome(
            ConditionType.DISCOVERED.failed(
                reason, f"{message}; retrying now (attempt {state.attempts + 1})"
            ),
            state=state,
            retry_after_s=REPLACE_AFTER_S,
        )
    return DiscoveryOutcome(
        ConditionType.DISCOVERED.failed(reason, f"{message}; {backoff_message(state, retry)}"),
        job=Desired(job, ready=False),
        state=state,
        retry_after_s=seconds_until(observed.now, retry),
    )


def replace_state(state: DiscoveryState, **changes: object) -> DiscoveryState:
    """A copy of `state` with `changes` (field names in Python form)."""
    return state.model_copy(update=changes)


def _failure_time(observed: Observed, job: Manifest) -> str:
    failed = condition_of(job, "Failed")
    when = failed.last_transition_time if failed else None
    return min(discovery.timestamp(when) or observed.now, observed.now).isoformat()


def seconds_until(now: datetime, then: datetime) -> int:
    """Whole seconds from `now` until `then`, at least one."""
    return max(math.ceil((then - now).total_seconds()), 1)


def backoff_message(state: DiscoveryState, retry: datetime) -> str:
    """Which attempt failed, why, and when the next one starts."""
    return (
        f"attempt {state.attempts} failed ({state.last_failure_reason}); the next attempt starts "
        f"at {retry.isoformat()}"
    )


def found_message(sources: Sequence[DiscoveredSource]) -> str:
    """The model sources discovery found, as the Discovered condition says them."""
    listed = ", ".join(f"{s.source_uri} ({s.size or 'size unknown'})" for s in sources)
    return f"model sources: {listed}"
