"""AIMTemplateCache: one AIMModelCache per model source of a template.

The template is looked up by `spec.templateScope` (Namespace, Cluster, or unset: namespace
first, then cluster), and its `status.modelSources` say what to cache; the cache waits (Pending)
until the template is Available. A standalone AIMModelCache in the namespace for the same source
and storage class (one nobody composed) is reused instead of composing a duplicate: it belongs
to the platform team and outlives every template cache that uses it.

A template cache a service made (labelled with it) is kept by its namespace once the last service
relying on it is gone (`function.compose.service.caching`). From then it counts down the runtime
config's `caching.retention` (`status.unusedSince`, `status.retainedUntil`, the `Retained`
condition); past that it gives up its model caches, and so their PVCs and the weights in them.
A service relying on it again, before or after, stops the clock; after, the downloads start anew.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from function.api.cache import (
    CacheEntry,
    CacheStatusValue,
    ModelCacheSpec,
    ModelCacheStatus,
    ModelCacheType,
    TemplateCacheSpec,
    TemplateCacheStatus,
    TemplateScope,
)
from function.api.common import ModelSource
from function.api.meta import Kind, Manifest, Scope
from function.api.runtimeconfig import DEFAULT_CACHE_RETENTION
from function.api.template import (
    ClusterServiceTemplateSpec,
    DiscoveredSource,
    ServiceTemplateSpec,
    TemplateStatusValue,
)
from function.build.aim import build_aim_object
from function.compose.cache.model_cache import CACHE_HEADLINE
from function.compose.cache.usage import relied_on
from function.compose.frame import open_frame
from function.compose.refs import Template, resolved_template
from function.errors import InvalidSpecError
from function.kube.contract import (
    Composition,
    Desired,
    Observed,
    Requirement,
    keep,
)
from function.kube.lookup import Absent, Listing, Lookup, Pending, Resolution
from function.kube.objects import labels_of, name_of, owner_references
from function.kube.parse import has_headline, parse_headline, parse_spec, parse_status
from function.kube.views import field_at, string_at
from function.rules import caching, labels
from function.rules.discovery import rfc3339, timestamp
from function.rules.durations import duration_seconds
from function.rules.merge import merged_env
from function.rules.runtimeconfig import RuntimeConfig
from function.rules.status import (
    Condition,
    ConditionStatus,
    ConditionType,
    Health,
    Reason,
    State,
)

MODEL_CACHE_PREFIX: Final = "model-cache-"
_MODEL_CACHES: Final = Listing("model-caches", Kind.MODEL_CACHE)


@dataclass(frozen=True)
class _Cache:
    """One model cache this template cache uses: composed by it, or reused."""

    name: str
    source_uri: str
    status: CacheStatusValue | None
    pvc: str | None


def compose_template_cache(observed: Observed) -> Composition:
    """Compose one AIMTemplateCache."""
    spec = parse_spec(observed.composite, TemplateCacheSpec)
    # The runtime config is read for label propagation and retention only: the model caches
    # resolve it themselves for everything they run, and report a missing one.
    frame = open_frame(observed, spec.runtime_config_name, observed.namespace)
    comp, config_health, config = frame.comp, frame.config_health, frame.config
    reqs, resolution = _template(observed, spec)
    listing = Listing(_MODEL_CACHES.key, Kind.MODEL_CACHE, observed.namespace)
    comp.requirements += [*reqs, listing.requirement()]
    kept = _retention(observed, comp, config, config_waiting=config_health.state is State.PENDING)

    template, template_health = _template_health(spec, resolution)
    caches: list[_Cache] = []
    listed = listing.items(observed.required)
    if (
        template is not None
        and template_health.state is State.READY
        and listed is not None
        and not kept.expired
    ):
        caches = [
            _cache_for(
                observed,
                spec=spec,
                template=template.spec,
                source=source,
                listed=listed,
                comp=comp,
            )
            for source in template.status.model_sources or ()
        ]
    for key, current in observed.resources.items():
        if kept.expired:
            break  # dropping them deletes them, PVCs and weights included
        if key.startswith(MODEL_CACHE_PREFIX) and key not in comp.resources:
            comp.resources[key] = keep(
                current,
                ready=has_headline(current, CacheStatusValue.AVAILABLE),
            )

    cache_health = kept.health or _caches_health(
        caches, waiting=template_health.state is not State.READY
    )
    healths = [template_health, cache_health]
    state = frame.report(healths, also=kept.conditions)
    if kept.seconds_left is not None:
        # Composed again when the retention ends, or at the usual recheck if that comes first.
        settings = observed.settings
        usual = settings.ready_recheck_s if state is State.READY else settings.waiting_recheck_s
        comp.ttl_seconds = min(kept.seconds_left, usual)
    status = TemplateCacheStatus(
        status=CACHE_HEADLINE[state],
        resolved_runtime_config=config.ref if config else None,
        unused_since=kept.unused_since,
        retained_until=kept.retained_until,
        resolved_template=template.reference() if template else None,
        resolved_template_kind=template.kind if template else None,
        model_caches=[
            CacheEntry(
                name=c.name,
                source_uri=c.source_uri,
                status=c.status or CacheStatusValue.PENDING,
                persistent_volume_claim=c.pvc,
            )
            for c in caches
        ]
        or None,
    )
    return frame.finish(status, status.status)


_SERVICES: Final = "services"
_USERS_SHOWN: Final = 5


@dataclass(frozen=True)
class _Kept:
    """Where a service-made cache stands in its retention (nothing for any other cache)."""

    unused_since: str | None = None
    retained_until: str | None = None
    expired: bool = False
    conditions: tuple[Condition, ...] = ()
    health: Health | None = None
    seconds_left: int | None = None
    """Until the cache gives up its model caches, while it counts down."""


def _retention(
    observed: Observed, comp: Composition, config: RuntimeConfig | None, *, config_waiting: bool
) -> _Kept:
    """Whether a service still relies on this cache, and if not, how long it is kept.

    Relying is read off the namespace's services (`status.templateCache`), so a service that
    waits for the downloads counts as much as one whose InferenceService mounts the PVCs. While
    the services or the runtime config are not fetched yet the status stays as it was: a cache
    is never given up on a call that did not look.
    """
    if labels.SERVICE not in labels_of(observed.composite):
        return _Kept()
    listing = Listing(_SERVICES, Kind.SERVICE, observed.namespace)
    comp.requirements.append(listing.requirement())
    previous = parse_status(observed.composite, TemplateCacheStatus) or TemplateCacheStatus()
    services = listing.items(observed.required)
    if services is None or config_waiting:
        return _Kept(previous.unused_since, previous.retained_until)
    users = sorted(name_of(s) for s in services if relied_on(s) == observed.name)
    if users:
        return _Kept(
            conditions=(
                Condition(
                    ConditionType.RETAINED,
                    ConditionStatus.FALSE,
                    Reason.CACHE_IN_USE,
                    f"used by AIMService {', '.join(users[:_USERS_SHOWN])}"
                    + (
                        f" and {len(users) - _USERS_SHOWN} more"
                        if len(users) > _USERS_SHOWN
                        else ""
                    ),
                ),
            )
        )
    caching_config = config.spec.caching if config else None
    text = (caching_config.retention if caching_config else None) or DEFAULT_CACHE_RETENTION
    seconds = duration_seconds(text)
    if seconds is None:
        text = DEFAULT_CACHE_RETENTION
        seconds = duration_seconds(text) or 0.0
    now = observed.now
    since = timestamp(previous.unused_since) if previous.unused_since else None
    ended = timestamp(previous.retained_until) if previous.retained_until else None
    if since is not None and ended is not None and ended <= now:
        # Expired stays expired until a service relies on it again: a longer retention set
        # later does not bring the model caches back to download with nobody to use them.
        ret = caching.Retention(since, ended)
    else:
        ret = caching.retention(since, now=now, keep_for_s=seconds)
    config_name = config.ref.name if config and config.ref else "none"
    unused, until = rfc3339(ret.unused_since), rfc3339(ret.until)
    if not ret.expired(now):
        return _Kept(
            unused,
            until,
            seconds_left=ret.seconds_left(now),
            conditions=(
                Condition(
                    ConditionType.RETAINED,
                    ConditionStatus.TRUE,
                    Reason.CACHE_UNUSED,
                    f"no AIMService uses this cache since {unused}; its model caches and their "
                    f"PVCs are deleted at {until} (caching.retention {text} of runtime config "
                    f"{config_name!r}) unless a service relies on it again",
                ),
            ),
        )
    message = (
        f"no AIMService used this cache from {unused} to {until} (caching.retention {text}); "
        "its model caches and their PVCs were deleted, and a service that uses it again "
        "downloads the weights anew"
    )
    return _Kept(
        unused,
        until,
        expired=True,
        conditions=(
            Condition(
                ConditionType.RETAINED, ConditionStatus.FALSE, Reason.RETENTION_EXPIRED, message
            ),
        ),
        health=ConditionType.CACHE_READY.pending(Reason.RETENTION_EXPIRED, message),
    )


def _template(observed: Observed, spec: TemplateCacheSpec) -> tuple[list[Requirement], Resolution]:
    only = {
        None: None,
        TemplateScope.NAMESPACE: Scope.NAMESPACE,
        TemplateScope.CLUSTER: Scope.CLUSTER,
    }[spec.template_scope]
    lookup = Lookup(
        "template",
        spec.template_name,
        observed.namespace,
        Kind.SERVICE_TEMPLATE,
        Kind.CLUSTER_SERVICE_TEMPLATE,
        only=only,
    )
    return lookup.requirements(), lookup.resolve(observed.required)


def _template_health(
    spec: TemplateCacheSpec, resolution: Resolution
) -> tuple[Template[ClusterServiceTemplateSpec] | None, Health]:
    name = spec.template_name
    if isinstance(resolution, Pending):
        return None, ConditionType.TEMPLATE_READY.pending(
            Reason.RESOLVING, f"looking up template {name!r}"
        )
    if isinstance(resolution, Absent):
        where = {
            None: "in the namespace or cluster scope",
            TemplateScope.NAMESPACE: "in the namespace (spec.templateScope: Namespace)",
            TemplateScope.CLUSTER: "in cluster scope (spec.templateScope: Cluster)",
        }[spec.template_scope]
        return None, ConditionType.TEMPLATE_READY.failed(
            Reason.TEMPLATE_NOT_FOUND,
            f"spec.templateName: no template {name!r} {where}; create it or fix the name",
        )
    # A namespaced template may carry caching settings a cluster template cannot.
    model = (
        ServiceTemplateSpec
        if resolution.kind == Kind.SERVICE_TEMPLATE
        else ClusterServiceTemplateSpec
    )
    try:
        tpl_spec: ClusterServiceTemplateSpec = parse_spec(resolution.manifest, model)
    except InvalidSpecError as e:
        return None, ConditionType.TEMPLATE_READY.failed(
            Reason.TEMPLATE_INVALID, f"template {name!r}: {e}"
        )
    template = resolved_template(resolution.manifest, resolution.kind, resolution.scope, tpl_spec)
    status = template.headline
    if status == TemplateStatusValue.AVAILABLE:
        return template, ConditionType.TEMPLATE_READY.ready(
            Reason.RESOLVED, f"{template.kind} {name!r} is Available"
        )
    state = (
        State.FAILED
        if status in {TemplateStatusValue.FAILED, TemplateStatusValue.DEGRADED}
        else State.PENDING
    )
    reason = Reason.TEMPLATE_NOT_READY if state is State.FAILED else Reason.CACHE_WAITING
    return template, ConditionType.TEMPLATE_READY.health(
        state,
        reason,
        f"{template.kind} {name!r} is {status or 'not reconciled yet'}; caching starts once it "
        "is Available with its model sources",
    )


def _cache_for(  # noqa: PLR0913 - one source's decision needs all of these
    observed: Observed,
    *,
    spec: TemplateCacheSpec,
    template: ClusterServiceTemplateSpec,
    source: DiscoveredSource,
    listed: tuple[Manifest, ...],
    comp: Composition,
) -> _Cache:
    """Reuse a standalone cache of this source, or compose one."""
    for candidate in listed:
        owners = owner_references(candidate)
        if (
            string_at(candidate, "spec", "sourceUri") == source.source_uri
            and string_at(candidate, "spec", "type") != ModelCacheType.ADAPTER
            and field_at(candidate, "spec", "storageClassName") == spec.storage_class_name
            and not owners
        ):
            previous = parse_status(candidate, ModelCacheStatus)
            return _Cache(
                name_of(candidate),
                source.source_uri,
                parse_headline(candidate, CacheStatusValue),
                previous.persistent_volume_claim if previous else None,
            )
    inline = _inline_source(template.model_sources, source.source_uri)
    env = merged_env(spec.env, inline.env if inline else None)
    name = caching.model_cache_name(source.source_uri, env, spec.storage_class_name)
    key = MODEL_CACHE_PREFIX + name
    current = observed.resources.get(key)
    model_cache = ModelCacheSpec(
        source_uri=source.source_uri,
        model_id=source.model_id,
        storage_class_name=spec.storage_class_name,
        size=source.size,
        env=env or None,
        image_pull_secrets=spec.image_pull_secrets,
        runtime_config_name=spec.runtime_config_name,
    )
    comp.resources[key] = Desired(
        build_aim_object(
            Kind.MODEL_CACHE,
            name=name,
            namespace=observed.namespace,
            labels={
                **labels.MANAGED_BY,
                labels.TEMPLATE_CACHE: labels.value(observed.name),
                labels.TEMPLATE: labels.value(spec.template_name),
            },
            spec=model_cache,
        ),
        ready=has_headline(current, CacheStatusValue.AVAILABLE),
    )
    previous = parse_status(current, ModelCacheStatus) if current is not None else None
    return _Cache(
        name,
        source.source_uri,
        parse_headline(current, CacheStatusValue),
        previous.persistent_volume_claim if previous else None,
    )


def _inline_source(sources: Sequence[ModelSource] | None, uri: str) -> ModelSource | None:
    return next((s for s in sources or () if s.source_uri == uri), None)


def _caches_health(caches: Sequence[_Cache], *, waiting: bool) -> Health:
    if waiting:
        return ConditionType.CACHE_READY.pending(Reason.CACHE_WAITING, "waiting for the template")
    if not caches:
        return ConditionType.CACHE_READY.pending(
            Reason.CACHES_CREATING, "no model sources listed yet"
        )
    failed = [c.name for c in caches if c.status == CacheStatusValue.FAILED]
    if failed:
        return ConditionType.CACHE_READY.failed(
            Reason.CACHE_FAILED, f"model caches failed: {', '.join(failed)}"
        )
    waiting_for = [
        f"{c.name} ({c.status or 'new'})" for c in caches if c.status != CacheStatusValue.AVAILABLE
    ]
    if waiting_for:
        return ConditionType.CACHE_READY.progressing(
            Reason.CACHES_NOT_READY,
            f"{len(caches) - len(waiting_for)}/{len(caches)} model caches Available; waiting for "
            + ", ".join(waiting_for),
        )
    return ConditionType.CACHE_READY.ready(
        Reason.CACHES_READY, f"{len(caches)} model caches Available"
    )
