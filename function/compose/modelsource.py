"""AIMClusterModelSource: a catalog that fills itself, one AIMClusterModel per matching image.

Every `spec.syncInterval` (and at once when the spec changes) the function lists the registry for
the filters (`ListRegistry`; `fn.py` makes the calls between two calls of this composer) and
composes a model for each matching image that no model of the catalog serves yet, up to
`spec.maxModels` across all filters. Between syncs it composes the models it made, so nothing is
listed twice within an interval. A listing given up past the function's bounds (`ListingStopped`:
more tags than one sync reads, or more than a call composes within its budget) is not used in
part: the source keeps its models and its last sync's status, says `RegistryTooLarge` with how far
the listing got and how to narrow it, and lists again when a failed sync would. Models are kept
when their image leaves the registry or the filters change (append-only, as AIM's operator does:
services may use them); deleting the source deletes them.

The catalog is read too (every AIMClusterModel), so an image someone already added by hand is not
added twice, and a name someone holds is not taken over.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from function.api.meta import Kind, Manifest
from function.api.model import ModelSpec, ModelStatusValue
from function.api.modelsource import (
    ClusterModelSourceSpec,
    ClusterModelSourceStatus,
    FailedSync,
    FilterStatus,
)
from function.build.aim import build_aim_object
from function.compose.frame import finish
from function.compose.model import HEADLINE
from function.compose.model.metadata import secret_requirements
from function.kube.contract import (
    Composition,
    Desired,
    ListRegistry,
    Observed,
    keep,
)
from function.kube.lookup import Listing
from function.kube.objects import metadata_of, name_of
from function.kube.parse import has_headline, parse_spec, parse_status
from function.kube.views import string_at
from function.registry import reference
from function.registry.credentials import SecretFormatError, credential_for
from function.registry.filters import (
    Filter,
    FilterError,
    Match,
    Matched,
    Versions,
    matched,
    read_filters,
)
from function.registry.listing import ListingAnswer, ListingRequest, ListingStopped
from function.rules import labels, naming
from function.rules.discovery import rfc3339, timestamp
from function.rules.status import (
    Condition,
    ConditionStatus,
    ConditionType,
    Health,
    Reason,
    State,
    report,
)

SOURCE_LABEL: Final = labels.PREFIX + "model-source"
SOURCE_REGISTRY: Final = labels.PREFIX + "source-registry"
SOURCE_REPOSITORY: Final = labels.PREFIX + "source-repository"
SOURCE_TAG: Final = labels.PREFIX + "source-tag"
MODEL_PREFIX: Final = "model-"
RETRY_FAILED_S: Final = 300
"""A sync with failed filters, or given up, is tried again this soon (or at the interval, if
sooner); in between no reconcile lists the registry."""
MAX_SKIPPED: Final = 20
_MAX_NAMED: Final = 10
_CATALOG: Final = Listing("cluster-models", Kind.CLUSTER_MODEL)
_UNITS: Final = {"h": 3600, "m": 60, "s": 1}


@dataclass
class _Sync:
    """One sync's outcome: the models to add, and its record (the status fields a sync sets)."""

    record: ClusterModelSourceStatus
    new: dict[str, Manifest] = field(default_factory=dict)


def compose_model_source(observed: Observed) -> Composition | ListRegistry:
    """Compose one AIMClusterModelSource: its models, and a sync of the registry when due."""
    spec = parse_spec(observed.composite, ClusterModelSourceSpec)
    secret_names = [s.name for s in spec.image_pull_secrets or ()]
    namespace = observed.settings.system_namespace
    comp = Composition()
    comp.requirements = [*secret_requirements(secret_names, namespace), _CATALOG.requirement()]
    own = {k: v for k, v in observed.resources.items() if k.startswith(MODEL_PREFIX)}
    for key, current in own.items():
        comp.resources[key] = keep(current, ready=has_headline(current, ModelStatusValue.READY))

    # What the last sync found, kept in status until the next one (unreadable: none yet).
    record = (
        parse_status(observed.composite, ClusterModelSourceStatus) or ClusterModelSourceStatus()
    )
    interval = _seconds(spec.sync_interval)
    generation = observed.generation
    wait = _due_in(record, observed.now, interval, generation)
    sync_health: Health | None = None
    if wait <= 0:
        outcome = _sync(observed, spec, own, secret_names, namespace)
        if isinstance(outcome, ListRegistry):
            return outcome
        if isinstance(outcome, ListingStopped):
            # Nothing of the listing is used: the last sync's record stays, with this one beside.
            failed = FailedSync(
                time=rfc3339(observed.now),
                generation=generation or 0,
                reason=Reason.REGISTRY_TOO_LARGE,
                message=_too_large(outcome, record, interval),
            )
            record = record.model_copy(update={"failed_sync": failed})
            wait = _due_in(record, observed.now, interval, generation)
        elif isinstance(outcome, Health):
            sync_health = outcome
            wait = interval if outcome.state is State.FAILED else 1
        else:
            record = outcome.record
            for name, manifest in outcome.new.items():
                comp.resources[MODEL_PREFIX + name] = Desired(manifest, ready=False)
            wait = _due_in(record, observed.now, interval, generation)

    discovered = sum(k.startswith(MODEL_PREFIX) for k in comp.resources)
    state = report(
        comp,
        [sync_health or _filters_health(record, discovered)],
        also=[_limit_condition(record, discovered, spec.max_models), _models_condition(comp)],
    )
    # Models on their way to Ready are checked as often as anything waiting (their changes are
    # watched, but Crossplane drops watch events of busy XRs); otherwise at the usual recheck,
    # or the next sync if sooner.
    settings = observed.settings
    models_ready = all(d.ready for d in comp.resources.values())
    recheck = settings.ready_recheck_s if models_ready else settings.waiting_recheck_s
    comp.ttl_seconds = max(min(wait, recheck), 1)
    headline = HEADLINE[state]
    status = record.model_copy(update={"status": headline, "discovered_models": discovered})
    finish(comp, observed, status, headline)
    return comp


def _due_in(
    record: ClusterModelSourceStatus, now: datetime, interval: int, generation: int | None
) -> int:
    """Seconds until the next sync; 0 or less: now (never synced, or the spec changed)."""
    given_up = record.failed_sync
    if given_up is not None and given_up.generation == (generation or 0):
        tried = timestamp(given_up.time)
        if tried is None or tried > now:
            return 0
        return int((tried + timedelta(seconds=min(interval, RETRY_FAILED_S)) - now).total_seconds())
    last = timestamp(record.last_sync_time)
    if last is None or last > now or record.synced_generation != generation:
        return 0
    failed = any(f.error for f in record.filters or ())
    every = min(interval, RETRY_FAILED_S) if failed else interval
    return int((last + timedelta(seconds=every) - now).total_seconds())


def _sync(
    observed: Observed,
    spec: ClusterModelSourceSpec,
    own: Mapping[str, Manifest],
    secret_names: Sequence[str],
    namespace: str,
) -> _Sync | ListRegistry | Health | ListingStopped:
    """List the registry (via `ListRegistry`) and plan the models; a Health if it cannot yet.

    A listing given up past its bounds is returned as such: nothing of it is planned.
    """
    catalog = _CATALOG.items(observed.required)
    if catalog is None:
        return ConditionType.REGISTRY_SYNCED.pending(
            Reason.RESOLVING, "reading the cluster's model catalog"
        )
    secrets = _pull_secrets(observed, secret_names, namespace)
    if isinstance(secrets, Health):
        return secrets
    filters = read_filters(spec)
    queries = []
    for f in filters:
        if isinstance(f, Filter):
            try:
                credential = credential_for(f.registry, secrets)
            except SecretFormatError as e:
                return ConditionType.REGISTRY_SYNCED.failed(
                    Reason.SECRET_INVALID, f"spec.imagePullSecrets: {e}"
                )
            query = f.query(credential)
            if query is not None:
                queries.append(query)
    answer = observed.listing
    if queries and (answer is None or answer.source != observed.name):
        return ListRegistry(ListingRequest(observed.name, tuple(queries)))
    if queries and answer is not None and answer.stopped is not None:
        return answer.stopped
    return _plan(observed, spec, _outcomes(filters, answer), own, catalog)


def _pull_secrets(
    observed: Observed, secret_names: Sequence[str], namespace: str
) -> list[Manifest] | Health:
    """The pull secrets `spec.imagePullSecrets` names, or why they cannot be had yet."""
    secrets: list[Manifest] = []
    for name in secret_names:
        found = observed.required.get(f"pull-secret-{name}")
        if found is None:
            return ConditionType.REGISTRY_SYNCED.pending(
                Reason.RESOLVING, f"looking up pull secret {name!r}"
            )
        if not found:
            return ConditionType.REGISTRY_SYNCED.failed(
                Reason.SECRET_NOT_FOUND,
                f"spec.imagePullSecrets: secret {name!r} does not exist in namespace "
                f"{namespace!r}; create it (kubectl create secret docker-registry -n "
                f"{namespace}) or remove it from the list",
            )
        secrets.extend(found)
    return secrets


def _outcomes(
    filters: Sequence[Filter | FilterError], answer: ListingAnswer | None
) -> tuple[list[FilterStatus], list[Matched]]:
    """Each filter's status, and the tags they kept per repository, in filter order.

    The answers come in the order of the filters that asked (single images ask nothing).
    """
    answers = list(answer.answers) if answer is not None else []
    statuses: list[FilterStatus] = []
    matches: list[Matched] = []
    versions = Versions()
    for f in filters:
        if isinstance(f, FilterError):
            statuses.append(FilterStatus(image=f.image, error=f.message))
            continue
        got = answers.pop(0) if f.tag is None and answers else None
        if got is not None and got.failure is not None:
            error = f"{got.failure.value}: {f.registry}: {got.message}"
            statuses.append(FilterStatus(image=f.image, error=error))
            continue
        found = matched(f, got, versions)
        matches += found
        note = got.message if got is not None and got.message else None
        count = sum(len(m.tags) for m in found)
        statuses.append(FilterStatus(image=f.image, matched=count, note=note))
    return statuses, matches


def _plan(
    observed: Observed,
    spec: ClusterModelSourceSpec,
    outcomes: tuple[list[FilterStatus], list[Matched]],
    own: Mapping[str, Manifest],
    catalog: Sequence[Manifest],
) -> _Sync:
    """The models to add for the images matched, and the record of this sync.

    Images are named and built only while `spec.maxModels` leaves room: past it each matched
    image costs a set lookup (counted, not named), so a registry of 100 repositories of 5,000
    tags each is planned in well under a second.
    """
    statuses, matches = outcomes
    ours = {_image(m) for m in own.values()}
    own_names = {name_of(m) for m in own.values()}
    others = {_image(m): name_of(m) for m in catalog if name_of(m) not in own_names}
    taken = set(others.values())
    seen: dict[str, set[str]] = {}  # tags per image prefix (the listing's strings, no copies)
    new: dict[str, Manifest] = {}
    skipped: list[str] = []
    over = 0
    for repo in matches:
        room = len(own) + len(new) < spec.max_models
        prefix = repo.prefix() + ":"
        done = seen.setdefault(prefix, set())
        for tag in repo.newest_first() if room else repo.tags:
            if tag in done:
                continue
            done.add(tag)
            image = prefix + tag
            if image in ours:
                continue
            if image in others:
                skipped.append(f"{image}: in the catalog already as {others[image]}")
                continue
            if len(own) + len(new) >= spec.max_models:
                over += 1  # only counted: naming and building it is what the cap saves
                continue
            name, why = _name(image, taken)
            if why:
                skipped.append(why)
                continue
            new[name] = _model(
                observed.name, name, Match(repo.registry, repo.repository, tag), spec
            )
    if over:
        skipped.append(f"{over} more image(s): spec.maxModels ({spec.max_models}) is reached")
    if len(skipped) > MAX_SKIPPED:
        skipped = [*skipped[: MAX_SKIPPED - 1], f"and {len(skipped) - MAX_SKIPPED + 1} more"]
    record = ClusterModelSourceStatus(
        available_models=sum(len(tags) for tags in seen.values()),
        models_limit_reached=over > 0,
        models_omitted=over,
        last_sync_time=rfc3339(observed.now),
        synced_generation=observed.generation,
        filters=statuses or None,
        skipped=skipped or None,
    )
    return _Sync(record, new)


def _name(image: str, taken: set[str]) -> tuple[str, str]:
    """The model name of `image`, and why no model can have it ('' when one can)."""
    try:
        reference.parse(image)
        name = naming.image_model_name(image)
    except ValueError:  # a registry's answer only OrasLister vets; nothing to name it by
        return "", f"{image[:300]}: not an image reference"
    if name in taken:
        return name, f"{image}: the name {name} is taken by another model"
    return name, ""


def _model(source: str, name: str, match: Match, spec: ClusterModelSourceSpec) -> Manifest:
    """The AIMClusterModel for one image, labelled and annotated with where it came from."""
    model = build_aim_object(
        Kind.CLUSTER_MODEL,
        name=name,
        namespace=None,
        labels={SOURCE_LABEL: labels.value(source), labels.ORIGIN: labels.AUTO_GENERATED},
        spec=ModelSpec(
            image=match.image,
            image_pull_secrets=spec.image_pull_secrets,
            discovery=spec.discovery,
        ),
    )
    annotations: Manifest = {
        SOURCE_REGISTRY: match.registry,
        SOURCE_REPOSITORY: match.repository,
        SOURCE_TAG: match.tag,
    }
    return {**model, "metadata": {**metadata_of(model), "annotations": annotations}}


def _image(model: Manifest) -> str:
    return string_at(model, "spec", "image") or ""


def _too_large(stopped: ListingStopped, record: ClusterModelSourceStatus, interval: int) -> str:
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


def _filters_health(record: ClusterModelSourceStatus, discovered: int) -> Health:
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


def _limit_condition(record: ClusterModelSourceStatus, discovered: int, limit: int) -> Condition:
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


def _models_condition(comp: Composition) -> Condition:
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


def _seconds(interval: str) -> int:
    """`1h30m` in seconds (the XRD's pattern admits only h, m, s parts)."""
    total = sum(int(n) * _UNITS[u] for n, u in re.findall(r"([0-9]+)(h|m|s)", interval))
    return max(total, 60)
