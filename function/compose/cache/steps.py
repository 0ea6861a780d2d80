"""What the steps of an AIMModelCache share: resource keys, names, and its Jobs' common parts.

Each step (size, volume, download) returns a `Step`: its health and the objects it composes;
`model_cache.py` puts them together in order. Both Jobs (size check, download) run the same
image with the same pull secrets, account and environment, are kept as they were made once they
exist, and fail the same ways.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from pydantic import JsonValue

from function.api.cache import ModelCacheSpec
from function.api.meta import Manifest
from function.kube.contract import Desired, Requirement, keep
from function.kube.jobs import JobState, pod_message, waiting_problem
from function.rules import caching, naming
from function.rules.merge import merged_env, secret_names
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import ConditionType, Health, Reason

PVC: Final = "pvc"
DOWNLOAD_JOB: Final = "download-job"
SIZE_CHECK_JOB: Final = "size-check-job"
REPORT: Final = "download-report"
# Not "download-report-binding", the key of an earlier version's binding to a Role: a binding's
# roleRef cannot change, so the new one is another object, and the old one is deleted.
REPORT_BINDING: Final = "download-progress-binding"
DOWNLOAD_ACCOUNT: Final = "download-account"
DOWNLOAD_PODS: Final = "download-pods"
SIZE_CHECK_PODS: Final = "size-check-pods"


@dataclass(frozen=True)
class Names:
    """The names of what one cache composes, all derived from the cache's name."""

    pvc: str
    download: str
    size_check: str
    report: str
    account: str

    @classmethod
    def of(cls, cache: str) -> Names:
        """The names for the cache `cache`."""
        return cls(
            pvc=naming.derived_name([cache, "cache"]),
            download=naming.derived_name([cache, "download"]),
            size_check=naming.derived_name([cache, "size-check"]),
            report=naming.derived_name([cache, "download-report"]),
            account=naming.derived_name([cache, "download"]),
        )


@dataclass(frozen=True)
class Step:
    """What one step decided: its health, and the objects and requirements it composes."""

    health: Health
    resources: Mapping[str, Desired] = field(default_factory=dict)
    requirements: tuple[Requirement, ...] = ()


@dataclass(frozen=True)
class Run:
    """One of the cache's Jobs as composed: its condition, names, and what its pod pulls."""

    condition: ConditionType
    job: str
    container: str
    image: str
    pull_secrets: tuple[str, ...]
    what: str


def trouble(run: Run, state: JobState | None, pods: tuple[Manifest, ...] | None) -> Health | None:
    """What stops a cache Job, Failed with its own words; None while nothing does.

    The Job failed: the end of its log (delete it to try again). Or the kubelet cannot start its
    pod (the image cannot be pulled, a Secret its env names is missing): without this the cache
    would read "running" forever; the kubelet keeps trying, so fixing the cause resumes the Job.
    """
    if state is JobState.FAILED:
        tail = pod_message(pods, run.container, "Failed") or ""
        reason, advice = caching.classify_failure(tail)
        said = f"; it said: {tail.strip()[-300:]}" if tail.strip() else ""
        return run.condition.failed(
            reason,
            f"{run.what} failed: {advice}{said} (delete the failed Job to try again)",
        )
    stuck = waiting_problem(pods or (), run.container)
    if stuck is None:
        return None
    return run.condition.failed(
        Reason.CACHE_JOB_CANNOT_START,
        f"Job {run.job} cannot start {run.image}: {stuck[:300]} (pull secrets in use: "
        f"{', '.join(run.pull_secrets) or 'none'}; it resumes once the cause is fixed)",
    )


def job_env(spec: ModelCacheSpec, config: RuntimeConfig) -> list[Mapping[str, JsonValue]]:
    """The Jobs' environment: the runtime config's, then the cache's own, by name."""
    return caching.env_manifests(merged_env(config.spec.env, spec.env))


def job_or_kept(job: Manifest, current: Manifest | None, *, ready: bool) -> Desired:
    """A Job that exists, as it was made; else the one to create.

    A Job's pod template cannot change: re-applying another one (an env edited since, or a
    newer function's pod shape) is refused by the API server and fails the whole reconcile.
    """
    return keep(current, ready=ready) if current is not None else Desired(job, ready=ready)


def pull_secrets(spec: ModelCacheSpec, config: RuntimeConfig) -> list[str]:
    """The Jobs' pull secrets: the cache's, then the runtime config's."""
    return secret_names(spec.image_pull_secrets, config.spec.image_pull_secrets)
