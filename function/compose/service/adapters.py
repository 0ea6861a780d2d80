"""A service's LoRA adapters: the disk they are staged on, the Job staging them, and when it runs.

Each adapter is an AIMModelCache of `type: adapter` in the service's namespace, downloaded and
verified once like a model's cache and shared by every service that lists it. A service with
adapters (or in dynamic mode) composes a ReadWriteMany disk of its own and, whenever the set it
can serve changes, a Job that stages that set onto it (`function.build.adapters`); the inference
pods mount the disk's `live/` read-only at /adapters, so the pod spec never names an adapter.
`adapter_checks` says which adapters can be staged.

Static mode (the default): the set is fixed at creation, and the InferenceService is created once
every adapter is staged: the server loads them when it starts. A missing or unready adapter
waits; a wrong one (not an adapter, made for another model, a rank over the cap, files that are
no PEFT adapter) fails the service, naming it. Dynamic mode: the InferenceService is created once
the disk is prepared, and adapters are staged while the server runs, which loads and unloads them
itself; a wrong adapter degrades the service and is left out, the others served.

What was staged is recorded in the service's status (a digest of the set), so a finished Job can
go and nothing is staged twice. One Job writes the disk at a time. The disk goes with the service.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from function.api.cache import DEFAULT_DOWNLOAD_IMAGE
from function.api.meta import Manifest
from function.api.service import (
    AdapterMode,
    AdapterState,
    AdapterStatus,
    AIMServiceSpec,
    AIMServiceStatus,
)
from function.build.adapters import LIVE_DIR, MOUNT_PATH, SYNC_CONTAINER, build_adapter_job
from function.build.kserve import CacheMount
from function.build.storage import build_pvc
from function.compose.cache.steps import Run, job_or_kept, trouble
from function.compose.refs import Model
from function.compose.service import adapter_checks
from function.compose.service.adapter_checks import Checked
from function.compose.service.adapter_requirements import (
    PODS,
    caches,
    enabled,
    job_labels,
    labels_of_adapters,
)
from function.compose.service.outcome import Template
from function.kube.contract import Desired, Observed
from function.kube.jobs import JOB_NAME_LABEL, JobState, job_state, pod_message
from function.kube.objects import labels_of, name_of
from function.kube.parse import parse_status
from function.kube.views import string_at
from function.rules import naming
from function.rules.merge import secret_names
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import Condition, Health, Reason, State

DISK: Final = "adapter-disk"
"""Composition-resource name of the adapter disk."""
JOB_PREFIX: Final = "adapter-job-"
"""Composition-resource names of staging Jobs: the prefix, then the set's digest."""
DEFAULT_DISK_SIZE: Final = "10Gi"
DEFAULT_DYNAMIC_MAX_RANK: Final = 32
"""The AIM runtime's own default."""
_CONDITION: Final = adapter_checks.CONDITION


@dataclass(frozen=True)
class AdapterRun:
    """What the inference container gets: the disk's mount and the runtime's variables."""

    mount: CacheMount
    env: dict[str, str]


@dataclass(frozen=True)
class AdapterOutcome:
    """The adapters' health, objects, status, and whether the InferenceService may be made."""

    health: Health | None = None
    desired: dict[str, Desired] = field(default_factory=dict)
    run: AdapterRun | None = None
    ready: bool = True
    statuses: tuple[AdapterStatus, ...] = ()
    max_rank: int | None = None
    staged: str | None = None
    counts_for_headline: bool = True
    """False for what a running dynamic service is still staging: it serves meanwhile."""

    def reported(self) -> tuple[list[Health], list[Condition]]:
        """The health that counts toward the service's headline, or the condition told beside."""
        if self.health is None:
            return [], []
        if self.counts_for_headline:
            return [self.health], []
        return [], [self.health.to_condition()]


@dataclass(frozen=True)
class _Plan:
    """One call's decision so far: the adapters checked and the objects every outcome carries."""

    checked: list[Checked]
    desired: dict[str, Desired]
    run: AdapterRun
    max_rank: int
    dynamic: bool
    previous: str | None
    """The digest of the set the status recorded as staged."""
    pull_secrets: list[str]
    """For the download image the Job runs: the runtime config's."""
    disk_note: str = ""
    """Why staging may wait on the disk: it exists but is not bound."""

    def outcome(
        self, checked: Sequence[Checked], staged: str | None, *, waiting: bool = False
    ) -> AdapterOutcome:
        """The condition the adapters' states add up to, and whether the server may start."""
        states = {c.status.state for c in checked}
        ready = staged is not None and (self.dynamic or states <= {AdapterState.STAGED})
        health = adapter_checks.health(
            checked, dynamic=self.dynamic, waiting=waiting, disk=self.disk_note
        )
        if not self.dynamic and self.previous is not None and health.state is State.PENDING:
            # A static server that started with its set still serves it: an adapter whose
            # cache has gone since degrades it, as a lost model cache does.
            health = _CONDITION.degraded(
                health.reason, f"{health.message} (the server keeps the adapters it started with)"
            )
        counts = not self.dynamic or health.state in {State.FAILED, State.DEGRADED}
        return AdapterOutcome(
            health,
            self.desired,
            self.run,
            ready,
            tuple(c.status for c in checked),
            self.max_rank,
            staged,
            counts_for_headline=counts,
        )


def resolve(  # noqa: PLR0913 - the inputs of one decision
    observed: Observed,
    spec: AIMServiceSpec,
    *,
    model: Model | None,
    template: Template | None,
    config: RuntimeConfig | None,
    isvc_name: str,
) -> AdapterOutcome:
    """The adapters' outcome for this call (nothing when the service has none)."""
    if not enabled(spec):
        return AdapterOutcome()
    listed = caches(observed.namespace).items(observed.required)
    try:
        base = adapter_checks.base_model_id(model, template)
    except adapter_checks.SeveralModelsError as e:
        return AdapterOutcome(_CONDITION.failed(Reason.ADAPTER_INCOMPATIBLE, str(e)), ready=False)
    if listed is None or base is None or config is None:
        what = "the namespace's model caches" if listed is None else "the model's id"
        return AdapterOutcome(
            _CONDITION.pending(Reason.RESOLVING, f"waiting for {what} to check the adapters"),
            ready=False,
        )
    dynamic = spec.adapter_mode is AdapterMode.DYNAMIC
    runtime = spec.adapter_runtime
    cap = ((runtime.max_rank if runtime else None) or DEFAULT_DYNAMIC_MAX_RANK) if dynamic else None
    checked = [
        adapter_checks.check(i, a.name, listed, base=base, cap=cap)
        for i, a in enumerate(spec.adapters or ())
    ]
    max_rank = cap if cap is not None else adapter_checks.static_rank(checked)
    disk = _disk(observed, spec, config, isvc_name)
    previous = parse_status(observed.composite, AIMServiceStatus) or AIMServiceStatus()
    plan = _Plan(
        checked,
        {DISK: Desired(disk, ready=True)},
        AdapterRun(
            CacheMount("adapters", name_of(disk), MOUNT_PATH, sub_path=LIVE_DIR),
            _runtime_env(spec, max_rank),
        ),
        max_rank,
        dynamic,
        previous.adapters_staged,
        secret_names(config.spec.image_pull_secrets),
        _unbound(observed, name_of(disk)),
    )
    return _stage(observed, plan, isvc_name, previous)


def _stage(
    observed: Observed, plan: _Plan, isvc_name: str, previous: AIMServiceStatus
) -> AdapterOutcome:
    """The Job staging the set that can be staged now, and what that leaves."""
    stageable = [c.stage for c in plan.checked if c.stage is not None]
    # Static mode stages once, the whole set; dynamic mode whatever can be staged now.
    if not plan.dynamic and len(stageable) < len(plan.checked):
        return plan.outcome(plan.checked, plan.previous)
    inputs: list[naming.HashInput] = [plan.max_rank]
    for s in stageable:
        inputs += [s.name, s.key, s.rank]
    digest = naming.hash_suffix(inputs, 16)
    jobs = {k: v for k, v in observed.resources.items() if k.startswith(JOB_PREFIX)}
    job_key = f"{JOB_PREFIX}{digest[:8]}"
    # The recorded set is the disk's only while no Job of another set has written it since: a
    # set changed back while its successor's Job runs (or before its end is recorded) is
    # staged again after that Job, not taken as already there.
    restaging = plan.previous == digest
    if restaging and all(
        k == job_key and job_state(v) is JobState.COMPLETE for k, v in jobs.items()
    ):
        return plan.outcome(adapter_checks.recorded(plan.checked, previous), digest)
    running = [k for k, v in jobs.items() if k != job_key and job_state(v) is JobState.RUNNING]
    if running:
        # One Job writes the disk at a time: the next set waits for the one staging now.
        plan.desired.update({k: job_or_kept(jobs[k], jobs[k], ready=False) for k in running})
        return plan.outcome(plan.checked, plan.previous, waiting=True)
    job = build_adapter_job(
        name=naming.derived_name([isvc_name, "adapters"], [digest], max_length=63),
        namespace=observed.namespace,
        labels=job_labels(observed),
        image=DEFAULT_DOWNLOAD_IMAGE,  # python3, which the staging script needs
        disk=name_of(plan.desired[DISK].manifest),
        adapters=stageable,
        max_rank=plan.max_rank,
        pull_secrets=plan.pull_secrets,
    )
    current = jobs.get(job_key)
    plan.desired[job_key] = job_or_kept(job, current, ready=False)
    state = job_state(current) if current is not None else None
    pods = tuple(p for p in observed.required.get(PODS) or () if _job_of(p) == name_of(job))
    if state is JobState.COMPLETE:
        message = pod_message(pods, SYNC_CONTAINER, "Succeeded")
        return plan.outcome(adapter_checks.judged(plan.checked, message), digest)
    what = Run(
        _CONDITION,
        name_of(job),
        SYNC_CONTAINER,
        DEFAULT_DOWNLOAD_IMAGE,
        tuple(plan.pull_secrets),
        f"staging adapters onto PVC {name_of(plan.desired[DISK].manifest)}",
    )
    stopped = trouble(what, state, pods)
    if stopped is not None:
        health = Health(_CONDITION, stopped.state, Reason.ADAPTER_STAGING_FAILED, stopped.message)
        statuses = tuple(c.status for c in plan.checked)
        return AdapterOutcome(
            health, plan.desired, plan.run, ready=False, statuses=statuses, max_rank=plan.max_rank
        )
    return plan.outcome(plan.checked, plan.previous, waiting=restaging)


def _disk(
    observed: Observed, spec: AIMServiceSpec, config: RuntimeConfig, isvc_name: str
) -> Manifest:
    runtime = spec.adapter_runtime
    size = runtime.disk_size if runtime and runtime.disk_size is not None else DEFAULT_DISK_SIZE
    storage_class = (
        runtime.storage_class_name if runtime else None
    ) or config.spec.default_storage_class_name
    return build_pvc(
        name=naming.derived_name([isvc_name, "adapters"], max_length=63),
        namespace=observed.namespace,
        labels=labels_of_adapters(observed),
        size=str(size),
        storage_class=storage_class,
    )


def _unbound(observed: Observed, name: str) -> str:
    """What to say of a disk that exists but is not bound: usually no ReadWriteMany class."""
    current = observed.resources.get(DISK)
    phase = string_at(current, "status", "phase") if current is not None else "Bound"
    if phase == "Bound":
        return ""
    return f" (PVC {name} is {phase or 'being created'}; it needs a ReadWriteMany storage class)"


def _runtime_env(spec: AIMServiceSpec, max_rank: int) -> dict[str, str]:
    """The AIM runtime's adapter variables (its own defaults for how many it holds)."""
    return {
        "AIM_ADAPTER_SOURCE": MOUNT_PATH,
        "AIM_ADAPTER_MODE": spec.adapter_mode.value,
        "AIM_ADAPTER_MAX_RANK": str(max_rank),
    }


def _job_of(pod: Manifest) -> str | None:
    name = labels_of(pod).get(JOB_NAME_LABEL)
    return name if isinstance(name, str) else None
