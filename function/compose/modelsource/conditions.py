"""What a model source reports of its last sync: RegistrySynced, MaxModelsLimitReached, ModelsReady.

RegistrySynced is the sync as one component (given up, every filter listed, some or all failed);
the other two explain, and never set the headline.
"""

from __future__ import annotations

from typing import Final

from function.api.modelsource import ClusterModelSourceStatus
from function.kube.contract import Composition
from function.registry.listing import ListingStopped
from function.rules.status import Condition, ConditionStatus, ConditionType, Health, Reason

MODEL_PREFIX: Final = "model-"
RETRY_FAILED_S: Final = 300
"""A sync with failed filters, or given up, is tried again this soon (or at the interval, if
sooner); in between no reconcile lists the registry."""
_MAX_NAMED: Final = 10


def too_large(stopped: ListingStopped, record: ClusterModelSourceStatus, interval: int) -> str:
    """Why a listing was given up, how far it got, how to narrow it, and what happens now."""
    retry = min(interval, RETRY_FAILED_S)
    kept = (
        f"the models and status of the last completed sync ({record.last_sync_time}) are kept"
        if record.last_sync_time
        else "no model was created"
    )
    return (
        f"the listing of {', '.join(stopped.registries)} was given up past {stopped.past}: "
        f"{stopped.repositories:,} repositories and {stopped.tags:,} tags read in "
        f"{stopped.calls:,} registry calls. Narrow spec.filters to fewer repositories (a longer "
        "prefix before `*`, spec.filters[].exclude, or one filter per repository; versions do "
        "not narrow a listing, every tag is read before they are checked) or raise "
        f"{stopped.setting} in the function's DeploymentRuntimeConfig. Nothing of this listing "
        f"was used: {kept}; the registry is listed again in {_span(retry)}, or at once when the "
        "spec changes"
    )


def _span(seconds: int) -> str:
    return f"{seconds // 60} minute(s)" if seconds % 60 == 0 else f"{seconds} s"


def filters_health(record: ClusterModelSourceStatus, discovered: int) -> Health:
    """The last sync as one component: given up, every filter listed, some or all failed."""
    if record.failed_sync is not None:
        return ConditionType.REGISTRY_SYNCED.failed(
            record.failed_sync.reason, record.failed_sync.message
        )
    if record.last_sync_time is None:
        return ConditionType.REGISTRY_SYNCED.pending(
            Reason.RESOLVING, "the registry has not been listed yet"
        )
    filters = record.filters or []
    failed = [f for f in filters if f.error]
    found = (
        f"{record.available_models or 0} image(s) match, {discovered} model(s) created by this "
        "source"
    )
    if not failed:
        notes = "; ".join(f.note for f in filters if f.note)
        return ConditionType.REGISTRY_SYNCED.ready(
            Reason.ALL_FILTERS_SUCCEEDED,
            f"{len(filters)} filter(s) listed at {record.last_sync_time}: {found}"
            + (f" ({notes})" if notes else ""),
        )
    errors = "; ".join(f"{f.image}: {f.error}" for f in failed[:_MAX_NAMED])
    if len(failed) == len(filters):
        return ConditionType.REGISTRY_SYNCED.failed(
            Reason.ALL_FILTERS_FAILED, f"every filter failed: {errors}"
        )
    return ConditionType.REGISTRY_SYNCED.degraded(
        Reason.SOME_FILTERS_FAILED,
        f"{len(failed)} of {len(filters)} filter(s) failed ({errors}); {found}",
    )


def limit_condition(record: ClusterModelSourceStatus, discovered: int, limit: int) -> Condition:
    """Whether the last sync stopped short of its matches at `spec.maxModels`."""
    kind = ConditionType.MAX_MODELS_LIMIT_REACHED
    if record.models_limit_reached:
        return Condition(
            kind,
            ConditionStatus.TRUE,
            Reason.LIMIT_REACHED,
            f"{discovered} model(s) created of {record.available_models or 0} matching image(s); "
            f"raise spec.maxModels ({limit}) or narrow the filters to add the rest",
        )
    return Condition(
        kind,
        ConditionStatus.FALSE,
        Reason.WITHIN_LIMIT,
        f"{discovered} model(s) created; spec.maxModels allows {limit}",
    )


def models_condition(comp: Composition) -> Condition:
    """Whether the models this source made are Ready; it explains, it does not set the headline."""
    models = {k.removeprefix(MODEL_PREFIX): d for k, d in comp.resources.items()}
    waiting = sorted(name for name, d in models.items() if not d.ready)
    kind = ConditionType.MODELS_READY
    if not waiting:
        return Condition(
            kind, ConditionStatus.TRUE, Reason.ALL_MODELS_READY, f"{len(models)} model(s) Ready"
        )
    named = ", ".join(waiting[:_MAX_NAMED]) + (" ..." if len(waiting) > _MAX_NAMED else "")
    return Condition(
        kind,
        ConditionStatus.FALSE,
        Reason.MODELS_NOT_READY,
        f"{len(models) - len(waiting)}/{len(models)} model(s) Ready; not yet: {named} "
        "(kubectl describe aimclustermodel NAME says why)",
    )
