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
added twice, and a name someone holds is not taken over. A sync's models are planned in `plan`;
what the source reports of its last sync is `conditions`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Final

from function.api.meta import Kind, Manifest
from function.api.model import ModelStatusValue
from function.api.modelsource import (
    ClusterModelSourceSpec,
    ClusterModelSourceStatus,
    FailedSync,
    FilterStatus,
)
from function.compose.frame import finish
from function.compose.model import HEADLINE
from function.compose.model.metadata import secret_requirements
from function.compose.modelsource.conditions import (
    MODEL_PREFIX,
    RETRY_FAILED_S,
    filters_health,
    limit_condition,
    models_condition,
    too_large,
)
from function.compose.modelsource.plan import Sync, plan
from function.kube.contract import (
    Composition,
    Desired,
    ListRegistry,
    Observed,
    keep,
)
from function.kube.lookup import Listing
from function.kube.parse import has_headline, parse_spec, parse_status
from function.registry.credentials import SecretFormatError, credential_for
from function.registry.filters import (
    Filter,
    FilterError,
    Matched,
    Versions,
    matched,
    read_filters,
)
from function.registry.listing import ListingAnswer, ListingRequest, ListingStopped
from function.rules.discovery import rfc3339, timestamp
from function.rules.status import (
    ConditionType,
    Health,
    Reason,
    State,
    report,
)

_CATALOG: Final = Listing("cluster-models", Kind.CLUSTER_MODEL)
_UNITS: Final = {"h": 3600, "m": 60, "s": 1}


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
                message=too_large(outcome, record, interval),
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
        [sync_health or filters_health(record, discovered)],
        also=[limit_condition(record, discovered, spec.max_models), models_condition(comp)],
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
) -> Sync | ListRegistry | Health | ListingStopped:
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
    return plan(observed, spec, _outcomes(filters, answer), own, catalog)


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


def _seconds(interval: str) -> int:
    """`1h30m` in seconds (the XRD's pattern admits only h, m, s parts)."""
    total = sum(int(n) * _UNITS[u] for n, u in re.findall(r"([0-9]+)(h|m|s)", interval))
    return max(total, 60)
