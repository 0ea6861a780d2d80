"""Discovery for one template: inline sources, or a Job whose result is read back from its Pod.

The lifecycle, one step per call, all state in `status.discovery`:
no Job -> wait for a free slot among the cluster's discovery Jobs (`slots`) -> create it (Pending)
-> running (Progressing) -> succeeded: parse the result into
`status.modelSources` and `status.profile`, mark discovery complete and drop the Job (Available)
-> or no profile fits (the dry-run printed `[]`): failed, with no retry until the inputs change
-> or failed: count the attempt once, keep the Job for inspection until the backoff window ends,
then drop it; the next call creates the next attempt's Job under a new name. A change of the
inputs (model image, metric, precision, GPU, profile) resets the attempts and discovers again.
Reading an attempt's Job back, and counting its failure, are `attempts`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from function.api.meta import Manifest
from function.api.template import (
    ClusterServiceTemplateSpec,
    DiscoveredSource,
    DiscoveryState,
    Profile,
    ProfileMetadata,
    TemplateStatus,
)
from function.compose.refs import Model
from function.compose.template import slots
from function.compose.template.attempts import (
    PODS,
    REPLACE_AFTER_S,
    DiscoveryOutcome,
    backoff_message,
    found_message,
    job_for,
    observe,
    replace_state,
    seconds_until,
)
from function.kube.contract import Desired, Observed, Requirement, keep
from function.kube.jobs import pods_requirement
from function.kube.objects import name_of
from function.kube.parse import parse_status
from function.rules import discovery
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import ConditionType, Reason

DISCOVERY_JOB: Final = "discovery-job"
"""Composition-resource name of the discovery Job."""


def requirements(observed: Observed, namespace: str) -> list[Requirement]:
    """The Pods of the observed discovery Job (see `function.kube.jobs.pods_requirement`)."""
    return pods_requirement(observed, DISCOVERY_JOB, PODS, namespace)


def discover(
    observed: Observed,
    spec: ClusterServiceTemplateSpec,
    *,
    model: Model | None,
    config: RuntimeConfig | None,
    namespace: str,
) -> DiscoveryOutcome:
    """Where this template's discovery stands, and what to compose for it.

    `model` and `config` are None until both are known and the GPU is in the cluster.
    """
    if spec.model_sources:
        return _inline(spec)
    status = parse_status(observed.composite, TemplateStatus) or TemplateStatus()
    state = status.discovery or DiscoveryState()
    current = observed.resources.get(DISCOVERY_JOB)
    if model is None or config is None:
        return _waiting(status, state, current)

    fingerprint = _fingerprint(spec, model)
    if state.spec_hash != fingerprint:
        state = DiscoveryState(spec_hash=fingerprint)
    settled = _settled(spec, model, status, state)
    if settled is not None:
        return settled

    name = discovery.job_name(observed.name, fingerprint, state.attempts)
    if current is not None and name_of(current) != name:
        # The previous attempt's Job, or one made for other inputs: let Crossplane delete it
        # first, then create this attempt's (a Job cannot be changed or re-run in place).
        return DiscoveryOutcome(
            ConditionType.DISCOVERED.progressing(
                Reason.DISCOVERY_STARTING, f"replacing Job {name_of(current)}"
            ),
            state=state,
            retry_after_s=REPLACE_AFTER_S,
        )
    job = job_for(observed, spec, model=model, config=config, name=name, namespace=namespace)
    if current is None:
        return _start(observed, job, name=name, state=state, config=config, namespace=namespace)
    return observe(
        observed,
        current,
        job,
        replace_state(state, job=name),
        namespace,
        no_profile=_no_profile(spec, model),
    )


def _waiting(
    status: TemplateStatus, state: DiscoveryState, current: Manifest | None
) -> DiscoveryOutcome:
    """Inputs flickered: keep what was found and any Job running, create nothing."""
    return DiscoveryOutcome(
        ConditionType.DISCOVERED.pending(
            Reason.WAITING, "waiting for the model, GPU and runtime config"
        ),
        job=keep(current, ready=False) if current is not None else None,
        sources=tuple(status.model_sources or ()) if state.completed else (),
        profile=status.profile if state.completed else None,
        state=state,
    )


def _fingerprint(spec: ClusterServiceTemplateSpec, model: Model) -> str:
    """What discovery's result follows from: a change of any of it discovers again."""
    return discovery.spec_hash(
        [
            spec.model_name,
            model.spec.image,
            spec.metric,
            spec.precision,
            *_gpu_inputs(spec),
            spec.profile_id,
        ]
    )


def _settled(
    spec: ClusterServiceTemplateSpec, model: Model, status: TemplateStatus, state: DiscoveryState
) -> DiscoveryOutcome | None:
    """The outcome of a discovery these inputs already finished; None when it has not."""
    if state.no_profile:
        # The runtime's choice follows from the image and these inputs alone: running it again
        # would print the same `[]`, so only a change of the inputs (a new fingerprint) retries.
        return DiscoveryOutcome(
            ConditionType.DISCOVERED.failed(
                Reason.DISCOVERY_NO_PROFILE, state.last_failure_reason or _no_profile(spec, model)
            ),
            state=state,
        )
    if state.completed and status.model_sources:
        return DiscoveryOutcome(
            ConditionType.DISCOVERED.ready(
                Reason.DISCOVERY_COMPLETE, found_message(status.model_sources)
            ),
            sources=tuple(status.model_sources),
            profile=status.profile,
            state=state,
        )
    return None


def _start(  # noqa: PLR0913 - the attempt's Job, and what starting it waits for
    observed: Observed,
    job: Manifest,
    *,
    name: str,
    state: DiscoveryState,
    config: RuntimeConfig,
    namespace: str,
) -> DiscoveryOutcome:
    """The Job of an attempt that has none yet: after the backoff, and once a slot is free."""
    retry = discovery.retry_at(state.last_attempt_time, state.attempts, observed.now)
    if retry is not None and observed.now < retry:
        return DiscoveryOutcome(
            ConditionType.DISCOVERED.failed(
                Reason.DISCOVERY_BACKOFF, backoff_message(state, retry)
            ),
            state=state,
            retry_after_s=seconds_until(observed.now, retry),
        )
    # Only a Job yet to be created waits for a slot; one that exists is kept, whatever the
    # count (a lowered cap lets running discoveries finish).
    slot = slots.decide(
        observed, limit=config.spec.max_concurrent_discovery_jobs, job=name, namespace=namespace
    )
    if slot is None or not slot.granted:
        return DiscoveryOutcome(
            ConditionType.DISCOVERED.pending(
                Reason.RESOLVING if slot is None else Reason.DISCOVERY_CAP_REACHED,
                "counting the discovery Jobs running in the cluster"
                if slot is None
                else slots.waiting_message(slot),
            ),
            state=state,
            requirements=tuple(slots.requirements(observed)),
        )
    return DiscoveryOutcome(
        ConditionType.DISCOVERED.pending(
            Reason.DISCOVERY_STARTING,
            f"creating discovery Job {namespace}/{name}",
        ),
        job=Desired(job, ready=False),
        state=replace_state(state, job=name),
        requirements=tuple(slots.requirements(observed)),
    )


def _inline(spec: ClusterServiceTemplateSpec) -> DiscoveryOutcome:
    sources = tuple(
        DiscoveredSource(model_id=s.model_id, source_uri=s.source_uri, size=s.size)
        for s in spec.model_sources or ()
    )
    gpu = spec.hardware.gpu if spec.hardware else None
    profile = Profile(
        metadata=ProfileMetadata(
            gpu=gpu.model if gpu else None,
            gpu_count=gpu.requests if gpu else None,
            metric=spec.metric,
            precision=spec.precision,
            type=spec.type,
        )
    )
    return DiscoveryOutcome(
        ConditionType.DISCOVERED.ready(
            Reason.INLINE_MODEL_SOURCES, "model sources given in spec.modelSources"
        ),
        sources=sources,
        profile=profile,
    )


def _gpu_inputs(spec: ClusterServiceTemplateSpec) -> Sequence[str | int | None]:
    gpu = spec.hardware.gpu if spec.hardware else None
    return [gpu.model, gpu.requests] if gpu else [None, None]


def _no_profile(spec: ClusterServiceTemplateSpec, model: Model) -> str:
    gpu = spec.hardware.gpu if spec.hardware else None
    inputs = ", ".join(
        [
            f"GPU {gpu.model or 'any'} x {gpu.requests or 'any'}" if gpu else "no GPU given",
            f"metric {spec.metric or 'any'}",
            f"precision {spec.precision or 'any'}",
            *([f"profile {spec.profile_id}"] if spec.profile_id else []),
        ]
    )
    choose = (
        "choose a GPU count, metric and precision the image lists (its "
        "com.amd.aim.model.recommendedDeployments label)"
        if gpu
        else "choose a metric and precision the image has a profile for"
    )
    return (
        f"image {model.spec.image} has no profile for {inputs} (its dry-run printed an empty "
        f"list); {choose}, or name the profile in spec.profileId (AIM's runtime passes over an "
        "unoptimized profile unless it is named or AIM_ALLOW_UNOPTIMIZED is true); discovery "
        "runs again when any of them changes"
    )
