"""The download step of an AIMModelCache: the Job that fills its PVC, and what it reports.

Once the size is known and the runtime config resolved, a download Job copies the source into
the PVC; while it runs, its reporter writes progress into a ConfigMap (with an account of the
download's own, bound to the platform's fixed progress ClusterRole in this namespace). Complete: the
cache is Available (recorded in status, so it holds while the PVC does), with the checksum
verdict of the Job's verify container. Failed: a checksum mismatch, a stalled download, or the
end of its log, each said with what to do. Running: the attempt and progress, and why the
attempt before failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from function.api.cache import (
    CacheStatusValue,
    DownloadStatus,
    ModelCacheSpec,
    ModelCacheStatus,
    Verification,
)
from function.api.meta import Manifest
from function.build import download_report
from function.build.storage import (
    DOWNLOAD_BACKOFF_LIMIT,
    DOWNLOAD_CONTAINER,
    VERIFY_CONTAINER,
    build_download_job,
)
from function.compose.cache import progress
from function.compose.cache.steps import (
    DOWNLOAD_ACCOUNT,
    DOWNLOAD_JOB,
    DOWNLOAD_PODS,
    PVC,
    REPORT,
    REPORT_BINDING,
    Names,
    Run,
    Step,
    job_env,
    job_or_kept,
    pull_secrets,
    trouble,
)
from function.kube.contract import Desired, Observed, Requirement
from function.kube.jobs import JobState, attempt, job_state, pod_message
from function.rules import quantity
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import ConditionType, Health, Reason


@dataclass(frozen=True)
class Downloaded(Step):
    """The download step's outcome: its health and objects, its attempts and progress, its check."""

    status: DownloadStatus | None = None
    verification: Verification | None = None


@dataclass(frozen=True)
class _Job:
    """The download Job as composed, with the reporting it writes to."""

    manifest: Manifest
    labels: dict[str, str]
    reporting: download_report.Reporting
    run: Run


def download(  # noqa: PLR0913 - the download step's inputs
    observed: Observed,
    *,
    spec: ModelCacheSpec,
    config: RuntimeConfig,
    previous: ModelCacheStatus,
    size: int,
    names: Names,
    base_labels: Mapping[str, str],
) -> Downloaded:
    """The download's health, its attempts and progress while its Job exists, and its check."""
    # Available is recorded once; it holds while the PVC does (a lost PVC downloads again).
    if previous.status is CacheStatusValue.AVAILABLE and PVC in observed.resources:
        return Downloaded(
            ConditionType.DOWNLOAD_READY.ready(
                Reason.DOWNLOADED, f"{spec.source_uri} is in PVC {names.pvc}"
            ),
            verification=previous.verification,
        )
    current = observed.resources.get(DOWNLOAD_JOB)
    job = _job(observed, spec=spec, config=config, names=names, base_labels=base_labels)
    reported = (progress.requirement(names.report, observed.namespace),)
    report = progress.read(observed.required) or progress.Report()
    total = DOWNLOAD_BACKOFF_LIMIT + 1
    tries = attempt(current, total) if current is not None else 1
    status = DownloadStatus(
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
    pods = observed.required.get(DOWNLOAD_PODS)
    if state is JobState.COMPLETE:
        # The report and the rights to write it go with the Job; the download is whole.
        return _complete(spec, names, report, status, pods, requirements=reported)
    resources = {
        DOWNLOAD_JOB: job_or_kept(job.manifest, current, ready=False),
        **_reporting_objects(observed, job),
    }
    verdict = _failed(spec, names, state, report, pods) or trouble(job.run, state, pods)
    if verdict is None:
        verdict = _running(
            spec, names, tries=tries, total=total, report=report, size=size, pods=pods
        )
    return Downloaded(verdict, resources, reported, status=status)


def _job(
    observed: Observed,
    *,
    spec: ModelCacheSpec,
    config: RuntimeConfig,
    names: Names,
    base_labels: Mapping[str, str],
) -> _Job:
    secrets = pull_secrets(spec, config)
    reporting = download_report.Reporting(
        configmap=names.report,
        service_account=names.account,
        stall_after_s=observed.settings.download_stall_s,
    )
    labels = {**base_labels, "app.kubernetes.io/component": "download"}
    manifest = build_download_job(
        name=names.download,
        namespace=observed.namespace,
        labels=labels,
        image=spec.model_download_image,
        source_uri=spec.source_uri,
        claim=names.pvc,
        env=job_env(spec, config),
        pull_secrets=secrets,
        report=reporting,
        checksums=spec.checksums,
    )
    run = Run(
        ConditionType.DOWNLOAD_READY,
        names.download,
        DOWNLOAD_CONTAINER,
        spec.model_download_image,
        tuple(secrets),
        f"download into PVC {names.pvc}",
    )
    return _Job(manifest, labels, reporting, run)


def _complete(  # noqa: PLR0913 - what a complete download reports
    spec: ModelCacheSpec,
    names: Names,
    report: progress.Report,
    status: DownloadStatus,
    pods: tuple[Manifest, ...] | None,
    *,
    requirements: tuple[Requirement, ...],
) -> Downloaded:
    complete = status.model_copy(update={"percent": 100})
    measured = (
        f" ({quantity.gib_text(report.downloaded_bytes)} measured by its reporter)"
        if report.downloaded_bytes is not None
        else ""
    )
    checked = progress.verdict(pod_message(pods, VERIFY_CONTAINER, "Succeeded"))
    verification = checked if isinstance(checked, Verification) else None
    how = f"; {_checked(verification)}" if verification else ""
    return Downloaded(
        ConditionType.DOWNLOAD_READY.ready(
            Reason.DOWNLOADED,
            f"{spec.source_uri} downloaded into PVC {names.pvc}{measured}{how}",
        ),
        requirements=requirements,
        status=complete,
        verification=verification,
    )


def _failed(
    spec: ModelCacheSpec,
    names: Names,
    state: JobState | None,
    report: progress.Report,
    pods: tuple[Manifest, ...] | None,
) -> Health | None:
    """Why a failed Job failed when the download itself says: a checksum mismatch, a stall."""
    if state is not JobState.FAILED:
        return None
    mismatch = progress.verdict(pod_message(pods, VERIFY_CONTAINER, "Failed"))
    if isinstance(mismatch, str):
        return ConditionType.DOWNLOAD_READY.failed(
            Reason.CHECKSUM_MISMATCH,
            f"the download into PVC {names.pvc} does not match what {spec.source_uri} publishes "
            f"on every attempt ({mismatch}); check the source and any proxy or mirror "
            "(HF_ENDPOINT) in between, then delete the failed Job to download again",
        )
    if report.stalled:
        return ConditionType.DOWNLOAD_READY.failed(
            Reason.DOWNLOAD_STALLED,
            f"download into PVC {names.pvc} stopped growing on its last attempt "
            f"({report.stalled}); check the source's reachability and the node's network, raise "
            "--download-stall-timeout for slow links, then delete the failed Job to try again",
        )
    return None


def _running(  # noqa: PLR0913 - what a running download reports
    spec: ModelCacheSpec,
    names: Names,
    *,
    tries: int,
    total: int,
    report: progress.Report,
    size: int,
    pods: tuple[Manifest, ...] | None,
) -> Health:
    # A retry says why the attempt before it failed: the user may not want to wait for it.
    tail = (pod_message(pods, DOWNLOAD_CONTAINER, "Failed") or "").strip()
    before = f"; attempt {tries - 1} failed: {tail[-300:]}" if tries > 1 and tail else ""
    done = report.summary(size)
    return ConditionType.DOWNLOAD_READY.progressing(
        Reason.DOWNLOADING,
        f"Job {names.download} downloads {spec.source_uri} (attempt {tries} of {total})"
        + (f": {done}" if done else "")
        + before,
    )


def _checked(verification: Verification) -> str:
    if verification.method == "none":
        return f"not verified: {verification.reason or 'the source publishes no checksums'}"
    return f"{verification.files} file(s) match the source's {verification.method} checksums"


def _reporting_objects(observed: Observed, job: _Job) -> dict[str, Desired]:
    """The report's ConfigMap, the download's account, and the binding that lets it write."""
    ns = observed.namespace
    reporting, labels = job.reporting, job.labels
    objects = {
        REPORT: download_report.build_configmap(reporting, namespace=ns, labels=labels),
        REPORT_BINDING: download_report.build_role_binding(reporting, namespace=ns, labels=labels),
        DOWNLOAD_ACCOUNT: download_report.build_service_account(
            reporting.service_account, namespace=ns, labels=labels
        ),
    }
    # Nothing to wait for in these: the download's pod waits for them itself.
    return {key: Desired(manifest, ready=True) for key, manifest in objects.items()}
