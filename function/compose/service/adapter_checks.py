"""What the function can tell of a service's adapters before staging them, and after.

Before: each declared adapter must be an AIMModelCache of `type: adapter` in the namespace that
names the service's model in `compatibleWith`, with a rank under the cap, and Available. After:
the staging Job's verdict says which adapters' files it refused. Each check ends in one
adapter's status, whose message names the field and the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from function.api.cache import (
    ADAPTER_RANKS,
    CacheStatusValue,
    ModelCacheSpec,
    ModelCacheStatus,
    ModelCacheType,
)
from function.api.meta import Manifest
from function.api.service import AdapterState, AdapterStatus, AIMServiceStatus
from function.build.adapters import Staged
from function.compose.refs import Model
from function.compose.service.outcome import Template
from function.errors import InvalidSpecError
from function.kube.objects import name_of, uid_of
from function.kube.parse import parse_spec, parse_status
from function.rules import jsontext
from function.rules.status import ConditionType, Health, Reason

CONDITION: Final = ConditionType.ADAPTERS_READY
DEFAULT_RANK: Final = 16
"""The rank of an adapter whose cache declares none (the AIM operator assumes the same)."""


@dataclass(frozen=True)
class Checked:
    """One declared adapter: its status, why it is not staged, and what to stage if it can be."""

    status: AdapterStatus
    reason: str | None = None
    stage: Staged | None = None
    """Set when its cache is an Available adapter for this model."""

    @property
    def name(self) -> str:
        """The adapter, as `spec.adapters` names it."""
        return self.status.name


class SeveralModelsError(ValueError):
    """The template serves several model sources: which one would adapters fit?"""


def base_model_id(model: Model | None, template: Template | None) -> str | None:
    """The id of the model the service serves (`org/name`), as adapters name it.

    Raises:
        SeveralModelsError: the template lists several model sources.
    """
    sources = (template.spec.model_sources if template else None) or (
        model.spec.model_sources if model else None
    )
    if sources and len(sources) > 1:
        ids = ", ".join(s.model_id for s in sources)
        msg = (
            f"spec.adapters: the template serves several model sources ({ids}); adapters "
            "need a template of one model"
        )
        raise SeveralModelsError(msg)
    if sources:
        return sources[0].model_id
    if model is None:
        return None
    metadata = model.status.image_metadata or model.spec.image_metadata
    return metadata.model.canonical_name if metadata and metadata.model else None


def static_rank(checked: Sequence[Checked]) -> int:
    """The smallest rank a server can start with that holds every adapter's."""
    highest = max((c.stage.rank or DEFAULT_RANK for c in checked if c.stage), default=1)
    return next(r for r in ADAPTER_RANKS if r >= highest)


def check(
    index: int, name: str, listed: Sequence[Manifest], *, base: str, cap: int | None
) -> Checked:
    """What the function can tell of one adapter before staging it."""
    where = f"spec.adapters[{index}]"
    cache = next((c for c in listed if name_of(c) == name), None)
    if cache is None:
        return pending(
            name,
            Reason.ADAPTER_NOT_FOUND,
            f"{where}: no AIMModelCache {name!r} in this namespace; create one with "
            "spec.type: adapter",
        )
    try:
        spec = parse_spec(cache, ModelCacheSpec)
    except InvalidSpecError as e:
        return failed(name, Reason.NOT_AN_ADAPTER, f"{where}: AIMModelCache {name!r}: {e}")
    wrong = _wrong(where, name, spec, base=base, cap=cap)
    if wrong is not None:
        return wrong
    status = parse_status(cache, ModelCacheStatus) or ModelCacheStatus()
    if status.status is not CacheStatusValue.AVAILABLE or not status.persistent_volume_claim:
        return pending(
            name,
            Reason.ADAPTER_NOT_READY,
            f"{where}: adapter {name!r} is {status.status} (its download fills it; "
            f"kubectl describe aimmodelcache {name})",
        )
    key = f"{uid_of(cache) or name}:{spec.source_uri}"
    stage = Staged(name, status.persistent_volume_claim, key, spec.rank)
    return Checked(AdapterStatus(name=name, state=AdapterState.STAGING), stage=stage)


def _wrong(
    where: str, name: str, spec: ModelCacheSpec, *, base: str, cap: int | None
) -> Checked | None:
    """A cache this service cannot serve as an adapter, and why."""
    if spec.type is not ModelCacheType.ADAPTER:
        return failed(
            name,
            Reason.NOT_AN_ADAPTER,
            f"{where}: AIMModelCache {name!r} holds a model's weights (spec.type: model), not an "
            "adapter",
        )
    fits = spec.compatible_with or []
    if base not in fits:
        return failed(
            name,
            Reason.ADAPTER_INCOMPATIBLE,
            f"{where}: adapter {name!r} fits {', '.join(fits)} (its spec.compatibleWith), not "
            f"{base}, the model this service serves",
        )
    rank = spec.rank or DEFAULT_RANK
    if cap is not None and rank > cap:
        return failed(
            name,
            Reason.ADAPTER_RANK_TOO_HIGH,
            f"{where}: adapter {name!r} has rank {rank}, over spec.adapterRuntime.maxRank {cap}: "
            "recreate the service with a higher maxRank",
        )
    return None


def pending(name: str, reason: str, message: str) -> Checked:
    """An adapter that is not there yet."""
    return Checked(AdapterStatus(name=name, state=AdapterState.PENDING, message=message), reason)


def failed(name: str, reason: str, message: str) -> Checked:
    """An adapter this service cannot serve until something is changed."""
    status = AdapterStatus(name=name, state=AdapterState.FAILED, message=message[:300])
    return Checked(status, reason)


def staged(name: str) -> Checked:
    """An adapter on the disk."""
    return Checked(AdapterStatus(name=name, state=AdapterState.STAGED))


def recorded(checked: Sequence[Checked], previous: AIMServiceStatus) -> list[Checked]:
    """The set staged already, as the status recorded it (one refused stays refused)."""
    before = {s.name: s for s in previous.adapters or ()}
    out = []
    for c in checked:
        old = before.get(c.name)
        if c.stage is None:
            out.append(c)
        elif old is not None and old.state is AdapterState.FAILED:
            out.append(failed(c.name, Reason.ADAPTER_REJECTED, old.message or ""))
        else:
            out.append(staged(c.name))
    return out


def judged(checked: Sequence[Checked], message: str | None) -> list[Checked]:
    """The staged set, with what the Job's verdict (its termination message) refused."""
    verdict = _refused(message)
    out = []
    for i, c in enumerate(checked):
        if c.stage is None:
            out.append(c)
        elif verdict is None:
            out.append(
                failed(
                    c.name,
                    Reason.ADAPTER_STAGING_FAILED,
                    "the staging Job ended without a readable verdict; delete the service's "
                    "adapter Job to stage again",
                )
            )
        elif (why := verdict.get(c.name)) is not None:
            out.append(failed(c.name, Reason.ADAPTER_REJECTED, f"spec.adapters[{i}]: {why}"))
        else:
            out.append(staged(c.name))
    return out


def _refused(message: str | None) -> dict[str, str] | None:
    """The adapters the Job refused, by name; None when its message says nothing readable."""
    value = jsontext.termination_object(message)
    refused = value.get("failed") if value is not None else None
    if not isinstance(refused, dict):
        return None
    return {str(k)[:253]: str(v)[:200] for k, v in refused.items()}


def health(checked: Sequence[Checked], *, dynamic: bool, waiting: bool, disk: str = "") -> Health:
    """The worst of the adapters: a wrong one, then one missing, then staging, else staged."""
    by_state = {s: [c for c in checked if c.status.state is s] for s in AdapterState}
    if wrong := by_state[AdapterState.FAILED]:
        message = "; ".join(c.status.message or c.name for c in wrong)
        reason = wrong[0].reason or Reason.ADAPTER_REJECTED
        if dynamic:
            served = len(by_state[AdapterState.STAGED])
            return CONDITION.degraded(reason, f"{message} (left out; {served} others served)")
        return CONDITION.failed(reason, message)
    if missing := by_state[AdapterState.PENDING]:
        message = "; ".join(c.status.message or c.name for c in missing)
        return CONDITION.pending(missing[0].reason or Reason.ADAPTER_NOT_READY, message)
    if staging := by_state[AdapterState.STAGING]:
        after = " once the staging under way ends" if waiting else ""
        names = ", ".join(c.name for c in staging)
        return CONDITION.progressing(
            Reason.ADAPTERS_STAGING, f"staging {names} onto the adapter disk{after}{disk}"
        )
    names = ", ".join(c.name for c in checked)
    if waiting:
        # Nothing left to copy, but another set's Job is writing the disk: not there yet.
        return CONDITION.progressing(
            Reason.ADAPTERS_STAGING,
            f"bringing the adapter disk to {names or 'no adapters'} once the staging under way "
            f"ends{disk}",
        )
    said = (
        f"serving {names} from the adapter disk"
        if checked
        else "no adapters yet: those added to spec.adapters are loaded"
    )
    return CONDITION.ready(Reason.ADAPTERS_STAGED, said)
