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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

from function.api.cache import (
    CacheStatusValue,
    DownloadStatus,
    ModelCacheSpec,
    ModelCacheStatus,
    Verification,
)
from function.build import Manifest, download_report
from function.build.storage import (
    DOWNLOAD_BACKOFF_LIMIT,
    DOWNLOAD_CONTAINER,
    SIZE_CHECK_CONTAINER,
    VERIFY_CONTAINER,
    build_download_job,
    build_pvc,
    build_size_check_job,
)
from function.compose.cache import progress, usage
from function.kube.jobs import (
    JobState,
    attempt,
    job_state,
    pod_message,
    pods_requirement,
    waiting_problem,
)
from function.kube.objects import status_of
from function.kube.observed import Composition, Desired, Observed, keep, parse_spec, parse_status
from function.rules import caching, labels, naming, quantity
from function.rules.merge import merged_env, secret_names
from function.rules.runtimeconfig import RuntimeConfig, propagated_labels
from function.rules.runtimeconfig import lookup as runtime_config_lookup
from function.rules.runtimeconfig import resolve as resolve_runtime_config
from function.rules.status import ConditionType, Health, Reason, State, report

PVC: Final = "pvc"
DOWNLOAD_JOB: Final = "download-job"
SIZE_CHECK_JOB: Final = "size-check-job"
REPORT: Final = "download-report"
REPORT_ROLE: Final = "download-report-role"
REPORT_BINDING: Final = "download-report-binding"
DOWNLOAD_ACCOUNT: Final = "download-account"
_DOWNLOAD_PODS: Final = "download-pods"
_SIZE_CHECK_PODS: Final = "size-check-pods"

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
    comp = Composition()
    config_lookup = runtime_config_lookup(spec.runtime_config_name, observed.namespace)
    comp.requirements += [
        *config_lookup.requirements(),
        *pods_requirement(observed, SIZE_CHECK_JOB, _SIZE_CHECK_PODS, observed.namespace),
        *pods_requirement(observed, DOWNLOAD_JOB, _DOWNLOAD_PODS, observed.namespace),
        *usage.requirements(observed, has_volume=PVC in observed.resources),
    ]
    config_health, config = resolve_runtime_config(config_lookup, observed.required)
    comp.propagated_labels = propagated_labels(observed.metadata, config)
    names = _names(observed.name)
    base_labels = {**labels.MANAGED_BY, labels.MODEL_CACHE: labels.value(observed.name)}

    size, size_health = _size(
        observed,
        spec=spec,
        config=config,
        previous=previous,
        names=names,
        base_labels=base_labels,
        comp=comp,
    )
    healths = [config_health, size_health]
    pvc_name = None
    download: _Downloaded | None = None
    if size is not None and config is not None:
        pvc_name = names["pvc"]
        pvc_health = _pvc(
            observed,
            spec=spec,
            config=config,
            size=size,
            name=pvc_name,
            base_labels=base_labels,
            comp=comp,
        )
        download = _download(
            observed,
            spec=spec,
            config=config,
            previous=previous,
            pvc=pvc_name,
            size=size,
            names=names,
            base_labels=base_labels,
            comp=comp,
        )
        healths += [pvc_health, download.health]
    elif PVC in observed.resources:
        comp.resources[PVC] = keep(observed.resources[PVC], ready=_bound(observed))

    state = report(comp, healths)
    comp.status = ModelCacheStatus(
        status=CACHE_HEADLINE[state],
        persistent_volume_claim=pvc_name,
        size=quantity.binary(size) if size is not None else None,
        last_used=usage.last_used(observed, pvc_name, previous.last_used),
        download=download.status if download else None,
        verification=download.verification if download else None,
    ).model_dump(mode="json", by_alias=True, exclude_none=True)
    return comp


@dataclass(frozen=True)
class _Downloaded:
    """The download step's outcome: its health, its attempts and progress, its check."""

    health: Health
    status: DownloadStatus | None = None
    verification: Verification | None = None


def _names(cache: str) -> dict[str, str]:
    return {
        "pvc": naming.derived_name([cache, "cache"]),
        "download": naming.derived_name([cache, "download"]),
        "size-check": naming.derived_name([cache, "size-check"]),
        "report": naming.derived_name([cache, "download-report"]),
        "account": naming.derived_name([cache, "download"]),
    }


def _size(  # noqa: PLR0913, PLR0911 - the size step: its inputs, and one return per outcome
    observed: Observed,
    *,
    spec: ModelCacheSpec,
    config: RuntimeConfig | None,
    previous: ModelCacheStatus,
    names: dict[str, str],
    base_labels: dict[str, str],
    comp: Composition,
) -> tuple[int | None, Health]:
    """The source's size in bytes: the spec's, the one measured before, or measure it now."""
    known = spec.size if spec.size is not None else previous.size
    if known is not None:
        try:
            size = quantity.to_bytes(known)
        except ValueError as e:
            return None, _health(
                ConditionType.SIZE_KNOWN, State.FAILED, Reason.INVALID, f"spec.size: {e}"
            )
        return size, _health(
            ConditionType.SIZE_KNOWN, State.READY, Reason.SIZE_KNOWN, f"{spec.source_uri}: {known}"
        )
    current = observed.resources.get(SIZE_CHECK_JOB)
    if config is None:
        if current is not None:
            comp.resources[SIZE_CHECK_JOB] = keep(current, ready=False)
        return None, _size_health(State.PENDING, "waiting for the runtime config")
    pull_secrets, service_account = _runs_as(spec, config)
    job = build_size_check_job(
        name=names["size-check"],
        namespace=observed.namespace,
        labels={**base_labels, "app.kubernetes.io/component": "size-check"},
        image=spec.model_download_image,
        source_uri=spec.source_uri,
        env=_job_env(spec, config),
        pull_secrets=pull_secrets,
        service_account=service_account,
    )
    state = job_state(current) if current is not None else None
    pods = observed.required.get(_SIZE_CHECK_PODS)
    if state is JobState.COMPLETE:
        message = pod_message(pods, SIZE_CHECK_CONTAINER, "Succeeded")
        if message is None:
            comp.resources[SIZE_CHECK_JOB] = _job_or_kept(job, current, ready=True)
            return None, _size_health(State.PROGRESSING, "reading the size check's result")
        try:
            size = caching.parse_size(message)
        except ValueError as e:
            comp.resources[SIZE_CHECK_JOB] = _job_or_kept(job, current, ready=False)
            return None, _health(
                ConditionType.SIZE_KNOWN, State.FAILED, Reason.SIZE_CHECK_INVALID, str(e)
            )
        # Measured: the result lives in status from now on and the Job is dropped.
        return size, _health(
            ConditionType.SIZE_KNOWN,
            State.READY,
            Reason.SIZE_KNOWN,
            f"{spec.source_uri}: {quantity.binary(size)} (measured)",
        )
    comp.resources[SIZE_CHECK_JOB] = _job_or_kept(job, current, ready=False)
    run = _Run(
        ConditionType.SIZE_KNOWN,
        names["size-check"],
        SIZE_CHECK_CONTAINER,
        spec.model_download_image,
        tuple(pull_secrets),
        f"size check of {spec.source_uri}",
    )
    trouble = _trouble(run, state, pods)
    if trouble is not None:
        return None, trouble
    return None, _size_health(
        State.PENDING, f"spec.size is unset: Job {names['size-check']} measures {spec.source_uri}"
    )


def _pvc(  # noqa: PLR0913 - the PVC step reads and writes all of these
    observed: Observed,
    *,
    spec: ModelCacheSpec,
    config: RuntimeConfig,
    size: int,
    name: str,
    base_labels: dict[str, str],
    comp: Composition,
) -> Health:
    current = observed.resources.get(PVC)
    bound = _bound(observed)
    if current is not None:
        comp.resources[PVC] = keep(current, ready=bound)  # created once, never resized
    else:
        request = quantity.with_headroom_gib(size, config.spec.pvc_headroom_percent)
        comp.resources[PVC] = Desired(
            build_pvc(
                name=name,
                namespace=observed.namespace,
                labels=base_labels,
                size=request,
                storage_class=spec.storage_class_name or config.spec.default_storage_class_name,
            ),
            ready=False,
        )
    if bound:
        return _health(
            ConditionType.VOLUME_READY, State.READY, Reason.PVC_BOUND, f"PVC {name} is Bound"
        )
    phase = status_of(current).get("phase") if current is not None else None
    return _health(
        ConditionType.VOLUME_READY,
        State.PENDING,
        Reason.PVC_PENDING,
        f"PVC {name} is {phase or 'being created'}; it needs a ReadWriteMany storage class",
    )


def _download(  # noqa: PLR0913 - the download step reads and writes all of these
    observed: Observed,
    *,
    spec: ModelCacheSpec,
    config: RuntimeConfig,
    previous: ModelCacheStatus,
    pvc: str,
    size: int,
    names: dict[str, str],
    base_labels: dict[str, str],
    comp: Composition,
) -> _Downloaded:
    """The download's health, its attempts and progress while its Job exists, and its check."""
    # Available is recorded once; it holds while the PVC does (a lost PVC downloads again).
    if previous.status is CacheStatusValue.AVAILABLE and PVC in observed.resources:
        return _Downloaded(
            _download_health(State.READY, Reason.DOWNLOADED, f"{spec.source_uri} is in PVC {pvc}"),
            verification=previous.verification,
        )
    current = observed.resources.get(DOWNLOAD_JOB)
    pull_secrets, service_account = _runs_as(spec, config)
    reporting = download_report.Reporting(
        configmap=names["report"],
        role=names["report"],
        service_account=service_account or names["account"],
        stall_after_s=observed.settings.download_stall_s,
    )
    job_labels = {**base_labels, "app.kubernetes.io/component": "download"}
    job = build_download_job(
        name=names["download"],
        namespace=observed.namespace,
        labels=job_labels,
        image=spec.model_download_image,
        source_uri=spec.source_uri,
        claim=pvc,
        env=_job_env(spec, config),
        pull_secrets=pull_secrets,
        report=reporting,
        checksums=spec.checksums,
    )
    comp.requirements.append(progress.requirement(names["report"], observed.namespace))
    report = progress.read(observed.required) or progress.Report()
    total = DOWNLOAD_BACKOFF_LIMIT + 1
    tries = attempt(current, total) if current is not None else 1
    download = DownloadStatus(
        protocol=spec.source_uri.partition("://")[0][:16],
        attempt=tries,
        total_attempts=total,
        downloaded_bytes=report.downloaded_bytes,
        total_bytes=size,
        percent=report.percent(size),
        updated_at=report.updated_at,
        grew_at=report.grew_at,
    )
    state = job_state(current) if current is not None else None
    pods = observed.required.get(_DOWNLOAD_PODS)
    if state is JobState.COMPLETE:
        # The report and the rights to write it go with the Job; the download is whole.
        complete = download.model_copy(update={"percent": 100})
        measured = (
            f" ({quantity.gib_text(report.downloaded_bytes)} measured by its reporter)"
            if report.downloaded_bytes is not None
            else ""
        )
        checked = progress.verdict(pod_message(pods, VERIFY_CONTAINER, "Succeeded"))
        verification = checked if isinstance(checked, Verification) else None
        how = f"; {_checked(verification)}" if verification else ""
        return _Downloaded(
            _download_health(
                State.READY,
                Reason.DOWNLOADED,
                f"{spec.source_uri} downloaded into PVC {pvc}{measured}{how}",
            ),
            complete,
            verification,
        )
    comp.resources[DOWNLOAD_JOB] = _job_or_kept(job, current, ready=False)
    _compose_reporting(
        observed, reporting, job_labels, own_account=service_account is None, comp=comp
    )
    pods = observed.required.get(_DOWNLOAD_PODS)
    run = _Run(
        ConditionType.DOWNLOAD_READY,
        names["download"],
        DOWNLOAD_CONTAINER,
        spec.model_download_image,
        tuple(pull_secrets),
        f"download into PVC {pvc}",
    )
    mismatch = progress.verdict(pod_message(pods, VERIFY_CONTAINER, "Failed"))
    if state is JobState.FAILED and isinstance(mismatch, str):
        return _Downloaded(
            _download_health(
                State.FAILED,
                Reason.CHECKSUM_MISMATCH,
                f"the download into PVC {pvc} does not match what {spec.source_uri} publishes on "
                f"every attempt ({mismatch}); check the source and any proxy or mirror "
                "(HF_ENDPOINT) in between, then delete the failed Job to download again",
            ),
            download,
        )
    if state is JobState.FAILED and report.stalled:
        return _Downloaded(
            _download_health(
                State.FAILED,
                Reason.DOWNLOAD_STALLED,
                f"download into PVC {pvc} stopped growing on its last attempt ({report.stalled}); "
                "check the source's reachability and the node's network, raise "
                "--download-stall-timeout for slow links, then delete the failed Job to try again",
            ),
            download,
        )
    trouble = _trouble(run, state, pods)
    if trouble is not None:
        return _Downloaded(trouble, download)
    # A retry says why the attempt before it failed: the user may not want to wait for it.
    tail = (pod_message(pods, DOWNLOAD_CONTAINER, "Failed") or "").strip()
    before = f"; attempt {tries - 1} failed: {tail[-300:]}" if tries > 1 and tail else ""
    done = report.summary(size)
    return _Downloaded(
        _download_health(
            State.PROGRESSING,
            Reason.DOWNLOADING,
            f"Job {names['download']} downloads {spec.source_uri} (attempt {tries} of {total})"
            + (f": {done}" if done else "")
            + before,
        ),
        download,
    )


def _checked(verification: Verification) -> str:
    if verification.method == "none":
        return f"not verified: {verification.reason or 'the source publishes no checksums'}"
    return f"{verification.files} file(s) match the source's {verification.method} checksums"


def _compose_reporting(
    observed: Observed,
    reporting: download_report.Reporting,
    labels: dict[str, str],
    *,
    own_account: bool,
    comp: Composition,
) -> None:
    """The report's ConfigMap, the Role on it alone, its binding, and the account if ours."""
    ns = observed.namespace
    objects = {
        REPORT: download_report.build_configmap(reporting, namespace=ns, labels=labels),
        REPORT_ROLE: download_report.build_role(reporting, namespace=ns, labels=labels),
    }
    # The API server checks a binding against its Role's rules, so a binding applied before its
    # Role exists is refused (and fails the whole reconcile): it follows once the Role is there.
    if REPORT_ROLE in observed.resources or REPORT_BINDING in observed.resources:
        objects[REPORT_BINDING] = download_report.build_role_binding(
            reporting, namespace=ns, labels=labels
        )
    if own_account:
        objects[DOWNLOAD_ACCOUNT] = download_report.build_service_account(
            reporting.service_account, namespace=ns, labels=labels
        )
    for key, manifest in objects.items():
        # Nothing to wait for in these: the download's pod waits for them itself.
        comp.resources[key] = Desired(manifest, ready=True)


@dataclass(frozen=True)
class _Run:
    """One of the cache's Jobs as composed: its condition, names, and what its pod pulls."""

    condition: ConditionType
    job: str
    container: str
    image: str
    pull_secrets: tuple[str, ...]
    what: str


def _trouble(run: _Run, state: JobState | None, pods: tuple[Manifest, ...] | None) -> Health | None:
    """What stops a cache Job, Failed with its own words; None while nothing does.

    The Job failed: the end of its log (delete it to try again). Or the kubelet cannot start its
    pod (the image cannot be pulled, a Secret its env names is missing): without this the cache
    would read "running" forever; the kubelet keeps trying, so fixing the cause resumes the Job.
    """
    if state is JobState.FAILED:
        tail = pod_message(pods, run.container, "Failed") or ""
        reason, advice = caching.classify_failure(tail)
        said = f"; it said: {tail.strip()[-300:]}" if tail.strip() else ""
        return _health(
            run.condition,
            State.FAILED,
            reason,
            f"{run.what} failed: {advice}{said} (delete the failed Job to try again)",
        )
    stuck = waiting_problem(pods or (), run.container)
    if stuck is None:
        return None
    return _health(
        run.condition,
        State.FAILED,
        Reason.CACHE_JOB_CANNOT_START,
        f"Job {run.job} cannot start {run.image}: {stuck[:300]} (pull secrets in use: "
        f"{', '.join(run.pull_secrets) or 'none'}; it resumes once the cause is fixed)",
    )


def _job_env(spec: ModelCacheSpec, config: RuntimeConfig) -> list[Mapping[str, JsonValue]]:
    """The Jobs' environment: the runtime config's, then the cache's own, by name."""
    return caching.env_manifests(merged_env(config.spec.env, spec.env))


def _job_or_kept(job: Manifest, current: Manifest | None, *, ready: bool) -> Desired:
    """A Job that exists, as it was made; else the one to create.

    A Job's pod template cannot change: re-applying another one (an env edited since, or a
    newer function's pod shape) is refused by the API server and fails the whole reconcile.
    """
    return keep(current, ready=ready) if current is not None else Desired(job, ready=ready)


def _runs_as(spec: ModelCacheSpec, config: RuntimeConfig) -> tuple[list[str], str | None]:
    """The Jobs' pull secrets (the cache's, then the runtime config's) and service account."""
    return (
        secret_names(spec.image_pull_secrets, config.spec.image_pull_secrets),
        config.spec.service_account_name,
    )


def _bound(observed: Observed) -> bool:
    return status_of(observed.resources.get(PVC)).get("phase") == "Bound"


def _size_health(state: State, message: str) -> Health:
    return _health(ConditionType.SIZE_KNOWN, state, Reason.SIZE_UNKNOWN, message)


def _download_health(state: State, reason: str, message: str) -> Health:
    return _health(ConditionType.DOWNLOAD_READY, state, reason, message)


def _health(condition: ConditionType, state: State, reason: str, message: str) -> Health:
    return Health(condition, state, reason, message)
