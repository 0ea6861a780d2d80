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

from collections.abc import Mapping, Sequence
from typing import Final

from pydantic import JsonValue

from function.api.meta import Manifest
from function.api.template import (
    ClusterServiceTemplateSpec,
    DiscoveredSource,
    DiscoveryState,
    Profile,
    ProfileMetadata,
    TemplateStatus,
)
from function.build.job import build_discovery_job
from function.compose.model.metadata import stored_entrypoint
from function.compose.refs import Model
from function.compose.template import slots
from function.compose.template.attempts import (
    PODS,
    REPLACE_AFTER_S,
    DiscoveryOutcome,
    backoff_message,
    found_message,
    observe,
    replace_state,
    seconds_until,
)
from function.kube.contract import Desired, Observed, Requirement, keep
from function.kube.jobs import pods_requirement
from function.kube.objects import name_of
from function.kube.parse import parse_status
from function.rules import discovery, labels
from function.rules.merge import secret_names
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import ConditionType, Reason

DISCOVERY_JOB: Final = "discovery-job"
"""Composition-resource name of the discovery Job."""


def requirements(observed: Observed, namespace: str) -> list[Requirement]:
    """The Pods of the observed discovery Job (see `function.kube.jobs.pods_requirement`)."""
    return pods_requirement(observed, DISCOVERY_JOB, PODS, namespace)


def discover(  # noqa: PLR0911 - one return per step of the lifecycle
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
        # Inputs flickered: keep what was found and any Job running, create nothing.
        return DiscoveryOutcome(
            ConditionType.DISCOVERED.pending(
                Reason.WAITING, "waiting for the model, GPU and runtime config"
            ),
            job=keep(current, ready=False) if current is not None else None,
            sources=tuple(status.model_sources or ()) if state.completed else (),
            profile=status.profile if state.completed else None,
            state=state,
        )

    fingerprint = discovery.spec_hash(
        [
            spec.model_name,
            model.spec.image,
            spec.metric,
            spec.precision,
            *_gpu_inputs(spec),
            spec.profile_id,
        ]
    )
    if state.spec_hash != fingerprint:
        state = DiscoveryState(spec_hash=fingerprint)
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
    job = _job(observed, spec, model=model, config=config, name=name, namespace=namespace)
    if current is None:
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
    return observe(
        observed,
        current,
        job,
        replace_state(state, job=name),
        namespace,
        no_profile=_no_profile(spec, model),
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


def _job(  # noqa: PLR0913 - everything a discovery Job is made of
    observed: Observed,
    spec: ClusterServiceTemplateSpec,
    *,
    model: Model,
    config: RuntimeConfig,
    name: str,
    namespace: str,
) -> Manifest:
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
