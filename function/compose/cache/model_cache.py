"""AIMModelCache: a PVC holding one model source, filled by a download Job.

One step per call. Size unknown: a size-check Job measures the source and its result (from the
Pod's termination message) is kept in `status.size`. Size known: the PVC (ReadWriteMany, size
plus the runtime config's headroom, rounded up to GiB; created once, never resized) and the
download Job. Job complete: `status.status: Available` is recorded and the Job dropped. A PVC
that disappears after that is a lost cache: it is re-created and downloaded again. `lastUsed` is
when a service mounting the PVC last started (usage.py).

The Jobs' environment is the runtime config's `env` with the cache's own over it, by name, as the
AIM operator gives its size-check and download Jobs: a proxy or `HF_ENDPOINT` set once for a
namespace reaches every download. Entries stay as written (`valueFrom` included): the function
never reads a Secret. A Job that exists is kept as it was made (a Job's pod template cannot
change), so editing either env affects the next Job, not a running one.

Each step returns what it decided (`steps.Step`): the size here, the volume here, the download in
`download.py`; the composer puts them together.
"""

from __future__ import annotations

from typing import Final

from function.api.cache import CacheStatusValue, ModelCacheSpec, ModelCacheStatus
from function.api.meta import Manifest
from function.build.storage import SIZE_CHECK_CONTAINER, build_pvc, build_size_check_job
from function.compose.cache import usage
from function.compose.cache.download import Downloaded, download
from function.compose.cache.steps import (
    DOWNLOAD_JOB,
    DOWNLOAD_PODS,
    PVC,
    SIZE_CHECK_JOB,
    SIZE_CHECK_PODS,
    Names,
    Run,
    Step,
    job_env,
    job_or_kept,
    pull_secrets,
    trouble,
)
from function.compose.frame import open_frame
from function.kube.contract import Composition, Desired, Observed, keep
from function.kube.jobs import JobState, job_state, pod_message, pods_requirement
from function.kube.parse import parse_spec, parse_status
from function.kube.views import phase_of
from function.rules import caching, labels, quantity
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import ConditionType, Reason, State

CACHE_HEADLINE: Final = {
    # Both cache kinds share the seed's vocabulary, which has no Degraded.
    State.FAILED: CacheStatusValue.FAILED,
    State.DEGRADED: CacheStatusValue.FAILED,
    State.PENDING: CacheStatusValue.PENDING,
    State.PROGRESSING: CacheStatusValue.PROGRESSING,
    State.READY: CacheStatusValue.AVAILABLE,
}


def compose_model_cache(observed: Observed) -> Composition:
    """Compose one AIMModelCache."""
    spec = parse_spec(observed.composite, ModelCacheSpec)
    previous = parse_status(observed.composite, ModelCacheStatus) or ModelCacheStatus()
    frame = open_frame(observed, spec.runtime_config_name, observed.namespace)
    comp, config = frame.comp, frame.config
    comp.requirements += [
        *pods_requirement(observed, SIZE_CHECK_JOB, SIZE_CHECK_PODS, observed.namespace),
        *pods_requirement(observed, DOWNLOAD_JOB, DOWNLOAD_PODS, observed.namespace),
        *usage.requirements(observed, has_volume=PVC in observed.resources),
    ]
    names = Names.of(observed.name)
    base_labels = {**labels.MANAGED_BY, labels.MODEL_CACHE: labels.value(observed.name)}

    size, sized = _size(
        observed, spec=spec, config=config, previous=previous, names=names, base_labels=base_labels
    )
    steps: list[Step] = [sized]
    pvc_name = None
    downloaded: Downloaded | None = None
    if size is not None and config is not None:
        pvc_name = names.pvc
        volume = _pvc(
            observed, spec=spec, config=config, size=size, names=names, labels=base_labels
        )
        downloaded = download(
            observed,
            spec=spec,
            config=config,
            previous=previous,
            size=size,
            names=names,
            base_labels=base_labels,
        )
        steps += [volume, downloaded]
    for step in steps:
        comp.resources.update(step.resources)
        comp.requirements += step.requirements
    if pvc_name is None and PVC in observed.resources:
        comp.resources[PVC] = keep(observed.resources[PVC], ready=_bound(observed))

    state = frame.report([frame.config_health, *(step.health for step in steps)])
    status = ModelCacheStatus(
        status=CACHE_HEADLINE[state],
        persistent_volume_claim=pvc_name,
        size=quantity.binary(size) if size is not None else None,
        last_used=usage.last_used(observed, pvc_name, previous.last_used),
        download=downloaded.status if downloaded else None,
        verification=downloaded.verification if downloaded else None,
    )
    return frame.finish(status, status.status)


def _size(  # noqa: PLR0913 - the size step's inputs
    observed: Observed,
    *,
    spec: ModelCacheSpec,
    config: RuntimeConfig | None,
    previous: ModelCacheStatus,
    names: Names,
    base_labels: dict[str, str],
) -> tuple[int | None, Step]:
    """The source's size in bytes: the spec's, the one measured before, or measure it now."""
    known = spec.size if spec.size is not None else previous.size
    if known is not None:
        try:
            size = quantity.to_bytes(known)
        except ValueError as e:
            return None, Step(ConditionType.SIZE_KNOWN.failed(Reason.INVALID, f"spec.size: {e}"))
        return size, Step(
            ConditionType.SIZE_KNOWN.ready(Reason.SIZE_KNOWN, f"{spec.source_uri}: {known}")
        )
    current = observed.resources.get(SIZE_CHECK_JOB)
    if config is None:
        kept = {SIZE_CHECK_JOB: keep(current, ready=False)} if current is not None else {}
        return None, Step(
            ConditionType.SIZE_KNOWN.pending(Reason.SIZE_UNKNOWN, "waiting for the runtime config"),
            kept,
        )
    return _measure(
        observed, spec=spec, config=config, current=current, names=names, base_labels=base_labels
    )


def _measure(  # noqa: PLR0913 - the size check's inputs
    observed: Observed,
    *,
    spec: ModelCacheSpec,
    config: RuntimeConfig,
    current: Manifest | None,
    names: Names,
    base_labels: dict[str, str],
) -> tuple[int | None, Step]:
    """The size check Job's result, or the Job and how it is doing."""
    secrets = pull_secrets(spec, config)
    job = build_size_check_job(
        name=names.size_check,
        namespace=observed.namespace,
        labels={**base_labels, "app.kubernetes.io/component": "size-check"},
        image=spec.model_download_image,
        source_uri=spec.source_uri,
        env=job_env(spec, config),
        pull_secrets=secrets,
        # The runtime config's account; a download runs as an account of its own.
        service_account=config.spec.service_account_name,
    )
    state = job_state(current) if current is not None else None
    pods = observed.required.get(SIZE_CHECK_PODS)
    if state is JobState.COMPLETE:
        return _measured(spec, job, current, pods)
    resources = {SIZE_CHECK_JOB: job_or_kept(job, current, ready=False)}
    run = Run(
        ConditionType.SIZE_KNOWN,
        names.size_check,
        SIZE_CHECK_CONTAINER,
        spec.model_download_image,
        tuple(secrets),
        f"size check of {spec.source_uri}",
    )
    stopped = trouble(run, state, pods)
    if stopped is not None:
        return None, Step(stopped, resources)
    return None, Step(
        ConditionType.SIZE_KNOWN.pending(
            Reason.SIZE_UNKNOWN,
            f"spec.size is unset: Job {names.size_check} measures {spec.source_uri}",
        ),
        resources,
    )


def _measured(
    spec: ModelCacheSpec,
    job: Manifest,
    current: Manifest | None,
    pods: tuple[Manifest, ...] | None,
) -> tuple[int | None, Step]:
    """A size check that succeeded: its result, read from its pod's termination message."""
    message = pod_message(pods, SIZE_CHECK_CONTAINER, "Succeeded")
    if message is None:
        return None, Step(
            ConditionType.SIZE_KNOWN.progressing(
                Reason.SIZE_UNKNOWN, "reading the size check's result"
            ),
            {SIZE_CHECK_JOB: job_or_kept(job, current, ready=True)},
        )
    try:
        size = caching.parse_size(message)
    except ValueError as e:
        return None, Step(
            ConditionType.SIZE_KNOWN.failed(Reason.SIZE_CHECK_INVALID, str(e)),
            {SIZE_CHECK_JOB: job_or_kept(job, current, ready=False)},
        )
    # Measured: the result lives in status from now on and the Job is dropped.
    return size, Step(
        ConditionType.SIZE_KNOWN.ready(
            Reason.SIZE_KNOWN, f"{spec.source_uri}: {quantity.binary(size)} (measured)"
        )
    )


def _pvc(  # noqa: PLR0913 - the volume step's inputs
    observed: Observed,
    *,
    spec: ModelCacheSpec,
    config: RuntimeConfig,
    size: int,
    names: Names,
    labels: dict[str, str],
) -> Step:
    """The PVC: created once at the size plus headroom, never resized; ready once Bound."""
    current = observed.resources.get(PVC)
    bound = _bound(observed)
    name = names.pvc
    if current is not None:
        pvc = keep(current, ready=bound)  # created once, never resized
    else:
        request = quantity.with_headroom_gib(size, config.spec.pvc_headroom_percent)
        pvc = Desired(
            build_pvc(
                name=name,
                namespace=observed.namespace,
                labels=labels,
                size=request,
                storage_class=spec.storage_class_name or config.spec.default_storage_class_name,
            ),
            ready=False,
        )
    if bound:
        return Step(
            ConditionType.VOLUME_READY.ready(Reason.PVC_BOUND, f"PVC {name} is Bound"),
            {PVC: pvc},
        )
    phase = phase_of(current)
    return Step(
        ConditionType.VOLUME_READY.pending(
            Reason.PVC_PENDING,
            f"PVC {name} is {phase or 'being created'}; it needs a ReadWriteMany storage class",
        ),
        {PVC: pvc},
    )


def _bound(observed: Observed) -> bool:
    return phase_of(observed.resources.get(PVC)) == "Bound"
